// run_sweep over several GPUs of one host (SweepOptions::devices): the devices grouped by model
// (name + compute capability), one model after the other; per model a DevicePool and the one
// search loop over a PoolEvaluator per problem, then the finalists (the model's top configs)
// measured on every device of the model that lacks them, so each device's best is its own
// measurement. One CompileAhead per architecture, shared by the models of that architecture.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "tune/device_pool.hpp"
#include "tune/sweep_stages.hpp"
#include "tiletune/physics_guard.hpp"
#include "tiletune/worker.hpp"

namespace tiletune::sweep_detail {

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
    for (std::size_t at; (at = word.find("{ordinal}")) != std::string::npos;) word.replace(at, 9, std::to_string(ordinal));
  return argv;
}

/// What the sweep holds for every model: the cache, the compiles per arch, the report.
struct PoolSweep {
  const Space& space;
  const SweepOptions& options;
  Clock::time_point start;
  CacheDb db;
  std::vector<Problem> problems;
  std::map<int, std::unique_ptr<CompileAhead>> compiles;  ///< per arch
  std::map<int, std::int64_t> kernel_ids;                  ///< per arch
  std::vector<std::int64_t> device_ids;                    ///< per device
  EnergySettings energy;
  SweepReport report;
  SweepProgress progress;
};

/// A problem's work for a model: each device's plan, what any of them knows merged (the
/// search measures a config once for the model).
ProblemWork model_work(PoolSweep& s, const Problem& problem, const std::vector<std::size_t>& group) {
  ProblemWork merged;
  for (const std::size_t d : group) {
    ProblemWork w = plan_problem(s.space, problem, s.options.shard, s.db, s.options.devices[d].uuid,
                                 s.options.objective, s.options.force);
    if (d == group.front()) merged = std::move(w);
    else merged.known.merge(w.known);
  }
  merged.unknown = unknown_points(s.space, merged);
  return merged;
}

/// The model's top configs of a problem (by the best score any of its devices has in the cache),
/// each with the devices of the model still in the pool that have not measured it.
std::vector<std::pair<std::size_t, std::vector<std::size_t>>> finalists(PoolSweep& s, const ProblemWork& work,
                                                                        const std::vector<std::size_t>& group,
                                                                        const DevicePool& pool) {
  std::map<std::string, double> best;
  std::vector<std::set<std::string>> measured(group.size());
  for (std::size_t i = 0; i < group.size(); ++i)
    for (const TrialRow& row : s.db.trials(current_trials(s.space, s.options.devices[group[i]].uuid, work.canonical))) {
      measured[i].insert(row.trial.key.params);
      if (const auto score = trial_score(s.options.objective, row.trial)) {
        auto [it, added] = best.emplace(row.trial.key.params, *score);
        if (!added) it->second = std::min(it->second, *score);
      }
    }
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& [params, score] : best) ranked.emplace_back(score, params);
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::pair<std::size_t, std::vector<std::size_t>>> out;
  const std::vector<std::size_t> active = pool.active();
  for (const auto& [score, params] : ranked) {
    if (out.size() == s.options.pool_finalists) break;
    const auto point = work.space.point_of(s.space, params);
    if (!point) continue;  // measured earlier, outside this run's shard
    std::vector<std::size_t> lacking;
    for (const std::size_t i : active)
      if (!measured[i].contains(params)) lacking.push_back(i);
    out.emplace_back(*point, std::move(lacking));
  }
  return out;
}

std::string model_name(const DeviceInfo& d) { return fmt::format("{} (sm_{})", d.name, d.arch()); }

/// One problem's search over a model's pool, then its finalists. Throws PoolLost when the
/// model has lost every device.
void search_problem(PoolSweep& s, DevicePool& pool, const PoolStages& stages, const std::vector<std::size_t>& group,
                    const ProblemWork& work, std::size_t p, const ProblemSchedule& schedule) {
  const std::uint64_t allowed = problem_limit(schedule.budget, work);
  s.progress.total += allowed;
  const auto strategy = scheduled_strategy(schedule, work.space.domain);
  PoolEvaluator evaluator(pool, stages, work, p);
  SearchRun run = sweep_search_run(work.space.domain, *strategy, schedule.budget, stages.compile.threads());
  // A worker that finishes while the oldest trial still runs takes the next one.
  run.in_flight = std::max(run.in_flight, 2 * group.size());
  if (s.options.good_enough)
    run.good_enough = good_enough_check(s.space, work.problem, work.space,
                                        [&pool, &stages] { return ceiling_inputs(stages.limits, pool.copy(0).gbps); },
                                        *s.options.good_enough);
  const SearchTrace trace = run_search(work.space.domain, *strategy, evaluator, run);
  ProblemOutcome& outcome = s.report.problems[p];
  outcome.evaluations += trace.evaluated;
  outcome.resumed += trace.resumed;
  outcome.warm_started = std::max(outcome.warm_started, schedule.warm_start.size());
  outcome.budget_reached = outcome.budget_reached || trace.budget_exhausted;
  outcome.good_enough = outcome.good_enough || trace.good_enough;
  s.report.budget_exhausted = s.report.budget_exhausted || trace.budget_exhausted;
  s.progress.total -= allowed - std::min(allowed, trace.evaluated);
  for (const auto& [point, lacking] : finalists(s, work, group, pool)) {
    s.progress.total += lacking.size();
    s.progress.total -= lacking.size() - evaluator.measure_on(point, lacking);
  }
  s.report.wait_compile_seconds += evaluator.waited_for_compile_seconds();
}

/// What each device of a model did, into the report (and its copy ceiling into the cache).
void collect_devices(PoolSweep& s, const DevicePool& pool, const std::vector<std::size_t>& group) {
  for (std::size_t i = 0; i < group.size(); ++i) {
    DeviceOutcome& d = s.report.pool[group[i]];
    const WorkerTimes& times = pool.session(i).times();
    d.copy = pool.copy(i);
    d.left = pool.left(i);
    d.worker_starts = pool.session(i).starts();
    d.busy_seconds = times.round_trip_seconds;
    if (d.copy.gbps > 0) (void)s.db.upsert_device(device_record(d.device, d.copy.gbps));
    s.report.worker_starts += d.worker_starts;
    s.report.load_seconds += times.load_seconds;
    s.report.input_setup_seconds += times.setup_seconds;
    s.report.verify_seconds += times.verify_seconds;
    s.report.measure_seconds += times.measure_seconds;
    s.report.worker_seconds += times.round_trip_seconds;
    s.report.copy_seconds += times.copy_seconds;
  }
}

/// One model's search over its devices, every problem, then its finalists.
void run_model(PoolSweep& s, const std::vector<std::size_t>& group, const std::function<void(SweepTrial&)>& on_trial) {
  const SweepOptions& o = s.options;
  const DeviceInfo& first = o.devices[group.front()];
  const DeviceLimits limits = device_limits(first);
  CompileAhead& compile = *s.compiles.at(first.arch());
  std::vector<ProblemWork> work;
  for (const Problem& p : s.problems) work.push_back(model_work(s, p, group));
  const SweepSchedule schedule = schedule_sweep(o, work, group.size(), s.report);
  std::vector<PoolDevice> devices;
  std::vector<TrialRecorder> recorders;
  recorders.reserve(group.size());  // the stages point at them
  PoolStages stages{s.space, limits, o.objective, compile, {}, group, on_trial};
  for (const std::size_t d : group) {
    devices.push_back({o.devices[d], worker_argv_of(o, o.devices[d].ordinal)});
    recorders.emplace_back(s.db, s.device_ids[d], s.kernel_ids.at(first.arch()), s.space, limits);
    stages.recorders.push_back(&recorders.back());
  }
  DevicePool pool(std::move(devices), WorkerSettings{o.timing, o.deadline_seconds, s.energy}, o.copy_bytes, s.space,
                  limits, compile);
  const auto model_start = Clock::now();
  for (std::size_t p = 0; p < work.size(); ++p) {
    const ProblemSchedule plan = schedule_problem(s.space, o, schedule, work[p], p, seconds_since(model_start));
    try {
      search_problem(s, pool, stages, group, work[p], p, plan);
    } catch (const PoolLost& e) {
      s.progress.total = s.progress.done;  // nothing more comes from this model
      s.report.pool_errors.push_back(fmt::format("{}: {} not tuned: {}", model_name(first), work[p].canonical, e.what()));
      for (std::size_t rest = p + 1; rest < work.size(); ++rest)
        s.report.pool_errors.push_back(fmt::format("{}: {} not tuned: every device of the model left the pool",
                                                   model_name(first), work[rest].canonical));
      break;
    }
  }
  pool.stop();
  collect_devices(s, pool, group);
}

void prepare(PoolSweep& s) {
  const SweepOptions& o = s.options;
  s.report.kernel = s.space.kernel;
  s.report.device = o.devices.front();
  s.report.objective = o.objective;
  for (const DeviceInfo& d : o.devices) s.energy = check_before_work(s.space, o, d);
  s.report.energy_measured = s.energy.enabled;
  CubinCache no_cache{std::filesystem::path{}};
  for (const DeviceInfo& d : o.devices) {
    s.device_ids.push_back(s.db.upsert_device(device_record(d, std::nullopt)));
    DeviceOutcome& outcome = s.report.pool.emplace_back();
    outcome.device = d;
    if (s.compiles.contains(d.arch())) continue;
    auto& compile = s.compiles[d.arch()];
    compile = std::make_unique<CompileAhead>(s.space, fmt::format("sm_{}", d.arch()), o.compile_threads,
                                             o.cubin_cache ? *o.cubin_cache : no_cache, o.compiler);
    s.kernel_ids[d.arch()] = s.db.upsert_kernel(kernel_record(s.space, compile->main_source(), d.arch()));
  }
  if (s.space.default_config)
    s.db.set_meta("default_config/" + s.space.kernel, canonical_config(s.space, Config{*s.space.default_config}));
  s.problems = o.problems.empty() ? all_problems(s.space) : o.problems;
  for (const Problem& p : s.problems) {
    ProblemOutcome& outcome = s.report.problems.emplace_back();
    outcome.problem = p;
    outcome.canonical = canonical_problem(s.space, p);
  }
}

}  // namespace

SweepReport run_pool_sweep(const Space& space, const SweepOptions& options) {
  check_distinct(options.devices);
  const std::filesystem::path db_path = options.db_path.empty() ? default_cache_path() : options.db_path;
  PoolSweep s{space, options, Clock::now(), CacheDb::open(db_path), {}, {}, {}, {}, {}, {}, {}};
  s.report.db_path = db_path;
  s.report.pool_finalists = options.pool_finalists;
  prepare(s);
  const auto note_trial = [&](SweepTrial& t) {
    if (t.result && !t.result->energy_note.empty() && s.report.energy_note.empty())
      s.report.energy_note = t.result->energy_note;
    ++s.report.counts[static_cast<std::size_t>(t.status)];
    DeviceOutcome& d = s.report.pool.at(t.device);
    ++d.trials;
    d.finalists += t.finalist ? 1 : 0;
    ++s.progress.done;
    ++s.progress.counts[static_cast<std::size_t>(t.status)];
    s.progress.current = fmt::format("{} {} [device {}]", format_problem(space, s.problems[t.problem]),
                                     format_config(space, t.config), d.device.ordinal);
    s.progress.elapsed_seconds = seconds_since(s.start);
    s.report.trials.push_back(std::move(t));
    if (options.progress) options.progress(s.progress);
  };
  s.report.setup_seconds = seconds_since(s.start);
  for (const std::vector<std::size_t>& group : group_by_model(options.devices)) run_model(s, group, note_trial);
  for (const auto& [arch, compile] : s.compiles) {
    s.report.compile_seconds += compile->finished_seconds();
    s.report.compile_threads = std::max(s.report.compile_threads, compile->threads());
  }
  s.report.copy = s.report.pool.front().copy;
  // Each device's ranking is its own trials, from the cache (resumed ones included).
  for (DeviceOutcome& d : s.report.pool) {
    d.problems = s.report.problems;
    for (ProblemOutcome& outcome : d.problems) {
      outcome.ranked.clear();
      outcome.default_trial.reset();
      rank_problem(space, s.db, d.device.uuid, options.objective, outcome);
    }
  }
  for (ProblemOutcome& outcome : s.report.problems)
    rank_problem(space, s.db, s.report.device.uuid, options.objective, outcome);
  s.report.wall_seconds = seconds_since(s.start);
  return s.report;
}

}  // namespace tiletune::sweep_detail
