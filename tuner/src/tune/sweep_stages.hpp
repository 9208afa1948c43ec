// The stages of a sweep, each a small piece run_sweep composes and a test can drive alone:
// plan the work of a problem (its domain and what the cache knows), compile ahead (one compile
// per distinct option list, in proposal order), the worker session (the process and what it
// holds), the trial recorder (one DB row per trial as it completes), planning and measuring a
// trial on a device, and the ranking from the cache. The device pool (device_pool.hpp) runs
// them over the GPUs of a model: one GPU is a pool of one.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tiletune/cache_db.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/replay.hpp"
#include "tiletune/strategy.hpp"
#include "tiletune/sweep.hpp"
#include "tiletune/worker.hpp"

namespace tiletune::sweep_detail {

/// The trial's status says the worker was lost (it died or was killed): a fresh one comes next.
[[nodiscard]] bool worker_lost(TrialStatus s);

/// What the objective makes of a trial: its score when it ran ok, nullopt when it failed.
[[nodiscard]] std::optional<double> trial_score(Objective objective, const TrialRecord& trial);

/// Stage 1 for one problem: the valid configs as a search domain, and what the cache already
/// knows of them on any of the devices of a model (a rerun answers those from the cache instead
/// of measuring again; the search measures a config once for the model).
struct ProblemWork {
  Problem problem;
  std::string canonical;  ///< "N=8192"
  SpaceDomain space;
  std::unordered_map<std::string, std::optional<double>> known;  ///< canonical params -> score
  std::uint64_t unknown = 0;                                     ///< valid configs not in `known`
};
/// The points of a work's domain that `known` lacks.
[[nodiscard]] std::uint64_t unknown_points(const Space& space, const ProblemWork& work);
/// Only the configs of shard; force: know nothing (measure everything again).
[[nodiscard]] ProblemWork plan_problem(const Space& space, const Problem& problem, const Shard& shard,
                                       const CacheDb& db, const std::vector<std::string>& device_uuids,
                                       Objective objective, bool force);

/// Compiles ahead of the GPU through a pool: the same option list compiles once, whoever asks
/// (every problem, the reference config, a config proposed again after a restart), and a
/// failed compile is never redone (the pool's cubin cache also keeps failures across runs).
/// Thread-safe: the workers of a device pool ask for reference compiles while the search
/// submits.
class CompileAhead {
 public:
  /// `compiler`: one Compiler per pool thread (SweepOptions::compiler); empty: NVRTC in the threads.
  CompileAhead(const Space& space, std::string arch, unsigned threads, const CubinCache& cache,
               CompilerFactory compiler = {});
  /// The compile of a config for a problem (its options depend on the problem only through
  /// problem_defines and ${} in `options:`). Throws EvalError when an ${} fails for it.
  [[nodiscard]] std::shared_future<CompileResult> config(const Problem& problem, const Config& config);
  /// The compile of the space's reference kernel for a problem and candidate.
  [[nodiscard]] std::shared_future<CompileResult> reference_kernel(const Problem& problem, const Config& candidate);
  /// The source of the space's own options, for the kernel record.
  [[nodiscard]] const KernelSource& main_source();
  [[nodiscard]] unsigned threads() const noexcept { return pool_.threads(); }
  /// Distinct compiles submitted so far (kernel and reference kernel).
  [[nodiscard]] std::size_t submitted() const;
  /// NVRTC seconds of the compiles that have finished, summed over threads.
  [[nodiscard]] double finished_seconds() const;

 private:
  using Compiles = std::map<std::vector<std::string>, std::shared_future<CompileResult>>;
  // With mutex_ held: the compile of `request`, submitted once per distinct options.
  std::shared_future<CompileResult> submit(Compiles& compiles, CompileRequest request);

  const Space& space_;
  std::string arch_;
  mutable std::mutex mutex_;  // guards the sources and the compile maps
  // The sources outlive the pool: queued requests point into them until the pool drains.
  KernelSources sources_;
  std::optional<KernelSources> reference_sources_;
  Compiles compiles_;
  Compiles reference_compiles_;
  CompilePool pool_;
};

/// What the parent asks of every trial in the worker.
struct WorkerSettings {
  TimingSettings timing;
  double deadline_seconds = 10;
  EnergySettings energy;  ///< for measured trials; a reference run measures none
  /// Extra time the first trial of a problem gets in a fresh worker: it allocates and fills
  /// the buffers and computes the reference before the kernel runs.
  double setup_allowance_seconds = 120;
};

/// Time the worker reported, summed over the trials of a sweep.
struct WorkerTimes {
  double load_seconds = 0, setup_seconds = 0, verify_seconds = 0, measure_seconds = 0;
  double round_trip_seconds = 0;  ///< the parent's wall time in WorkerSession::run
  double copy_seconds = 0;        ///< worker start + the copy ceiling (start_copy)
};

/// The worker process and what it holds: the problem key whose buffers it has and the one
/// whose reference outputs it has. A worker that faults or hangs is replaced by a fresh one,
/// which holds neither; this object is the one place that knows.
class WorkerSession {
 public:
  WorkerSession(std::vector<std::string> argv, WorkerSettings settings);
  /// Starts the worker and measures the bandwidth ceiling in it on a thread of its own, so that
  /// the worker's start (a CUDA context) and the copy overlap the first compiles. run() and
  /// copy() wait for it.
  void start_copy(std::uint64_t bytes);
  /// The ceiling start_copy measured (waits for it). Throws Error when the worker failed it.
  [[nodiscard]] const CopyCeiling& copy();
  /// Runs a trial (a reference run when request.is_reference), with an id, the settings and,
  /// when the worker does not hold the problem yet, the setup allowance. Throws Error, which
  /// stops the sweep, for a failure every config would share (TrialResult::shared_failure: the
  /// host check failed rather than judged the trial, a global cannot be filled, ...).
  [[nodiscard]] TrialResult run(TrialRequest request);
  /// The worker holds the reference outputs of this problem key (a reference run succeeded
  /// in this process and no other problem came since).
  [[nodiscard]] bool holds_reference(const std::string& problem_key) const { return reference_key_ == problem_key; }
  [[nodiscard]] bool holds_buffers(const std::string& problem_key) const { return buffers_key_ == problem_key; }
  [[nodiscard]] int starts() const noexcept { return process_.starts(); }
  [[nodiscard]] const WorkerTimes& times() const noexcept { return times_; }

 private:
  void wait_for_copy();

  WorkerProcess process_;
  // After process_: destroying a pending copy waits for it, before the process goes.
  std::future<CopyCeiling> copy_pending_;
  std::optional<CopyCeiling> copy_;
  WorkerSettings settings_;
  std::uint64_t next_id_ = 1;
  std::optional<std::string> buffers_key_;
  std::optional<std::string> reference_key_;
  WorkerTimes times_;
};

/// Writes each trial to the cache as it completes.
class TrialRecorder {
 public:
  TrialRecorder(CacheDb& db, std::int64_t device_id, std::int64_t kernel_id, const Space& space,
                const DeviceLimits& limits);
  /// The trial's row, written; an `ok` without a time becomes a runtime_fault (in t too).
  TrialRecord record(const std::string& canonical_problem, const std::optional<LaunchGeometry>& launch, SweepTrial& t);
  /// The row record() would write, not written.
  [[nodiscard]] TrialRecord make(const std::string& canonical_problem, const std::optional<LaunchGeometry>& launch,
                                 SweepTrial& t) const;

 private:
  CacheDb& db_;
  std::int64_t device_id_, kernel_id_;
  const Space& space_;
  const DeviceLimits& limits_;
};

/// One (problem, config) submitted and not yet measured: pruned before compiling, or compiling.
struct PendingTrial {
  std::size_t point = 0;
  Config config;
  std::optional<LaunchGeometry> launch;
  std::string pruned_reason;  ///< non-empty: recorded as pruned without compiling
  std::shared_future<CompileResult> compiled;
};

/// What measuring a trial on one device needs: the space, the device's limits, the shared
/// compiles and the device's worker (used by one thread at a time).
struct DeviceStages {
  const Space& space;
  const DeviceLimits& limits;
  CompileAhead& compile;
  WorkerSession& worker;
};

/// Plans point of a problem: prunes what the device cannot launch, else compiles ahead.
[[nodiscard]] PendingTrial plan_trial(const Space& space, const DeviceLimits& limits, CompileAhead& compile,
                                      const ProblemWork& work, std::size_t point);
/// Measures a planned trial on the device: waits for its compile, checks it against the device,
/// runs the reference first when the worker lacks it, verifies and times it in the worker.
/// Returns the wall seconds it waited for the compile. Throws Error when the reference fails
/// or no worker can be started.
double measure_trial(const DeviceStages& stages, const ProblemWork& work, const PendingTrial& w, SweepTrial& t);

/// What recall() answers for a point of a problem's work (nullopt: not known).
[[nodiscard]] std::optional<Evaluation> recall_known(const Space& space, const ProblemWork& work, std::size_t point);
/// The score of a recorded trial and its cost (compile + worker time), as the search sees it.
[[nodiscard]] Evaluation evaluation_of(Objective objective, std::size_t point, const TrialRecord& record,
                                       const SweepTrial& t);

/// The cache's trials of the current kernel version of a problem on a device.
[[nodiscard]] TrialFilter current_trials(const Space& space, const std::string& device_uuid,
                                         const std::string& canonical);

// --- what run_sweep settles before its first trial (sweep_setup.cpp) -------------------------

/// The cache's row of a device (copy_gbps nullopt keeps what the cache has).
[[nodiscard]] DeviceRecord device_record(const DeviceInfo& d, std::optional<double> copy_gbps);
/// Checks what needs no worker: each device's description and the objective's NVML on it, and
/// the space's inputs and checks once per architecture. Returns the energy settings the trials get.
[[nodiscard]] EnergySettings check_before_work(const Space& space, const SweepOptions& options,
                                               const std::vector<DeviceInfo>& devices);
/// The schedule of a sweep whose problems' work is `work`, on `devices` GPUs: `auto` resolved
/// on what is left to measure (ProblemWork::unknown over the problems); its strategy and
/// estimate into the report.
[[nodiscard]] SweepSchedule schedule_sweep(const SweepOptions& options, const std::vector<ProblemWork>& work,
                                           std::size_t devices, SweepReport& report);
/// Problem p's schedule (problem_schedule) with its warm start (SweepOptions::warm_start).
[[nodiscard]] ProblemSchedule schedule_problem(const Space& space, const SweepOptions& options,
                                               const SweepSchedule& schedule, const ProblemWork& work, std::size_t p,
                                               double elapsed_seconds);
/// Trials this run may measure on a problem: what the budget allows of what is not known.
[[nodiscard]] std::uint64_t problem_limit(const SearchBudget& budget, const ProblemWork& work);

/// Stage 4: a problem's ok trials of the current kernel version from the cache (resumed ones
/// included), best score first, and its default config's trial.
void rank_problem(const Space& space, const CacheDb& db, const std::string& device_uuid, Objective objective,
                  ProblemOutcome& outcome);

}  // namespace tiletune::sweep_detail
