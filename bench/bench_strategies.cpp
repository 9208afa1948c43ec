// bench_strategies (issue 6): every search strategy against every recorded H200 landscape
// (tests/data/landscapes/*.csv, named by file: matmul-previous-kernel.csv is the matmul space
// recorded with the kernel before its rewrite), many seeds each, on the CPU. For each space, problem and strategy:
// the fraction of the optimum's speed reached after k evaluations (median and quartiles over
// the seeds) and the evaluations needed for 90 %, 95 % and 99 % of it, against random sampling.
//
//   bench_strategies [--seeds 50] [--landscapes DIR] [--configs DIR] [--out DIR]
//                    [--strategies a,b,...] [--threads 16] [--in-flight K] [--cap 0.3]
//
// Each search is the one a sweep makes (run_search over the recording: the sliding window of
// in_flight_width(learns, --threads) points in flight, the default config first), unless
// --in-flight fixes the width. --threads 16 is the H200 host's cores.
//
// Writes DIR/strategies_curves.csv and DIR/strategies_summary.csv (bench/plot_strategies.py
// draws the curves) and prints the summary table with the goal of issue 6 checked per space:
// on spaces of at least 500 configs the best strategy reaches 95 % within 10 % of the
// evaluations and needs at least 3x fewer evaluations than random for it.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
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
  double cap = 0.3;  // structured strategies stop at this share of the space (random and exhaustive go on)
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
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(fmt::format("{} needs a value", arg));
      return argv[++i];
    };
    if (arg == "--seeds") a.seeds = std::stoi(value());
    else if (arg == "--landscapes") a.landscapes = value();
    else if (arg == "--configs") a.configs = value();
    else if (arg == "--out") a.out = value();
    else if (arg == "--strategies") a.strategies = split(value(), ',');
    else if (arg == "--threads") a.threads = static_cast<unsigned>(std::stoul(value()));
    else if (arg == "--in-flight") a.in_flight = std::stoul(value());
    else if (arg == "--cap") a.cap = std::stod(value());
    else if (arg == "--help" || arg == "-h") {
      std::cout << "usage: bench_strategies [--seeds 50] [--landscapes DIR] [--configs DIR] [--out DIR]\n"
                   "                        [--strategies a,b,...] [--threads 16] [--in-flight K] [--cap 0.3]\n";
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
  return r.reached == seeds ? fmt::format("{:.0f}", r.median) : fmt::format("{:.0f} ({}/{})", r.median, r.reached, seeds);
}

struct Row {
  std::string space, problem, strategy;
  std::size_t configs = 0, cap = 0;
  Reach r90, r95, r99;
  double final_median = 0;
  double seconds = 0;
};

}  // namespace

int main(int argc, char** argv) try {
  const Args args = parse_args(argc, argv);
  fs::create_directories(args.out);
  std::ofstream curves(args.out / "strategies_curves.csv");
  curves << "space,problem,configs,strategy,evaluations,median,p25,p75\n";
  std::vector<Row> rows;

  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(args.landscapes))
    if (e.path().extension() == ".csv") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw Error(fmt::format("no landscapes (*.csv) in {}", args.landscapes.string()));

  for (const fs::path& file : files) {
    const Landscape landscape = load_landscape(file);
    const Space space = load_space(args.configs / (landscape.kernel + ".yaml"));
    for (const LandscapeProblem& lp : landscape.problems) {
      const Problem problem = select_problem(space, split(lp.problem, ';'));
      const ReplayProblem rp = replay_problem(space, landscape, problem);
      if (!rp.optimum) continue;
      const std::size_t n = rp.space.domain.size();
      for (const std::string& name : args.strategies) {
        const bool structured = name != "random" && name != "exhaustive";
        const std::size_t cap =
            structured ? std::min(n, std::max<std::size_t>(100, static_cast<std::size_t>(std::ceil(args.cap * double(n)))))
                       : n;
        const int seeds = name == "exhaustive" ? 1 : args.seeds;  // it has no randomness
        std::vector<std::vector<double>> fraction_at(cap);  // [k-1][seed]
        std::vector<std::optional<std::size_t>> n90, n95, n99;
        const auto t0 = std::chrono::steady_clock::now();
        for (int seed = 1; seed <= seeds; ++seed) {
          const auto strategy = make_strategy(name, rp.space.domain, static_cast<std::uint64_t>(seed));
          SearchBudget budget;
          budget.evaluations = cap;
          SearchRun run = sweep_search_run(rp.space.domain, *strategy, budget, args.threads);
          if (args.in_flight) run.in_flight = args.in_flight;
          const SearchTrace trace = replay(rp, *strategy, run);
          double best = std::numeric_limits<double>::infinity();
          for (std::size_t k = 0; k < cap; ++k) {
            if (k < trace.evaluations.size() && trace.evaluations[k].time)
              best = std::min(best, *trace.evaluations[k].time);
            fraction_at[k].push_back(std::isfinite(best) ? rp.optimum_ms / best : 0.0);
          }
          n90.push_back(evaluations_to_reach(trace, rp.optimum_ms, 0.90));
          n95.push_back(evaluations_to_reach(trace, rp.optimum_ms, 0.95));
          n99.push_back(evaluations_to_reach(trace, rp.optimum_ms, 0.99));
        }
        Row row;
        row.space = file.stem().string();  // the recording: two may be of one kernel
        row.problem = lp.problem;
        row.strategy = name;
        row.configs = n;
        row.cap = cap;
        row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        row.r90 = reach(n90);
        row.r95 = reach(n95);
        row.r99 = reach(n99);
        row.final_median = quantile(fraction_at[cap - 1], 0.5);
        for (std::size_t k = 0; k < cap; ++k)
          curves << fmt::format("{},{},{},{},{},{:.5f},{:.5f},{:.5f}\n", row.space, row.problem, n, name, k + 1,
                                quantile(fraction_at[k], 0.5), quantile(fraction_at[k], 0.25),
                                quantile(fraction_at[k], 0.75));
        rows.push_back(row);
        std::cerr << fmt::format("{} {} {}: {} seeds, {:.1f} s\n", row.space, row.problem, name, seeds, row.seconds);
      }
    }
  }

  std::ofstream summary(args.out / "strategies_summary.csv");
  summary << "space,problem,configs,strategy,seeds,cap,median_evals_90,median_evals_95,median_evals_99,"
             "seeds_reaching_95,median_fraction_at_cap,seconds\n";
  auto num = [](double v) { return std::isfinite(v) ? fmt::format("{:.1f}", v) : std::string(); };
  for (const Row& r : rows)
    summary << fmt::format("{},{},{},{},{},{},{},{},{},{},{:.4f},{:.2f}\n", r.space, r.problem, r.configs, r.strategy,
                           r.strategy == "exhaustive" ? 1 : args.seeds, r.cap, num(r.r90.median), num(r.r95.median),
                           num(r.r99.median), r.r95.reached, r.final_median, r.seconds);

  // The table, and the goal per (space, problem).
  const std::string width = args.in_flight ? fmt::format("{} in flight", args.in_flight)
                                           : fmt::format("the sweep's window for {} compile threads ({} in flight for "
                                                         "a strategy that learns, {} otherwise)",
                                                         args.threads, in_flight_width(true, args.threads),
                                                         in_flight_width(false, args.threads));
  std::cout << fmt::format("{} seeds per strategy (exhaustive: 1), {}, default config first; median evaluations to "
                           "reach 90 / 95 / 99 % of the optimum's speed (seeds that got there, when not all)\n\n",
                           args.seeds, width);
  std::cout << "| space | problem | configs | strategy | to 90 % | to 95 % | to 99 % |\n|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    const int seeds = r.strategy == "exhaustive" ? 1 : args.seeds;
    std::cout << fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", r.space, r.problem, r.configs, r.strategy,
                             fmt_reach(r.r90, seeds), fmt_reach(r.r95, seeds), fmt_reach(r.r99, seeds));
  }
  std::cout << "\nGoal (spaces of at least 500 configs): the best strategy reaches 95 % within 10 % of the "
               "configs, with at least 3x fewer evaluations than random\n\n";
  std::cout << "| space | problem | configs | best strategy | to 95 % | 10 % of configs | random to 95 % | × fewer | goal |\n"
               "|---|---|---|---|---|---|---|---|---|\n";
  std::map<std::pair<std::string, std::string>, std::vector<const Row*>> by_problem;
  for (const Row& r : rows) by_problem[{r.space, r.problem}].push_back(&r);
  for (const auto& [key, list] : by_problem) {
    const Row* best = nullptr;
    const Row* random = nullptr;
    for (const Row* r : list) {
      if (r->strategy == "random") random = r;
      if (r->strategy == "random" || r->strategy == "exhaustive") continue;
      if (!best || r->r95.median < best->r95.median) best = r;
    }
    if (!best || !random) continue;
    const std::size_t n = best->configs;
    const double ratio = random->r95.median / best->r95.median;
    const bool within = best->r95.median <= 0.10 * double(n);
    const bool fewer = ratio >= 3.0;
    std::string verdict = n < 500 ? "(under 500 configs)" : (within && fewer ? "**met**" : "**missed**");
    std::cout << fmt::format("| {} | {} | {} | {} | {} | {:.0f} | {} | {:.1f}× | {} |\n", key.first, key.second, n,
                             best->strategy, num(best->r95.median), 0.10 * double(n), num(random->r95.median), ratio,
                             verdict);
  }
  std::cout << fmt::format("\nwrote {} and {}\n", (args.out / "strategies_curves.csv").string(),
                           (args.out / "strategies_summary.csv").string());
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_strategies: " << e.what() << '\n';
  return 1;
}
