// Every shipped space (configs/*.yaml) loads and plans with the built-in device limits: no
// config fails to compile, at least one is ok, a second plan compiles nothing, and the matmul
// space keeps at least 1000 configs after its constraints (the search strategies need a large
// space). The configs compiled with warnings are counted, not failed.
// sm_90, the reference GPU's architecture, is planned whole (matmul on every 30th config, see
// below). sm_80 is planned on a covering sample: the default config and, for every value of
// every param, a config that has it (covering_sample), so that every code path a param value
// selects is compiled for sm_80 too; pairs of values are covered by the sm_90 plan. That halves
// the test's NVRTC time (2 x 1467 configs in full; now 1467 + 34).
// NVRTC only, no GPU. Compiles go through a cubin cache in the build tree, so that a second
// run compiles nothing.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tiletune/compile.hpp"
#include "tiletune/occupancy.hpp"
#include "tiletune/plan.hpp"
#include "tiletune/space.hpp"

namespace tiletune {
namespace {

std::vector<std::filesystem::path> shipped_spaces() {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(TILETUNE_SOURCE_DIR) / "configs")) {
    if (entry.path().extension() == ".yaml") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST(ShippedSpaces, AllFamiliesAreShipped) {
  std::vector<std::string> names;
  for (const auto& p : shipped_spaces()) names.push_back(p.stem().string());
  for (const char* family : {"histogram", "matmul", "reduction", "stencil_1d", "transpose", "vector_add"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), family), names.end()) << family;
  }
}

// The default config, then greedily the config that can launch on `device` and has the most
// param values no config taken so far has (the first in enumeration order of equals), until no
// config adds one. Deterministic; it covers every value of every param that a launchable config
// after the constraints has, with few configs (matmul: 5 of 1420 for sm_80).
std::set<Config> covering_sample(const Space& space, const Problem& problem, const DeviceLimits& device) {
  std::vector<Config> launchable;
  Enumerator enumerator(space, problem);
  while (auto config = enumerator.next()) {
    try {
      if (!unlaunchable_geometry(device, evaluate_launch(space, problem, *config))) launchable.push_back(*config);
    } catch (const EvalError&) {}
  }
  std::set<Config> taken;
  std::vector<std::set<std::int64_t>> covered(space.params.size());
  const auto new_values = [&](const Config& config) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < covered.size(); ++i) n += !covered[i].contains(config.values[i]);
    return n;
  };
  const auto take = [&](const Config& config) {
    taken.insert(config);
    for (std::size_t i = 0; i < covered.size(); ++i) covered[i].insert(config.values[i]);
  };
  if (space.default_config) take(Config{*space.default_config});
  while (true) {
    const Config* best = nullptr;
    std::size_t best_adds = 0;
    for (const Config& c : launchable)
      if (const std::size_t adds = new_values(c); adds > best_adds) best = &c, best_adds = adds;
    if (!best) return taken;
    take(*best);
  }
}

// The values of each param that no config of `sample` has ("BLOCK=1024"), empty when covered.
std::vector<std::string> uncovered_values(const Space& space, const std::set<Config>& sample) {
  std::vector<std::string> missing;
  for (std::size_t i = 0; i < space.params.size(); ++i) {
    const Axis& param = space.params[i];
    for (const std::int64_t value : param.values) {
      const bool has = std::any_of(sample.begin(), sample.end(), [&](const Config& c) { return c.values[i] == value; });
      if (!has) missing.push_back(param.name + "=" + param.text_of(value));
    }
  }
  return missing;
}

struct Target {
  int arch;
  bool covering;  ///< a covering sample instead of the whole space
};

class PlanShipped : public ::testing::TestWithParam<Target> {};

TEST_P(PlanShipped, EverySpaceCompilesWithoutFailures) {
  const int arch = GetParam().arch;
  const auto limits = builtin_device_limits(arch);
  ASSERT_TRUE(limits.has_value()) << "no built-in limits for sm_" << arch;
  const CubinCache cache{std::filesystem::path(TILETUNE_KERNELS_CUBIN_CACHE)};
  const auto spaces = shipped_spaces();
  ASSERT_FALSE(spaces.empty());
  for (const auto& path : spaces) {
    SCOPED_TRACE(path.string() + " for sm_" + std::to_string(arch));
    const Space space = load_space(path);
    PlanOptions options;
    options.device = *limits;
    options.problem = select_problem(space, {});
    options.cache = &cache;
    // NVRTC needs about 3.5 s for one matmul config (2-D register tiles, unrolled): the CI
    // machine plans a deterministic sample of it; the whole space is planned on the GPU host.
    std::set<Config> sample;
    if (GetParam().covering) {
      sample = covering_sample(space, options.problem, *limits);
      EXPECT_EQ(uncovered_values(space, sample), std::vector<std::string>{});
      if (space.default_config) EXPECT_TRUE(sample.contains(Config{*space.default_config}));
      options.select = [&sample](const Config& c) { return sample.contains(c); };
    } else if (space.kernel == "matmul") {
      options.sample_every = 30;
    }
    const Plan plan = plan_space(space, options);
    const PlanSummary& s = plan.summary;
    if (GetParam().covering) EXPECT_EQ(plan.rows.size(), sample.size());
    std::printf(
        "%-12s sm_%d: points %llu, after constraints %llu, planned %zu, ok %llu, pruned %llu, "
        "compile failures %llu, with warnings %llu\n",
        space.kernel.c_str(), arch, static_cast<unsigned long long>(s.points), static_cast<unsigned long long>(s.valid),
        plan.rows.size(), static_cast<unsigned long long>(s.ok), static_cast<unsigned long long>(s.pruned),
        static_cast<unsigned long long>(s.compile_failed), static_cast<unsigned long long>(s.with_warnings));
    EXPECT_EQ(s.compile_failed, 0u);
    for (const PlanRow& row : plan.rows) {
      if (row.status == TrialStatus::compile_failed) {
        ADD_FAILURE() << format_config(space, row.config) << ": " << row.detail << "\n" << row.compile_log;
        break;  // one log is enough
      }
    }
    EXPECT_GE(s.ok, 1u);
    if (space.kernel == "matmul") EXPECT_GE(s.valid, 1000u);
    // Planned again, everything comes from the cubin cache: nothing is compiled.
    const Plan again = plan_space(space, options);
    EXPECT_EQ(again.summary.compiled, 0u);
    EXPECT_EQ(again.summary.cache_hits, s.compiled + s.cache_hits);
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, PlanShipped, ::testing::Values(Target{80, true}, Target{90, false}),
                         [](const auto& info) {
                           return "sm_" + std::to_string(info.param.arch) + (info.param.covering ? "_covering" : "");
                         });

}  // namespace
}  // namespace tiletune
