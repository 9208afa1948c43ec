// The launcher on a GPU: transpose 1000x1000 (not a multiple of any tile) through the Launcher
// with real device buffers, checked against a CPU transpose; the second process's path (a new
// Launcher on the same database) launches from the stored cubin.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gpu/driver.hpp"
#include "test_support.hpp"
#include "tiletune/data_file.hpp"
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

// Capture through the device: the inputs read before the launch and the outputs after it are the
// launch's, and the launch's own result is the same as without capture.
TEST(LauncherGpu, CapturesATransposeLaunchFromTheDevice) {
  TempDir dir;
  Launcher::Options options;
  options.db_path = dir.path() / "cache.db";
  options.capture = CaptureOptions{};
  options.capture->patterns = {"transp*"};
  options.capture->directory = dir.path() / "captures";
  auto launcher = Launcher::open(source_dir() / "configs" / "transpose.yaml", options);
  ASSERT_NE(launcher.capture(), nullptr);
  run_and_check(launcher, CubinOrigin::compiled);  // checks the launch's output against the CPU
  EXPECT_EQ(launcher.last_capture(), CaptureOutcome::written);
  const std::filesystem::path folder = launcher.capture()->last_written();
  ASSERT_FALSE(folder.empty());
  const auto in = read_data_file(folder / "inputs" / "in.npy", ElementType::f32, 1000 * 1000, "in");
  const auto out = read_data_file(folder / "expected" / "out.npy", ElementType::f32, 1000 * 1000, "out");
  std::vector<float> a(1000 * 1000), b(a.size());
  std::memcpy(a.data(), in.data(), in.size());
  std::memcpy(b.data(), out.data(), out.size());
  std::size_t wrong = 0;
  for (int r = 0; r < 1000; ++r)
    for (int c = 0; c < 1000; ++c)
      if (b[std::size_t(c) * 1000 + r] != a[std::size_t(r) * 1000 + c]) ++wrong;
  EXPECT_EQ(wrong, 0u) << "the captured output is the transpose of the captured input";
  const Space captured = load_space(folder / "space.yaml");
  EXPECT_EQ(captured.problem.at(0).values, std::vector<std::int64_t>{1000});

  run_and_check(launcher, CubinOrigin::memory);
  EXPECT_EQ(launcher.last_capture(), CaptureOutcome::done) << "once per kernel and problem";
}

}  // namespace
}  // namespace tiletune::testing
