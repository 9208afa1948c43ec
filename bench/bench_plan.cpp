// Benchmarks of the planning path, printed, not asserted:
//   1. NVRTC cost: configs of a space compiled per second with 1, 2, ... threads and the NVRTC
//      time per config (cubin cache off, so every config is really compiled), for one space,
//      several, or every shipped one;
//   2. enumeration: walking and filtering 10^6 points through two constraints.
// Usage: bench_plan [--space configs/transpose.yaml | --space all] [--sample K] [--arch sm_90]
//                   [--threads 1,2,16]
// `--space` may be given more than once; `all` is every configs/*.yaml. `--sample K` compiles
// every K-th config after constraints (matmul needs ~3.5 s of NVRTC per config).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "tiletune/plan.hpp"

using namespace tiletune;

namespace {

std::vector<unsigned> parse_list(const std::string& text) {
  std::vector<unsigned> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(static_cast<unsigned>(std::stoul(item)));
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<std::string> shipped_spaces() {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TILETUNE_SOURCE_DIR) + "/configs"))
    if (entry.path().extension() == ".yaml") paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  return paths;
}

// One row per thread count: configs compiled, wall time, throughput and NVRTC time per config.
void bench_nvrtc(const Space& space, const DeviceLimits& device, const std::vector<unsigned>& threads,
                 std::uint64_t sample_every) {
  for (unsigned t : threads) {
    PlanOptions options;
    options.device = device;
    options.problem = select_problem(space, {});
    options.threads = t;
    options.sample_every = sample_every;
    const Plan plan = plan_space(space, options);
    const double compiled = double(std::max<std::uint64_t>(plan.summary.compiled, 1));
    std::cout << fmt::format(
        "{:<12} {:>8} {:>8} {:>10.2f} {:>12.1f} {:>14.1f} {:>12.1f}\n", space.kernel, t, plan.summary.compiled,
        plan.summary.wall_seconds, double(plan.summary.compiled) / plan.summary.wall_seconds,
        1000.0 * plan.summary.compile_seconds / compiled, 1000.0 * plan.summary.wall_seconds * t / compiled);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> space_paths;
  std::string arch = "sm_90";
  std::uint64_t sample_every = 1;
  std::vector<unsigned> threads = {1, 2};
  if (unsigned hw = std::thread::hardware_concurrency(); hw > 2) threads.push_back(hw);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--space"))
      space_paths.push_back(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--arch"))
      arch = argv[i + 1];
    else if (!std::strcmp(argv[i], "--threads"))
      threads = parse_list(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--sample"))
      sample_every = std::max<std::uint64_t>(1, std::stoull(argv[i + 1]));
  }
  if (space_paths.empty()) space_paths.push_back(std::string(TILETUNE_SOURCE_DIR) + "/configs/transpose.yaml");
  if (space_paths.size() == 1 && space_paths.front() == "all") space_paths = shipped_spaces();
  try {
    const auto device = builtin_device_limits(parse_arch(arch));
    if (!device) throw Error(fmt::format("--arch {}: no built-in device limits", arch));
    std::cout << fmt::format("NVRTC {} compiling for {} (cubin cache off{})\n", nvrtc_version(), arch,
                             sample_every > 1 ? fmt::format(", every {}th config", sample_every) : "");
    std::cout << fmt::format("{:<12} {:>8} {:>8} {:>10} {:>12} {:>14} {:>12}\n", "space", "threads", "configs",
                             "wall s", "configs/s", "NVRTC ms/cfg", "wall ms/cfg");
    Space first;
    for (std::size_t i = 0; i < space_paths.size(); ++i) {
      Space space = load_space(space_paths[i]);
      bench_nvrtc(space, *device, threads, sample_every);
      if (i == 0) first = std::move(space);
    }

    // Enumeration: 100 x 100 x 100 points, two constraints.
    std::string yaml = fmt::format(
        "kernel: enum_bench\nsource: {}\nentry: transpose\n"
        "params:\n  A: {{from: 1, to: 100}}\n  B: {{from: 1, to: 100}}\n  C: {{from: 1, to: 100}}\n"
        "constraints:\n  - A % 2 == 0 && B <= C\n  - ceil_div(A * B, 8) <= max(C, 40) * 64\n"
        "launch: {{grid: [1], block: [A]}}\nargs: [A]\nverify: {{reference: none}}\n",
        first.source.string());
    const Space big = parse_space(yaml, std::filesystem::path(space_paths.front()).parent_path() / "enum_bench.yaml");
    auto t0 = std::chrono::steady_clock::now();
    const SpaceCounts counts = count_configs(big, Problem{});
    const double s = seconds_since(t0);
    std::cout << fmt::format("enumerate + filter: {} points, {} kept, {:.3f} s ({:.1f} M points/s)\n", counts.points,
                             counts.valid, s, double(counts.points) / s / 1e6);
  } catch (const std::exception& e) {
    std::cerr << "bench_plan: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
