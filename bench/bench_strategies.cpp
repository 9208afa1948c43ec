// bench_strategies (issues 6 and 23): every search strategy against every recorded landscape
// (tests/data/landscapes/*.csv by default, named by file: matmul-previous-kernel.csv is the
// matmul space recorded with the kernel before its rewrite; or the published ones imported with
// import-kt-cache) and against synthetic lazy domains, many seeds each, on the CPU. For each
// space, problem and strategy: the fraction of the optimum's speed reached after k evaluations
// (median and quartiles over the seeds), the evaluations needed for 90 %, 95 % and 99 % of it,
// their ratio to random sampling's, and the strategy's CPU time (propose + observe, this
// thread's CPU clock) per point proposed. Each strategy's line on stderr ends with a digest of
// the points its seeds evaluated, in order: a refactor that keeps it keeps every proposal.
//
// Beside them (issue 36): the score of Willemsen et al. (FGCS 2024; strategy_score.hpp says
// exactly what is implemented), and the confirmation a sweep makes after its search (the
// finalists and the tie pass, by the sweep's own rule: run_confirmation over what the search
// evaluated, as replay_sweep simulates it) counted as cost: evaluations to 99 % with the
// confirmation of a search stopped there, the score over a budget of trials that includes the
// confirmation, and the confirmation trials of the whole search. `auto` is the sweep's default:
// the strategy and budget choose_strategy gives for the problem's configs. A strategy may be
// the forest with other settings, "forest:local=0.3:kappa=0.5" (make_strategy; keys: explore,
// local, kappa, bases, joint, alignment): bench/choose_settings.py picks among such a grid,
// leaving one kernel out at a time.
//
//   bench_strategies [--seeds 50] [--landscapes DIR] [--configs DIR] [--out DIR]
//                    [--strategies a,b,...] [--threads 16] [--in-flight K] [--cap 0.3]
//                    [--cap-min 100] [--within 400] [--synthetic 1e5,1e7] [--synthetic-cap 2000]
//                    [--warm-start K]
//
// Each search is the one a sweep makes (run_search over the recording: the sliding window of
// in_flight_width(learns, --threads) points in flight, the default config first), unless
// --in-flight fixes the width (a strategy that learns searches the same at any width up to 8). --threads 16 is the H200 host's cores. Structured strategies
// stop at --cap of the domain (at least --cap-min evaluations and the score's range), random at
// the whole domain, `auto` at its own budget; on a synthetic domain every strategy stops at --synthetic-cap.
// --within K: the seeds that reached 99 % within K evaluations are counted.
//
// Synthetic domains (--synthetic): a DomainSource over a product grid (two block params with
// c0 + c1 <= 10, the rest free; 101,376 or 11,354,112 points, ids not dense, nothing listed)
// and a closed-form time, smooth with 10 % noise, whose optimum is known (1 ms).
// Warm starts (--warm-start K): each recording replayed with the top K configs of every other
// recording of its kernel and problem preferred (SearchStrategy::prefer), against a cold start.
//
// Writes DIR/strategies_curves.csv, DIR/strategies_summary.csv and (with --warm-start)
// DIR/strategies_warm_start.csv (bench/plot_strategies.py draws the curves), and prints the tables.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <memory>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tiletune/error.hpp"
#include "tiletune/landscape.hpp"
#include "tiletune/plan.hpp"
#include "tiletune/replay.hpp"
#include "tiletune/space.hpp"
#include "tiletune/strategy.hpp"
#include "tiletune/sweep.hpp"
#include "tiletune/trial.hpp"

#include "strategy_score.hpp"

namespace fs = std::filesystem;
using namespace tiletune;

namespace {

struct Args {
  int seeds = 50;
  fs::path landscapes = fs::path(TILETUNE_SOURCE_DIR) / "tests" / "data" / "landscapes";
  fs::path configs = fs::path(TILETUNE_SOURCE_DIR) / "configs";
  fs::path out = ".";
  std::vector<std::string> strategies;
  unsigned threads = 16;      // compile threads of the simulated sweep: the H200 host's cores
  std::size_t in_flight = 0;  // 0: in_flight_width(learns, threads), as a sweep
  double cap = 0.3;           // structured strategies stop at this share of the space (random and exhaustive go on)
  std::size_t cap_min = 100;  // ... and at no fewer evaluations than this
  std::size_t within = 400;   // seeds that reach 99 % within this many evaluations are counted
  std::vector<std::string> synthetic;  // synthetic lazy domains: 1e5, 1e7
  std::size_t synthetic_cap = 2000;    // evaluations per search on a synthetic domain (every strategy)
  std::size_t warm_k = 0;              // warm starts from the top k of another recording (0: none)
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, sep))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

Args parse_args(int argc, char** argv) {
  Args a;
  a.strategies = strategy_names();
  a.strategies.insert(a.strategies.begin(), "auto");
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(fmt::format("{} needs a value", arg));
      return argv[++i];
    };
    if (arg == "--seeds")
      a.seeds = std::stoi(value());
    else if (arg == "--landscapes")
      a.landscapes = value();
    else if (arg == "--configs")
      a.configs = value();
    else if (arg == "--out")
      a.out = value();
    else if (arg == "--strategies")
      a.strategies = split(value(), ',');
    else if (arg == "--threads")
      a.threads = static_cast<unsigned>(std::stoul(value()));
    else if (arg == "--in-flight")
      a.in_flight = std::stoul(value());
    else if (arg == "--cap")
      a.cap = std::stod(value());
    else if (arg == "--cap-min")
      a.cap_min = std::stoul(value());
    else if (arg == "--within")
      a.within = std::stoul(value());
    else if (arg == "--synthetic")
      a.synthetic = split(value(), ',');
    else if (arg == "--synthetic-cap")
      a.synthetic_cap = std::stoul(value());
    else if (arg == "--warm-start")
      a.warm_k = std::stoul(value());
    else if (arg == "--help" || arg == "-h") {
      std::cout << "usage: bench_strategies [--seeds 50] [--landscapes DIR] [--configs DIR] [--out DIR]\n"
                   "                        [--strategies a,b,...] [--threads 16] [--in-flight K] [--cap 0.3]\n"
                   "                        [--cap-min 100] [--within 400] [--synthetic 1e5,1e7]\n"
                   "                        [--synthetic-cap 2000] [--warm-start K]\n"
                   "  --strategies takes the names make_strategy knows and auto (the sweep's default), and the\n"
                   "  forest with other settings: forest:local=0.3:kappa=0.5 (keys: explore, local, kappa,\n"
                   "  bases, joint, alignment; bench/choose_settings.py compares a grid of them);\n"
                   "  --landscapes '' skips the recordings; --warm-start K replays each recording with the\n"
                   "  top K configs of every other recording of its kernel preferred, against a cold start\n";
      std::exit(0);
    } else {
      throw Error(fmt::format("unknown argument '{}' (see --help)", arg));
    }
  }
  if (a.seeds < 1) throw Error("--seeds must be at least 1");
  if (a.threads < 1) throw Error("--threads must be at least 1");
  return a;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const double pos = q * double(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

/// Evaluations to reach a fraction per seed; a seed that never reached it counts as infinite,
/// so the median is honest (infinite when most seeds did not get there).
struct Reach {
  double median = NAN;
  int reached = 0;  // seeds that got there
};
Reach reach(const std::vector<std::optional<std::size_t>>& per_seed) {
  std::vector<double> v;
  Reach r;
  for (const auto& n : per_seed) {
    v.push_back(n ? double(*n) : std::numeric_limits<double>::infinity());
    r.reached += n ? 1 : 0;
  }
  r.median = quantile(v, 0.5);
  return r;
}

std::string fmt_reach(const Reach& r, int seeds) {
  if (!std::isfinite(r.median)) return fmt::format("- ({}/{})", r.reached, seeds);
  return r.reached == seeds ? fmt::format("{:.0f}", r.median)
                            : fmt::format("{:.0f} ({}/{})", r.median, r.reached, seeds);
}

struct Row {
  std::string space, problem, strategy;
  std::string runs_as;  // what `auto` resolved to: "forest, 436" (empty for the others)
  std::uint64_t configs = 0;
  std::size_t cap = 0;
  int seeds = 0;
  Reach r90, r95, r99;
  Reach r99_confirmed;     // evaluations to 99 % plus the confirmation of a search stopped there
  int r99_within = 0;      // seeds that reached 99 % within --within evaluations
  double score = NAN;      // Willemsen et al.'s score over evaluations (strategy_score.hpp)
  double score_confirmed = NAN;  // the same over trials, the confirmation counted
  std::size_t score_range = 0;   // T: random's cutoff (0: no score for this landscape)
  double confirmation_median = 0;  // confirmation trials after the whole search (median over seeds)
  double final_median = 0;
  double seconds = 0;
  double cpu_us_per_proposal = 0;  // the strategy's propose + observe, CPU time per point proposed
};

/// CPU time of this thread: what the strategy spends, whatever else the machine runs.
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

/// A strategy whose propose, observe and prefer are timed (thread CPU) and counted.
class TimedStrategy final : public SearchStrategy {
 public:
  explicit TimedStrategy(std::unique_ptr<SearchStrategy> inner) : inner_(std::move(inner)) {}
  std::string_view name() const override { return inner_->name(); }
  bool learns() const override { return inner_->learns(); }
  std::vector<std::size_t> propose(std::size_t max_count) override {
    const double t0 = thread_cpu_seconds();
    std::vector<std::size_t> points = inner_->propose(max_count);
    cpu_ += thread_cpu_seconds() - t0;
    proposed_ += points.size();
    return points;
  }
  void observe(std::size_t point, std::optional<double> time) override {
    const double t0 = thread_cpu_seconds();
    inner_->observe(point, time);
    cpu_ += thread_cpu_seconds() - t0;
  }
  void prefer(std::vector<std::size_t> points) override { inner_->prefer(std::move(points)); }
  [[nodiscard]] double cpu_seconds() const { return cpu_; }
  [[nodiscard]] std::size_t proposed() const { return proposed_; }

 private:
  std::unique_ptr<SearchStrategy> inner_;
  double cpu_ = 0;
  std::size_t proposed_ = 0;
};

/// One landscape a strategy is run on: a domain, an evaluator of its outcomes (a new one per
/// search) and its optimum; for the score, its distribution of ok times (none: no score); for
/// the confirmation's order of equal times, a point's canonical params; for `auto`, the size of
/// the domain a sweep of it would search.
struct Target {
  std::string space, problem;
  const SearchDomain* domain = nullptr;
  std::function<std::unique_ptr<Evaluator>()> evaluator;
  double optimum = 0;
  std::optional<bench::TimeDistribution> times;
  std::function<std::string(std::size_t)> params_of;
  DomainSize sweep_size;
};

/// A recording's target: evaluated as `tune --replay` does (replay_evaluator: a config the
/// recording lacks is answered for free, as a constraint would have left it out).
Target recording_target(std::string space, std::string problem, const Space& sp, const ReplayProblem& r) {
  Target t{std::move(space), std::move(problem), &r.space.domain, [&r] { return replay_evaluator(r); }, r.optimum_ms};
  std::vector<double> ok;
  for (const std::size_t p : recorded_points(r))
    if (const Evaluation e = recorded_evaluation(r, p); e.time) ok.push_back(*e.time);
  t.times = bench::time_distribution(std::move(ok));
  t.params_of = [&sp, &r](std::size_t p) { return canonical_config(sp, r.space.config(p)); };
  t.sweep_size = r.sweep_size;
  return t;
}

/// The trials a sweep's confirmation adds after a search that evaluated `evaluated` points, of
/// which `scored` ran ok: the sweep's rule (run_confirmation: the finalists' passes, then the tie
/// pass, within confirmation_limit) as replay_sweep applies it, one device. A recording has one
/// time per config, so the passes change no score.
std::uint64_t confirmation_trials(const ConfirmPlan& plan, const std::vector<ScoredPoint>& scored,
                                  std::uint64_t evaluated) {
  if (evaluated == 0 || !plan.any()) return 0;  // confirms_after_search
  const auto rounds = static_cast<std::uint64_t>(plan.rounds);
  return run_confirmation(
             plan, confirmation_limit(plan, evaluated), 1, [&] { return top_points(scored, plan.finalists); },
             [&](const std::vector<std::size_t>& points) { return std::uint64_t(points.size()) * rounds; },
             [&] { return tie_candidate_points(scored, plan.tie_candidates); })
      .trials;
}

/// What the seeds of one strategy on one target gave.
struct SeedRuns {
  std::vector<std::vector<double>> fraction_at;  // [k-1][seed]
  std::vector<std::optional<std::size_t>> n90, n95, n99;
  std::vector<std::optional<std::size_t>> n99_confirmed;  // n99 + the confirmation after n99 evaluations
  std::vector<double> confirmation;                       // trials confirming the whole search, per seed
  // For the score, up to its range: the best time after k evaluations, and after k trials with
  // the confirmation counted ([k-1][seed]; infinity: nothing found yet).
  std::vector<std::vector<double>> best_at, best_at_trials;
  double cpu_seconds = 0;
  std::size_t proposed = 0;
  std::uint64_t digest = 0xcbf29ce484222325ULL;  // FNV-1a of every seed's evaluated points, in order
};

/// Runs seeds 1..seeds of a strategy as a sweep would (the sliding window of the sweep's
/// in-flight width, the default config first), each stopped after cap evaluations; with
/// preferred points, each search gets them as its warm start.
SeedRuns run_seeds(const Target& target, const std::string& name, int seeds, std::size_t cap, const Args& args,
                   const std::vector<std::size_t>& preferred = {}) {
  SeedRuns runs;
  runs.fraction_at.resize(cap);
  const ConfirmPlan plan;  // the sweep's default: 3 finalists x 3 rounds, then up to 64 tie candidates
  const std::size_t range = target.times ? bench::random_cutoff_evaluations(*target.times) : 0;
  runs.best_at.resize(range);
  runs.best_at_trials.resize(range);
  for (int seed = 1; seed <= seeds; ++seed) {
    TimedStrategy strategy(make_strategy(name, *target.domain, static_cast<std::uint64_t>(seed)));
    if (!preferred.empty()) strategy.prefer(preferred);
    SearchBudget budget;
    budget.evaluations = cap;
    SearchRun run = sweep_search_run(*target.domain, strategy, budget, args.threads);
    if (args.in_flight) run.in_flight = args.in_flight;
    const std::unique_ptr<Evaluator> evaluator = target.evaluator();
    const SearchTrace trace = run_search(*target.domain, strategy, *evaluator, run);
    runs.cpu_seconds += strategy.cpu_seconds();
    runs.proposed += strategy.proposed();
    std::vector<const Evaluation*> evaluated;  // recalled ones (a recording's unrecorded configs) cost nothing
    for (const Evaluation& e : trace.evaluations) {
      if (!e.recalled) evaluated.push_back(&e);
      runs.digest = (runs.digest ^ e.point) * 0x100000001b3ULL;
    }
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < cap; ++k) {
      if (k < evaluated.size() && evaluated[k]->time) best = std::min(best, *evaluated[k]->time);
      runs.fraction_at[k].push_back(std::isfinite(best) ? target.optimum / best : 0.0);
    }
    runs.n90.push_back(evaluations_to_reach(trace, target.optimum, 0.90));
    runs.n95.push_back(evaluations_to_reach(trace, target.optimum, 0.95));
    runs.n99.push_back(evaluations_to_reach(trace, target.optimum, 0.99));

    // The confirmation as cost. cost[n-1]: the trials of a search stopped after its first n
    // evaluations, its confirmation included (the same points: a budget of n evaluations
    // would have proposed them, up to the last window's width).
    const std::size_t n99 = runs.n99.back().value_or(0);
    const std::size_t costed = std::max(std::min(evaluated.size(), range), n99);
    std::vector<ScoredPoint> scored;
    std::vector<double> best_prefix;
    std::vector<std::uint64_t> cost;
    double best_time = std::numeric_limits<double>::infinity();
    for (std::size_t n = 1; n <= costed; ++n) {
      const Evaluation& e = *evaluated[n - 1];
      if (e.time) {
        scored.push_back({*e.time, target.params_of ? target.params_of(e.point) : std::to_string(e.point), e.point});
        best_time = std::min(best_time, *e.time);
      }
      best_prefix.push_back(best_time);
      if (n <= range || n == n99) cost.push_back(n + confirmation_trials(plan, scored, n));
      else cost.push_back(0);  // not needed
    }
    if (runs.n99.back()) runs.n99_confirmed.push_back(cost[n99 - 1]);
    else runs.n99_confirmed.push_back(std::nullopt);
    if (evaluated.size() == costed) {
      runs.confirmation.push_back(costed ? double(cost.back() - costed) : 0.0);
    } else {
      std::vector<ScoredPoint> all;
      for (const Evaluation* e : evaluated)
        if (e->time)
          all.push_back({*e->time, target.params_of ? target.params_of(e->point) : std::to_string(e->point), e->point});
      runs.confirmation.push_back(double(confirmation_trials(plan, all, evaluated.size())));
    }
    // Within the score's range: the best after k evaluations (a search that stopped keeps its
    // best), and after k trials: the best of the longest search whose trials with its
    // confirmation fit in k (best_prefix only improves, so the cheapest-first minimum is it).
    std::vector<double> best_by_cost(range, std::numeric_limits<double>::infinity());
    for (std::size_t n = 1; n <= std::min(costed, range); ++n)
      if (cost[n - 1] <= range) best_by_cost[cost[n - 1] - 1] = std::min(best_by_cost[cost[n - 1] - 1], best_prefix[n - 1]);
    double running = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < range; ++k) {
      running = std::min(running, best_by_cost[k]);
      const double after_k = best_prefix.empty() ? running : best_prefix[std::min(k, best_prefix.size() - 1)];
      runs.best_at[k].push_back(after_k);
      runs.best_at_trials[k].push_back(running);
    }
  }
  return runs;
}

/// Where a search stops: structured strategies at --cap of the domain, at least --cap-min
/// evaluations and the score's range (so that the score is of what it found there, not of a best
/// held since it stopped), random and exhaustive at cap_random; never past cap_random.
std::size_t cap_for(const std::string& name, std::uint64_t n, std::size_t cap_random, std::size_t score_range,
                    const Args& args) {
  if (name == "random" || name == "exhaustive") return cap_random;
  return std::min<std::size_t>(
      cap_random, std::max({args.cap_min, score_range, static_cast<std::size_t>(std::ceil(args.cap * double(n)))}));
}

/// What a strategy of --strategies runs as on a target: itself, or for `auto` the strategy and
/// evaluations a sweep of this problem alone would get (choose_strategy on the configs a sweep
/// would measure, no --budget; replay_sweep's schedule), never past cap_random. `auto` keeps its
/// budget even below the score's range: that is what a sweep gets.
struct Resolved {
  std::string strategy;
  std::size_t cap = 0;
};
Resolved resolve(const std::string& name, const Target& target, std::size_t cap_random, const Args& args) {
  const std::size_t range = target.times ? bench::random_cutoff_evaluations(*target.times) : 0;
  if (name != "auto") return {name, cap_for(name, target.domain->size(), cap_random, range, args)};
  const StrategyChoice choice = choose_strategy("auto", SearchBudget{}, target.sweep_size);
  const std::optional<std::uint64_t> evaluations = choice_evaluations(choice, target.sweep_size.count);
  return {choice.strategy, evaluations ? std::min<std::size_t>(*evaluations, cap_random) : cap_random};
}

/// Every strategy of args on a target: rows for the table, curves for the plot.
void bench_target(const Target& target, std::size_t cap_random, const Args& args, std::ofstream& curves,
                  std::vector<Row>& rows) {
  const std::uint64_t n = target.domain->size();
  // Random search's exact expected best over the score's range, once per target.
  std::vector<double> random_at;
  if (target.times) random_at = bench::expected_random_curve(*target.times, bench::random_cutoff_evaluations(*target.times));
  for (const std::string& name : args.strategies) {
    const Resolved resolved = resolve(name, target, cap_random, args);
    const std::size_t cap = resolved.cap;
    const int seeds = resolved.strategy == "exhaustive" ? 1 : args.seeds;  // it has no randomness
    const auto t0 = std::chrono::steady_clock::now();
    const SeedRuns runs = run_seeds(target, resolved.strategy, seeds, cap, args);
    Row row;
    row.space = target.space;
    row.problem = target.problem;
    row.strategy = name;
    if (name != resolved.strategy || name == "auto") row.runs_as = fmt::format("{}, {}", resolved.strategy, cap);
    row.configs = n;
    row.cap = cap;
    row.seeds = seeds;
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    row.r90 = reach(runs.n90);
    row.r95 = reach(runs.n95);
    row.r99 = reach(runs.n99);
    row.r99_confirmed = reach(runs.n99_confirmed);
    for (const auto& n99 : runs.n99) row.r99_within += n99 && *n99 <= args.within ? 1 : 0;
    row.confirmation_median = quantile(runs.confirmation, 0.5);
    if (target.times) {
      // The median over seeds at each t; infinity (nothing found) sorts last and counts as the
      // slowest ok time in the score.
      std::vector<double> median_at, median_at_trials;
      for (std::size_t k = 0; k < random_at.size(); ++k) {
        median_at.push_back(quantile(runs.best_at[k], 0.5));
        median_at_trials.push_back(quantile(runs.best_at_trials[k], 0.5));
      }
      row.score_range = random_at.size();
      row.score = bench::methodology_score(median_at, random_at, *target.times);
      row.score_confirmed = bench::methodology_score(median_at_trials, random_at, *target.times);
    }
    row.final_median = quantile(runs.fraction_at[cap - 1], 0.5);
    row.cpu_us_per_proposal = runs.proposed ? 1e6 * runs.cpu_seconds / double(runs.proposed) : 0.0;
    for (std::size_t k = 0; k < cap; ++k)
      curves << fmt::format("{},{},{},{},{},{:.5f},{:.5f},{:.5f}\n", row.space, row.problem, n, name, k + 1,
                            quantile(runs.fraction_at[k], 0.5), quantile(runs.fraction_at[k], 0.25),
                            quantile(runs.fraction_at[k], 0.75));
    rows.push_back(row);
    std::cerr << fmt::format(
        "{} {} {}: {} seeds, {:.1f} s, to 90/95/99 %: {} / {} / {}, score {:.3f} ({:.3f} with the confirmation), "
        "{:.0f} us CPU per proposal, proposals {:016x}\n",
        row.space, row.problem, name, seeds, row.seconds, fmt_reach(row.r90, seeds), fmt_reach(row.r95, seeds),
        fmt_reach(row.r99, seeds), row.score, row.score_confirmed, row.cpu_us_per_proposal, runs.digest);
  }
}

// --- synthetic large domains ----------------------------------------------------------------

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// A lazy domain over a product grid: params 0 and 1 have 11 values (block x and y as powers of
/// two) and a point needs c0 + c1 <= 10 (at most 1024 threads); the other params are free. Ids
/// are the grid's mixed-radix key (param 0 slowest), so they are not dense; nothing is listed.
class SyntheticSource final : public DomainSource {
 public:
  explicit SyntheticSource(std::vector<std::uint16_t> free_sizes) : free_sizes_(std::move(free_sizes)) {
    rest_ = 1;
    for (const std::uint16_t n : free_sizes_) rest_ *= n;
    for (std::uint16_t a = 0; a < kBlock; ++a)
      for (std::uint16_t b = 0; b < kBlock; ++b)
        if (valid_pair(a, b)) pairs_.push_back(a * kBlock + b);
  }

  DomainSize size() const override { return {pairs_.size() * rest_, true, 0}; }
  std::vector<std::uint16_t> coords(std::size_t point) const override {
    if (point >= std::uint64_t(kBlock) * kBlock * rest_ || !valid_pair(point / rest_ / kBlock, point / rest_ % kBlock))
      throw Error(fmt::format("synthetic domain: {} is not a point", point));
    std::vector<std::uint16_t> c(2 + free_sizes_.size());
    std::uint64_t k = point;
    for (std::size_t d = c.size(); d-- > 2;) {
      c[d] = static_cast<std::uint16_t>(k % free_sizes_[d - 2]);
      k /= free_sizes_[d - 2];
    }
    c[1] = static_cast<std::uint16_t>(k % kBlock);
    c[0] = static_cast<std::uint16_t>(k / kBlock);
    return c;
  }
  std::optional<std::size_t> find(std::span<const std::uint16_t> c) const override {
    if (!valid_pair(c[0], c[1])) return std::nullopt;
    std::uint64_t k = std::uint64_t(c[0]) * kBlock + c[1];
    for (std::size_t d = 2; d < c.size(); ++d) k = k * free_sizes_[d - 2] + c[d];
    return k;
  }
  std::optional<std::size_t> sample(std::uint64_t random) const override {
    std::uint64_t word = mix64(random);
    const std::uint64_t pair =
        pairs_[static_cast<std::size_t>((static_cast<unsigned __int128>(word) * pairs_.size()) >> 64)];
    word = mix64(word);
    return pair * rest_ + static_cast<std::uint64_t>((static_cast<unsigned __int128>(word) * rest_) >> 64);
  }
  std::optional<std::size_t> next(std::optional<std::size_t> after) const override {
    std::uint64_t k = after ? *after + 1 : 0;
    for (std::uint64_t pair = k / rest_; pair < std::uint64_t(kBlock) * kBlock; ++pair, k = pair * rest_)
      if (valid_pair(pair / kBlock, pair % kBlock)) return k;
    return std::nullopt;
  }

  static constexpr std::uint16_t kBlock = 11;
  static bool valid_pair(std::uint64_t a, std::uint64_t b) { return a < kBlock && b < kBlock && a + b <= 10; }

 private:
  std::vector<std::uint16_t> free_sizes_;
  std::uint64_t rest_ = 1;
  std::vector<std::uint64_t> pairs_;
};

/// A synthetic landscape on a SyntheticSource: smooth bowls around an optimum (with a valley
/// between the block params and a second, 10 % slower basin), times 1 + up to 10 % of noise
/// per point (none at the optimum, so its time, 1 ms, is the known optimum), and a failing
/// corner (the most threads with the largest param 2). Each evaluation costs 1 s.
struct Synthetic {
  std::string name;
  SearchDomain domain;
  std::vector<std::uint16_t> best, second;

  Synthetic(std::string n, std::vector<std::uint16_t> free_sizes)
      : name(std::move(n)), domain(make_domain(free_sizes)) {
    best.assign(domain.dimensions(), 0);
    second.assign(domain.dimensions(), 0);
    best[0] = 5, best[1] = 3, second[0] = 2, second[1] = 7;
    for (std::size_t d = 2; d < best.size(); ++d) {
      best[d] = static_cast<std::uint16_t>(free_sizes[d - 2] * 2 / 3);
      second[d] = static_cast<std::uint16_t>(free_sizes[d - 2] / 4);
    }
  }

  static SearchDomain make_domain(const std::vector<std::uint16_t>& free_sizes) {
    std::vector<std::string> names = {"BLOCK_X", "BLOCK_Y"};
    std::vector<std::vector<std::int64_t>> values(2);
    for (int i = 0; i < SyntheticSource::kBlock; ++i)
      values[0].push_back(std::int64_t(1) << i), values[1].push_back(std::int64_t(1) << i);
    for (std::size_t d = 0; d < free_sizes.size(); ++d) {
      names.push_back(fmt::format("P{}", d + 2));
      values.emplace_back();
      for (int v = 0; v < free_sizes[d]; ++v) values.back().push_back(v + 1);
    }
    // The start: the middle of each list (block 2^4 x 2^4).
    auto source = std::make_shared<SyntheticSource>(free_sizes);
    std::vector<std::uint16_t> start = {4, 4};
    for (const std::uint16_t n : free_sizes) start.push_back(static_cast<std::uint16_t>(n / 2));
    return SearchDomain::from_source(std::move(names), std::move(values), source, source->find(start));
  }

  [[nodiscard]] static double bowl(const std::vector<std::uint16_t>& c, const std::vector<std::uint16_t>& at) {
    double t = 1;
    for (std::size_t d = 0; d < c.size(); ++d) {
      const double steps = double(c[d]) - double(at[d]);
      t *= 1 + 0.03 * std::abs(steps) + 0.015 * steps * steps;
    }
    const double skew = (double(c[0]) - at[0]) + (double(c[1]) - at[1]);  // the valley: bx * by constant
    return t * (1 + 0.02 * skew * skew);
  }

  [[nodiscard]] Evaluation evaluate(std::size_t point) const {
    const std::vector<std::uint16_t> c = domain.coords(point);
    if (c[0] + c[1] == 10 && c[2] + 1 == domain.param_values()[2].size()) return {point, std::nullopt, 1.0};
    const double noise = c == best ? 0.0 : 0.1 * double(mix64(point) >> 11) * 0x1.0p-53;
    return {point, std::min(bowl(c, best), 1.1 * bowl(c, second)) * (1 + noise), 1.0};
  }
};

// --- warm starts ----------------------------------------------------------------------------

/// The k fastest ok points of a recording, fastest first, as the configs they are.
std::vector<Config> top_configs(const ReplayProblem& rp, std::size_t k) {
  std::vector<std::pair<double, std::size_t>> ok;
  for (std::optional<std::size_t> p = rp.space.domain.next(); p; p = rp.space.domain.next(p))
    if (const Evaluation e = recorded_evaluation(rp, *p); e.time) ok.emplace_back(*e.time, *p);
  std::sort(ok.begin(), ok.end());
  std::vector<Config> top;
  for (std::size_t i = 0; i < std::min(k, ok.size()); ++i) top.push_back(rp.space.config(ok[i].second));
  return top;
}

}  // namespace

int main(int argc, char** argv) try {
  const Args args = parse_args(argc, argv);
  fs::create_directories(args.out);
  std::ofstream curves(args.out / "strategies_curves.csv");
  curves << "space,problem,configs,strategy,evaluations,median,p25,p75\n";
  std::vector<Row> rows;

  std::vector<fs::path> files;
  if (!args.landscapes.empty())
    for (const auto& e : fs::directory_iterator(args.landscapes))
      if (e.path().extension() == ".csv") files.push_back(e.path());
  std::sort(files.begin(), files.end());

  // Every recorded problem, kept for the warm starts between recordings of one kernel.
  std::vector<std::unique_ptr<ReplayProblem>> recorded;
  std::vector<std::string> recorded_names;
  std::vector<std::string> recorded_kernels;
  std::vector<const Space*> recorded_spaces;
  std::map<std::string, Space> spaces;
  for (const fs::path& file : files) {
    const Landscape landscape = load_landscape(file);
    if (!spaces.contains(landscape.kernel))
      spaces.emplace(landscape.kernel, load_space(args.configs / (landscape.kernel + ".yaml")));
    const Space& space = spaces.at(landscape.kernel);
    for (const LandscapeProblem& lp : landscape.problems) {
      const Problem problem = select_problem(space, split(lp.problem, ';'));
      auto rp = std::make_unique<ReplayProblem>(replay_problem(space, landscape, problem));
      if (!rp->optimum) continue;
      const ReplayProblem& r = *rp;
      const Target target = recording_target(file.stem().string(), lp.problem, space, r);
      bench_target(target, static_cast<std::size_t>(r.space.domain.size()), args, curves, rows);
      recorded.push_back(std::move(rp));
      recorded_names.push_back(file.stem().string());
      recorded_kernels.push_back(landscape.kernel);
      recorded_spaces.push_back(&space);
    }
  }

  // Synthetic lazy domains: nothing of them is listed, so the CPU per proposal shows what a
  // strategy costs at that size. Every strategy stops at --synthetic-cap evaluations.
  std::vector<std::unique_ptr<Synthetic>> synthetics;
  for (const std::string& size : args.synthetic) {
    if (size == "1e5")
      synthetics.push_back(std::make_unique<Synthetic>("synthetic_1e5", std::vector<std::uint16_t>{8, 8, 6, 4}));
    else if (size == "1e7")
      synthetics.push_back(std::make_unique<Synthetic>("synthetic_1e7", std::vector<std::uint16_t>{8, 8, 8, 8, 7, 6}));
    else
      throw Error(fmt::format("--synthetic {}: known sizes are 1e5 and 1e7", size));
  }
  for (const auto& syn : synthetics) {
    const Synthetic& s = *syn;
    Target target{
        s.name, "-", &s.domain,
        [&s] { return std::make_unique<SimulatedEvaluator>([&s](std::size_t p) { return s.evaluate(p); }); }, 1.0};
    target.sweep_size = s.domain.size_info();  // no score: its 10^5 to 10^7 times are not listed
    bench_target(target, args.synthetic_cap, args, curves, rows);
  }

  std::ofstream summary(args.out / "strategies_summary.csv");
  summary << "space,problem,configs,strategy,runs_as,seeds,cap,median_evals_90,median_evals_95,median_evals_99,"
             "seeds_reaching_95,median_fraction_at_cap,seconds,cpu_us_per_proposal,seeds_reaching_99,"
             "seeds_99_within,median_evals_99_with_confirmation,median_confirmation_trials,score_range,score,"
             "score_with_confirmation\n";
  auto num = [](double v) { return std::isfinite(v) ? fmt::format("{:.1f}", v) : std::string(); };
  auto num3 = [](double v) { return std::isfinite(v) ? fmt::format("{:.3f}", v) : std::string(); };
  for (const Row& r : rows)
    summary << fmt::format("{},{},{},{},\"{}\",{},{},{},{},{},{},{:.4f},{:.2f},{:.1f},{},{},{},{},{},{},{}\n", r.space,
                           r.problem, r.configs, r.strategy, r.runs_as, r.seeds, r.cap, num(r.r90.median),
                           num(r.r95.median), num(r.r99.median), r.r95.reached, r.final_median, r.seconds,
                           r.cpu_us_per_proposal, r.r99.reached, r.r99_within, num(r.r99_confirmed.median),
                           num(r.confirmation_median), r.score_range, num3(r.score), num3(r.score_confirmed));

  const std::string width =
      args.in_flight ? fmt::format("{} in flight", args.in_flight)
                     : fmt::format(
                           "the sweep's window for {} compile threads ({} in flight for "
                           "a strategy that learns, {} otherwise)",
                           args.threads, in_flight_width(true, args.threads), in_flight_width(false, args.threads));
  std::cout << fmt::format(
      "{} seeds per strategy (exhaustive: 1), {}, default config first; median evaluations to "
      "reach 90 / 95 / 99 % of the optimum's speed (seeds that got there, when not all), the "
      "ratio of random's to it, and the strategy's CPU (propose + observe) per point proposed\n\n",
      args.seeds, width);
  std::cout << fmt::format(
      "Issue 36's columns: to 99 % + conf.: evaluations to 99 % plus the trials confirming a search "
      "stopped there (finalists and tie pass, the sweep's rule); within {}: seeds that reached 99 % "
      "within {} evaluations; score: Willemsen et al.'s over t = 1..T evaluations (T: where random's "
      "exact expected best is at the 95th percentile between the median and the optimum), then over T "
      "trials with the confirmation counted; conf.: trials confirming the whole search (median)\n\n",
      args.within, args.within);
  std::cout << "| space | problem | configs | strategy | to 90 % | to 95 % | to 99 % | random / it at 90 / 95 / 99 % "
               "| CPU per proposal | to 99 % + conf. | within " << args.within
            << " | T | score | score, conf. counted | conf. |\n|---|---|---:|---|---:|---:|---:|---|---:|---:|---:|---:|"
               "---:|---:|---:|\n";
  std::map<std::pair<std::string, std::string>, const Row*> random_of;
  for (const Row& r : rows)
    if (r.strategy == "random") random_of[{r.space, r.problem}] = &r;
  const auto ratio = [](const Reach& random, const Reach& it) {
    if (!std::isfinite(it.median)) return std::string("-");
    if (!std::isfinite(random.median)) return std::string(">");  // random never got there within its cap
    return fmt::format("{:.1f}", random.median / it.median);
  };
  for (const Row& r : rows) {
    const auto it = random_of.find({r.space, r.problem});
    const std::string ratios = it == random_of.end()
                                   ? std::string("")
                                   : fmt::format("{} / {} / {}", ratio(it->second->r90, r.r90),
                                                 ratio(it->second->r95, r.r95), ratio(it->second->r99, r.r99));
    const auto score = [](double v) { return std::isfinite(v) ? fmt::format("{:.3f}", v) : std::string("-"); };
    const std::string strategy = r.runs_as.empty() ? r.strategy : fmt::format("{} ({})", r.strategy, r.runs_as);
    std::cout << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {:.0f} µs | {} | {}/{} | {} | {} | {} | {:.0f} |\n",
                             r.space, r.problem, r.configs, strategy, fmt_reach(r.r90, r.seeds),
                             fmt_reach(r.r95, r.seeds), fmt_reach(r.r99, r.seeds), ratios, r.cpu_us_per_proposal,
                             fmt_reach(r.r99_confirmed, r.seeds), r.r99_within, r.seeds,
                             r.score_range ? std::to_string(r.score_range) : std::string("-"), score(r.score),
                             score(r.score_confirmed), r.confirmation_median);
  }

  // Warm starts: each recording B replayed with prefer(the top-k configs of recording A of the
  // same kernel, mapped onto B's domain) against a cold start.
  if (args.warm_k > 0 && recorded.size() > 1) {
    std::ofstream warm(args.out / "strategies_warm_start.csv");
    warm << "kernel,from,to,strategy,k,mapped,cold_median_evals_95,warm_median_evals_95,cold_over_warm\n";
    std::cout << fmt::format(
        "\nWarm starts: the top {} configs of recording A (those that are points of B) preferred "
        "in a replay of B; median evaluations to 95 % over {} seeds, cold and warm\n\n",
        args.warm_k, args.seeds);
    std::cout << "| from | to | strategy | cold | warm | cold / warm |\n|---|---|---|---:|---:|---:|\n";
    for (std::size_t b = 0; b < recorded.size(); ++b) {
      const ReplayProblem& to = *recorded[b];
      const Target target = recording_target(recorded_names[b], to.canonical, *recorded_spaces[b], to);
      for (const std::string& name : args.strategies) {
        if (name == "exhaustive" || name == "auto") continue;  // auto is one of the others
        const std::size_t cap = cap_for(name, to.space.domain.size(), to.space.domain.size(), 0, args);
        const Reach cold = reach(run_seeds(target, name, args.seeds, cap, args).n95);
        for (std::size_t a = 0; a < recorded.size(); ++a) {
          const ReplayProblem& from = *recorded[a];
          if (a == b || recorded_kernels[a] != recorded_kernels[b] || from.canonical != to.canonical) continue;
          std::vector<std::size_t> preferred;
          for (const Config& c : top_configs(from, args.warm_k))
            if (const auto p = to.space.point_of(c)) preferred.push_back(*p);
          const Reach warm_reach = reach(run_seeds(target, name, args.seeds, cap, args, preferred).n95);
          const double gain = cold.median / warm_reach.median;  // NaN when neither got there
          warm << fmt::format("{},{},{},{},{},{},{},{},{:.2f}\n", recorded_kernels[b], recorded_names[a],
                              recorded_names[b], name, args.warm_k, preferred.size(), num(cold.median),
                              num(warm_reach.median), std::isnan(gain) ? 0.0 : gain);
          std::cout << fmt::format("| {} | {} | {} | {} | {} | {} |\n", recorded_names[a], recorded_names[b], name,
                                   fmt_reach(cold, args.seeds), fmt_reach(warm_reach, args.seeds),
                                   std::isnan(gain) ? std::string("-") : fmt::format("{:.2f}", gain));
          std::cerr << fmt::format("warm {} -> {} {}: cold {} warm {}\n", recorded_names[a], recorded_names[b], name,
                                   cold.median, warm_reach.median);
        }
      }
    }
  }
  std::cout << fmt::format("\nwrote {}, {} and {}\n", (args.out / "strategies_curves.csv").string(),
                           (args.out / "strategies_summary.csv").string(),
                           (args.out / "strategies_warm_start.csv").string());
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_strategies: " << e.what() << '\n';
  return 1;
}
