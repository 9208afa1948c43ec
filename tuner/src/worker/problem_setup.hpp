// What a GPU worker holds for one problem: the buffers (generated on the device, read from
// files, copied), the contents of the module globals, and the expected outputs (from a CPU
// reference, a reference library, expected files, or the reference run). Built once per
// problem key and reused by every config of the problem; a buffer whose count alone changes
// (a scratch sized by the grid) is rebuilt on its own.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

#include "device/driver.hpp"
#include "worker/worker_kernels.hpp"
#include "tiletune/measure.hpp"

namespace tiletune {

/// A buffer on the device.
struct HeldBuffer {
  BufferPlan plan;
  cu::DeviceBuffer device;   ///< what the kernel reads and writes
  cu::DeviceBuffer initial;  ///< an in/out buffer's pristine contents
  bool ready = false;
  [[nodiscard]] std::size_t bytes() const { return plan.count * element_size(plan.type); }
  /// Where its initial contents are (for copies made from it).
  [[nodiscard]] CUdeviceptr pristine() const { return initial.size() != 0 ? initial.ptr() : device.ptr(); }
};

/// The contents of one module global, copied into the symbol before every launch.
struct HeldGlobal {
  GlobalPlan plan;
  cu::DeviceBuffer data;
  [[nodiscard]] std::size_t bytes() const { return plan.count * element_size(plan.type); }
};

/// The expected contents of one output.
struct ExpectedOutput {
  cu::DeviceBuffer data;  ///< the first `count` elements the reference produced
  std::uint64_t count = 0;
  double sum = 0;  ///< the sum of those elements (double)
  bool ready = false;
};

/// The problem's module globals or expected outputs cannot be set up: every config of the problem
/// would fail the same way (the buffers, which a param may size, fail one config's trial instead).
class ProblemSetupError : public Error {
 public:
  using Error::Error;
};

/// Everything that decides the inputs and the expected outputs of a request.
[[nodiscard]] std::string problem_cache_key(const TrialRequest& request);

class ProblemSetup {
 public:
  /// Makes the held buffers, globals and expected outputs those of `request`: a new problem
  /// key frees the previous problem and builds everything (returns true); the same key rebuilds
  /// only the buffers whose plans changed (returns false). Throws Error naming the buffer, or
  /// ProblemSetupError naming the global, the file or the reference, for what no config of the
  /// problem could pass.
  bool prepare(const TrialRequest& request, WorkerKernels& kernels, CUstream stream);

  /// Poisons the outputs with init zero or none (0xFF bytes), restores every in/out buffer and copies
  /// each global into its symbol (`symbols[i]`, 0: skipped), on `stream`.
  void reset_for_launch(const std::vector<CUdeviceptr>& symbols, CUstream stream);
  /// Restores the in/out buffers and the globals only (between timed runs).
  void restore_inputs(const std::vector<CUdeviceptr>& symbols, CUstream stream);
  [[nodiscard]] bool has_inputs_to_restore() const;

  [[nodiscard]] std::vector<HeldBuffer>& buffers() noexcept { return buffers_; }
  [[nodiscard]] const std::vector<HeldGlobal>& globals() const noexcept { return globals_; }
  /// Indexed like the buffers (only outputs are used).
  [[nodiscard]] std::vector<ExpectedOutput>& expected() noexcept { return expected_; }
  [[nodiscard]] bool reference_ready() const noexcept { return reference_ready_; }
  void set_reference_ready() noexcept { reference_ready_ = true; }

 private:
  void clear() noexcept;
  void fit_buffer(const TrialRequest& request, std::size_t index, std::vector<int>& state, WorkerKernels& kernels,
                  CUstream stream);
  void fill(CUdeviceptr out, const std::string& what, std::string_view name, ElementType type, std::uint64_t count,
            const InitPlan& init, const TrialRequest& request, WorkerKernels& kernels, CUstream stream);
  void compute_expected(const TrialRequest& request, WorkerKernels& kernels, CUstream stream);
  void expected_from_host(const TrialRequest& request, WorkerKernels& kernels, CUstream stream);
  [[nodiscard]] bool expected_on_device(const TrialRequest& request, WorkerKernels& kernels, CUstream stream);
  void expected_from_files(const TrialRequest& request, WorkerKernels& kernels, CUstream stream);
  void keep_expected(std::size_t index, const std::byte* bytes, std::uint64_t count, WorkerKernels& kernels,
                     CUstream stream);

  std::string key_;
  std::vector<HeldBuffer> buffers_;
  std::vector<HeldGlobal> globals_;
  std::vector<ExpectedOutput> expected_;
  bool reference_ready_ = false;
};

}  // namespace tiletune
