// run_sweep: a pipeline of named stages per problem. Plan the work (the domain and what the
// cache knows) -> run_search over a GpuEvaluator, which compiles ahead (CompileAhead), measures
// in the worker (WorkerSession) and writes each trial as it completes (TrialRecorder) -> the
// finalists measured again in interleaved rounds (confirm_problem) -> rank from the cache. The
// search loop is the one a replay runs (strategy/run_search.cpp), so a replay of a recording is
// a faithful simulation of a sweep.
#include "tiletune/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <memory>

#include "tune/sweep_stages.hpp"
#include "tiletune/physics_guard.hpp"
#include "tiletune/replay.hpp"
#include "tiletune/strategy.hpp"
#include "tiletune/validate.hpp"
#include "tiletune/worker.hpp"

namespace tiletune {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

SweepBudget parse_budget(const std::string& text) {
  SweepBudget b;
  if (text.empty()) return b;
  double value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  auto [end, ec] = std::from_chars(first, last, value);
  const std::string unit(end, last);
  if (ec != std::errc() || !(value > 0) || !std::isfinite(value))
    throw Error(fmt::format("--budget '{}': expected a count (200), a share of the space (25%) or a time (90s, 10m)",
                            text));
  if (unit.empty()) {
    if (value != std::floor(value)) throw Error(fmt::format("--budget '{}': a trial count is a whole number", text));
    b.evaluations = static_cast<std::uint64_t>(value);
  } else if (unit == "%") {
    if (value > 100) throw Error(fmt::format("--budget '{}': a share of the space is at most 100%", text));
    b.fraction = value / 100.0;
  } else if (unit == "s") {
    b.seconds = value;
  } else if (unit == "m" || unit == "min") {
    b.seconds = value * 60;
  } else if (unit == "h") {
    b.seconds = value * 3600;
  } else {
    throw Error(fmt::format("--budget '{}': unknown unit '{}' (use %, s, m or h)", text, unit));
  }
  return b;
}

KernelRecord kernel_record(const Space& space, const KernelSource& source, int arch) {
  KernelRecord k;
  k.name = space.kernel;
  k.source_hash = source.hash;  // the source and every header it may include, by content
  // The options NVRTC gets, defaults included, with include directories by their role (the
  // same in every checkout); the params' -DNAME=value are the trial's key, not the version's.
  const CompileRequest request{&source, space_options(space), fmt::format("sm_{}", arch), space.entry};
  std::string options;
  for (const std::string& o : key_options(request)) options += (options.empty() ? "" : " ") + o;
  // Problem sizes as -D and ${} in options are values of the trial's problem and config; the
  // version records that they are passed.
  k.options = options + (space.problem_defines ? " problem_defines" : "") + " entry=" + space.entry;
  k.nvrtc_version = nvrtc_version();
  return k;
}

namespace sweep_detail {

DeviceRecord device_record(const DeviceInfo& d, std::optional<double> copy_gbps) {
  DeviceRecord r;
  r.uuid = d.uuid;
  r.name = d.name;
  r.cc_major = d.cc_major;
  r.cc_minor = d.cc_minor;
  r.sm_count = d.sm_count;
  r.memory_bytes = static_cast<std::int64_t>(d.total_memory);
  r.l2_bytes = static_cast<std::int64_t>(d.l2_bytes);
  r.driver_version = d.driver_version;
  r.copy_gbps = copy_gbps;  // nullopt keeps what the cache has
  return r;
}

/// Checks what needs no worker: the device description, the objective's NVML, the space's
/// inputs and checks. Returns the energy settings the trials get.
EnergySettings check_before_work(const Space& space, const SweepOptions& options, const DeviceInfo& device) {
  if (device.uuid.empty() || device.arch() == 0)
    throw Error("run_sweep: no device described (SweepOptions::device, from list_devices(); a sweep needs a GPU, "
                "`tiletune plan` needs none)");
  // An impossible check or input is the space's error: say so before any GPU work.
  validate_inputs_and_checks(space, {fmt::format("sm_{}", device.arch()), options.cubin_cache});
  EnergySettings energy = options.energy;
  if (options.objective != Objective::time) {
    // Fail before measuring anything: a search for the least energy without energy is no search.
    std::string why;
    if (!NvmlEnergySource::open(device.uuid, why))
      throw Error(fmt::format("--objective {} needs NVML on {} ({}): {}", objective_name(options.objective),
                              device.name, device.uuid, why));
    energy.enabled = true;
  }
  return energy;
}

SweepSchedule schedule_sweep(const SweepOptions& options, const std::vector<ProblemWork>& work, std::size_t devices,
                             SweepReport& report) {
  DomainSize unknown{0, true, 0};
  for (const ProblemWork& w : work) {
    const DomainSize size = w.space.domain.size_info();
    unknown = add_sizes(unknown, DomainSize{w.unknown, size.exact, size.relative_error});
  }
  const SweepSchedule schedule =
      sweep_schedule(options.strategy, options.budget, options.seed,
                     ConfirmPlan{options.confirm_finalists, options.confirm_rounds}, work.size(), unknown, devices);
  report.estimated_seconds = schedule.estimated_seconds;
  report.strategy = schedule.choice.strategy;
  report.default_budget = schedule.choice.default_budget;
  return schedule;
}

ProblemSchedule schedule_problem(const Space& space, const SweepOptions& options, const SweepSchedule& schedule,
                                 const ProblemWork& work, std::size_t p, double elapsed_seconds) {
  ProblemSchedule ps = problem_schedule(schedule, p, work.space.domain.size(), elapsed_seconds);
  ps.warm_start = warm_start_of(options.warm_start, space, work.canonical, work.space);
  return ps;
}

/// Trials this run may measure on a problem: what the budget allows of what is not known.
std::uint64_t problem_limit(const SearchBudget& budget, const ProblemWork& work) {
  return budget.evaluations ? std::min(work.unknown, *budget.evaluations) : work.unknown;
}

namespace {

/// Stage 3 of problem p, whose search measured `evaluated` trials: its finalists confirmed
/// (confirm_problem), in at most confirmation_limit trials.
void confirm_stage(const SweepStages& stages, const CacheDb& db, const SweepSchedule& schedule, const ProblemWork& work,
                   std::size_t p, std::uint64_t evaluated, SweepReport& report) {
  const ConfirmPlan& plan = schedule.confirm;
  const Confirmation c = confirm_problem(stages, db, report.device.uuid, work, p, plan.finalists, plan.rounds,
                                         confirmation_limit(plan, evaluated));
  report.confirmation_trials += c.trials;
  if (c.trials > 0) report.confirm_rounds = plan.rounds;
  report.problems[p].confirmed = c.finalists;
}

}  // namespace

}  // namespace sweep_detail

using namespace sweep_detail;

SweepReport run_sweep(const Space& space, const SweepOptions& options) {
  if (!options.devices.empty()) return run_pool_sweep(space, options);
  const auto start = Clock::now();
  SweepReport report;
  report.kernel = space.kernel;
  report.device = options.device;
  report.objective = options.objective;
  const EnergySettings energy = check_before_work(space, options, options.device);
  report.energy_measured = energy.enabled;
  const DeviceLimits limits = device_limits(report.device);

  report.db_path = options.db_path.empty() ? default_cache_path() : options.db_path;
  CacheDb db = CacheDb::open(report.db_path);
  CubinCache no_cache{std::filesystem::path{}};
  CompileAhead compile(space, fmt::format("sm_{}", report.device.arch()), options.compile_threads,
                       options.cubin_cache ? *options.cubin_cache : no_cache, options.compiler);
  WorkerSession worker(options.worker_argv.empty()
                           ? default_worker_argv(report.device.ordinal,
                                                 options.cubin_cache ? options.cubin_cache->directory() : "")
                           : options.worker_argv,
                       WorkerSettings{options.timing, options.deadline_seconds, energy});
  worker.start_copy(options.copy_bytes);  // while the first compiles run
  const std::int64_t device_id = db.upsert_device(device_record(report.device, std::nullopt));
  // The ceiling goes with the device once it is measured: with the first trial, or at the end.
  bool copy_recorded = false;
  const auto record_copy = [&] {
    if (copy_recorded) return;
    report.copy = worker.copy();
    (void)db.upsert_device(device_record(report.device, report.copy.gbps));
    copy_recorded = true;
  };
  const std::int64_t kernel_id = db.upsert_kernel(kernel_record(space, compile.main_source(), report.device.arch()));
  // The report's speedups need the baseline, and the cache knows no YAML.
  if (space.default_config) db.set_meta("default_config/" + space.kernel, canonical_config(space, Config{*space.default_config}));

  // Stage 1: per problem, the domain and what the cache knows.
  const std::vector<Problem> problems = options.problems.empty() ? all_problems(space) : options.problems;
  std::vector<ProblemWork> work;
  for (const Problem& p : problems)
    work.push_back(plan_problem(space, p, options.shard, db, report.device.uuid, options.objective, options.force));
  for (const ProblemWork& w : work) {
    ProblemOutcome& outcome = report.problems.emplace_back();
    outcome.problem = w.problem;
    outcome.canonical = w.canonical;
  }
  const SweepSchedule schedule = schedule_sweep(options, work, 1, report);

  // Stage 2: search each problem, measuring and recording each trial as it completes.
  TrialRecorder recorder(db, device_id, kernel_id, space, limits);
  SweepProgress progress;
  std::vector<std::uint64_t> allowed;  // per problem, for the progress total
  for (std::size_t p = 0; p < work.size(); ++p)
    progress.total += allowed.emplace_back(problem_limit(problem_schedule(schedule, p, work[p].space.domain.size(), 0).budget, work[p]));
  const auto note_trial = [&](SweepTrial& t) {
    if (report.trials.empty()) record_copy();
    if (t.result && !t.result->energy_note.empty() && report.energy_note.empty())
      report.energy_note = t.result->energy_note;
    ++report.counts[static_cast<std::size_t>(t.status)];
    ++progress.done;
    progress.total = std::max(progress.total, progress.done);  // the finalists' confirmations come on top
    ++progress.counts[static_cast<std::size_t>(t.status)];
    progress.current = fmt::format("{} {}", format_problem(space, problems[t.problem]), format_config(space, t.config));
    progress.elapsed_seconds = seconds_since(start);
    report.trials.push_back(std::move(t));
    if (options.progress) options.progress(progress);
  };
  const SweepStages stages{space, limits, options.objective, compile, worker, recorder, note_trial};
  report.setup_seconds = seconds_since(start);
  for (std::size_t p = 0; p < work.size(); ++p) {
    const ProblemSchedule plan = schedule_problem(space, options, schedule, work[p], p, seconds_since(start));
    const std::unique_ptr<SearchStrategy> strategy = scheduled_strategy(plan, work[p].space.domain);
    GpuEvaluator evaluator(stages, work[p], p);
    SearchRun run = sweep_search_run(work[p].space.domain, *strategy, plan.budget, compile.threads());
    if (options.good_enough)
      run.good_enough = good_enough_check(space, work[p].problem, work[p].space,
                                          [&] { return ceiling_inputs(limits, worker.copy().gbps); }, *options.good_enough);
    const SearchTrace trace = run_search(work[p].space.domain, *strategy, evaluator, run);
    ProblemOutcome& outcome = report.problems[p];
    outcome.warm_started = plan.warm_start.size();
    // Stage 3: the finalists measured again, when this run measured anything and time is left.
    if (confirms_after_search(schedule, trace.evaluated, seconds_since(start)))
      confirm_stage(stages, db, schedule, work[p], p, trace.evaluated, report);
    outcome.evaluations = trace.evaluated;
    outcome.resumed = trace.resumed;
    outcome.budget_reached = trace.budget_exhausted;
    outcome.good_enough = trace.good_enough;
    report.budget_exhausted = report.budget_exhausted || trace.budget_exhausted;
    report.wait_compile_seconds += evaluator.waited_for_compile_seconds();
    // Progress counts what this problem was allowed; when it stopped short, the rest is not coming.
    progress.total -= allowed[p] - std::min(allowed[p], trace.evaluated);
  }
  record_copy();
  report.compile_seconds = compile.finished_seconds();
  report.compile_threads = compile.threads();
  report.worker_starts = worker.starts();
  report.load_seconds = worker.times().load_seconds;
  report.input_setup_seconds = worker.times().setup_seconds;
  report.verify_seconds = worker.times().verify_seconds;
  report.measure_seconds = worker.times().measure_seconds;
  report.worker_seconds = worker.times().round_trip_seconds;
  report.copy_seconds = worker.times().copy_seconds;

  // Stage 4: the ranking per problem, from the cache (so resumed trials count too).
  for (ProblemOutcome& outcome : report.problems)
    rank_problem(space, db, report.device.uuid, options.objective, outcome);
  report.wall_seconds = seconds_since(start);
  return report;
}

}  // namespace tiletune
