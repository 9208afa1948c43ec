// The launcher on a GPU: transpose 1000x1000 (not a multiple of any tile) through the Launcher
// with real device buffers, checked against a CPU transpose; the second process's path (a new
// Launcher on the same database) launches from the stored cubin.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "gpu/driver.hpp"
#include "test_support.hpp"
#include "tiletune/launcher.hpp"

namespace tiletune::testing {
namespace {

void run_and_check(Launcher& launcher, CubinOrigin expected_origin) {
  constexpr int n = 1000;
  const LaunchPlan plan = launcher.prepare({{"N", n}});
  EXPECT_EQ(plan.cubin_origin, expected_origin);
  std::vector<float> in(std::size_t(n) * n), out(in.size(), -1.0f);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& v : in) v = u(rng);
  cu::PrimaryContext context(0);
  cu::DeviceBuffer d_in(in.size() * sizeof(float)), d_out(out.size() * sizeof(float));
  d_in.upload(in.data(), d_in.size());
  d_out.fill_async(0);
  CUdeviceptr p_in = d_in.ptr(), p_out = d_out.ptr();
  int size = n;
  void* args[] = {&p_in, &p_out, &size};
  launcher.launch(plan, args);
  context.synchronize();
  d_out.download(out.data(), d_out.size());
  std::size_t wrong = 0;
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c)
      if (out[std::size_t(c) * n + r] != in[std::size_t(r) * n + c]) ++wrong;
  EXPECT_EQ(wrong, 0u) << "config " << plan.config_text;
}

TEST(LauncherGpu, Transpose1000MatchesCpu) {
  TempDir dir;
  const auto db = dir.path() / "cache.db";
  {
    auto launcher = Launcher::open(source_dir() / "configs" / "transpose.yaml", db, 0);
    run_and_check(launcher, CubinOrigin::compiled);
  }
  {
    auto launcher = Launcher::open(source_dir() / "configs" / "transpose.yaml", db, 0);
    run_and_check(launcher, CubinOrigin::database);
  }
}

}  // namespace
}  // namespace tiletune::testing
