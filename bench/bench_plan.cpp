// Benchmarks of the planning path, printed, not asserted:
//   1. NVRTC throughput: configs of a space compiled per second with 1, 2, ... threads
//      (cubin cache off, so every config is really compiled);
//   2. enumeration: walking and filtering 10^6 points through two constraints.
// Usage: bench_plan [--space configs/transpose.yaml] [--arch sm_90] [--threads 1,2,16]
#include <fmt/format.h>

#include <chrono>
#include <cstring>
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

}  // namespace

int main(int argc, char** argv) {
  std::string space_path = std::string(TILETUNE_SOURCE_DIR) + "/configs/transpose.yaml";
  std::string arch = "sm_90";
  std::vector<unsigned> threads = {1, 2};
  if (unsigned hw = std::thread::hardware_concurrency(); hw > 2) threads.push_back(hw);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--space")) space_path = argv[i + 1];
    else if (!std::strcmp(argv[i], "--arch")) arch = argv[i + 1];
    else if (!std::strcmp(argv[i], "--threads")) threads = parse_list(argv[i + 1]);
  }
  try {
    const Space space = load_space(space_path);
    const auto device = builtin_device_limits(parse_arch(arch));
    std::cout << fmt::format("NVRTC {} compiling {} for {} (cubin cache off)\n", nvrtc_version(), space.kernel, arch);
    std::cout << fmt::format("{:>8} {:>8} {:>10} {:>12} {:>14}\n", "threads", "configs", "wall s", "configs/s",
                             "ms per config");
    for (unsigned t : threads) {
      PlanOptions options;
      options.device = *device;
      options.problem = select_problem(space, {});
      options.threads = t;
      const Plan plan = plan_space(space, options);
      const double per_second = double(plan.summary.compiled) / plan.summary.wall_seconds;
      std::cout << fmt::format("{:>8} {:>8} {:>10.2f} {:>12.1f} {:>14.1f}\n", t, plan.summary.compiled,
                               plan.summary.wall_seconds, per_second,
                               1000.0 * plan.summary.compile_seconds / double(plan.summary.compiled));
    }

    // Enumeration: 100 x 100 x 100 points, two constraints.
    std::string yaml = fmt::format(
        "kernel: enum_bench\nsource: {}\nentry: transpose\n"
        "params:\n  A: {{from: 1, to: 100}}\n  B: {{from: 1, to: 100}}\n  C: {{from: 1, to: 100}}\n"
        "constraints:\n  - A % 2 == 0 && B <= C\n  - ceil_div(A * B, 8) <= max(C, 40) * 64\n"
        "launch: {{grid: [1], block: [A]}}\nargs: [A]\nverify: {{reference: none}}\n",
        space.source.string());
    const Space big = parse_space(yaml, std::filesystem::path(space_path).parent_path() / "enum_bench.yaml");
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
