// The measurement inside a GPU worker: load a candidate's cubin, fill its module globals,
// launch it once on poisoned outputs, check each output against a reference on the GPU, then
// time it in the style of nvbench (warm-up, CUDA events, in/out buffers restored and then a 1x L2
// flush before each cold sample, samples taken while the GPU throttles discarded, nvbench's stdrel
// stopping rule or the time limit). The statistics, the stopping rule and the throttle check are
// pure functions (timing.hpp) so that they are tested without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "tiletune/measure.hpp"
#include "tiletune/timing.hpp"

namespace tiletune {

/// What runs inside the worker process: the GPU measurement, or a fake in tests. The worker's
/// serve loop (serve_worker, worker.hpp) hands it each request that arrives.
class TrialHandler {
 public:
  virtual ~TrialHandler() = default;
  virtual TrialResult run_trial(const TrialRequest& request) = 0;
  virtual CopyCeiling measure_copy(std::uint64_t bytes) = 0;
  /// True once the handler's CUDA context is unusable (a kernel faulted): the worker then
  /// exits after answering, and the parent starts a fresh one for the next trial.
  [[nodiscard]] virtual bool context_lost() const noexcept { return false; }
};

/// Runs, verifies and times trials on one GPU: what `tiletune __worker --device K` serves.
///
/// Per problem (problem_cache_key: the problem key, seed, verify settings and generated
/// buffers) it allocates the buffers, generates the inputs on the device (the generators of
/// worker/input_generators.h; files read and copies made once) and computes the expected outputs:
/// Mode::cpu from the built-in CPU reference and Mode::library from the user's library (on
/// host copies downloaded from the device), Mode::files from the expected files, and
/// Mode::reference_run from the outputs of the request marked is_reference, which must come
/// first. Each output is then checked as its CheckPlan says: element by element on its first
/// `count` elements, or the double sum of its first `count` against the reference's sum.
///
/// A kernel fault (illegal address, trap, ...) poisons the CUDA context for good: that
/// trial returns `runtime_fault` and context_lost() becomes true; every later trial returns
/// `runtime_fault` at once ("context lost"). The serve loop must send the result and then
/// exit so that the parent starts a fresh worker. A runner destroyed after that leaves its
/// handles (and the retained primary context) to the process exit: nothing can free them.
///
/// Not thread-safe: one thread drives a runner (the context is current on that thread).
class GpuRunner final : public TrialHandler {
 public:
  /// Retains the device's primary context and loads the worker's kernels (comparison,
  /// generators, references): the image the build made for the device's architecture, or else
  /// compiled with NVRTC on a thread of its own meanwhile, through the cubin cache at
  /// `cubin_cache` (empty: none). Throws Error (a cu::DriverError for a driver call) when the
  /// device cannot be used.
  explicit GpuRunner(int ordinal, std::filesystem::path cubin_cache = {});
  ~GpuRunner() override;
  GpuRunner(const GpuRunner&) = delete;
  GpuRunner& operator=(const GpuRunner&) = delete;

  /// One trial: load, globals, occupancy, launch on poisoned outputs, verify, time. Everything
  /// the candidate does wrong comes back as a status (launch_failed, also for a module global
  /// missing or of the wrong size; runtime_fault; wrong_result). Throws Error only for a request
  /// that no candidate could pass: an unknown CPU reference or one that does not fit the
  /// buffers, a library or file that does not load, a reference but no checks, Mode::reference_run with no reference
  /// run for the problem yet, an argument or check that names no buffer, a check of more
  /// elements than the reference produced, or buffers that do not fit in device memory.
  [[nodiscard]] TrialResult run_trial(const TrialRequest& request) override;

  /// A device-to-device copy of `bytes` (cuMemcpyDtoDAsync): warm-up, then samples under the
  /// same rule as a kernel's (cold, StdrelCriterion with TimingSettings' defaults and at least
  /// 20 samples, throttled samples discarded); gbps counts bytes read plus bytes written over the
  /// median. Throws Error after a lost context.
  [[nodiscard]] CopyCeiling measure_copy(std::uint64_t bytes) override;

  /// True once a kernel fault has poisoned the context: the worker process must exit
  /// after sending the current result (nothing on this device works any more).
  [[nodiscard]] bool context_lost() const noexcept override;

  [[nodiscard]] int ordinal() const noexcept;
  /// Compute capability times ten (90 for an H200): the arch candidates are compiled for.
  [[nodiscard]] int arch() const noexcept;
  /// Size of the device's L2 cache; the flush buffer is that size (at least 1 MiB).
  [[nodiscard]] std::size_t l2_bytes() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tiletune
