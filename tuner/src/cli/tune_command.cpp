// `tiletune tune`: a tuning sweep of a space on a GPU, with a progress bar, and at the end
// the top configs per problem against the measured copy bandwidth and the default config.
// Without a CUDA device it says so and plans the same space instead. Also the hidden
// `__worker` command that a sweep starts in a child process for each GPU.
#include <fmt/format.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "common/interrupt_signals.hpp"
#include "common/text_out.hpp"
#include "cli/plan_output.hpp"
#include "tiletune/cuda_kernel.hpp"
#include "tiletune/device.hpp"
#include "tiletune/message.hpp"
#include "tiletune/landscape.hpp"
#include "tiletune/replay.hpp"
#include "tiletune/strategy.hpp"
#include "tiletune/trial.hpp"
#include "tiletune/runner.hpp"
#include "tiletune/sweep.hpp"
#include "tiletune/worker.hpp"

namespace tiletune::cli {

namespace {

struct TuneOptions {
  PlanRunOptions plan;
  int device = 0;
  std::string devices;  // --devices: "all" or "0,2"; empty: one device (--device)
  std::string db;
  std::string budget;
  bool force = false;
  bool hot = false;
  double min_time = 0.005;
  double max_time = 0.5;
  double max_noise = 2;  // percent (TimingSettings::max_noise says why not nvbench's 0.5)
  int min_samples = 10;
  int warmup = 1;  // runs before the samples (TimingSettings::warmup_runs)
  double deadline = 10;
  std::size_t top = 10;
  std::size_t confirm = 3;  // finalists per problem measured again (SweepOptions::confirm_finalists)
  std::size_t confirm_ties = kDefaultTieCandidates;  // tie candidates measured together after them (SweepOptions::confirm_ties)
  std::string strategy = "auto";
  std::uint64_t seed = 1;
  std::string replay;
  std::string warm_start;     // --warm-start: a cache DB or a landscape recording of another device
  std::size_t in_flight = 0;  // --replay: 0 is the sweep's width for the strategy and --threads
  std::string objective = "time";
  bool energy = false;
  std::string format = "table";  // --replay: table, or json (each problem's evaluations in order)
  std::string good_enough;       // --good-enough: "90%" or "90"; empty: off
};

/// --good-enough's share of the ceiling (0, 1], or nullopt when not given. Only the time
/// objective has a ceiling (GB/s and GFLOP/s are rates of time).
std::optional<double> good_enough_share(const std::string& text, const std::string& objective) {
  if (text.empty()) return std::nullopt;
  if (objective != "time")
    throw UsageError(fmt::format("--good-enough with --objective {}: the ceilings are rates of time", objective));
  return parse_percent(text) / 100;
}

/// Problems from --size: each named size takes the values given (repeat a name for several),
/// the others every value of the YAML.
std::vector<Problem> select_problems(const Space& space, const std::vector<std::string>& overrides) {
  std::vector<std::vector<std::int64_t>> values(space.problem.size());
  for (const std::string& o : overrides) {
    Problem one = checked_problem(space, {o});  // validates the name and the value
    const int index = space.problem_index(o.substr(0, o.find('=')));
    values[static_cast<std::size_t>(index)].push_back(one.sizes[static_cast<std::size_t>(index)]);
  }
  Space restricted = space;
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!values[i].empty()) restricted.problem[i].values = values[i];
  return all_problems(restricted);
}

/// `--devices`: every device (nullopt) for "all", else the ordinals listed ("0,2"). Throws
/// UsageError naming an entry that is not an ordinal or is listed twice.
std::optional<std::vector<int>> parse_device_list(const std::string& text) {
  if (text == "all") return std::nullopt;
  std::vector<int> ordinals;
  for (std::size_t begin = 0;;) {
    const std::size_t comma = text.find(',', begin);
    const std::string item = text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    int value = -1;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || value < 0 || value > 1023)
      throw UsageError(
          fmt::format("{}: {} is not a device ordinal (expected all, or ordinals as 0,1,3)", quote(text), quote(item)));
    if (std::find(ordinals.begin(), ordinals.end(), value) != ordinals.end())
      throw UsageError(fmt::format("{}: device {} is listed twice", quote(text), value));
    ordinals.push_back(value);
    if (comma == std::string::npos) return ordinals;
    begin = comma + 1;
  }
}

/// The devices `--devices` names, of those this machine has. Throws UsageError for an ordinal
/// it does not have.
std::vector<DeviceInfo> pick_devices(const std::vector<DeviceInfo>& devices, const std::string& text) {
  const std::optional<std::vector<int>> ordinals = parse_device_list(text);
  if (!ordinals) return devices;
  std::vector<DeviceInfo> picked;
  for (const int k : *ordinals) {
    if (k >= static_cast<int>(devices.size()))
      throw UsageError(
          fmt::format("--devices {}: device {} does not exist: this machine has {} CUDA device{} (0 to {})",
                      quote(text), k, devices.size(), devices.size() == 1 ? "" : "s", devices.size() - 1));
    picked.push_back(devices[static_cast<std::size_t>(k)]);
  }
  return picked;
}

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) return fmt::format("{:.0f}s", s);
  if (s < 3600) return fmt::format("{:.0f}m{:02.0f}s", std::floor(s / 60), std::fmod(s, 60));
  return fmt::format("{:.0f}h{:02.0f}m", std::floor(s / 3600), std::fmod(s / 60, 60));
}

std::string counts_text(const StatusCounts& counts) {
  std::string s;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == 0) continue;
    s += fmt::format("{}{} {}", s.empty() ? "" : ", ", status_name(static_cast<TrialStatus>(i)), counts[i]);
  }
  return s.empty() ? "nothing" : s;
}

void print_device(std::ostream& out, const Space& space, const DeviceInfo& device, const CopyCeiling& copy) {
  out << fmt::format("\n{} on {} ({}), sm_{}; copy ceiling {:.0f} GB/s ({} MiB device-to-device)\n", space.kernel,
                     device.name, device.uuid, device.arch(), copy.gbps, copy.bytes >> 20);
}

/// The top configs of each problem on one device.
void print_problems(std::ostream& out, const Space& space, const SweepReport& r,
                    const std::vector<ProblemOutcome>& problems, const CopyCeiling& copy, std::size_t top) {
  const bool has_bytes = space.metric_bytes.has_value();
  const bool has_flops = space.metric_flops.has_value();
  for (const ProblemOutcome& p : problems) {
    out << fmt::format("\n{} — {} ok configs{}\n", p.canonical.empty() ? "(no problem sizes)" : p.canonical,
                       p.ranked.size(), p.resumed ? fmt::format(" ({} from earlier runs)", p.resumed) : "");
    if (p.ranked.empty()) continue;
    const double default_ms =
        p.default_trial && p.default_trial->trial.status == TrialStatus::ok && p.default_trial->trial.time_ms
            ? *p.default_trial->trial.time_ms
            : 0.0;
    out << fmt::format("{:>4}  {:<40} {:>10} {:>9} {:>7} {:>9} {:>5} {:>5} {:>8}{}\n", "rank", "config", "time ms",
                       has_flops ? "GFLOP/s" : "GB/s", "% copy", "±stddev", "occ%", "regs", "speedup",
                       r.energy_measured ? fmt::format(" {:>10} {:>7}", "energy mJ", "power W") : "");
    for (std::size_t i = 0; i < p.ranked.size() && i < top; ++i) {
      const TrialRecord& t = p.ranked[i].trial;
      std::string config = t.key.params;
      for (char& c : config)
        if (c == ';') c = ' ';
      const double rate = has_flops ? t.gflops.value_or(0) : t.gbps.value_or(0);
      out << fmt::format(
          "{:>4}  {:<40} {:>10.4f} {:>9.1f} {:>7} {:>8.1f}% {:>5.0f} {:>5} {:>8}{}\n", i + 1, config, *t.time_ms, rate,
          has_bytes && copy.gbps > 0 ? fmt::format("{:.1f}%", 100.0 * t.gbps.value_or(0) / copy.gbps) : "-",
          t.stddev_ms && *t.time_ms > 0 ? 100.0 * *t.stddev_ms / *t.time_ms : 0.0,
          100.0 * t.occupancy_offline.value_or(0), t.registers.value_or(0),
          default_ms > 0 ? fmt::format("{:.2f}x", default_ms / *t.time_ms) : "-",
          r.energy_measured ? fmt::format(" {:>10} {:>7}", t.energy_mj ? fmt::format("{:.4f}", *t.energy_mj) : "-",
                                          t.power_w ? fmt::format("{:.0f}", *t.power_w) : "-")
                            : "");
    }
    const TrialRecord& best = p.ranked.front().trial;
    if (const auto share = ceiling_share(best.gbps, best.gflops, best.ceiling_gbps, best.ceiling_gflops))
      out << fmt::format("      headroom {:.1f} %: the best runs at {:.1f} % of its {} ceiling{}\n",
                         share->headroom_percent(), 100 * share->fraction,
                         share->compute_bound ? "arithmetic" : "bandwidth",
                         p.good_enough ? "; the search stopped there (--good-enough)" : "");
    if (p.default_trial) {
      const TrialRecord& d = p.default_trial->trial;
      std::string config = d.key.params;
      for (char& c : config)
        if (c == ';') c = ' ';
      if (d.status == TrialStatus::ok && d.time_ms)
        out << fmt::format("      default {}: {:.4f} ms; best is {:.2f}x faster\n", config, *d.time_ms,
                           *d.time_ms / *p.ranked.front().trial.time_ms);
      else
        out << fmt::format("      default {}: {} ({})\n", config, status_name(d.status), d.detail.substr(0, 80));
    }
  }
}

/// `--devices`: each device's own ranking and what it measured.
void print_pool(std::ostream& out, const Space& space, const SweepReport& r, std::size_t top) {
  for (const DeviceOutcome& d : r.pool) {
    print_device(out, space, d.device, d.copy);
    out << fmt::format("device {}: {} trials this run ({} as finalists), busy {:.1f} s, {} worker start{}{}\n",
                       d.device.ordinal, d.trials, d.finalists, d.busy_seconds, d.worker_starts,
                       d.worker_starts == 1 ? "" : "s", d.left.empty() ? "" : "; LEFT THE POOL: " + d.left);
    print_problems(out, space, r, d.problems, d.copy, top);
  }
  out << fmt::format(
      "\n{} devices: configs spread over the devices of each model; the finalists confirmed on every "
      "device of the model, so each device's best is its own\n",
      r.pool.size());
}

void print_report(std::ostream& out, const Space& space, const SweepReport& r, std::size_t top) {
  if (r.pool.size() > 1) {
    print_pool(out, space, r, top);
  } else {
    print_device(out, space, r.device, r.copy);
    print_problems(out, space, r, r.problems, r.copy, top);
  }
  for (const std::string& e : r.pool_errors) out << "not tuned: " << e << '\n';
  const double wall = std::max(r.wall_seconds, 1e-9);
  out << fmt::format("\n{} trials this run: {}{}\n", r.trials.size(), counts_text(r.counts),
                     r.budget_exhausted ? " (budget reached)" : "");
  for (const SweepTrial& t : r.trials)
    if (t.status == TrialStatus::suspect)
      out << fmt::format("suspect (never best): {} {}: {}\n", format_problem(space, r.problems.at(t.problem).problem),
                         format_config(space, t.config), text_out::terminal_text(t.detail));
  if (r.confirmation_trials > 0) {
    std::size_t configs = 0, tie_candidates = 0;
    for (const ProblemOutcome& p : r.problems) {
      configs += p.confirmed;
      tie_candidates += p.tie_candidates;
    }
    const auto lines = std::count_if(r.trials.begin(), r.trials.end(), [](const SweepTrial& t) { return t.finalist; });
    out << fmt::format(
        "of them {} are finalists: the top of each problem measured again in {} interleaved rounds "
        "and kept as its median round, until the top were all confirmed, then the configs near the "
        "top together ({} config{}, {} measured together, {} trials)\n",
        lines, r.confirm_rounds, configs, configs == 1 ? "" : "s", tie_candidates, r.confirmation_trials);
  }
  std::size_t warm_started = 0;
  for (const ProblemOutcome& p : r.problems) warm_started += p.warm_started;
  if (warm_started > 0)
    out << fmt::format("warm start: {} configs of another device's ranking proposed first (and measured here)\n",
                       warm_started);
  out << fmt::format("strategy {}{}\n", r.strategy,
                     r.default_budget
                         ? fmt::format(" (auto: the sweep was estimated at {:.0f} s; measured 10 % of each "
                                       "problem's configs, at least 30, at most 500)",
                                       r.estimated_seconds)
                         : "");
  out << fmt::format("{:.1f} s wall, {:.1f} trials/s; {} worker start{}\n", r.wall_seconds,
                     double(r.trials.size()) / wall, r.worker_starts, r.worker_starts == 1 ? "" : "s");
  // Where the time went, and the overhead: 1.00x would be a sweep that did nothing but the
  // GPU's work and the compiles the GPU had to wait for.
  out << fmt::format("overhead {:.2f}x = wall / (GPU busy {:.2f} s + compile not hidden {:.2f} s)\n", sweep_overhead(r),
                     gpu_busy_seconds(r), r.wait_compile_seconds);
  out << fmt::format(
      "  setup {:.2f} s (checks, cache, plan); worker start + copy ceiling {:.2f} s (beside the first "
      "compiles); NVRTC {:.2f} s over {} compile threads, GPU waited {:.2f} s for it\n",
      r.setup_seconds, r.copy_seconds, r.compile_seconds, r.compile_threads, r.wait_compile_seconds);
  out << fmt::format(
      "  in the worker: module load + setup {:.2f} s (inputs and references {:.2f} s), verify {:.2f} s, "
      "timing {:.2f} s; the parent waited {:.2f} s on it\n",
      r.load_seconds, r.input_setup_seconds, r.verify_seconds, r.measure_seconds, r.worker_seconds);
  if (r.objective != Objective::time)
    out << fmt::format("objective {} ({} per run): the ranking above is by it\n", objective_name(r.objective),
                       objective_unit(r.objective));
  if (!r.energy_note.empty()) out << fmt::format("power and energy not measured for some trials: {}\n", r.energy_note);
  out << fmt::format("results in {}\n", r.db_path.string());
}

// One replayed problem as `tune --replay --format json` writes it: the evaluations in the order
// the strategy got them (the configs' canonical params, as the recording keys them), the best
// found and the optimum, and the evaluations to 90/95/99 % of the optimum's speed.
nlohmann::json replay_json(const Space& space, const ReplayedProblem& r, const ConfirmPlan& confirm) {
  const ReplayProblem& rp = r.recording;
  const SearchTrace& trace = r.trace;
  const auto params_of = [&](std::size_t point) { return canonical_config(space, rp.space.config(point)); };
  nlohmann::json evaluations = nlohmann::json::array();
  for (const Evaluation& e : trace.evaluations) {
    const LandscapeTrial& t = recorded_trial(rp, e.point);
    evaluations.push_back({{"params", params_of(e.point)},
                           {"status", status_name(t.status)},
                           {"time_ms", e.time ? nlohmann::json(*e.time) : nlohmann::json(nullptr)},
                           {"cost_s", e.cost_seconds}});
  }
  nlohmann::json warm = nlohmann::json::array();
  for (const std::size_t point : r.schedule.warm_start) warm.push_back(params_of(point));
  nlohmann::json finalists = nlohmann::json::array();
  for (const std::size_t point : r.confirmation.confirmed) finalists.push_back(params_of(point));
  nlohmann::json j = {{"problem", rp.canonical},
                      {"strategy", r.schedule.strategy},
                      {"seed", r.schedule.seed},
                      {"in_flight", r.in_flight},
                      {"configs", rp.space.domain.size()},
                      {"unrecorded", rp.unrecorded},
                      {"warm_start", std::move(warm)},
                      {"evaluations", std::move(evaluations)},
                      {"budget_reached", trace.budget_exhausted},
                      {"good_enough", trace.good_enough},
                      {"cost_s", trace.cost_seconds},
                      {"confirmation",
                       {{"finalists", std::move(finalists)},
                        {"rounds", r.confirmation.trials > 0 ? confirm.rounds : 0},
                        {"tie_candidates", r.confirmation.tie_candidates},
                        {"trials", r.confirmation.trials},
                        {"cost_s", r.confirmation_cost_seconds}}}};
  nlohmann::json suspects = nlohmann::json::array();
  for (const std::size_t point : rp.suspects) {
    const LandscapeTrial& t = recorded_trial(rp, point);
    suspects.push_back({{"params", params_of(point)}, {"time_ms", t.time_ms.value_or(0)}, {"detail", t.detail}});
  }
  j["suspects"] = std::move(suspects);
  if (trace.best) j["best"] = {{"params", params_of(*trace.best)}, {"time_ms", trace.best_time}};
  if (rp.optimum) j["optimum"] = {{"params", params_of(*rp.optimum)}, {"time_ms", rp.optimum_ms}};
  nlohmann::json reached = nlohmann::json::object();
  for (const double f : {0.90, 0.95, 0.99})
    if (rp.optimum)
      if (const auto n = evaluations_to_reach(trace, rp.optimum_ms, f)) reached[fmt::format("{:.2f}", f)] = *n;
  j["reached"] = std::move(reached);
  return j;
}

/// One replayed problem as the table prints it.
void print_replayed(const Space& space, const ReplayedProblem& r, const ConfirmPlan& confirm) {
  const ReplayProblem& rp = r.recording;
  const SearchTrace& trace = r.trace;
  std::cout << fmt::format(
      "\n{} — {} configs recorded{}; strategy {}, seed {}, {} in flight\n", rp.canonical, rp.space.domain.size(),
      rp.unrecorded ? fmt::format(" ({} configs of the space are not: left out)", rp.unrecorded) : "",
      r.schedule.strategy, r.schedule.seed, r.in_flight);
  if (!r.schedule.warm_start.empty())
    std::cout << fmt::format("  warm start: the other device's top {} configs proposed first\n",
                             r.schedule.warm_start.size());
  std::uint64_t failed = 0;
  for (const Evaluation& e : trace.evaluations) failed += e.time ? 0 : 1;
  std::cout << fmt::format("  evaluations {} of {} ({:.1f} %), {} failed{}\n", trace.evaluations.size(),
                           rp.space.domain.size(),
                           100.0 * double(trace.evaluations.size()) / double(rp.space.domain.size()), failed,
                           trace.budget_exhausted ? " (budget reached)"
                           : trace.good_enough    ? " (good enough: stopped at --good-enough)"
                                                  : "");
  std::cout << fmt::format("  recorded sweep time {:.1f} s of {:.1f} s for every config (compile + measure)\n",
                           trace.cost_seconds, rp.exhaustive_cost_seconds);
  for (const std::size_t point : rp.suspects) {
    const LandscapeTrial& t = recorded_trial(rp, point);
    std::cout << fmt::format("  suspect     {:<44} {:.4f} ms (recorded ok): {}\n",
                             format_config(space, rp.space.config(point)), t.time_ms.value_or(0),
                             text_out::terminal_text(t.detail));
  }
  if (r.confirmation.trials > 0)
    std::cout << fmt::format(
        "  finalists: {} config{} confirmed in {} rounds ({} tie candidates together), {} trials, {:.1f} s recorded\n",
        r.confirmation.finalists, r.confirmation.finalists == 1 ? "" : "s", confirm.rounds,
        r.confirmation.tie_candidates, r.confirmation.trials, r.confirmation_cost_seconds);
  if (!rp.optimum) {
    std::cout << "  no config of this problem ran in the recording\n";
    return;
  }
  if (trace.best) {
    std::cout << fmt::format("  best found  {:<44} {:.4f} ms = {:.1f} % of the optimum's speed\n",
                             format_config(space, rp.space.config(*trace.best)), trace.best_time,
                             100.0 * rp.optimum_ms / trace.best_time);
  } else {
    std::cout << "  best found  nothing (every evaluation failed)\n";
  }
  std::cout << fmt::format("  optimum     {:<44} {:.4f} ms\n", format_config(space, rp.space.config(*rp.optimum)),
                           rp.optimum_ms);
  std::string reach;
  for (const double f : {0.90, 0.95, 0.99}) {
    const auto n = evaluations_to_reach(trace, rp.optimum_ms, f);
    reach += fmt::format("{}{:.0f} % after {}", reach.empty() ? "" : ", ", 100 * f, n ? std::to_string(*n) : "-");
  }
  std::cout << "  reached " << reach << " evaluations\n";
}

// `tune --replay`: the strategy against a recording, one problem after another.
int run_replay(const Space& space, const TuneOptions& o) {
  if (o.objective != "time")
    throw UsageError(fmt::format("--objective {} with --replay: a recorded landscape holds times only", o.objective));
  const Landscape landscape = load_landscape(o.replay);
  if (landscape.kernel != space.kernel)
    throw Error(fmt::format("{}: the recording is of kernel {}, the space of {} ({})", o.replay,
                            quote(landscape.kernel), quote(space.kernel), space.yaml_path.string()));
  std::vector<Problem> problems = select_problems(space, o.plan.sizes);
  // Without --size, the problems the recording has (a space lists more sizes than were recorded).
  if (o.plan.sizes.empty()) {
    std::vector<Problem> recorded;
    for (const Problem& p : problems)
      if (landscape.find_problem(canonical_problem(space, p))) recorded.push_back(p);
    if (recorded.empty())
      throw Error(fmt::format("replay: {} has none of the problems of {}", o.replay, space.yaml_path.string()));
    problems = std::move(recorded);
  }
  ReplaySweepOptions options;
  options.strategy = o.strategy;
  options.budget = parse_budget(o.budget);
  options.seed = o.seed;
  options.confirm.finalists = o.confirm;
  options.confirm.tie_candidates = o.confirm_ties;
  options.compile_threads = o.plan.threads;
  options.in_flight = o.in_flight;
  options.shard = resolve_shard(o.plan.shard);
  options.good_enough = good_enough_share(o.good_enough, o.objective);
  std::optional<WarmStart> warm;
  if (!o.warm_start.empty()) {
    // Not the recorded device's own trials: by its uuid when the recording names it, else by name.
    const auto uuid = landscape.header_value("device_uuid");
    warm = load_warm_start(o.warm_start, space, uuid ? std::vector<std::string>{*uuid} : std::vector<std::string>{},
                           uuid ? std::string() : landscape.header_value("device").value_or(""));
    options.warm_start = &*warm;
  }
  const bool json = o.format == "json";
  nlohmann::json document = {{"recording", o.replay},
                             {"kernel", landscape.kernel},
                             {"device", landscape.header_value("device").value_or("")},
                             {"problems", nlohmann::json::array()}};
  if (warm) document["warm_start"] = warm->source;
  if (!json)
    std::cout << fmt::format("replay of {} ({} on {}, recorded {}){}\n", text_out::terminal_text(o.replay),
                             landscape.kernel, text_out::terminal_text(landscape.header_value("device").value_or("?")),
                             text_out::terminal_text(landscape.header_value("recorded").value_or("?")),
                             options.shard.whole() ? "" : ", shard " + format_shard(options.shard));
  if (!json && warm) std::cout << fmt::format("warm start from {}\n", text_out::terminal_text(warm->source));
  // The schedule of a sweep with these options: `auto` decided once, the time budget shared on
  // the simulated clock, each problem's finalists confirmed.
  const ReplayedSweep sweep = replay_sweep(space, landscape, problems, options);
  bool found_any = false;
  for (const ReplayedProblem& r : sweep.problems) {
    found_any = found_any || r.trace.best.has_value();
    if (json)
      document["problems"].push_back(replay_json(space, r, options.confirm));
    else
      print_replayed(space, r, options.confirm);
  }
  if (json) {
    std::size_t replaced = 0;
    std::cout << text_out::dump_json(document, 2, &replaced) << '\n';
    if (replaced > 0) std::cerr << text_out::replaced_warning(o.replay, replaced) << '\n';
  }
  return found_any ? exit_ok : exit_no_result;
}

}  // namespace

namespace {

/// `tune SPACE.yaml`: one sweep (or its replay, or a plan when there is no GPU).
int tune_space(const std::shared_ptr<TuneOptions>& o) {
  Space space = load_space(o->plan.space);
  if (!o->replay.empty()) return run_replay(space, *o);
  const std::vector<DeviceInfo> devices = list_devices();
  if (devices.empty()) {
    std::cout << fmt::format("no CUDA device present ({}): running `plan` on {} instead\n", cuda_unavailable_reason(),
                             o->plan.space);
    Plan plan = run_plan(space, o->plan);
    print_plan(std::cout, space, plan, Format::table);
    return exit_ok;
  }
  SweepOptions options;
  if (!o->devices.empty()) {
    options.devices = pick_devices(devices, o->devices);
  } else {
    if (o->device >= static_cast<int>(devices.size()))
      throw UsageError(fmt::format("--device {}: this machine has {} CUDA device{} (0 to {})", o->device,
                                   devices.size(), devices.size() == 1 ? "" : "s", devices.size() - 1));
    options.device = devices[static_cast<std::size_t>(o->device)];
  }
  options.problems = select_problems(space, o->plan.sizes);
  options.compile_threads = o->plan.threads;
  options.compiler = compile_workers();
  std::optional<CubinCache> cache;
  if (!o->plan.no_cache) {
    cache.emplace(o->plan.cubin_cache.empty() ? CubinCache::default_directory()
                                              : std::filesystem::path(o->plan.cubin_cache));
    options.cubin_cache = &*cache;
  }
  options.db_path = o->db;
  options.force = o->force;
  options.budget = parse_budget(o->budget);
  options.strategy = o->strategy;
  options.seed = o->seed;
  options.shard = resolve_shard(o->plan.shard);
  options.timing.cold = !o->hot;
  options.timing.min_samples = o->min_samples;
  options.timing.warmup_runs = o->warmup;
  options.timing.min_seconds = o->min_time;
  options.timing.max_seconds = o->max_time;
  options.timing.max_noise = o->max_noise / 100.0;
  options.deadline_seconds = o->deadline;
  options.confirm_finalists = o->confirm;
  options.confirm_ties = o->confirm_ties;
  options.good_enough = good_enough_share(o->good_enough, o->objective);
  if (!o->warm_start.empty()) {
    std::vector<std::string> tuned;  // the devices of this sweep: their own trials are no warm start
    for (const DeviceInfo& d : options.devices.empty() ? std::vector<DeviceInfo>{options.device} : options.devices)
      tuned.push_back(d.uuid);
    const int arch = (options.devices.empty() ? options.device : options.devices.front()).arch();
    options.warm_start = load_warm_start(o->warm_start, space, tuned, {}, arch);
    if (!options.warm_start.note.empty()) std::cerr << text_out::terminal_text(options.warm_start.note) << '\n';
  }
  options.objective = *parse_objective(o->objective);
  options.energy.enabled = o->energy;
  const bool tty = stderr_is_tty();
  if (!o->plan.quiet) {
    auto last_line = std::make_shared<double>(-1e9);
    options.progress = [tty, last_line](const SweepProgress& p) {
      const double eta = p.done ? p.elapsed_seconds / double(p.done) * double(p.total - p.done) : NAN;
      if (tty) {
        constexpr int width = 30;
        const int filled = p.total ? static_cast<int>(width * p.done / p.total) : width;
        std::cerr << fmt::format("\r\033[K[{}{}] {}/{} ETA {} | {} | {}", std::string(filled, '='),
                                 std::string(width - filled, ' '), p.done, p.total, format_duration(eta),
                                 counts_text(p.counts), p.current.substr(0, 50))
                  << std::flush;
        if (p.done == p.total) std::cerr << "\r\033[K" << std::flush;
      } else if (p.elapsed_seconds - *last_line >= 10 || p.done == p.total) {
        *last_line = p.elapsed_seconds;
        std::cerr << fmt::format("tune: {}/{} trials, {} elapsed, ETA {} ({})\n", p.done, p.total,
                                 format_duration(p.elapsed_seconds), format_duration(eta), counts_text(p.counts));
      }
    };
  }
  const InterruptSignals signals;
  options.interrupted = [] { return InterruptSignals::received() != 0; };
  SweepReport report = run_sweep(space, options);
  print_report(std::cout, space, report, o->top);
  if (report.interrupted) {
    std::cerr << fmt::format(
        "tiletune: tune: interrupted ({}) after {} trials: they are in {}; run the same "
        "command again to resume\n",
        InterruptSignals::received() == SIGTERM ? "SIGTERM" : "SIGINT", report.trials.size(), report.db_path.string());
    return exit_interrupted;
  }
  bool any_ok = std::any_of(report.problems.begin(), report.problems.end(),
                            [](const ProblemOutcome& p) { return !p.ranked.empty(); });
  for (const DeviceOutcome& d : report.pool)
    for (const ProblemOutcome& p : d.problems) any_ok = any_ok || !p.ranked.empty();
  // A model whose every GPU left the pool is an error; the other models' results stand.
  for (const std::string& e : report.pool_errors) std::cerr << "tiletune: tune: " << e << '\n';
  if (!report.pool_errors.empty()) return exit_error;
  if (!any_ok) std::cerr << "tiletune: tune: no config of any problem ran ok: there is no best config to use\n";
  return any_ok ? exit_ok : exit_no_result;
}

/// The capture folders of `folder` (each FOLDER/NAME/space.yaml), in name order.
std::vector<std::filesystem::path> capture_spaces(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> spaces;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    if (entry.is_directory() && std::filesystem::is_regular_file(entry.path() / "space.yaml"))
      spaces.push_back(entry.path() / "space.yaml");
  std::sort(spaces.begin(), spaces.end());
  if (spaces.empty())
    throw UsageError(
        fmt::format("{} is a folder without captures (NAME/space.yaml in it): name a space, or the "
                    "folder TILETUNE_CAPTURE_DIR names",
                    quote(folder.string())));
  return spaces;
}

/// `tune FOLDER`: each capture of a capture folder tuned in turn, with the same options. The exit
/// status is the worst of theirs (an interruption stops at once).
int tune_captures(const std::shared_ptr<TuneOptions>& o) {
  const std::vector<std::filesystem::path> spaces = capture_spaces(o->plan.space);
  int worst = exit_ok;
  for (std::size_t i = 0; i < spaces.size(); ++i) {
    std::cout << fmt::format("== capture {}/{}: {}\n", i + 1, spaces.size(), spaces[i].string()) << std::flush;
    auto one = std::make_shared<TuneOptions>(*o);
    one->plan.space = spaces[i].string();
    const int status = tune_space(one);
    if (status == exit_interrupted) return status;
    if (status == exit_error || (status == exit_no_result && worst == exit_ok)) worst = status;
  }
  return worst;
}

}  // namespace

Runner add_tune_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("tune", "Run a tuning sweep on the GPU (plans the space when there is no GPU)");
  auto o = std::make_shared<TuneOptions>();
  cmd->add_option("space", o->plan.space,
                  "Search space (YAML) or a capture folder (default: the shipped configs/transpose.yaml)")
      ->check(CLI::ExistingPath);
  add_plan_options(*cmd, o->plan);
  auto* device = cmd->add_option("--device", o->device, "CUDA device ordinal (see `tiletune devices`)")
                     ->check(whole_number_in(0, 1023));
  cmd->add_option("--devices", o->devices,
                  "Several GPUs of this host at once: all, or ordinals as 0,1,3 (one worker per GPU)")
      ->check([](const std::string& v) {
        try {
          (void)parse_device_list(v);
          return std::string();
        } catch (const UsageError& e) { return std::string(e.what()); }
      })
      ->excludes(device);
  cmd->add_option("--db", o->db, "Result cache (default: $TILETUNE_DB, else ~/.cache/tiletune/tiletune.db or XDG's)");
  cmd->add_option("--budget", o->budget,
                  "Each problem's trials (200) or share of configs (25%), or the sweep's time (90s, 10m)")
      ->check(budget_text());
  cmd->add_flag("--force", o->force, "Re-measure configs the cache already has");
  cmd->add_flag("--hot", o->hot, "Time back-to-back runs (default: cold, L2 flushed before each sample)");
  cmd->add_option("--min-samples", o->min_samples, "Samples before the noise rule may stop (default 10)")
      ->check(whole_number_in(1, 1'000'000));
  cmd->add_option("--warmup", o->warmup, "Untimed runs of each config before its samples (default 1)")
      ->check(whole_number_in(0, 1000));
  cmd->add_option("--min-time", o->min_time, "GPU seconds before the noise rule may stop (default 0.005)")
      ->check(finite_in(0, 3600));
  cmd->add_option("--max-time", o->max_time, "Seconds of timing per config at most (default 0.5)")
      ->check(finite_in(0, 3600, true));
  cmd->add_option("--max-noise", o->max_noise, "Target relative standard deviation of the samples, % (default 2)")
      ->check(finite_in(0, 100, true));
  cmd->add_option("--deadline", o->deadline, "Seconds a trial may take before its worker is killed (default 10)")
      ->check(finite_in(0, 86400, true));
  cmd->add_option("--confirm", o->confirm,
                  "Finalists measured again in 3 interleaved rounds after each search (default 3; 0: none)")
      ->check(whole_number_in(0, 1000));
  cmd->add_option("--confirm-ties", o->confirm_ties,
                  fmt::format("Then the configs within 10 % of the best measured together in one more set of "
                              "rounds, at most N (default {}; 0: none)",
                              kDefaultTieCandidates))
      ->check(whole_number_in(0, 1000));
  cmd->add_option("--good-enough", o->good_enough,
                  "End a problem's search once a config reaches P % of its ceiling (90%; needs metrics)")
      ->check(percent_text());
  cmd->add_option("--top", o->top, "Configs listed per problem at the end (default 10)")
      ->check(whole_number_in(0, 1'000'000));
  cmd->add_option("--arch", o->plan.arch, "Architecture to plan for when no GPU is present (default sm_90)")
      ->check(known_arch());
  std::string strategies = "auto";
  for (const std::string& n : strategy_names()) strategies += ", " + n;
  cmd->add_option("--strategy", o->strategy, "Search strategy: " + strategies + " (default auto)")
      ->check([](const std::string& v) {
        if (v == "auto") return std::string();
        for (const std::string& n : strategy_names())
          if (v == n) return std::string();
        return "unknown strategy '" + v + "'";
      });
  cmd->add_option("--seed", o->seed, "Seed of the strategy, 0 to 2^64-1 (default 1): the same seed repeats a search")
      ->check(whole_number_in(0, UINT64_MAX));
  auto* replay = cmd->add_option("--replay", o->replay, "Answer the strategy from a recording instead of the GPU")
                     ->check(CLI::ExistingFile);
  cmd->add_option("--warm-start", o->warm_start,
                  "Propose another device's fastest " + std::to_string(warm_start_points) +
                      " configs first (from a cache or a recording)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--format", o->format, "With --replay: table (default) or json (every evaluation, in order)")
      ->check(CLI::IsMember({"table", "json"}))
      ->needs(replay);
  cmd->add_option("--in-flight,--batch", o->in_flight,
                  "With --replay: configs in flight at once (default: a sweep's window)")
      ->check(whole_number_in(1, 1'000'000));
  cmd->add_option("--objective", o->objective,
                  "What the strategy minimizes: time (default), energy (per run, NVML) or edp (energy x time)")
      ->check(CLI::IsMember({"time", "energy", "edp"}));
  cmd->add_flag("--energy", o->energy,
                "Also measure power and energy per trial through NVML (0.2-0.5 s more per trial)");
  cmd->footer(help_footer("tune", R"(Example:
  tiletune tune configs/transpose.yaml --size N=8192 --db results.db --budget 10m)",
                          {exit_ok, exit_error, exit_usage, exit_no_result, exit_interrupted}));
  return [o]() {
    if (o->plan.space.empty()) o->plan.space = default_space_path().string();
    if (!std::filesystem::is_directory(o->plan.space)) return tune_space(o);
    if (!o->replay.empty())
      throw UsageError(fmt::format("--replay: {} is a folder; a replay takes one space", quote(o->plan.space)));
    return tune_captures(o);
  };
}

namespace {
// The niceness of a compile worker (0 is the default, 19 the lowest priority).
constexpr int kCompileWorkerNice = 10;

// The handler of a compile worker: it serves "compile" requests (serve_worker runs NVRTC for
// them) and refuses GPU work, having no device.
class CompileOnlyHandler final : public TrialHandler {
 public:
  TrialResult run_trial(const TrialRequest&) override { throw Error("a compile worker runs no trials"); }
  CopyCeiling measure_copy(std::uint64_t) override { throw Error("a compile worker measures no copy"); }
};
}  // namespace

Runner add_worker_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("__worker", "Internal: the GPU worker or compile worker a sweep starts");
  cmd->group("");  // hidden from --help
  auto device = std::make_shared<int>(0);
  auto compile_only = std::make_shared<bool>(false);
  auto cubin_cache = std::make_shared<std::string>();
  cmd->add_option("--device", *device, "CUDA device ordinal")->check(whole_number_in(0, 1023));
  cmd->add_flag("--compile-only", *compile_only, "Compile requests only: no CUDA context");
  cmd->add_option("--cubin-cache", *cubin_cache, "Where the worker's own kernels are cached (default: none)");
  return [device, compile_only, cubin_cache]() {
    const WorkerFds fds = worker_fds_from_env();
    if (*compile_only) {
      // Below the GPU worker: with a compile worker per core, the GPU worker's start (its own
      // kernels, the context) and its timing loop must not wait behind NVRTC for a core.
      if (::setpriority(PRIO_PROCESS, 0, kCompileWorkerNice) != 0)
        std::fprintf(stderr, "tiletune: compile worker: setpriority: %s\n", std::strerror(errno));
      CompileOnlyHandler handler;
      return serve_worker(handler, fds.in_fd, fds.out_fd);
    }
    GpuRunner runner(*device, *cubin_cache);
    return serve_worker(runner, fds.in_fd, fds.out_fd);
  };
}

Runner add_devices_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "List the CUDA devices");
  auto format = std::make_shared<std::string>("table");
  cmd->add_option("--format", *format, "Output: table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->footer(help_footer("devices", "Example:\n  tiletune devices --format json", {exit_ok, exit_error, exit_usage}));
  return [format]() {
    std::vector<DeviceInfo> devices = list_devices();
    if (devices.empty()) {
      std::cout << fmt::format("no CUDA device present ({})\n", cuda_unavailable_reason());
      return exit_ok;
    }
    print_devices(std::cout, devices, *format == "json" ? Format::json : Format::table);
    return exit_ok;
  };
}

}  // namespace tiletune::cli
