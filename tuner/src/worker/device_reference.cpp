// The device versions of the simple built-in references: each checks that the problem fits it
// (else the CPU version runs) and launches its kernel from worker/reference_kernels.cu.inc.
#include "worker/device_reference.hpp"

#include <optional>

namespace tiletune {
namespace {

const DeviceBufferView* find_view(const std::vector<DeviceBufferView>& views, std::string_view name) {
  for (const DeviceBufferView& v : views)
    if (v.name == name) return &v;
  return views.size() == 1 ? &views.front() : nullptr;
}

// A positive size, or nullopt when it is missing or not positive (the CPU version says which).
std::optional<std::uint64_t> positive(const ProblemSizes& sizes, const char* name) {
  const auto it = sizes.find(name);
  if (it == sizes.end() || it->second <= 0) return std::nullopt;
  return static_cast<std::uint64_t>(it->second);
}

// The element count a reference covers: sizes[N] where given, else the buffer's length.
std::optional<std::uint64_t> count_or_n(const ProblemSizes& sizes, const DeviceBufferView& buffer) {
  if (!sizes.contains("N")) return buffer.count;
  return positive(sizes, "N");
}

bool fits(const DeviceBufferView* v, ElementType type, std::uint64_t count) {
  return v != nullptr && v->type == type && v->count >= count;
}

struct Buffers {
  const std::vector<DeviceBufferView>& inputs;
  const std::vector<DeviceBufferView>& outputs;
};

bool transpose(const ProblemSizes& sizes, const Buffers& b, WorkerKernels& k, CUstream stream) {
  const auto n = positive(sizes, "N");
  const DeviceBufferView* in = find_view(b.inputs, "in");
  const DeviceBufferView* out = find_view(b.outputs, "out");
  if (!n || !fits(in, ElementType::f32, *n * *n) || !fits(out, ElementType::f32, *n * *n)) return false;
  CUdeviceptr src = in->ptr, dst = out->ptr;
  std::uint64_t size = *n;
  void* params[] = {&src, &dst, &size};
  k.launch_reference("tiletune_ref_transpose", size * size, params, stream);
  return true;
}

bool vector_add(const ProblemSizes& sizes, const Buffers& b, WorkerKernels& k, CUstream stream) {
  const DeviceBufferView* a = find_view(b.inputs, "a");
  const DeviceBufferView* bb = find_view(b.inputs, "b");
  const DeviceBufferView* c = find_view(b.outputs, "c");
  if (a == nullptr || bb == nullptr || c == nullptr || a == bb) return false;
  const auto n = count_or_n(sizes, *c);
  if (!n || !fits(a, c->type, *n) || !fits(bb, c->type, *n) || !fits(c, c->type, *n)) return false;
  const char* kernel = nullptr;
  switch (c->type) {
    case ElementType::f32: kernel = "tiletune_ref_vector_add_f32"; break;
    case ElementType::f64: kernel = "tiletune_ref_vector_add_f64"; break;
    case ElementType::i32: kernel = "tiletune_ref_vector_add_i32"; break;
    case ElementType::i64: kernel = "tiletune_ref_vector_add_i64"; break;
    default: return false;
  }
  CUdeviceptr pa = a->ptr, pb = bb->ptr, pc = c->ptr;
  std::uint64_t count = *n;
  void* params[] = {&pa, &pb, &pc, &count};
  k.launch_reference(kernel, count, params, stream);
  return true;
}

bool stencil_1d(const ProblemSizes& sizes, const Buffers& b, WorkerKernels& k, CUstream stream) {
  const auto n = positive(sizes, "N");
  const auto r = sizes.find("R");
  const DeviceBufferView* in = find_view(b.inputs, "in");
  const DeviceBufferView* out = find_view(b.outputs, "out");
  if (!n || r == sizes.end() || r->second < 0 || !fits(in, ElementType::f32, *n) || !fits(out, ElementType::f32, *n))
    return false;
  CUdeviceptr src = in->ptr, dst = out->ptr;
  long long size = static_cast<long long>(*n), radius = r->second;
  double w = 1.0 / static_cast<double>(2 * radius + 1);  // as the CPU version computes it
  void* params[] = {&src, &dst, &size, &radius, &w};
  k.launch_reference("tiletune_ref_stencil_1d", *n, params, stream);
  return true;
}

bool histogram(const ProblemSizes& sizes, const Buffers& b, WorkerKernels& k, CUstream stream) {
  const DeviceBufferView* in = find_view(b.inputs, "in");
  const DeviceBufferView* out = find_view(b.outputs, "out");
  if (in == nullptr || out == nullptr) return false;
  const auto n = count_or_n(sizes, *in);
  if (!n || !fits(in, ElementType::u8, *n) || !fits(out, ElementType::u32, 256)) return false;
  // The CPU version zeroes all of out (its 256 bins and anything after them).
  TILETUNE_CU_CTX(cuMemsetD8Async(out->ptr, 0, out->count * sizeof(std::uint32_t), stream), "histogram reference");
  CUdeviceptr src = in->ptr, dst = out->ptr;
  std::uint64_t count = *n;
  void* params[] = {&src, &dst, &count};
  k.launch_reference("tiletune_ref_histogram", count, params, stream);
  return true;
}

bool reduction(const ProblemSizes& sizes, const Buffers& b, WorkerKernels& k, CUstream stream) {
  const DeviceBufferView* in = find_view(b.inputs, "in");
  const DeviceBufferView* out = find_view(b.outputs, "out");
  if (in == nullptr || out == nullptr) return false;
  const auto n = count_or_n(sizes, *in);
  if (!n || !fits(in, ElementType::f32, *n) || !fits(out, ElementType::f32, 1)) return false;
  // Summed in double (a fixed tree), rounded once, as the CPU version does in sequence.
  const float sum = static_cast<float>(k.sum(ElementType::f32, in->ptr, *n, stream));
  cu::copy_to_device(out->ptr, &sum, sizeof sum, "reduction reference");
  return true;
}

}  // namespace

bool compute_reference_on_device(std::string_view name, const ProblemSizes& sizes,
                                 const std::vector<DeviceBufferView>& inputs,
                                 const std::vector<DeviceBufferView>& outputs, WorkerKernels& kernels,
                                 CUstream stream) {
  const Buffers buffers{inputs, outputs};
  if (name == "transpose") return transpose(sizes, buffers, kernels, stream);
  if (name == "vector_add") return vector_add(sizes, buffers, kernels, stream);
  if (name == "stencil_1d") return stencil_1d(sizes, buffers, kernels, stream);
  if (name == "histogram") return histogram(sizes, buffers, kernels, stream);
  if (name == "reduction") return reduction(sizes, buffers, kernels, stream);
  return false;  // matmul and the rest: on the host
}

}  // namespace tiletune
