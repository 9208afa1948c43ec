// The GPU worker's own kernels, one module per worker: the image the build made for the
// device's arch (worker/prebuilt_worker_kernels.hpp), else compiled with NVRTC when the worker
// starts (worker/worker_kernels_compile.hpp). They are the input generators
// (worker/input_generators.h), the comparison of an output with the expected one, the sum of an
// output and the stream blocker of a timing sample (worker/compare_kernel.cu.inc), and the device
// versions of the simple built-in references (worker/reference_kernels.cu.inc).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "device/driver.hpp"
#include "worker/input_generators.h"
#include "worker/worker_kernels_compile.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/space.hpp"

namespace tiletune {

/// Outcome of one comparison.
struct Comparison {
  std::uint64_t bad = 0;        ///< elements outside the tolerance (or NaN)
  std::uint64_t first_bad = 0;  ///< the first of them
  double max_error = 0;         ///< largest |got - want| (NaN: +inf)
};

/// The worker's kernels for compute capability `arch` (x10) of device `ordinal`: the build's
/// image (prebuilt_worker_kernels), else compile_worker_kernels through `cache` (nullptr: none).
[[nodiscard]] std::string worker_kernels_cubin(int arch, int ordinal, const CubinCache* cache);

/// The module and its functions on one device; the context must be current.
class WorkerKernels {
 public:
  /// Loads `cubin` (worker_kernels_cubin). Throws Error.
  WorkerKernels(std::string_view cubin, int sm_count);
  /// Loads worker_kernels_cubin(arch, ordinal, no cache).
  WorkerKernels(int arch, int sm_count, int ordinal)
      : WorkerKernels(worker_kernels_cubin(arch, ordinal, nullptr), sm_count) {}

  /// Compares `count` elements of `type` at got with those at want.
  [[nodiscard]] Comparison compare(ElementType type, CUdeviceptr got, CUdeviceptr want, std::uint64_t count,
                                   double atol, double rtol, CUstream stream);
  /// The sum of `count` elements of `type` at x, in double (the same bits for the same data).
  [[nodiscard]] double sum(ElementType type, CUdeviceptr x, std::uint64_t count, CUstream stream);
  /// Fills params.count elements at `out` (params.offsets: a device pointer, for csr_columns).
  void generate(CUdeviceptr out, const tiletune_gen::Params& params, CUstream stream);
  /// Holds `stream` until the host sets flags' flag 0 (or timeout_seconds pass on the GPU,
  /// which then sets flag 1): tiletune_block_stream, nvbench's blocking_kernel.
  void block_stream(const cu::MappedFlags& flags, double timeout_seconds, CUstream stream);
  /// Launches the reference kernel `function` (an extern "C" name of reference_kernels.cu.inc)
  /// with a grid-stride grid over `count` elements. Throws Error for an unknown name.
  void launch_reference(const char* function, std::uint64_t count, void** params, CUstream stream);

 private:
  [[nodiscard]] unsigned grid_for(std::uint64_t count) const;

  int sm_count_ = 1;
  std::optional<cu::Module> module_;
  CUfunction compare_[kElementTypeCount] = {};
  CUfunction sum_[kElementTypeCount] = {};
  CUfunction generate_ = nullptr;
  CUfunction block_stream_ = nullptr;
  std::map<std::string, CUfunction, std::less<>> references_;
  cu::DeviceBuffer compare_result_{3 * sizeof(std::uint64_t)};
  cu::DeviceBuffer partials_;
};

}  // namespace tiletune
