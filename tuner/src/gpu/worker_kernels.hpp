// The GPU worker's own kernels, compiled once with NVRTC for the device when the worker
// starts: the input generators (gpu/input_generators.h), the comparison of an output with the
// expected one and the sum of an output (gpu/compare_kernel.cu.inc), and the device versions of
// the simple built-in references (gpu/reference_kernels.cu.inc). One program, one module.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "gpu/driver.hpp"
#include "gpu/input_generators.h"
#include "tiletune/compile.hpp"
#include "tiletune/space.hpp"

namespace tiletune {

/// The text NVRTC compiles: the generators, the comparison and sum kernels, the references.
[[nodiscard]] std::string worker_kernels_source();

/// The options the worker compiles its kernels with: no contraction into FMAs, so that a
/// generated value is the same bits as on the host.
[[nodiscard]] std::vector<std::string> worker_kernels_options();

/// Outcome of one comparison.
struct Comparison {
  std::uint64_t bad = 0;        ///< elements outside the tolerance (or NaN)
  std::uint64_t first_bad = 0;  ///< the first of them
  double max_error = 0;         ///< largest |got - want| (NaN: +inf)
};

/// Compiles the worker's kernels for compute capability `arch` (x10) of device `ordinal`
/// (named in errors), through `cache` when one is given: no CUDA context is needed, so a worker
/// compiles them while its context is made. Throws Error when the compile fails.
[[nodiscard]] CompiledKernel compile_worker_kernels(int arch, int ordinal, const CubinCache* cache);

/// The module and its functions on one device; the context must be current.
class WorkerKernels {
 public:
  /// Loads the module compile_worker_kernels made. Throws Error.
  WorkerKernels(const CompiledKernel& compiled, int sm_count);
  /// Compiles for compute capability `arch` (x10), without a cache, and loads the module.
  WorkerKernels(int arch, int sm_count, int ordinal) : WorkerKernels(compile_worker_kernels(arch, ordinal, nullptr), sm_count) {}

  /// Compares `count` elements of `type` at got with those at want.
  [[nodiscard]] Comparison compare(ElementType type, CUdeviceptr got, CUdeviceptr want, std::uint64_t count,
                                   double atol, double rtol, CUstream stream);
  /// The sum of `count` elements of `type` at x, in double (the same bits for the same data).
  [[nodiscard]] double sum(ElementType type, CUdeviceptr x, std::uint64_t count, CUstream stream);
  /// Fills params.count elements at `out` (params.offsets: a device pointer, for csr_columns).
  void generate(CUdeviceptr out, const tiletune_gen::Params& params, CUstream stream);
  /// Launches the reference kernel `function` (an extern "C" name of reference_kernels.cu.inc)
  /// with a grid-stride grid over `count` elements. Throws Error for an unknown name.
  void launch_reference(const char* function, std::uint64_t count, void** params, CUstream stream);

 private:
  [[nodiscard]] unsigned grid_for(std::uint64_t count) const;

  int sm_count_ = 1;
  std::optional<cu::Module> module_;
  CUfunction compare_[7] = {};
  CUfunction sum_[7] = {};
  CUfunction generate_ = nullptr;
  std::map<std::string, CUfunction, std::less<>> references_;
  cu::DeviceBuffer compare_result_{3 * sizeof(std::uint64_t)};
  cu::DeviceBuffer partials_;
};

}  // namespace tiletune
