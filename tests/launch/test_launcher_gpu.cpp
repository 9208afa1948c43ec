// The launcher on a GPU: transpose 1000x1000 (not a multiple of any tile) through the Launcher
// with real device buffers, checked against a CPU transpose; the second process's path (a new
// Launcher on the same database) launches from the stored cubin; a captured launch; a planted
// wrong config never used, by online tuning or by an offline tune of a capture.
#include <gtest/gtest.h>

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "device/driver.hpp"
#include "test_support.hpp"
#include "tiletune/cache_db.hpp"
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
  const auto in = read_data_file(folder / "inputs" / "in.npy.gz", ElementType::f32, 1000 * 1000, "in");
  const auto out = read_data_file(folder / "expected" / "out.npy.gz", ElementType::f32, 1000 * 1000, "out");
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

/// The planted space of these tests: `twice` computes y = 2x, except that BLOCK=128 computes 3x
/// (wrong); the default BLOCK=32 is right. Returns the YAML's path.
std::filesystem::path write_planted_twice(const TempDir& dir) {
  (void)dir.write("twice.cu", R"cu(extern "C" __global__ void twice(const float* x, float* y, int n) {
  const int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) {
#if BLOCK == 128
    y[i] = 3.0f * x[i];  // planted: wrong
#else
    y[i] = 2.0f * x[i];
#endif
  }
}
)cu");
  return dir.write("twice.yaml", R"yaml(kernel: test_online_twice
source: twice.cu
entry: twice
problem:
  N: [100000]
params:
  BLOCK: [32, 64, 128, 256]
launch:
  grid: ["ceil_div(N, BLOCK)"]
  block: [BLOCK]
buffers:
  x: {type: float, count: N, init: random}
  y: {type: float, count: N, output: true}
args: [x, y, N]
verify: {reference: {config: {BLOCK: 32}}, rtol: 0}
default: {BLOCK: 32}
)yaml");
}

/// One `twice` call's buffers on device 0: x filled with scale * (i % period) + offset, y the
/// output, and the arguments as Launcher::launch takes them (pointers into this object: it does
/// not move).
struct TwiceCall {
  static constexpr int n = 100000;
  std::vector<float> x = std::vector<float>(n), y = std::vector<float>(n);
  cu::PrimaryContext context{0};
  cu::DeviceBuffer dx{n * sizeof(float)}, dy{n * sizeof(float)};
  CUdeviceptr px = 0, py = 0;
  int size = n;
  void* args[3] = {&px, &py, &size};

  TwiceCall(float scale, int period, float offset) {
    for (int i = 0; i < n; ++i) x[std::size_t(i)] = scale * float(i % period) + offset;
    dx.upload(x.data(), dx.size());
    px = dx.ptr();
    py = dy.ptr();
  }
  TwiceCall(const TwiceCall&) = delete;
  TwiceCall& operator=(const TwiceCall&) = delete;

  /// After the launches queued so far: the elements of y that are not 2x.
  std::size_t wrong_outputs() {
    context.synchronize();
    dy.download(y.data(), dy.size());
    std::size_t wrong = 0;
    for (int i = 0; i < n; ++i) wrong += y[std::size_t(i)] != 2.0f * x[std::size_t(i)];
    return wrong;
  }
};

/// Whether the cache recorded the planted BLOCK=128 as wrong_result.
bool planted_recorded_wrong(const std::vector<TrialRow>& rows) {
  bool wrong = false;
  for (const TrialRow& row : rows)
    if (row.trial.key.params == "BLOCK=128") wrong = row.trial.status == TrialStatus::wrong_result;
  return wrong;
}

// Online tuning on real calls: a planted wrong config (BLOCK=128 computes 3x instead of 2x) is
// tried, found wrong against the call's own output and never used; every call's result is right;
// the trials are in the cache.
TEST(LauncherGpu, OnlineTuningNeverUsesAWrongConfigAndRecordsItsTrials) {
  TempDir dir;
  const auto yaml = write_planted_twice(dir);
  Launcher::Options options;
  options.db_path = dir.path() / "cache.db";
  options.capture = CaptureOptions{};
  options.online = OnlineOptions{};
  options.online->patterns = {"test_online_*"};
  options.online->share = 1.0;
  options.online->samples = 2;
  auto launcher = Launcher::open(yaml, options);
  ASSERT_NE(launcher.online(), nullptr);

  TwiceCall call(0.5f, 977, -3.0f);
  std::vector<OnlineVerdict> verdicts;
  for (int i = 0; i < 6; ++i) {
    call.dy.fill_async(0);
    launcher.launch({{"N", TwiceCall::n}}, call.args);
    EXPECT_EQ(call.wrong_outputs(), 0u) << "call " << i << ": the application's result";
    if (auto v = launcher.last_online()) verdicts.push_back(*v);
  }
  const Problem problem{{TwiceCall::n}};
  EXPECT_EQ(launcher.online()->tried(problem), 3u) << "64, 128 and 256";
  EXPECT_NE(launcher.online()->best(problem), std::optional<Config>(Config{{128}}));
  EXPECT_NE(std::find(verdicts.begin(), verdicts.end(), OnlineVerdict::wrong), verdicts.end());

  auto db = CacheDb::open(options.db_path, CacheDb::Mode::read_only);
  const std::vector<TrialRow> rows = db.trials();
  EXPECT_TRUE(planted_recorded_wrong(rows));
  EXPECT_EQ(
      std::count_if(rows.begin(), rows.end(), [](const TrialRow& r) { return r.trial.status == TrialStatus::ok; }), 3)
      << "32 (the config in use), 64 and 256";
}

// Offline: the application's launch (the default, right) is captured; `tiletune tune` on the
// capture checks every config against the captured outputs, so the planted BLOCK=128 is recorded
// wrong_result, and the next Launcher takes a right config from the cache at match exact.
TEST(LauncherGpu, AnOfflineTuneOfACaptureNeverAnswersAWrongConfig) {
  TempDir dir;
  const auto yaml = write_planted_twice(dir);
  const auto db = dir.path() / "cache.db";
  constexpr int n = TwiceCall::n;
  TwiceCall call(0.25f, 613, -1.0f);
  std::filesystem::path captured;
  {
    Launcher::Options options;
    options.db_path = db;
    options.capture = CaptureOptions{};
    options.capture->patterns = {"test_online_*"};
    options.capture->directory = dir.path() / "captures";
    auto launcher = Launcher::open(yaml, options);
    launcher.launch({{"N", n}}, call.args);
    call.context.synchronize();
    ASSERT_EQ(launcher.last_capture(), CaptureOutcome::written);
    captured = launcher.capture()->last_written() / "space.yaml";
  }
  const CommandResult tuned = run_command(std::string(TILETUNE_CLI_PATH) + " tune " + shell_quoted(captured) +
                                          " --strategy exhaustive --db " + shell_quoted(db) + " -q");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.output;

  auto cache = CacheDb::open(db, CacheDb::Mode::read_only);
  EXPECT_TRUE(planted_recorded_wrong(cache.trials())) << "the capture's check caught the planted config";

  Launcher::Options again;
  again.db_path = db;
  auto next = Launcher::open(yaml, again);
  const LaunchPlan plan = next.prepare({{"N", n}});
  EXPECT_EQ(plan.match, MatchLevel::exact);
  EXPECT_NE(plan.config_text, "BLOCK=128");
  call.dy.fill_async(0);
  next.launch(plan, call.args);
  EXPECT_EQ(call.wrong_outputs(), 0u) << "the tuned config " << plan.config_text;
}

}  // namespace
}  // namespace tiletune::testing
