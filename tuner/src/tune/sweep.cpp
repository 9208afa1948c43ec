// run_sweep: one driver for one GPU or several of one host (SweepOptions::devices): one GPU is a
// pool of one. The devices are grouped by model (name + compute capability), one model after the
// other; per model a DevicePool, and per problem a pipeline of named stages: plan the work (the
// domain, and what the cache knows of any device of the model) -> run_search over a
// PoolEvaluator, which compiles ahead (CompileAhead), measures on whichever device is free and
// writes each trial as it completes (TrialRecorder) -> the finalists confirmed on every device
// of the model in interleaved rounds (confirm_problem), so each device's best is its own
// measurement -> each device's ranking from the cache. The search loop is the one a replay runs
// (strategy/run_search.cpp) and the schedule is replay_sweep's (schedule.cpp), so a replay of a
// recording is a faithful simulation of a sweep. One CompileAhead per architecture, shared by
// the models of that architecture.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "tune/device_pool.hpp"
#include "tune/sweep_stages.hpp"
#include "tiletune/physics_guard.hpp"
#include "tiletune/worker.hpp"

namespace tiletune {

namespace sweep_detail {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// Indices into the devices, one list per model, in the order the models first appear.
std::vector<std::vector<std::size_t>> group_by_model(const std::vector<DeviceInfo>& devices) {
  std::vector<std::vector<std::size_t>> groups;
  std::map<std::pair<std::string, int>, std::size_t> group_of;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto key = std::make_pair(devices[i].name, devices[i].arch());
    auto [it, added] = group_of.emplace(key, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

void check_distinct(const std::vector<DeviceInfo>& devices) {
  std::set<std::string> uuids;
  std::set<int> ordinals;
  for (const DeviceInfo& d : devices) {
    if (!uuids.insert(d.uuid).second)
      throw Error(fmt::format("run_sweep: device {} ({}) is listed twice in SweepOptions::devices", d.ordinal, d.uuid));
    if (!ordinals.insert(d.ordinal).second)
      throw Error(fmt::format("run_sweep: ordinal {} is listed twice in SweepOptions::devices", d.ordinal));
  }
}

std::vector<std::string> worker_argv_of(const SweepOptions& options, int ordinal) {
  if (options.device_worker_argv) return options.device_worker_argv(ordinal);
  if (options.worker_argv.empty())
    return default_worker_argv(ordinal, options.cubin_cache ? options.cubin_cache->directory() : "");
  std::vector<std::string> argv = options.worker_argv;
  for (std::string& word : argv)
    for (std::size_t at; (at = word.find("{ordinal}")) != std::string::npos;)
      word.replace(at, 9, std::to_string(ordinal));
  return argv;
}

/// What the sweep holds for every model: the devices, the cache, the compiles per arch, the report.
struct Sweep {
  const Space& space;
  const SweepOptions& options;
  std::vector<DeviceInfo> devices;  ///< SweepOptions::devices, or the one SweepOptions::device
  Clock::time_point start;
  CacheDb db;
  std::vector<Problem> problems;
  std::map<int, std::unique_ptr<CompileAhead>> compiles;  ///< per arch
  std::map<int, std::int64_t> kernel_ids;                 ///< per arch
  std::vector<std::int64_t> device_ids;                   ///< per device
  EnergySettings energy;
  SweepReport report;
  SweepProgress progress;
};

std::vector<std::string> uuids_of(const Sweep& s, const std::vector<std::size_t>& group) {
  std::vector<std::string> uuids;
  for (const std::size_t d : group) uuids.push_back(s.devices[d].uuid);
  return uuids;
}

std::string model_name(const DeviceInfo& d) { return fmt::format("{} (sm_{})", d.name, d.arch()); }

/// Stage 3 of a problem whose search measured `evaluated` trials: its finalists confirmed on
/// every device of the model, when the schedule confirms after this search.
void confirm_stage(Sweep& s, DevicePool& pool, const PoolStages& stages, const SweepSchedule& schedule,
                   const ProblemWork& work, std::size_t p, std::uint64_t evaluated, double model_seconds) {
  if (s.report.interrupted || !confirms_after_search(schedule, evaluated, model_seconds)) return;
  const ConfirmPlan& plan = schedule.confirm;
  const Confirmation c = confirm_problem(pool, stages, s.db, work, p, plan, confirmation_limit(plan, evaluated));
  s.report.confirmation_trials += c.trials;
  if (c.trials > 0) s.report.confirm_rounds = plan.rounds;
  s.report.problems[p].confirmed += c.finalists;
  s.report.problems[p].tie_candidates += c.tie_candidates;
}

/// Stages 2 and 3 of one problem on a model's pool: its search, then its confirmation. Throws
/// PoolLost when the model has lost every device. `model_start`: the schedule's clock.
void search_problem(Sweep& s, DevicePool& pool, const PoolStages& stages, const SweepSchedule& schedule,
                    const ProblemWork& work, std::size_t p, Clock::time_point model_start) {
  const ProblemSchedule plan = schedule_problem(s.space, s.options, schedule, work, p, seconds_since(model_start));
  const std::uint64_t allowed = problem_limit(plan.budget, work);
  s.progress.total += allowed;
  // A worker that finishes while the oldest trial still runs takes the next one: two in flight
  // per GPU, and a strategy that learns as far behind as that window (kSearchLag on up to 4 GPUs).
  const std::size_t pool_window = 2 * pool.size();
  const auto strategy = scheduled_strategy(plan, work.space.domain, std::max(kSearchLag, pool_window));
  PoolEvaluator evaluator(pool, stages, work, p);
  SearchRun run = sweep_search_run(work.space.domain, *strategy, plan.budget, stages.compile.threads());
  run.in_flight = std::max(run.in_flight, pool_window);
  run.interrupted = s.options.interrupted;
  if (s.options.good_enough)
    run.good_enough = good_enough_check(
        s.space, work.problem, work.space,
        [&pool, &stages] { return ceiling_inputs(stages.limits, pool.copy(0).gbps); }, *s.options.good_enough);
  const SearchTrace trace = run_search(work.space.domain, *strategy, evaluator, run);
  s.report.interrupted = s.report.interrupted || trace.interrupted;
  ProblemOutcome& outcome = s.report.problems[p];
  outcome.evaluations += trace.evaluated;
  outcome.resumed += trace.resumed;
  outcome.warm_started = std::max(outcome.warm_started, plan.warm_start.size());
  outcome.budget_reached = outcome.budget_reached || trace.budget_exhausted;
  outcome.good_enough = outcome.good_enough || trace.good_enough;
  s.report.budget_exhausted = s.report.budget_exhausted || trace.budget_exhausted;
  // Progress counts what this problem was allowed; when it stopped short, the rest is not coming.
  s.progress.total -= allowed - std::min(allowed, trace.evaluated);
  s.report.wait_compile_seconds += evaluator.waited_for_compile_seconds();
  confirm_stage(s, pool, stages, schedule, work, p, trace.evaluated, seconds_since(model_start));
}

/// A device's copy ceiling into the cache, once its worker measured it.
void record_copy(Sweep& s, const DevicePool& pool, std::size_t member, std::size_t device) {
  DeviceOutcome& d = s.report.pool[device];
  if (d.copy.gbps > 0) return;
  d.copy = pool.copy(member);
  if (d.copy.gbps > 0) (void)s.db.upsert_device(device_record(d.device, d.copy.gbps));
}

/// What each device of a model did, into the report (and its copy ceiling into the cache).
void collect_devices(Sweep& s, const DevicePool& pool, const std::vector<std::size_t>& group) {
  for (std::size_t i = 0; i < group.size(); ++i) {
    record_copy(s, pool, i, group[i]);
    DeviceOutcome& d = s.report.pool[group[i]];
    const WorkerTimes& times = pool.session(i).times();
    d.left = pool.left(i);
    d.worker_starts = pool.session(i).starts();
    d.busy_seconds = times.round_trip_seconds;
    s.report.worker_starts += d.worker_starts;
    s.report.load_seconds += times.load_seconds;
    s.report.input_setup_seconds += times.setup_seconds;
    s.report.verify_seconds += times.verify_seconds;
    s.report.measure_seconds += times.measure_seconds;
    s.report.worker_seconds += times.round_trip_seconds;
    s.report.copy_seconds += times.copy_seconds;
  }
}

/// The problems of a model that were not tuned because every device of it left the pool.
void note_pool_lost(Sweep& s, const std::vector<ProblemWork>& work, std::size_t p, const DeviceInfo& first,
                    const PoolLost& e) {
  s.progress.total = s.progress.done;  // nothing more comes from this model
  s.report.pool_errors.push_back(fmt::format("{}: {} not tuned: {}", model_name(first), work[p].canonical, e.what()));
  for (std::size_t rest = p + 1; rest < work.size(); ++rest)
    s.report.pool_errors.push_back(fmt::format("{}: {} not tuned: every device of the model left the pool",
                                               model_name(first), work[rest].canonical));
}

/// One model's search over its devices, every problem, each followed by its confirmation.
void run_model(Sweep& s, const std::vector<std::size_t>& group, const std::function<void(SweepTrial&)>& on_trial) {
  const SweepOptions& o = s.options;
  const DeviceInfo& first = s.devices[group.front()];
  const DeviceLimits limits = device_limits(first);
  CompileAhead& compile = *s.compiles.at(first.arch());
  std::vector<ProblemWork> work;
  for (const Problem& p : s.problems)
    work.push_back(plan_problem(s.space, p, o.shard, s.db, uuids_of(s, group), o.objective, o.force));
  const SweepSchedule schedule = schedule_sweep(o, work, group.size(), s.report);
  std::vector<PoolDevice> devices;
  std::vector<TrialRecorder> recorders;
  recorders.reserve(group.size());  // the stages point at them
  for (const std::size_t d : group) {
    devices.push_back({s.devices[d], worker_argv_of(o, s.devices[d].ordinal)});
    recorders.emplace_back(s.db, s.device_ids[d], s.kernel_ids.at(first.arch()), s.space, limits);
  }
  DevicePool pool(std::move(devices), WorkerSettings{o.timing, o.deadline_seconds, s.energy}, o.copy_bytes, s.space,
                  limits, compile);
  // A device's copy ceiling goes into the cache with its first trial, so an interrupted sweep keeps it.
  const auto on_model_trial = [&](SweepTrial& t) {
    const auto member = static_cast<std::size_t>(std::find(group.begin(), group.end(), t.device) - group.begin());
    record_copy(s, pool, member, t.device);
    on_trial(t);
  };
  PoolStages stages{s.space, limits, o.objective, compile, {}, group, on_model_trial};
  for (TrialRecorder& r : recorders) stages.recorders.push_back(&r);
  const auto model_start = Clock::now();
  for (std::size_t p = 0; p < work.size() && !s.report.interrupted; ++p) {
    try {
      search_problem(s, pool, stages, schedule, work[p], p, model_start);
    } catch (const PoolLost& e) {
      note_pool_lost(s, work, p, first, e);
      break;
    }
  }
  pool.stop();
  collect_devices(s, pool, group);
}

/// The cache's rows of the devices and of the kernel per architecture, a CompileAhead per
/// architecture, and the report's problems.
void prepare(Sweep& s) {
  const SweepOptions& o = s.options;
  s.report.kernel = s.space.kernel;
  s.report.device = s.devices.front();
  s.report.objective = o.objective;
  s.report.energy_measured = s.energy.enabled;
  CubinCache no_cache{std::filesystem::path{}};
  for (const DeviceInfo& d : s.devices) {
    s.device_ids.push_back(s.db.upsert_device(device_record(d, std::nullopt)));
    DeviceOutcome& outcome = s.report.pool.emplace_back();
    outcome.device = d;
    if (s.compiles.contains(d.arch())) continue;
    auto& compile = s.compiles[d.arch()];
    compile = std::make_unique<CompileAhead>(s.space, fmt::format("sm_{}", d.arch()), o.compile_threads,
                                             o.cubin_cache ? *o.cubin_cache : no_cache, o.compiler);
    s.kernel_ids[d.arch()] = s.db.upsert_kernel(kernel_record(s.space, compile->main_source(), d.arch()));
  }
  // The report's speedups need the baseline, and the cache knows no YAML.
  if (s.space.default_config)
    s.db.set_meta("default_config/" + s.space.kernel, canonical_config(s.space, Config{*s.space.default_config}));
  s.problems = o.problems.empty() ? all_problems(s.space) : o.problems;
  for (const Problem& p : s.problems) {
    ProblemOutcome& outcome = s.report.problems.emplace_back();
    outcome.problem = p;
    outcome.canonical = canonical_problem(s.space, p);
  }
}

/// Each trial as it is recorded: into the report, the counts and the progress.
void note_trial(Sweep& s, SweepTrial& t) {
  if (t.result && !t.result->energy_note.empty() && s.report.energy_note.empty())
    s.report.energy_note = t.result->energy_note;
  ++s.report.counts[static_cast<std::size_t>(t.status)];
  DeviceOutcome& d = s.report.pool.at(t.device);
  ++d.trials;
  d.finalists += t.finalist ? 1 : 0;
  SweepProgress& progress = s.progress;
  ++progress.done;
  progress.total = std::max(progress.total, progress.done);  // the finalists' confirmations come on top
  ++progress.counts[static_cast<std::size_t>(t.status)];
  progress.current = format_problem(s.space, s.problems[t.problem]) + " " + format_config(s.space, t.config);
  if (s.devices.size() > 1) progress.current += fmt::format(" [device {}]", d.device.ordinal);
  progress.elapsed_seconds = seconds_since(s.start);
  s.report.trials.push_back(std::move(t));
  if (s.options.progress) s.options.progress(progress);
}

/// Stage 4: each device's ranking of its own trials, from the cache (resumed ones included);
/// the report's own problems are the first device's.
void rank_devices(Sweep& s) {
  for (DeviceOutcome& d : s.report.pool) {
    d.problems = s.report.problems;
    for (ProblemOutcome& outcome : d.problems) rank_problem(s.space, s.db, d.device.uuid, s.options.objective, outcome);
  }
  s.report.problems = s.report.pool.front().problems;
}

}  // namespace

}  // namespace sweep_detail

using namespace sweep_detail;

SweepReport run_sweep(const Space& space, const SweepOptions& options) {
  const std::vector<DeviceInfo> devices = options.devices.empty() ? std::vector{options.device} : options.devices;
  const auto start = Clock::now();
  check_distinct(devices);
  // What needs no worker is checked before any file is touched.
  const EnergySettings energy = check_before_work(space, options, devices);
  const std::filesystem::path db_path = options.db_path.empty() ? default_cache_path() : options.db_path;
  Sweep s{space, options, devices, start, CacheDb::open(db_path), {}, {}, {}, {}, energy, {}, {}};
  s.report.db_path = db_path;
  prepare(s);
  s.report.setup_seconds = seconds_since(s.start);
  for (const std::vector<std::size_t>& group : group_by_model(s.devices))
    if (!s.report.interrupted) run_model(s, group, [&](SweepTrial& t) { note_trial(s, t); });
  for (const auto& [arch, compile] : s.compiles) {
    s.report.compile_seconds += compile->finished_seconds();
    s.report.compile_threads = std::max(s.report.compile_threads, compile->threads());
  }
  s.report.copy = s.report.pool.front().copy;
  rank_devices(s);
  s.report.wall_seconds = seconds_since(s.start);
  return s.report;
}

}  // namespace tiletune
