// run_sweep: plan every (problem, config) still missing from the cache, compile ahead of the
// GPU in a pool, measure one trial at a time in the worker process, and write each trial
// to SQLite as it completes. The GPU never waits for a compile it could have had earlier:
// compiles are submitted in the order the worker consumes them.
#include "tiletune/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <deque>
#include <future>
#include <map>
#include <unordered_map>

#include "tiletune/replay.hpp"
#include "tiletune/strategy.hpp"
#include "tiletune/validate.hpp"
#include "tiletune/worker.hpp"

namespace tiletune {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// One (problem, config) this run will try.
struct Work {
  std::size_t problem = 0;
  Config config;
  std::optional<LaunchGeometry> launch;
  std::string pruned_reason;               ///< non-empty: recorded as pruned without compiling
  std::shared_future<CompileResult> compiled;
};

/// Extra time the first trial of a problem gets in a fresh worker: it allocates and fills the
/// buffers and computes the CPU reference before the kernel runs.
constexpr double kSetupAllowanceSeconds = 120;

// `--strategy auto`: the sweep is exhaustive when its estimate is at most a minute. The
// estimate is auto_seconds_per_trial (0.1 s): the H200 sweeps of the shipped spaces ran 12 to 50
// trials/s with a cold compile cache (bench/results/2026-11-29-h200-landscapes.md).
constexpr double kAutoExhaustiveSeconds = 60;
// Otherwise the best strategy of the replay benchmark, measuring this share of each problem's
// configs (at least kAutoMinTrials) unless --budget says otherwise.
constexpr const char* kBestStrategy = "forest";
constexpr double kAutoFraction = 0.10;
constexpr std::uint64_t kAutoMinTrials = 30;

std::string truncate_log(const std::string& log, std::size_t max_bytes = 16384) {
  if (log.size() <= max_bytes) return log;
  return log.substr(0, max_bytes) + fmt::format("\n[... {} more bytes of log]", log.size() - max_bytes);
}

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

StrategyChoice choose_strategy(const std::string& requested, const SearchBudget& budget, double estimated_seconds) {
  StrategyChoice c{requested.empty() ? std::string("auto") : requested, budget, false};
  if (c.strategy != "auto") return c;
  const bool budgeted = budget.evaluations || budget.fraction || budget.seconds;
  if (!budgeted && estimated_seconds <= kAutoExhaustiveSeconds) {
    c.strategy = "exhaustive";
  } else {
    c.strategy = kBestStrategy;
    if (!budgeted) {
      c.budget.fraction = kAutoFraction;
      c.default_budget = true;
    }
  }
  return c;
}

std::optional<std::uint64_t> choice_evaluations(const StrategyChoice& choice, std::size_t configs) {
  std::optional<std::uint64_t> limit = budget_evaluations(choice.budget, configs);
  if (limit && choice.default_budget)
    limit = std::max<std::uint64_t>(*limit, std::min<std::uint64_t>(configs, kAutoMinTrials));
  return limit;
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

SweepReport run_sweep(const Space& space, const SweepOptions& options) {
  const auto start = Clock::now();
  SweepReport report;
  report.kernel = space.kernel;

  std::vector<DeviceInfo> devices = list_devices();
  if (devices.empty()) throw Error("no CUDA device present: a sweep needs a GPU (`tiletune plan` needs none)");
  if (options.device < 0 || options.device >= static_cast<int>(devices.size()))
    throw Error(fmt::format("--device {}: there are {} CUDA devices (0 to {})", options.device, devices.size(),
                            devices.size() - 1));
  report.device = devices[static_cast<std::size_t>(options.device)];
  const DeviceLimits limits = device_limits(report.device);

  // An impossible check or input is the space's error: say so before any GPU work.
  validate_inputs_and_checks(space, {fmt::format("sm_{}", report.device.arch()), options.cubin_cache});

  report.objective = options.objective;
  EnergySettings energy = options.energy;
  if (options.objective != Objective::time) {
    // Fail before measuring anything: a search for the least energy without energy is no search.
    std::string why;
    if (!NvmlEnergySource::open(report.device.uuid, why))
      throw Error(fmt::format("--objective {} needs NVML on {} ({}): {}", objective_name(options.objective),
                              report.device.name, report.device.uuid, why));
    energy.enabled = true;
  }
  report.energy_measured = energy.enabled;

  report.db_path = options.db_path.empty() ? default_cache_path() : options.db_path;
  CacheDb db = CacheDb::open(report.db_path);
  KernelSources sources(space.source);
  const KernelSource& source = sources.for_options(space_options(space));

  WorkerProcess worker(options.worker_argv.empty() ? default_worker_argv(options.device) : options.worker_argv);
  report.copy = worker.measure_copy(options.copy_bytes, 120.0);

  DeviceRecord device_record;
  device_record.uuid = report.device.uuid;
  device_record.name = report.device.name;
  device_record.cc_major = report.device.cc_major;
  device_record.cc_minor = report.device.cc_minor;
  device_record.sm_count = report.device.sm_count;
  device_record.memory_bytes = static_cast<std::int64_t>(report.device.total_memory);
  device_record.l2_bytes = static_cast<std::int64_t>(report.device.l2_bytes);
  device_record.driver_version = report.device.driver_version;
  device_record.copy_gbps = report.copy.gbps;
  const std::int64_t device_id = db.upsert_device(device_record);
  const KernelRecord kernel = kernel_record(space, source, report.device.arch());
  const std::int64_t kernel_id = db.upsert_kernel(kernel);
  // The report's speedups need the baseline, and the cache knows no YAML.
  if (space.default_config) db.set_meta("default_config/" + space.kernel, canonical_config(space, Config{*space.default_config}));
  const auto score = [&](const TrialRecord& t) -> std::optional<double> {
    if (t.status != TrialStatus::ok) return std::nullopt;
    return objective_score(options.objective, t.time_ms, t.energy_mj);
  };

  std::vector<Problem> problems = options.problems.empty() ? all_problems(space) : options.problems;
  std::optional<Config> default_config;
  if (space.default_config) default_config = Config{*space.default_config};
  const bool reference_run =
      space.verify.reference == VerifySpec::Reference::config || space.verify.reference == VerifySpec::Reference::kernel;

  // Stage 1: per problem, the valid configs as a search domain and what the cache already
  // knows about them (a rerun answers those from the cache instead of measuring again).
  struct ProblemWork {
    SpaceDomain space;
    std::unordered_map<std::string, std::optional<double>> known;  // canonical params -> time (nullopt: failed)
    std::uint64_t limit = 0;                                        // trials this run may measure
  };
  std::vector<ProblemWork> problem_work(problems.size());
  std::uint64_t unknown_total = 0;
  for (std::size_t p = 0; p < problems.size(); ++p) {
    ProblemOutcome outcome;
    outcome.problem = problems[p];
    outcome.canonical = canonical_problem(space, problems[p]);
    ProblemWork& pw = problem_work[p];
    pw.space = space_domain(space, problems[p], options.shard);
    if (!options.force) {
      TrialFilter filter;
      filter.kernel = space.kernel;
      filter.device = report.device.uuid;
      filter.problem = outcome.canonical;
      filter.current_only = true;
      for (const TrialRow& row : db.trials(filter)) pw.known.emplace(row.trial.key.params, score(row.trial));
    }
    std::uint64_t unknown = 0;
    for (const Config& c : pw.space.configs) unknown += pw.known.contains(canonical_config(space, c)) ? 0 : 1;
    unknown_total += unknown;
    pw.limit = unknown;
    report.problems.push_back(std::move(outcome));
  }

  // The strategy: `auto` measures everything when that takes under a minute, and otherwise
  // searches with the best strategy of the replay benchmark (bench/results/) within a budget.
  report.estimated_seconds = double(unknown_total) * auto_seconds_per_trial;
  const StrategyChoice choice = choose_strategy(options.strategy, options.budget, report.estimated_seconds);
  report.strategy = choice.strategy;
  report.default_budget = choice.default_budget;
  const SearchBudget& budget = choice.budget;
  for (ProblemWork& pw : problem_work)
    if (auto limit = choice_evaluations(choice, pw.space.configs.size())) pw.limit = std::min(pw.limit, *limit);

  // Compiles are shared by every problem: the same option list compiles once (a config's
  // options depend on the problem only through `problem_defines` and ${} in `options:`).
  CubinCache no_cache{std::filesystem::path{}};
  const CubinCache& cache = options.cubin_cache ? *options.cubin_cache : no_cache;
  CompilePool pool(options.compile_threads, cache);
  std::map<std::vector<std::string>, std::shared_future<CompileResult>> compiles;
  const std::string arch = fmt::format("sm_{}", report.device.arch());
  auto compile = [&](std::size_t p, const Config& c) {
    std::vector<std::string> config_options = compile_options(space, problems[p], c);
    auto it = compiles.find(config_options);
    if (it != compiles.end()) return it->second;
    CompileRequest request;
    request.source = &sources.for_options(config_options);
    request.options = config_options;
    request.arch = arch;
    request.entry = space.entry;
    auto f = pool.submit(std::move(request)).share();
    compiles.emplace(std::move(config_options), f);
    return f;
  };
  // A reference kernel compiles once per set of options (they change with the problem sizes
  // under problem_defines, and with the types).
  std::optional<KernelSources> reference_sources;
  if (space.verify.kernel) reference_sources.emplace(space.verify.kernel->source);
  std::map<std::vector<std::string>, std::shared_future<CompileResult>> reference_compiles;
  auto compile_reference_kernel = [&](const Problem& problem, const Config& candidate) {
    std::vector<std::string> reference_options = reference_kernel_options(space, problem, candidate);
    auto it = reference_compiles.find(reference_options);
    if (it != reference_compiles.end()) return it->second;
    CompileRequest request;
    request.source = &reference_sources->for_options(reference_options);
    request.options = reference_options;
    request.arch = arch;
    request.entry = space.verify.kernel->entry;
    auto f = pool.submit(std::move(request)).share();
    reference_compiles.emplace(std::move(reference_options), f);
    return f;
  };
  // The pool runs ahead of the GPU by a window of configs, not the whole list: a sweep that
  // stops early (budget) must not leave minutes of queued compiles behind it. A strategy that
  // learns from results gets fewer proposals in flight, so that each proposal knows more.
  const std::size_t window = std::max<std::size_t>(32, 4 * static_cast<std::size_t>(pool.threads()));
  const bool learns = report.strategy != "exhaustive" && report.strategy != "random";
  // 4 to 8: the replay benchmark loses little at 8 in flight (bench/results/2026-11-29-strategies.md).
  const std::size_t in_flight = learns ? std::clamp<std::size_t>(pool.threads(), 4, 8) : window;

  auto plan_work = [&](std::size_t p, const Config& c) {
    Work w;
    w.problem = p;
    w.config = c;
    try {
      w.launch = evaluate_launch(space, problems[p], w.config);
      if (auto reason = unlaunchable_geometry(limits, *w.launch)) w.pruned_reason = std::move(*reason);
      else if (auto too_big = buffer_size_problem(space, problems[p], w.config)) w.pruned_reason = std::move(*too_big);
      else w.compiled = compile(p, w.config);  // an ${} of `options:` may fail for this config
    } catch (const EvalError& e) {
      w.pruned_reason = e.what();
    }
    return w;
  };

  // Stage 2: measure, recording each trial as it completes.
  SweepProgress progress;
  for (const ProblemWork& pw : problem_work) progress.total += pw.limit;
  std::uint64_t next_id = 1;
  // What the worker process holds: after a fault or a timeout it is replaced by a fresh one,
  // which has no buffers and no reference outputs yet.
  std::optional<std::string> worker_key;        // the problem key whose buffers the worker holds
  std::optional<std::string> worker_reference;  // the problem key whose reference outputs it holds
  auto worker_lost = [](TrialStatus s) { return s == TrialStatus::runtime_fault || s == TrialStatus::timeout; };

  auto record = [&](const Work& w, SweepTrial& t) {
    TrialRecord r;
    r.key = TrialKey{device_id, kernel_id, report.problems[w.problem].canonical, canonical_config(space, w.config)};
    r.status = t.status;
    r.detail = t.detail;
    if (t.resources) {
      r.registers = t.resources->registers;
      r.shared_bytes = t.resources->static_shared_bytes + (w.launch ? w.launch->shared_bytes : 0);
      r.spill_bytes = t.resources->spill_store_bytes + t.resources->spill_load_bytes;
    }
    if (t.occupancy.launchable) r.occupancy_offline = t.occupancy.occupancy;
    if (t.compile_seconds > 0) r.compile_ms = t.compile_seconds * 1000;
    if (t.result) {
      const TrialResult& m = *t.result;
      if (m.samples > 0) {
        r.time_ms = m.median_ms;
        r.mean_ms = m.mean_ms;
        r.min_ms = m.min_ms;
        r.stddev_ms = m.stddev_ms;
        r.samples = m.samples;
        r.throttled_samples = m.throttled_samples;
        if (m.cpu_mean_ms > 0) r.cpu_time_s = m.cpu_mean_ms / 1000.0;
      }
      r.measure_ms = m.measure_ms;
      if (m.driver_blocks_per_sm > 0 && t.occupancy.threads_per_block > 0 && limits.max_threads_per_sm > 0)
        r.occupancy_driver = double(m.driver_blocks_per_sm) * t.occupancy.threads_per_block / limits.max_threads_per_sm;
      if (t.gbps > 0) r.gbps = t.gbps;
      if (t.gflops > 0) r.gflops = t.gflops;
      if (m.energy_mj > 0) r.energy_mj = m.energy_mj;
      if (m.power_w > 0) r.power_w = m.power_w;
      if (!m.energy_note.empty() && report.energy_note.empty()) report.energy_note = m.energy_note;
    }
    if (r.status == TrialStatus::ok && !(r.time_ms && *r.time_ms > 0)) {
      r.status = TrialStatus::runtime_fault;
      r.detail = "the worker reported success without a time";
      t.status = r.status;
      t.detail = r.detail;
    }
    db.record_trial(r);
    ++report.counts[static_cast<std::size_t>(t.status)];
    report.trials.push_back(t);
    return score(r);
  };

  auto run_in_worker = [&](TrialRequest request, SweepTrial& t) {
    request.id = next_id++;
    request.timing = options.timing;
    request.deadline_seconds = options.deadline_seconds;
    if (!request.is_reference) request.energy = energy;  // the reference run is not recorded
    if (request.energy.enabled) request.deadline_seconds += energy.max_seconds;
    // A fresh worker (or a new problem) first fills its buffers and computes the reference.
    if (worker_key != request.problem_key) request.deadline_seconds += kSetupAllowanceSeconds;
    TrialResult result = worker.run(request);
    if (worker_lost(result.status)) {
      worker_key.reset();
      worker_reference.reset();
    } else {
      if (worker_key != request.problem_key) worker_reference.reset();
      worker_key = request.problem_key;
      if (request.is_reference && result.status == TrialStatus::ok) worker_reference = request.problem_key;
    }
    report.load_seconds += result.load_ms / 1000;
    report.verify_seconds += result.verify_ms / 1000;
    report.measure_seconds += result.measure_ms / 1000;
    t.status = result.status;
    t.detail = result.detail;
    t.result = std::move(result);
  };
  auto add_metrics = [&](const Work& w, SweepTrial& t) {
    const TrialResult& result = *t.result;
    if (result.status == TrialStatus::ok && result.median_ms > 0) {
      const RunMetrics metrics = evaluate_metrics(space, problems[w.problem], w.config);
      if (metrics.bytes) t.gbps = *metrics.bytes / (result.median_ms * 1e-3) / 1e9;
      if (metrics.flops) t.gflops = *metrics.flops / (result.median_ms * 1e-3) / 1e9;
    }
  };

  // The reference (a config or another kernel) runs first on each problem key the worker meets:
  // the worker keeps the reference outputs of one problem, and a restarted worker has none.
  auto run_reference = [&](const Work& w) {
    const Problem& problem = problems[w.problem];
    TrialRequest request;
    std::string what;
    if (space.verify.reference == VerifySpec::Reference::config) {
      const Config rc = reference_config_for(space, w.config);
      what = "the reference config " + format_config(space, rc);
      const CompileResult& ref = compile(w.problem, rc).get();
      if (!ref.ok()) throw Error(fmt::format("{} does not compile: {}", what, ref.error));
      request = make_trial_request(space, problem, rc, evaluate_launch(space, problem, rc), *ref.kernel);
    } else {
      what = fmt::format("the reference kernel {} ({})", space.verify.kernel->entry,
                         space.verify.kernel->source.string());
      const CompileResult& ref = compile_reference_kernel(problem, w.config).get();
      if (!ref.ok()) throw Error(fmt::format("{} does not compile: {}\n{}", what, ref.error, truncate_log(ref.log)));
      request = make_reference_kernel_request(space, problem, w.config, *ref.kernel);
    }
    request.is_reference = true;
    SweepTrial rt;
    run_in_worker(std::move(request), rt);
    if (rt.status != TrialStatus::ok)
      throw Error(fmt::format("{} failed on {}: {}: {}", what, format_problem(space, problem), status_name(rt.status),
                              rt.detail));
  };

  // One trial: wait for its compile, check it against the device, verify and time it, record it.
  auto measure = [&](const Work& w) {
    SweepTrial t;
    t.problem = w.problem;
    t.config = w.config;
    progress.current = fmt::format("{} {}", format_problem(space, problems[w.problem]), format_config(space, w.config));
    if (!w.pruned_reason.empty()) {
      t.status = TrialStatus::pruned;
      t.detail = w.pruned_reason;
    } else {
      const auto wait_start = Clock::now();
      const CompileResult& compiled = w.compiled.get();
      report.wait_compile_seconds += seconds_since(wait_start);
      t.compile_seconds = compiled.seconds;
      if (!compiled.ok()) {
        t.status = TrialStatus::compile_failed;
        t.detail = compiled.error + "\n" + truncate_log(compiled.log);
      } else {
        t.resources = compiled.kernel->resources;
        t.occupancy = compute_occupancy(limits, kernel_footprint(*w.launch, &*t.resources));
        if (!t.occupancy.launchable) {
          t.status = TrialStatus::pruned;
          t.detail = t.occupancy.pruned_reason;
        } else {
          try {
            TrialRequest request =
                make_trial_request(space, problems[w.problem], w.config, *w.launch, *compiled.kernel);
            if (reference_run && worker_reference != request.problem_key) run_reference(w);
            run_in_worker(std::move(request), t);
            add_metrics(w, t);
          } catch (const EvalError& e) {
            t.status = TrialStatus::pruned;
            t.detail = e.what();
          }
        }
      }
    }
    const std::optional<double> outcome = record(w, t);
    ++progress.done;
    ++progress.counts[static_cast<std::size_t>(t.status)];
    progress.elapsed_seconds = seconds_since(start);
    if (options.progress) options.progress(progress);
    return outcome;
  };

  for (std::size_t p = 0; p < problems.size(); ++p) {
    ProblemWork& pw = problem_work[p];
    ProblemOutcome& outcome = report.problems[p];
    const std::size_t problems_left = problems.size() - p;
    // A time budget is shared out: each problem gets an equal part of what is left.
    std::optional<double> problem_deadline;
    if (budget.seconds) problem_deadline = seconds_since(start) + (*budget.seconds - seconds_since(start)) / double(problems_left);
    std::uint64_t measured = 0;
    auto out_of_budget = [&] {
      return measured >= pw.limit || (problem_deadline && seconds_since(start) > *problem_deadline);
    };

    // The default config first: it is the baseline of the speedups, even when a budget stops
    // the search early. Its result answers the strategy when the strategy proposes it.
    std::optional<std::string> default_key;
    if (default_config && pw.space.domain.start()) {
      default_key = canonical_config(space, *default_config);
      if (!pw.known.contains(*default_key) && !out_of_budget()) {
        pw.known.emplace(*default_key, measure(plan_work(p, *default_config)));
        ++measured;
        ++outcome.evaluations;
      }
    }

    const std::unique_ptr<SearchStrategy> strategy =
        make_strategy(report.strategy, pw.space.domain, options.seed + p);
    std::deque<std::pair<std::size_t, Work>> queue;  // proposed, not yet measured, in order
    bool strategy_done = false;
    auto top_up = [&] {
      while (!strategy_done && queue.size() < in_flight) {
        const std::vector<std::size_t> points = strategy->propose(in_flight - queue.size());
        if (points.empty()) {
          strategy_done = queue.empty();
          return;
        }
        for (const std::size_t point : points) {
          const Config& c = pw.space.configs.at(point);
          const std::string key = canonical_config(space, c);
          if (auto it = pw.known.find(key); it != pw.known.end()) {
            strategy->observe(point, it->second);
            if (key != default_key) ++outcome.resumed;
            continue;
          }
          queue.emplace_back(point, plan_work(p, c));
        }
      }
    };
    for (top_up(); !queue.empty(); top_up()) {
      if (out_of_budget()) {
        outcome.budget_reached = true;
        break;
      }
      auto [point, work] = std::move(queue.front());
      queue.pop_front();
      const std::optional<double> value = measure(work);
      pw.known.emplace(canonical_config(space, work.config), value);
      strategy->observe(point, value);
      ++measured;
      ++outcome.evaluations;
    }
    if (outcome.budget_reached) report.budget_exhausted = true;
    // Progress counts what this problem was allowed; when it stopped short, the rest is not coming.
    progress.total -= pw.limit - std::min(pw.limit, measured);
  }

  for (const auto& [config_options, future] : compiles)
    if (future.wait_for(std::chrono::seconds(0)) == std::future_status::ready) report.compile_seconds += future.get().seconds;
  report.worker_starts = worker.starts();

  // Stage 3: the ranking per problem, from the cache (so resumed trials count too).
  for (ProblemOutcome& outcome : report.problems) {
    TrialFilter filter;
    filter.kernel = space.kernel;
    filter.device = report.device.uuid;
    filter.problem = outcome.canonical;
    filter.current_only = true;
    for (TrialRow& row : db.trials(filter)) {
      if (default_config && row.trial.key.params == canonical_config(space, *default_config))
        outcome.default_trial = row;
      if (score(row.trial)) outcome.ranked.push_back(std::move(row));
    }
    std::stable_sort(outcome.ranked.begin(), outcome.ranked.end(),
                     [&](const TrialRow& a, const TrialRow& b) { return *score(a.trial) < *score(b.trial); });
  }
  report.wall_seconds = seconds_since(start);
  return report;
}

}  // namespace tiletune
