// bench_scaling (issue 15): the wall time a sweep would take on 1, 2, 8 and 64 GPUs, from the
// scaling model (tiletune/scaling.hpp), for the matmul space (compile and measure times of the
// H200 recording, tests/data/landscapes/matmul.csv) and the convolution space of Kernel Tuner's
// size (tests/corpus/convolution_kt.yaml: its recording when there is one, else compile times
// from a `tiletune plan --format json` of it and a modelled measure time). The configs are
// sharded as `tune --shard` shards them, one shard per GPU (scripts/mpi/tune_shards.sh), and
// each GPU keeps the exhaustive sweep's window of compiles ahead; 8 GPUs share a host.
//
//   bench_scaling [--landscapes DIR] [--plan-json FILE] [--measure-ms 4.2] [--cores-per-gpu 16]
//
// Prints, per space and per rule for the cores (16 per GPU, as the H200 machines lent here
// have: 16 cores with 1 GPU, 128 with 8; or 16 per host, whatever its GPUs), a Markdown table:
// GPUs, hosts, cores per host, modelled wall time, speedup over one GPU, the lower bound and
// how close the schedule gets to it.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <optional>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tiletune/error.hpp"
#include "tiletune/landscape.hpp"
#include "tiletune/plan.hpp"
#include "tiletune/replay.hpp"
#include "tiletune/scaling.hpp"
#include "tiletune/shard.hpp"
#include "tiletune/space.hpp"
#include "tiletune/trial.hpp"

namespace fs = std::filesystem;
using namespace tiletune;

namespace {

constexpr unsigned kGpusPerHost = 8;
constexpr unsigned kGpuCounts[] = {1, 2, 8, 64};

struct Args {
  fs::path landscapes = fs::path(TILETUNE_SOURCE_DIR) / "tests" / "data" / "landscapes";
  fs::path plan_json;
  double measure_ms = 4.2;
  unsigned cores_per_gpu = 16;
};

// A space's configs with their costs, in enumeration order, and where they came from.
struct Workload {
  std::string title;
  std::string source;
  std::vector<Config> configs;
  std::vector<SimulatedTrial> trials;
};

// The exhaustive sweep's window for a compile pool of `threads` (tuner/src/search/sweep.cpp).
std::size_t exhaustive_window(unsigned threads) { return std::max<std::size_t>(32, 4 * std::size_t{threads}); }

Workload from_recording(const Space& space, const fs::path& csv) {
  const Landscape landscape = load_landscape(csv);
  const Problem problem = all_problems(space).front();
  const ReplayProblem rp = replay_problem(space, landscape, problem);
  Workload w;
  w.title = fmt::format("{} ({}, {} configs)", space.kernel, rp.canonical, rp.space.domain.size());
  w.source = fmt::format("compile and measure times recorded in {} ({})", csv.filename().string(),
                         landscape.header_value("device").value_or("?"));
  for (const std::size_t point : recorded_points(rp)) {
    const LandscapeTrial& t = rp.outcomes.at(point);
    w.configs.push_back(rp.space.config(point));
    w.trials.push_back({t.compile_ms / 1000, t.measure_ms / 1000});
  }
  return w;
}

// Seconds from "2026-11-29T23:19:30.673Z to 2026-11-29T23:25:24.911Z" (a recording's span), or
// nullopt when the text is not two such times.
std::optional<double> span_seconds(const std::string& text) {
  auto at = [](const char* s) -> std::optional<double> {
    std::tm tm{};
    double seconds = 0;
    if (std::sscanf(s, "%d-%d-%dT%d:%d:%lfZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                    &seconds) != 6)
      return std::nullopt;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return double(timegm(&tm)) + seconds;
  };
  const auto to = text.find(" to ");
  if (to == std::string::npos) return std::nullopt;
  const auto from = at(text.substr(0, to).c_str());
  const auto until = at(text.substr(to + 4).c_str());
  if (!from || !until) return std::nullopt;
  return *until - *from;
}

// The model against a real sweep: every recorded problem, one after another, on one GPU with
// the recording host's cores, against the wall time the recording spans.
void check_against_recording(const Space& space, const fs::path& csv, unsigned cores) {
  const Landscape landscape = load_landscape(csv);
  double modelled = 0;
  for (const Problem& problem : all_problems(space)) {
    if (!landscape.find_problem(canonical_problem(space, problem))) continue;
    const ReplayProblem rp = replay_problem(space, landscape, problem);
    std::vector<SimulatedTrial> trials;
    for (const std::size_t point : recorded_points(rp)) {
      const LandscapeTrial& t = rp.outcomes.at(point);
      trials.push_back({t.compile_ms / 1000, t.measure_ms / 1000});
    }
    const std::vector<std::uint32_t> one_gpu(trials.size(), 0);
    modelled += simulate_sweep(trials, one_gpu, ClusterShape{1, 1, cores, exhaustive_window(cores)}).wall_seconds;
  }
  const auto span = span_seconds(landscape.header_value("recorded").value_or(""));
  std::cout << fmt::format(
      "\nmodel check: the recorded sweep of {} (every recorded problem, 1 GPU, {} cores) models "
      "at {:.1f} s; the recording spans {} (worker start and buffer setup are not modelled)\n",
      csv.filename().string(), cores, modelled, span ? fmt::format("{:.1f} s", *span) : "?");
}

// Compile times of a sampled plan (every k-th config): each config takes the time of the last
// planned config at or before it in enumeration order (neighbours differ in the fastest-varying
// params only). Measure times are the constant given.
Workload from_plan(const Space& space, const fs::path& json_path, double measure_ms) {
  std::ifstream in(json_path);
  if (!in) throw Error(fmt::format("bench_scaling: cannot read {}", json_path.string()));
  const nlohmann::json plan = nlohmann::json::parse(in);
  std::vector<std::pair<Config, double>> planned;
  for (const auto& row : plan.at("rows")) {
    Config c;
    for (const Axis& axis : space.params) c.values.push_back(row.at("params").at(axis.name).get<std::int64_t>());
    planned.emplace_back(std::move(c), row.value("compile_seconds", 0.0));
  }
  const Problem problem = all_problems(space).front();
  const SpaceDomain domain = space_domain(space, problem);
  Workload w;
  w.title = fmt::format("{} ({}, {} configs)", space.kernel, format_problem(space, problem), domain.domain.size());
  w.source = fmt::format(
      "compile times from `tiletune plan --sample {}` ({} configs planned, {}), measure times "
      "MODELLED at {} ms per config",
      plan.at("summary").value("sample_every", 1), planned.size(), json_path.filename().string(), measure_ms);
  std::size_t next = 0;
  double compile = planned.empty() ? 0 : planned.front().second;
  for (auto point = domain.domain.next(); point; point = domain.domain.next(point)) {
    const Config c = domain.config(*point);
    if (next < planned.size() && planned[next].first == c) compile = planned[next++].second;
    w.configs.push_back(c);
    w.trials.push_back({compile, measure_ms / 1000});
  }
  if (next != planned.size())
    throw Error(
        fmt::format("bench_scaling: {} holds configs the space does not have in this order", json_path.string()));
  return w;
}

void print_table(const Space& space, const Workload& w, bool cores_per_gpu, unsigned cores) {
  std::cout << fmt::format("\n### {}: {} cores per {}\n\n{}.\n\n", w.title, cores, cores_per_gpu ? "GPU" : "host",
                           w.source);
  std::cout << "| GPUs | hosts | cores/host | window/GPU | wall (s) | speedup | lower bound (s) | wall / bound |\n"
               "|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  std::vector<std::string> keys;
  for (const Config& c : w.configs) keys.push_back(shard_key(space, c));
  double one_gpu = 0;
  for (const unsigned gpus : kGpuCounts) {
    ClusterShape shape;
    shape.gpus_per_host = std::min(gpus, kGpusPerHost);
    shape.hosts = gpus / shape.gpus_per_host;
    shape.cores_per_host = cores_per_gpu ? cores * shape.gpus_per_host : cores;
    shape.in_flight = exhaustive_window(std::max(1u, shape.cores_per_host / shape.gpus_per_host));
    std::vector<std::uint32_t> gpu_of;
    for (const std::string& key : keys) gpu_of.push_back(shard_of(key, gpus));
    const SimulatedSweep s = simulate_sweep(w.trials, gpu_of, shape);
    if (gpus == 1) one_gpu = s.wall_seconds;
    std::cout << fmt::format("| {} | {} | {} | {} | {:.1f} | {:.2f}x | {:.1f} | {:.2f} |\n", gpus, shape.hosts,
                             shape.cores_per_host, shape.in_flight, s.wall_seconds, one_gpu / s.wall_seconds,
                             s.lower_bound_seconds, s.wall_seconds / s.lower_bound_seconds);
  }
}

void report(const Space& space, const Workload& w, const Args& args) {
  double compile = 0, measure = 0;
  for (const SimulatedTrial& t : w.trials) compile += t.compile_seconds, measure += t.measure_seconds;
  std::cout << fmt::format("\n## {}\n\ncompile work {:.1f} s (one core), measure work {:.1f} s (one GPU)\n", w.title,
                           compile, measure);
  print_table(space, w, true, args.cores_per_gpu);
  print_table(space, w, false, args.cores_per_gpu);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(fmt::format("bench_scaling: {} needs a value", arg));
      return argv[++i];
    };
    if (arg == "--landscapes")
      a.landscapes = value();
    else if (arg == "--plan-json")
      a.plan_json = value();
    else if (arg == "--measure-ms")
      a.measure_ms = std::stod(value());
    else if (arg == "--cores-per-gpu")
      a.cores_per_gpu = static_cast<unsigned>(std::stoul(value()));
    else
      throw Error(fmt::format("bench_scaling: unknown argument {} (see the top of bench/bench_scaling.cpp)", arg));
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) try {
  const Args args = parse(argc, argv);
  const fs::path root = TILETUNE_SOURCE_DIR;
  const Space matmul = load_space(root / "configs" / "matmul.yaml");
  report(matmul, from_recording(matmul, args.landscapes / "matmul.csv"), args);
  check_against_recording(matmul, args.landscapes / "matmul.csv", args.cores_per_gpu);

  const Space conv = load_space(root / "tests" / "corpus" / "convolution_kt.yaml");
  if (const fs::path recorded = args.landscapes / "corpus" / "convolution_kt.csv"; fs::exists(recorded)) {
    report(conv, from_recording(conv, recorded), args);
    check_against_recording(conv, recorded, args.cores_per_gpu);
  } else if (!args.plan_json.empty()) {
    report(conv, from_plan(conv, args.plan_json, args.measure_ms), args);
  } else {
    std::cout << "\n(no convolution_kt.csv recording and no --plan-json: the convolution space is left out)\n";
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << e.what() << '\n';
  return 1;
}
