// CudaKernel and the driver's presence, over the private driver layer (device/driver.hpp): the
// one place where a stage after the worker reaches the CUDA driver.
#include "tiletune/cuda_kernel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <vector>
#include <optional>

#include "device/driver.hpp"

namespace tiletune {

int cuda_device_count() { return cu::device_count(); }

std::string cuda_unavailable_reason() { return cu::driver_unavailable_reason(); }

struct CudaKernel::Impl {
  // Declared before the module, so destroyed after it: the module unloads while the context holds.
  cu::PrimaryContext context;
  cu::Module module;
  CUfunction function = nullptr;
  std::string what;
  std::mutex shared_mutex;
  long long max_dynamic_shared = 48 * 1024;  ///< the limit the function allows now

  Impl(int ordinal, const std::string& cubin, const std::string& entry, std::string what_in)
      : context(ordinal), module(cubin, what_in), function(module.get_function(entry)), what(std::move(what_in)) {}
};

CudaKernel::CudaKernel(int ordinal, const std::string& cubin, const std::string& entry, std::string what)
    : impl_(std::make_unique<Impl>(ordinal, cubin, entry, std::move(what))) {}

CudaKernel::~CudaKernel() = default;

void CudaKernel::launch(const std::array<long long, 3>& grid, const std::array<long long, 3>& block,
                        long long shared_bytes, CUstream stream, void** args, const std::string& context) {
  Impl& k = *impl_;
  k.context.make_current();
  if (shared_bytes > 48 * 1024) {
    std::lock_guard lock(k.shared_mutex);
    if (shared_bytes > k.max_dynamic_shared) {
      try {
        cu::set_max_dynamic_shared_bytes(k.function, static_cast<int>(shared_bytes));
      } catch (const std::exception& e) { throw Error(fmt::format("{}: {}", k.what, e.what())); }
      k.max_dynamic_shared = shared_bytes;
    }
  }
  auto dim = [](long long v) { return static_cast<unsigned>(v); };
  TILETUNE_CU_CTX(cuLaunchKernel(k.function, dim(grid[0]), dim(grid[1]), dim(grid[2]), dim(block[0]), dim(block[1]),
                                 dim(block[2]), dim(shared_bytes), stream, args, nullptr),
                  context);
}

void copy_from_device_after(int ordinal, CUstream stream, std::uint64_t src, void* dst, std::size_t bytes) {
  const cu::PrimaryContext context(ordinal);  // retained for the copy, made current
  TILETUNE_CU_CTX(cuStreamSynchronize(stream), "capture: the launch's stream");
  if (bytes > 0) TILETUNE_CU_CTX(cuMemcpyDtoH(dst, src, bytes), fmt::format("capture: {} bytes", bytes));
}

struct DeviceWorkbench::Impl {
  cu::PrimaryContext context;
  CUstream stream;
  std::vector<cu::DeviceBuffer> blocks;
  Impl(int ordinal, CUstream s) : context(ordinal), stream(s) {}
};

DeviceWorkbench::DeviceWorkbench(int ordinal, CUstream stream) : impl_(std::make_unique<Impl>(ordinal, stream)) {}
DeviceWorkbench::~DeviceWorkbench() = default;

std::uint64_t DeviceWorkbench::allocate(std::size_t bytes) {
  impl_->context.make_current();
  impl_->blocks.emplace_back(std::max<std::size_t>(bytes, 1));
  return impl_->blocks.back().ptr();
}

void DeviceWorkbench::copy(std::uint64_t dst, std::uint64_t src, std::size_t bytes) {
  impl_->context.make_current();
  if (bytes > 0) TILETUNE_CU_CTX(cuMemcpyDtoDAsync(dst, src, bytes, impl_->stream), "online trial: a copy");
}

void DeviceWorkbench::fill(std::uint64_t dst, unsigned char value, std::size_t bytes) {
  impl_->context.make_current();
  if (bytes > 0) TILETUNE_CU_CTX(cuMemsetD8Async(dst, value, bytes, impl_->stream), "online trial: a fill");
}

void DeviceWorkbench::download(std::uint64_t src, void* dst, std::size_t bytes) {
  impl_->context.make_current();
  TILETUNE_CU_CTX(cuStreamSynchronize(impl_->stream), "online trial");
  if (bytes > 0) TILETUNE_CU_CTX(cuMemcpyDtoH(dst, src, bytes), "online trial: a read");
}

double DeviceWorkbench::time_ms(const std::function<void()>& enqueue) {
  impl_->context.make_current();
  cu::Event start, stop;
  start.record(impl_->stream);
  enqueue();
  stop.record(impl_->stream);
  stop.synchronize();
  return cu::Event::elapsed_ms(start, stop);
}

}  // namespace tiletune
