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
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tiletune/cache_db.hpp"
#include "tiletune/device.hpp"
#include "tiletune/energy.hpp"
#include "tiletune/landscape.hpp"
#include "tiletune/measure.hpp"
#include "tiletune/objective.hpp"
#include "tiletune/physics.hpp"
#include "tiletune/plan.hpp"
#include "tiletune/replay.hpp"
#include "tiletune/shard.hpp"
#include "tiletune/strategy.hpp"
#include "tiletune/trial.hpp"

namespace tiletune {

/// When a sweep stops early, per problem: after this many measured trials (evaluations), this
/// fraction of the problem's configs, or (for the whole sweep, shared equally by the problems)
/// this much wall time. The budget of a replay is the same. Parsed from "200", "25%" or "90s" / "10m".
using SweepBudget = SearchBudget;
[[nodiscard]] SweepBudget parse_budget(const std::string& text);

/// A strategy name with `auto` resolved by the size of what is to be measured and the budget:
/// exhaustive when no budget is given and measuring everything is estimated at a minute or less
/// (auto_exhaustive_seconds), else auto_large_space_strategy, with a default budget of 10 % of
/// each problem's configs (at least 30, at most 500) when none is given.
struct StrategyChoice {
  std::string strategy;
  SearchBudget budget;          ///< the budget given, or auto's default
  bool default_budget = false;  ///< auto chose the budget
};
/// The estimate `auto` uses for a sweep: seconds per trial still to measure. The H200 sweeps of
/// the shipped spaces ran 12 to 50 trials/s with a cold compile cache
/// (bench/results/2026-11-29-h200-landscapes.md).
inline constexpr double auto_seconds_per_trial = 0.1;
/// `auto` is exhaustive up to this estimate (seconds), when no budget is given.
inline constexpr double auto_exhaustive_seconds = 60;
/// What `auto` searches a larger space with: the best strategy of the replay benchmark
/// (bench/results/2026-11-29-strategies.md). One name for every larger size for now.
inline constexpr const char* auto_large_space_strategy = "forest";
/// The estimated seconds of measuring `configs` on `devices` GPUs at auto_seconds_per_trial: for
/// an estimated count, the upper end of its 95 % interval (an exhaustive search of it must not
/// run past the minute because the estimate was low).
[[nodiscard]] double estimated_sweep_seconds(const DomainSize& configs, std::size_t devices = 1);
/// `auto` resolved for `configs` still to measure (over every problem) on `devices` GPUs.
[[nodiscard]] StrategyChoice choose_strategy(const std::string& requested, const SearchBudget& budget,
                                             const DomainSize& configs, std::size_t devices = 1);
/// The evaluations a choice allows on a problem of `configs` configs (nullopt: no count limit).
[[nodiscard]] std::optional<std::uint64_t> choice_evaluations(const StrategyChoice& choice, std::uint64_t configs);
/// Two sizes added (what a sweep of several problems measures): exact when both are; the
/// estimates' errors add up.
[[nodiscard]] DomainSize add_sizes(const DomainSize& a, const DomainSize& b);

// --- the schedule: what each problem of a sweep gets, the same for a GPU sweep and a replay ------

/// How many tie candidates a problem's tie pass measures at most, unless told otherwise
/// (`tune --confirm-ties`). 64, not 32: on the H200 the reductions have 17-46 configs within
/// the tie window and 80-116 within kTieCandidateWindow; at 32 a tie set's last members kept
/// their search times, which moved its edge: independent caches of the 0.25 ms problem agreed
/// in 3 of 10 pairs at 32 and 6 of 10 at 64, of the 7.5 us one in 6 and 10 of 10
/// (bench/results/2026-12-03-h200-tie-pass-coverage.md).
inline constexpr std::size_t kDefaultTieCandidates = 64;

/// The confirmation of a problem's finalists: the top `finalists` configs by score of what was
/// evaluated, each measured `rounds` more times (SweepOptions::confirm_finalists, confirm_rounds).
struct ConfirmPlan {
  std::size_t finalists = 3;
  int rounds = 3;
  /// After the finalists, the tie candidates (tie_candidate_points: at most this many; 0 or 1:
  /// none) measured in one more set of rounds, together, so that the tie test compares medians
  /// of one moment (SweepOptions::confirm_ties).
  std::size_t tie_candidates = kDefaultTieCandidates;
  [[nodiscard]] bool any() const noexcept { return finalists > 0 && rounds > 0; }
};

/// A sweep's schedule, decided once before the first problem: the strategy (`auto` resolved on
/// the estimate of everything left to measure), the budget the problems share, the seed, the
/// confirmation. run_sweep, the pool sweep and replay_sweep each follow it, so that a replay
/// simulates a sweep with the same options.
struct SweepSchedule {
  StrategyChoice choice;
  double estimated_seconds = 0;  ///< the estimate `auto` decided by
  std::uint64_t seed = 1;        ///< problem p searches with seed + p
  std::size_t problems = 0;
  ConfirmPlan confirm;
};
/// The schedule of a sweep of `problems` problems with `configs` still to measure over them,
/// on `devices` GPUs.
[[nodiscard]] SweepSchedule sweep_schedule(const std::string& strategy, const SearchBudget& budget, std::uint64_t seed,
                                           const ConfirmPlan& confirm, std::size_t problems, const DomainSize& configs,
                                           std::size_t devices = 1);

/// What problem p gets of a schedule.
struct ProblemSchedule {
  std::string strategy;
  /// evaluations: the choice's count or share of this problem's configs; seconds: an equal share
  /// of the time the sweep has left (its clock: wall time on a GPU, simulated in a replay).
  SearchBudget budget;
  std::uint64_t seed = 0;
  /// A warm start (`tune --warm-start`): points of this problem's domain to propose first, best
  /// first (SearchStrategy::prefer).
  std::vector<std::size_t> warm_start;
};
/// Problem p's schedule, when the sweep's clock reads elapsed_seconds and its domain has
/// domain_size configs.
[[nodiscard]] ProblemSchedule problem_schedule(const SweepSchedule& schedule, std::size_t p, std::uint64_t domain_size,
                                               double elapsed_seconds);
/// The strategy of a problem's schedule over its domain (which must outlive it), told its warm
/// start before anything else (SearchStrategy::prefer); lag: make_strategy's.
[[nodiscard]] std::unique_ptr<SearchStrategy> scheduled_strategy(const ProblemSchedule& schedule,
                                                                 const SearchDomain& domain,
                                                                 std::size_t lag = kSearchLag);
/// Whether a problem's finalists are confirmed after its search: it evaluated something, the
/// plan confirms any, and a time budget is not spent (the sweep's clock at elapsed_seconds).
[[nodiscard]] bool confirms_after_search(const SweepSchedule& schedule, std::uint64_t evaluated,
                                         double elapsed_seconds);
/// The most confirmation trials of a problem whose search evaluated `evaluated`: as many as the
/// search (at least one pass), so that a drift that made many configs look fast costs at most a
/// second search.
[[nodiscard]] std::uint64_t confirmation_limit(const ConfirmPlan& plan, std::uint64_t evaluated);

/// A config of what a problem's search evaluated, with its score (lower is better).
struct ScoredPoint {
  double score = 0;
  std::string params;  ///< canonical: "A=6;B=2;C=1"
  std::size_t point = 0;
};
/// The finalist rule: the points of the top `count` by score, best first; ties by canonical
/// params (the same in a sweep's domain and in a replay's, whatever their ids).
[[nodiscard]] std::vector<std::size_t> top_points(std::vector<ScoredPoint> scored, std::size_t count);

/// How far from the best score a config may be to be a tie candidate: twice the tie test's cap
/// (tiletune/answers.hpp), because a config's search time was measured in its own moment, and
/// what a config measures drifts over seconds by more than the cap (on the H200 a 9 us reduction
/// ran 10 % faster for 2 s of one sweep).
inline constexpr double kTieCandidateWindow = 0.10;
/// The tie candidate rule: the best point and every other within kTieCandidateWindow of its
/// score, nearest first, at most `count`, and the points of the `standing` answers (the configs
/// the runs before answered with: they stay while they are held, answers.hpp) whatever their
/// score, right after the best. Empty when fewer than two: nothing to compare.
[[nodiscard]] std::vector<std::size_t> tie_candidate_points(std::vector<ScoredPoint> scored, std::size_t count,
                                                            const std::vector<std::string>& standing = {});

/// What a problem's confirmation measured.
struct Confirmation {
  std::uint64_t trials = 0;            ///< confirmation trials (finalists x rounds, over the passes)
  std::size_t finalists = 0;           ///< distinct configs confirmed
  std::vector<std::size_t> confirmed;  ///< their points, in the order they were confirmed
  std::size_t tie_candidates = 0;      ///< configs measured together in the tie pass (0: none)
};
/// Passes of a confirmation at most. Among configs that lie within the noise of each other
/// (on the H200, the 9 us reduction of N=10^6 differs by 3.5 % between two sweeps, and its top
/// 20 lie within 3 %) every pass brings up another lucky one: the H200 took 23 passes before
/// the cap was the search's trial count, for no steadier winner.
inline constexpr int kMaxConfirmPasses = 3;
/// The confirmation's passes: each asks `finalists` for the top now (after what the passes
/// before measured) and hands those to `measure` (which measures each plan.rounds times on each
/// of `devices` and returns the trials it measured), until every one of the top was confirmed,
/// for at most kMaxConfirmPasses passes and none that would take it past max_trials. Then the
/// tie pass: `ties` (when given and plan.tie_candidates > 1) names the tie candidates after the
/// passes, and `measure` takes them all in one set of rounds, so that the tie set's medians come
/// from one moment; cut to what max_trials allows on its own (the tie pass at most doubles a
/// confirmation's trials), and none when fewer than two remain or the last pass measured them
/// all together already.
[[nodiscard]] Confirmation run_confirmation(
    const ConfirmPlan& plan, std::uint64_t max_trials, std::size_t devices,
    const std::function<std::vector<std::size_t>()>& finalists,
    const std::function<std::uint64_t(const std::vector<std::size_t>&)>& measure,
    const std::function<std::vector<std::size_t>()>& ties = {});

// --- warm starts -----------------------------------------------------------------------------------

/// Another device's rankings of a kernel, per problem: what `--warm-start DB|RECORDING` reads.
struct WarmStart {
  std::string source;  ///< "other.db: NVIDIA A100 (GPU-...)", for reports
  /// Empty, or why this warm start may not help (its device is of another architecture), for
  /// the user's eyes (the CLI prints it on stderr).
  std::string note;
  std::map<std::string, std::vector<std::string>> rankings;  ///< canonical problem -> ok configs' params, fastest first
};
/// The points a warm start passes to the strategy: enough for the first window of a strategy
/// that learns (in_flight_width: kSearchLag, 8), so that the model starts from the other device's best
/// region and then learns from this device's times instead of copying the other's ranking.
inline constexpr std::size_t warm_start_points = 8;
/// Reads a warm start for `space`'s kernel from a cache DB (SQLite) or a landscape recording
/// (CSV). A DB: the ok trials of the current kernel version on one other device: one of the
/// architecture `arch` (compute capability as 90 for sm_90; 0: unknown) when the cache has one,
/// else any, the one with the most ok trials of the kernel (times of two devices are not on one
/// scale, so they are not merged). On the published landscapes another device's best was within
/// 95 % of the optimum at once within one architecture and led the search astray across
/// (bench/results/2026-12-02-devvm-strategies-any-size.md): a device of another architecture
/// gets a `note`. The devices tuned now (exclude_uuids) and, when not empty, those named
/// exclude_name are not taken. Throws Error when the file is neither, is of another kernel, or
/// has no ok trial of it on another device.
[[nodiscard]] WarmStart load_warm_start(const std::filesystem::path& path, const Space& space,
                                        const std::vector<std::string>& exclude_uuids = {},
                                        const std::string& exclude_name = {}, int arch = 0);
/// The top `count` configs of a problem's ranking that are points of its domain (configs the
/// domain lacks are skipped), best first; empty when the warm start has no ranking of it.
[[nodiscard]] std::vector<std::size_t> warm_start_of(const WarmStart& warm, const Space& space,
                                                     const std::string& canonical_problem, const SpaceDomain& domain,
                                                     std::size_t count = warm_start_points);

/// Counts per TrialStatus, indexed by the enum's value.
using StatusCounts = std::array<std::uint64_t, trial_status_count>;

struct SweepProgress {
  std::uint64_t done = 0;   ///< trials finished in this run (resumed ones excluded)
  std::uint64_t total = 0;  ///< trials this run will do
  StatusCounts counts{};
  double elapsed_seconds = 0;
  std::string current;  ///< "N=8192 TILE=32 BLOCK_ROWS=8 PAD=1"
};

struct SweepOptions {
  /// The GPU to tune on, as list_devices() describes it (the caller lists the devices, so
  /// that a sweep runs against any worker: the fake one in tests). Its ordinal picks the
  /// default worker.
  DeviceInfo device;
  std::vector<Problem> problems;  ///< empty: every problem of the space
  unsigned compile_threads = 0;   ///< 0: one per core
  const CubinCache* cubin_cache = nullptr;
  /// One compiler per compile thread (make_worker_compiler: a compile worker process each, as
  /// `tiletune tune` does); empty: NVRTC in the pool's threads.
  CompilerFactory compiler;
  std::filesystem::path db_path;  ///< empty: default_cache_path()
  bool force = false;             ///< re-measure trials the cache already has
  Shard shard;                    ///< only this shard's configs (tiletune/shard.hpp); default: all
  TimingSettings timing;
  double deadline_seconds = 10;  ///< per trial, after which the worker is killed
  SweepBudget budget;
  /// A search strategy (strategy_names()) or "auto": exhaustive when the sweep is estimated at
  /// a minute or less, else the best strategy of the replay benchmark with a budget of 10 % of
  /// each problem's configs (at least 30) unless budget is set.
  std::string strategy = "auto";
  std::uint64_t seed = 1;  ///< the strategy's seed (problem i uses seed + i)
  /// Another device's rankings (load_warm_start): each problem's search proposes the top
  /// warm_start_points of its ranking first, and measures them like any other proposal.
  WarmStart warm_start;
  std::vector<std::string> worker_argv;  ///< the worker to start; empty: default_worker_argv(device.ordinal)
  /// Several GPUs of one host (`tune --devices`): when not empty, `device` is ignored and one
  /// worker per device measures (distinct uuids). Devices of one model (name and compute
  /// capability) share one search, a config measured on whichever is free; each model runs its
  /// own search, one model after the other, and confirms its finalists on every device of the
  /// model (confirm_finalists), so each device's best is its own measurement. One GPU is a pool
  /// of one: the same driver. A trial that loses a worker is measured again on another device, once; a
  /// device whose worker fails 3 starts in a row, or that lost 3 trials in a row that another
  /// device measured fine, leaves the pool (DeviceOutcome::left).
  std::vector<DeviceInfo> devices;
  /// The worker of a pool's device, by ordinal; empty: worker_argv with "{ordinal}" replaced in
  /// each word, or default_worker_argv(ordinal) when worker_argv is empty too.
  std::function<std::vector<std::string>(int ordinal)> device_worker_argv;
  /// After each problem's search (when it measured anything and a time budget is not spent),
  /// its top confirm_finalists configs by the objective (the best any device of the model
  /// measured) are measured again on every device of the model in confirm_rounds interleaved
  /// rounds, and each is recorded per device as its median round (or its first failed round): a
  /// config measured once can win by its moment alone (what a config measures drifts over
  /// seconds). At most 3 passes (kMaxConfirmPasses) and the search's trial count per device.
  /// 0 finalists: none (on several GPUs, each device's best is then only what it measured).
  std::size_t confirm_finalists = 3;
  int confirm_rounds = 3;
  /// Then the problem's tie candidates (tie_candidate_points, at most this many; 0: none):
  /// every config within 10 % of the best score, and each device's standing answer, measured in
  /// one more set of confirm_rounds rounds together, so that its tie set (answers.hpp) compares
  /// medians of one moment, not search times of many. Time objective only.
  std::size_t confirm_ties = kDefaultTieCandidates;
  std::uint64_t copy_bytes = 1ull << 30;  ///< size of the bandwidth-ceiling copy (256 MiB stays under the peak)
  /// Power and energy per trial through NVML (enabled implies measuring; an objective other
  /// than time needs it and turns it on).
  EnergySettings energy;
  /// What the strategy minimizes and the ranking sorts by. energy and edp need NVML: run_sweep
  /// throws Error when it cannot be loaded for the device.
  Objective objective = Objective::time;
  std::function<void(const SweepProgress&)> progress;
  /// Asked between trials (from the sweep's thread): true stops the sweep (`tune` on SIGINT or
  /// SIGTERM). What is queued is dropped, the trials being measured finish (each within its
  /// deadline) and are not recorded, what was recorded stays, no confirmation starts, and the
  /// report is ranked and marked SweepReport::interrupted; a rerun resumes from the cache.
  std::function<bool()> interrupted;
  /// `tune --good-enough P%`: a problem's search ends once its best reaches this share (0, 1]
  /// of its ceiling (good_enough_share: GB/s of the bandwidth ceiling or GFLOP/s of the peak,
  /// whichever is nearer). Needs the time objective and the space's metrics. nullopt: off.
  std::optional<double> good_enough;
};

/// One trial of this run.
struct SweepTrial {
  std::size_t problem = 0;  ///< index into SweepReport::problems
  std::size_t device = 0;   ///< index into SweepReport::pool (0 on one GPU)
  /// A finalist's median confirmation round on its device (SweepOptions::confirm_finalists).
  bool finalist = false;
  Config config;
  TrialStatus status = TrialStatus::ok;
  std::string detail;
  std::optional<TrialResult> result;  ///< when the worker ran it
  std::optional<Resources> resources;
  Occupancy occupancy;
  double gbps = 0, gflops = 0;
  Ceilings ceilings;  ///< what the physics guard held it against (when it ran ok)
  double compile_seconds = 0;
  std::vector<std::string> compile_warnings;  ///< the compiler's, first line of each (also when ok)
};

/// The ranking of one problem after the sweep, from the cache (resumed trials included).
struct ProblemOutcome {
  Problem problem;
  std::string canonical;                  ///< "N=8192"
  std::vector<TrialRow> ranked;           ///< ok trials of the current kernel version, best objective first
  std::optional<TrialRow> default_trial;  ///< the space's default config, when measured
  std::uint64_t resumed = 0;              ///< proposals answered from the cache (not measured again)
  std::uint64_t evaluations = 0;          ///< trials measured for this problem in this run
  std::size_t confirmed = 0;     ///< finalists measured again (SweepOptions::confirm_finalists), over the models
  std::size_t tie_candidates = 0;  ///< configs measured together in the tie pass (confirm_ties), over the models
  std::size_t warm_started = 0;  ///< configs of the warm start proposed first (SweepOptions::warm_start)
  bool budget_reached = false;   ///< the search stopped at the budget
  bool good_enough = false;      ///< the search stopped at SweepOptions::good_enough
};

/// One device of a sweep: what it measured and its own ranking.
struct DeviceOutcome {
  DeviceInfo device;
  CopyCeiling copy;
  std::uint64_t trials = 0;     ///< measured on it this run, finalists included
  std::uint64_t finalists = 0;  ///< of trials, those measured as finalists
  double busy_seconds = 0;      ///< wall time its worker was busy with trials
  int worker_starts = 0;
  std::string left;                      ///< not empty: it left the pool, and why
  std::vector<ProblemOutcome> problems;  ///< its own trials ranked (from the cache), per problem
};

struct SweepReport {
  DeviceInfo device;
  CopyCeiling copy;
  std::string kernel;
  std::vector<ProblemOutcome> problems;
  std::vector<SweepTrial> trials;  ///< this run's, in order
  StatusCounts counts{};
  std::string strategy;           ///< the strategy used ("auto" resolved)
  double estimated_seconds = 0;   ///< the estimate "auto" decided by
  bool default_budget = false;    ///< "auto" chose the budget (none was given)
  bool budget_exhausted = false;  ///< some problem stopped at the budget
  int worker_starts = 0;
  /// The confirmation's trials (finalists x rounds x devices, over the problems); `trials` holds
  /// one per finalist and device, its median round.
  std::uint64_t confirmation_trials = 0;
  int confirm_rounds = 0;        ///< SweepOptions::confirm_rounds, when any were measured
  unsigned compile_threads = 0;  ///< of the compile pool
  double wall_seconds = 0;
  double setup_seconds = 0;         ///< wall time before the search: checks, cache, plan
  double copy_seconds = 0;          ///< worker start + copy ceiling (overlaps the first compiles)
  double compile_seconds = 0;       ///< NVRTC time summed over threads
  double wait_compile_seconds = 0;  ///< wall time the GPU waited for the compiler (compile not hidden)
  /// As the worker reports them, summed over the trials (reference runs included): module load
  /// and setup (of it, input_setup_seconds: buffers filled and the reference computed), verify, timing.
  double load_seconds = 0, input_setup_seconds = 0, verify_seconds = 0, measure_seconds = 0;
  double worker_seconds = 0;  ///< the parent's wall time waiting on the worker for trials
  std::filesystem::path db_path;
  Objective objective = Objective::time;
  bool energy_measured = false;  ///< energy was asked for (--energy or the objective)
  std::string energy_note;       ///< why some trial's energy was not measured (said once)
  /// One per device (SweepOptions::devices in that order, or the one SweepOptions::device):
  /// `device` and `problems` above are the first device's.
  std::vector<DeviceOutcome> pool;
  /// A model whose every device left the pool, and what its problems ended with (the other
  /// models' results stand).
  std::vector<std::string> pool_errors;
  bool interrupted = false;  ///< stopped by SweepOptions::interrupted
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

// --- a replay of a sweep ---------------------------------------------------------------------------

/// `tune --replay`: what a sweep with these options would do, answered from a recording.
struct ReplaySweepOptions {
  std::string strategy = "auto";
  SearchBudget budget;
  std::uint64_t seed = 1;
  ConfirmPlan confirm;           ///< as SweepOptions::confirm_finalists, confirm_rounds
  unsigned compile_threads = 0;  ///< for the in-flight width, as the sweep's
  std::size_t in_flight = 0;     ///< 0: the sweep's (sweep_search_run)
  Shard shard;
  const WarmStart* warm_start = nullptr;
  /// As SweepOptions::good_enough, against the recording's ceilings (its header's device and copy).
  std::optional<double> good_enough;
};
/// One problem of a replayed sweep.
struct ReplayedProblem {
  ReplayProblem recording;
  ProblemSchedule schedule;
  std::size_t in_flight = 0;
  SearchTrace trace;
  /// The finalists confirmed: each re-evaluated rounds times at its recorded measure cost (its
  /// compile is cached by then, as on a GPU); a recording has one time per config, so each keeps
  /// its recorded outcome.
  Confirmation confirmation;
  double confirmation_cost_seconds = 0;
};
struct ReplayedSweep {
  SweepSchedule schedule;
  std::vector<ReplayedProblem> problems;
  double clock_seconds = 0;  ///< the simulated clock at the end: every search and confirmation
};
/// Replays a sweep of `problems` against a recording with the schedule a sweep makes
/// (sweep_schedule on the recorded configs of every problem, problem_schedule on the simulated
/// clock, the confirmation by the sweep's rule). Throws Error as replay_problem does.
[[nodiscard]] ReplayedSweep replay_sweep(const Space& space, const Landscape& landscape,
                                         const std::vector<Problem>& problems, const ReplaySweepOptions& options);

/// The kernel version a space compiles to on a device: the key of its results.
[[nodiscard]] KernelRecord kernel_record(const Space& space, const KernelSource& source, int arch);

}  // namespace tiletune
