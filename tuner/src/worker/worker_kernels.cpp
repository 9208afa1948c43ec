// The GPU worker's own kernels: one program (generators, comparison, sum, references, the
// stream blocker), prebuilt or compiled for the device at start, and the launches that use it.
// Grids are grid-stride: enough blocks to fill the device (16 per SM), not one per 256 elements.
#include "worker/worker_kernels.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <vector>

#include <fmt/format.h>

#include "worker/prebuilt_worker_kernels.hpp"

namespace tiletune {
namespace {

constexpr const char* kReferenceKernels[] = {"tiletune_ref_transpose",      "tiletune_ref_vector_add_f32",
                                             "tiletune_ref_vector_add_f64", "tiletune_ref_vector_add_i32",
                                             "tiletune_ref_vector_add_i64", "tiletune_ref_stencil_1d",
                                             "tiletune_ref_histogram"};

constexpr unsigned kBlock = 256;
constexpr unsigned kBlocksPerSm = 16;

// The kernels' names of the element types, in ElementType's order.
constexpr const char* kSuffixes[] = {"f32", "f64", "i32", "u32", "i64", "u8", "f16", "i8", "i16", "u16", "u64"};
static_assert(std::size(kSuffixes) == kElementTypeCount);

std::size_t index_of(ElementType type) { return static_cast<std::size_t>(type); }

}  // namespace

const PrebuiltImage* prebuilt_worker_kernels(int arch) noexcept {
  const PrebuiltImage* best = nullptr;
  for (const PrebuiltImage& image : prebuilt_worker_kernel_images())
    if (image.arch / 10 == arch / 10 && image.arch <= arch) best = &image;  // increasing arch: the last fits best
  return best;
}

std::string worker_kernels_cubin(int arch, int ordinal, const CubinCache* cache) {
  if (const PrebuiltImage* image = prebuilt_worker_kernels(arch)) return std::string(image->cubin);
  return compile_worker_kernels(arch, ordinal, cache).cubin;
}

WorkerKernels::WorkerKernels(std::string_view cubin, int sm_count) : sm_count_(std::max(sm_count, 1)) {
  module_.emplace(cubin, "tiletune worker kernels");
  for (std::size_t t = 0; t < std::size(kSuffixes); ++t) {
    compare_[t] = module_->get_function(fmt::format("tiletune_compare_{}", kSuffixes[t]));
    sum_[t] = module_->get_function(fmt::format("tiletune_sum_{}", kSuffixes[t]));
  }
  generate_ = module_->get_function("tiletune_generate");
  block_stream_ = module_->get_function("tiletune_block_stream");
  for (const char* name : kReferenceKernels) references_.emplace(name, module_->get_function(name));
  partials_ = cu::DeviceBuffer(kBlocksPerSm * static_cast<std::size_t>(sm_count_) * sizeof(double));
}

unsigned WorkerKernels::grid_for(std::uint64_t count) const {
  const std::uint64_t needed = (count + kBlock - 1) / kBlock;
  return static_cast<unsigned>(std::max<std::uint64_t>(
      1, std::min<std::uint64_t>(needed, std::uint64_t{kBlocksPerSm} * static_cast<unsigned>(sm_count_))));
}

Comparison WorkerKernels::compare(ElementType type, CUdeviceptr got, CUdeviceptr want, std::uint64_t count, double atol,
                                  double rtol, CUstream stream) {
  Comparison c;
  if (count == 0) return c;
  // result = {0 bad, ~0 first bad index, 0 max error}
  compare_result_.fill_async(0, stream);
  TILETUNE_CU_CTX(cuMemsetD32Async(compare_result_.ptr() + sizeof(std::uint64_t), 0xFFFFFFFFu, 2, stream),
                  "comparison result");
  CUdeviceptr result = compare_result_.ptr();
  void* params[] = {&got, &want, &count, &atol, &rtol, &result};
  TILETUNE_CU_CTX(
      cuLaunchKernel(compare_[index_of(type)], grid_for(count), 1, 1, kBlock, 1, 1, 0, stream, params, nullptr),
      "launching the comparison kernel");
  TILETUNE_CU_CTX(cuStreamSynchronize(stream), "the comparison kernel");
  std::uint64_t host[3] = {};
  compare_result_.download(host, sizeof host);
  c.bad = host[0];
  c.first_bad = host[1];
  std::memcpy(&c.max_error, &host[2], sizeof c.max_error);
  return c;
}

double WorkerKernels::sum(ElementType type, CUdeviceptr x, std::uint64_t count, CUstream stream) {
  if (count == 0) return 0;
  const unsigned grid = grid_for(count);
  CUdeviceptr partials = partials_.ptr();
  void* params[] = {&x, &count, &partials};
  TILETUNE_CU_CTX(cuLaunchKernel(sum_[index_of(type)], grid, 1, 1, kBlock, 1, 1, 0, stream, params, nullptr),
                  "launching the sum kernel");
  TILETUNE_CU_CTX(cuStreamSynchronize(stream), "the sum kernel");
  std::vector<double> host(grid);
  partials_.download(host.data(), host.size() * sizeof(double));
  double total = 0;
  for (const double p : host) total += p;
  return total;
}

void WorkerKernels::generate(CUdeviceptr out, const tiletune_gen::Params& params, CUstream stream) {
  if (params.count == 0) return;
  tiletune_gen::Params p = params;
  void* args[] = {&out, &p};
  TILETUNE_CU_CTX(cuLaunchKernel(generate_, grid_for(p.count), 1, 1, kBlock, 1, 1, 0, stream, args, nullptr),
                  "launching the input generator");
}

void WorkerKernels::block_stream(const cu::MappedFlags& flags, double timeout_seconds, CUstream stream) {
  CUdeviceptr device_flags = flags.device();
  auto timeout_ns = static_cast<unsigned long long>(timeout_seconds * 1e9);
  void* args[] = {&device_flags, &timeout_ns};
  TILETUNE_CU_CTX(cuLaunchKernel(block_stream_, 1, 1, 1, 1, 1, 1, 0, stream, args, nullptr),
                  "launching the stream blocker");
}

void WorkerKernels::launch_reference(const char* function, std::uint64_t count, void** params, CUstream stream) {
  const auto it = references_.find(std::string_view(function));
  if (it == references_.end()) throw Error(fmt::format("no reference kernel named '{}' in the worker", function));
  if (count == 0) return;
  TILETUNE_CU_CTX(cuLaunchKernel(it->second, grid_for(count), 1, 1, kBlock, 1, 1, 0, stream, params, nullptr),
                  fmt::format("launching the reference kernel {}", function));
}

}  // namespace tiletune
