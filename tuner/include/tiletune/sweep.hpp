// A tuning sweep: every config of a space on one GPU, for one or more problems. The compile
// pool runs ahead of the GPU; one worker process measures; each trial is written to the
// SQLite cache as it completes, so a sweep that is killed loses at most the trial in flight
// and a rerun measures only what is missing.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tiletune/cache_db.hpp"
#include "tiletune/device.hpp"
#include "tiletune/energy.hpp"
#include "tiletune/measure.hpp"
#include "tiletune/objective.hpp"
#include "tiletune/plan.hpp"
#include "tiletune/shard.hpp"
#include "tiletune/strategy.hpp"
#include "tiletune/trial.hpp"

namespace tiletune {

/// When a sweep stops early, per problem: after this many measured trials (evaluations), this
/// fraction of the problem's configs, or (for the whole sweep, shared equally by the problems)
/// this much wall time. The budget of a replay is the same. Parsed from "200", "25%" or "90s" / "10m".
using SweepBudget = SearchBudget;
[[nodiscard]] SweepBudget parse_budget(const std::string& text);

/// A strategy name with `auto` resolved: exhaustive when no budget is given and the sweep is
/// estimated at a minute or less, else the best strategy of the replay benchmark, with a default
/// budget of 10 % of each problem's configs (at least 30) when none is given.
struct StrategyChoice {
  std::string strategy;
  SearchBudget budget;          ///< the budget given, or auto's default
  bool default_budget = false;  ///< auto chose the budget
};
[[nodiscard]] StrategyChoice choose_strategy(const std::string& requested, const SearchBudget& budget,
                                             double estimated_seconds);
/// The evaluations a choice allows on a problem of `configs` configs (nullopt: no count limit).
[[nodiscard]] std::optional<std::uint64_t> choice_evaluations(const StrategyChoice& choice, std::size_t configs);
/// The estimate `auto` uses for a sweep: seconds per trial still to measure.
inline constexpr double auto_seconds_per_trial = 0.1;

/// Counts per TrialStatus, indexed by the enum's value.
using StatusCounts = std::array<std::uint64_t, 7>;

struct SweepProgress {
  std::uint64_t done = 0;        ///< trials finished in this run (resumed ones excluded)
  std::uint64_t total = 0;       ///< trials this run will do
  StatusCounts counts{};
  double elapsed_seconds = 0;
  std::string current;           ///< "N=8192 TILE=32 BLOCK_ROWS=8 PAD=1"
};

struct SweepOptions {
  /// The GPU to tune on, as list_devices() describes it (the caller lists the devices, so
  /// that a sweep runs against any worker: the fake one in tests). Its ordinal picks the
  /// default worker.
  DeviceInfo device;
  std::vector<Problem> problems;         ///< empty: every problem of the space
  unsigned compile_threads = 0;          ///< 0: one per core
  const CubinCache* cubin_cache = nullptr;
  /// One compiler per compile thread (make_worker_compiler: a compile worker process each, as
  /// `tiletune tune` does); empty: NVRTC in the pool's threads.
  CompilerFactory compiler;
  std::filesystem::path db_path;         ///< empty: default_cache_path()
  bool force = false;                    ///< re-measure trials the cache already has
  Shard shard;                           ///< only this shard's configs (tiletune/shard.hpp); default: all
  TimingSettings timing;
  double deadline_seconds = 10;          ///< per trial, after which the worker is killed
  SweepBudget budget;
  /// A search strategy (strategy_names()) or "auto": exhaustive when the sweep is estimated at
  /// a minute or less, else the best strategy of the replay benchmark with a budget of 10 % of
  /// each problem's configs (at least 30) unless budget is set.
  std::string strategy = "auto";
  std::uint64_t seed = 1;                ///< the strategy's seed (problem i uses seed + i)
  std::vector<std::string> worker_argv;  ///< the worker to start; empty: default_worker_argv(device.ordinal)
  /// Several GPUs of one host (`tune --devices`): when not empty, `device` is ignored and one
  /// worker per device measures (distinct uuids). Devices of one model (name and compute
  /// capability) share one search, a config measured on whichever is free; each model runs its
  /// own search, one model after the other. Then the top pool_finalists configs of each problem
  /// are measured on every device of the model that lacks them, so each device's best is its
  /// own measurement. A trial that loses a worker is measured again on another device, once; a
  /// device whose worker fails 3 starts in a row, or that lost 3 trials in a row that another
  /// device measured fine, leaves the pool (DeviceOutcome::left).
  std::vector<DeviceInfo> devices;
  /// The worker of a pool's device, by ordinal; empty: worker_argv with "{ordinal}" replaced in
  /// each word, or default_worker_argv(ordinal) when worker_argv is empty too.
  std::function<std::vector<std::string>(int ordinal)> device_worker_argv;
  std::size_t pool_finalists = 3;
  /// One device: after each problem's search (when it measured anything and a time budget is
  /// not spent), its top confirm_finalists configs by the objective are measured again in
  /// confirm_rounds interleaved rounds, and each is recorded as its median round (or its first
  /// failed round): a config measured once can win by its moment alone (what a config measures
  /// drifts over seconds). At most 3 passes (kMaxConfirmPasses) and the search's trial count.
  /// 0 finalists: none.
  std::size_t confirm_finalists = 3;
  int confirm_rounds = 3;
  std::uint64_t copy_bytes = 1ull << 30;  ///< size of the bandwidth-ceiling copy (256 MiB stays under the peak)
  /// Power and energy per trial through NVML (enabled implies measuring; an objective other
  /// than time needs it and turns it on).
  EnergySettings energy;
  /// What the strategy minimizes and the ranking sorts by. energy and edp need NVML: run_sweep
  /// throws Error when it cannot be loaded for the device.
  Objective objective = Objective::time;
  std::function<void(const SweepProgress&)> progress;
};

/// One trial of this run.
struct SweepTrial {
  std::size_t problem = 0;               ///< index into SweepReport::problems
  std::size_t device = 0;                ///< a pool sweep: index into SweepReport::pool
  /// Measured as a finalist: a pool sweep's, on a device of its model that lacked it; one
  /// device's, its median confirmation round (SweepOptions::confirm_finalists).
  bool finalist = false;
  Config config;
  TrialStatus status = TrialStatus::ok;
  std::string detail;
  std::optional<TrialResult> result;     ///< when the worker ran it
  std::optional<Resources> resources;
  Occupancy occupancy;
  double gbps = 0, gflops = 0;
  double compile_seconds = 0;
  std::vector<std::string> compile_warnings;  ///< the compiler's, first line of each (also when ok)
};

/// The ranking of one problem after the sweep, from the cache (resumed trials included).
struct ProblemOutcome {
  Problem problem;
  std::string canonical;                 ///< "N=8192"
  std::vector<TrialRow> ranked;          ///< ok trials of the current kernel version, best objective first
  std::optional<TrialRow> default_trial; ///< the space's default config, when measured
  std::uint64_t resumed = 0;             ///< proposals answered from the cache (not measured again)
  std::uint64_t evaluations = 0;         ///< trials measured for this problem in this run
  std::size_t confirmed = 0;             ///< one device: finalists measured again (SweepOptions::confirm_finalists)
  bool budget_reached = false;           ///< the search stopped at the budget
};

/// One device of a pool sweep (SweepOptions::devices): what it measured and its own ranking.
struct DeviceOutcome {
  DeviceInfo device;
  CopyCeiling copy;
  std::uint64_t trials = 0;              ///< measured on it this run, finalists included
  std::uint64_t finalists = 0;           ///< of trials, those measured as finalists
  double busy_seconds = 0;               ///< wall time its worker was busy with trials
  int worker_starts = 0;
  std::string left;                      ///< not empty: it left the pool, and why
  std::vector<ProblemOutcome> problems;  ///< its own trials ranked (from the cache), per problem
};

struct SweepReport {
  DeviceInfo device;
  CopyCeiling copy;
  std::string kernel;
  std::vector<ProblemOutcome> problems;
  std::vector<SweepTrial> trials;        ///< this run's, in order
  StatusCounts counts{};
  std::string strategy;                  ///< the strategy used ("auto" resolved)
  double estimated_seconds = 0;          ///< the estimate "auto" decided by
  bool default_budget = false;           ///< "auto" chose the budget (none was given)
  bool budget_exhausted = false;         ///< some problem stopped at the budget
  int worker_starts = 0;
  /// One device: the confirmation's trials (finalists x rounds, over the problems); `trials`
  /// holds one per finalist, its median round.
  std::uint64_t confirmation_trials = 0;
  int confirm_rounds = 0;                ///< SweepOptions::confirm_rounds, when any were measured
  unsigned compile_threads = 0;          ///< of the compile pool
  double wall_seconds = 0;
  double setup_seconds = 0;              ///< wall time before the search: checks, cache, plan
  double copy_seconds = 0;               ///< worker start + copy ceiling (overlaps the first compiles)
  double compile_seconds = 0;            ///< NVRTC time summed over threads
  double wait_compile_seconds = 0;       ///< wall time the GPU waited for the compiler (compile not hidden)
  /// As the worker reports them, summed over the trials (reference runs included): module load
  /// and setup (of it, input_setup_seconds: buffers filled and the reference computed), verify, timing.
  double load_seconds = 0, input_setup_seconds = 0, verify_seconds = 0, measure_seconds = 0;
  double worker_seconds = 0;             ///< the parent's wall time waiting on the worker for trials
  std::filesystem::path db_path;
  Objective objective = Objective::time;
  bool energy_measured = false;          ///< energy was asked for (--energy or the objective)
  std::string energy_note;               ///< why some trial's energy was not measured (said once)
  /// A pool sweep: one per device of SweepOptions::devices, in that order (`device` and
  /// `problems` above are the first device's). Empty for a one-device sweep.
  std::vector<DeviceOutcome> pool;
  std::size_t pool_finalists = 0;        ///< a pool sweep: SweepOptions::pool_finalists
  /// A pool sweep: a model whose every device left the pool, and what its problems ended with
  /// (the other models' results stand).
  std::vector<std::string> pool_errors;
};

/// Wall time the GPU worker was busy with trials: module load and setup, verify, timing.
[[nodiscard]] inline double gpu_busy_seconds(const SweepReport& r) {
  return r.load_seconds + r.verify_seconds + r.measure_seconds;
}
/// wall / (GPU busy + compile time not hidden): 1 when nothing but the GPU's work and the
/// compiles it had to wait for took time; 0 when nothing ran.
[[nodiscard]] inline double sweep_overhead(const SweepReport& r) {
  const double useful = gpu_busy_seconds(r) + r.wait_compile_seconds;
  return useful > 0 ? r.wall_seconds / useful : 0.0;
}

/// Runs the sweep. Throws Error when the device, the database or the worker cannot be used;
/// a config's failure is recorded as its trial's status and the sweep goes on.
[[nodiscard]] SweepReport run_sweep(const Space& space, const SweepOptions& options);

/// The kernel version a space compiles to on a device: the key of its results.
[[nodiscard]] KernelRecord kernel_record(const Space& space, const KernelSource& source, int arch);

}  // namespace tiletune
