// Every shipped space (configs/*.yaml) loads and plans for sm_80 and sm_90 with the built-in
// device limits: no config fails to compile, at least one is ok, a second plan compiles
// nothing, and the matmul space keeps at least 1000 configs after its constraints (the search
// strategies need a large space). The configs compiled with warnings are counted, not failed.
// matmul is planned on every 30th config (see below).
// NVRTC only, no GPU. Compiles go through a cubin cache in the build tree, so that a second
// run compiles nothing (the first compiles a few thousand configs).
#include <algorithm>
#include <cstdio>
#include <filesystem>
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
  for (const char* family :
       {"histogram", "matmul", "reduction", "stencil_1d", "transpose", "vector_add"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), family), names.end()) << family;
  }
}

class PlanShipped : public ::testing::TestWithParam<int> {};

TEST_P(PlanShipped, EverySpaceCompilesWithoutFailures) {
  const int arch = GetParam();
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
    if (space.kernel == "matmul") options.sample_every = 30;
    const Plan plan = plan_space(space, options);
    const PlanSummary& s = plan.summary;
    std::printf("%-12s sm_%d: points %llu, after constraints %llu, ok %llu, pruned %llu, "
                "compile failures %llu, with warnings %llu\n",
                space.kernel.c_str(), arch, static_cast<unsigned long long>(s.points),
                static_cast<unsigned long long>(s.valid), static_cast<unsigned long long>(s.ok),
                static_cast<unsigned long long>(s.pruned),
                static_cast<unsigned long long>(s.compile_failed),
                static_cast<unsigned long long>(s.with_warnings));
    EXPECT_EQ(s.compile_failed, 0u);
    for (const PlanRow& row : plan.rows) {
      if (row.status == TrialStatus::compile_failed) {
        ADD_FAILURE() << format_config(space, row.config) << ": " << row.detail << "\n"
                      << row.compile_log;
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

INSTANTIATE_TEST_SUITE_P(Archs, PlanShipped, ::testing::Values(80, 90),
                         [](const auto& info) { return "sm_" + std::to_string(info.param); });

}  // namespace
}  // namespace tiletune
