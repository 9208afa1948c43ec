// Online tuning's decisions without a GPU (OnlineSchedule): candidates in enumeration order, each
// tried once, the budget and the share of wall time respected, a wrong or failed candidate never
// kept; its options from the environment; the Launcher turning it on only for matching kernels.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "test_support.hpp"
#include "tiletune/launcher.hpp"
#include "tiletune/online.hpp"

namespace tiletune::testing {
namespace {

constexpr const char* kSpace = R"yaml(kernel: test_online
source: k.cu
entry: k
problem:
  N: [1000, 2000]
params:
  BLOCK: [64, 128, 256, 512]
  ITEMS: [1, 2]
constraints:
  - BLOCK * ITEMS <= 512
launch:
  grid: ["ceil_div(N, BLOCK * ITEMS)"]
  block: [BLOCK]
buffers:
  y: {type: float, count: N, output: true}
args: [y, N]
verify: {reference: {config: {BLOCK: 64, ITEMS: 1}}, rtol: 0}
default: {BLOCK: 64, ITEMS: 1}
)yaml";

struct Fixture {
  TempDir dir;
  Space space;
  Fixture() {
    (void)dir.write("k.cu",
                    "extern \"C\" __global__ void k(float* y, int n) { int i = blockIdx.x * BLOCK + "
                    "threadIdx.x; if (i < n) y[i] = i; }\n");
    space = load_space(dir.write("space.yaml", kSpace));
  }
};

OnlineOptions options(std::uint64_t budget = 32, double share = 1.0) {
  OnlineOptions o;
  o.patterns = {"test_*"};
  o.budget = budget;
  o.share = share;
  return o;
}

const Problem n1000{{1000}};

TEST(OnlineSchedule, TriesEachValidConfigOnceInEnumerationOrderSkippingTheOneInUse) {
  Fixture f;
  OnlineSchedule schedule(f.space, options(), 0.0);
  const Config current{{64, 1}};
  std::vector<Config> tried;
  double now = 1.0;
  while (auto c = schedule.next(n1000, current, now)) {
    tried.push_back(*c);
    schedule.record(n1000, *c, OnlineVerdict::slower, 0.0);
    now += 1.0;
  }
  // BLOCK x ITEMS with BLOCK * ITEMS <= 512: 7 configs, less the one in use.
  const std::vector<Config> expected{{{64, 2}}, {{128, 1}}, {{128, 2}}, {{256, 1}}, {{256, 2}}, {{512, 1}}};
  EXPECT_EQ(tried, expected);
  EXPECT_EQ(schedule.tried(n1000), 6u);
  EXPECT_EQ(schedule.best(n1000), std::nullopt) << "none was faster";
  EXPECT_EQ(schedule.tried(Problem{{2000}}), 0u) << "each problem has its own trials";
}

TEST(OnlineSchedule, KeepsTheFasterAndNeverAWrongOrFailedOne) {
  Fixture f;
  OnlineSchedule schedule(f.space, options(), 0.0);
  const Config current{{64, 1}};
  auto c1 = schedule.next(n1000, current, 1.0);  // 64,2
  ASSERT_TRUE(c1);
  schedule.record(n1000, *c1, OnlineVerdict::wrong, 0.0);
  EXPECT_EQ(schedule.best(n1000), std::nullopt);
  auto c2 = schedule.next(n1000, current, 2.0);  // 128,1
  ASSERT_TRUE(c2);
  schedule.record(n1000, *c2, OnlineVerdict::faster, 0.0);
  EXPECT_EQ(schedule.best(n1000), c2);
  auto c3 = schedule.next(n1000, current, 3.0);  // 128,2
  ASSERT_TRUE(c3);
  schedule.record(n1000, *c3, OnlineVerdict::failed, 0.0);
  auto c4 = schedule.next(n1000, current, 4.0);  // 256,1
  ASSERT_TRUE(c4);
  schedule.record(n1000, *c4, OnlineVerdict::slower, 0.0);
  EXPECT_EQ(schedule.best(n1000), c2) << "kept until a faster one";
  EXPECT_NE(*c1, *c2);
  EXPECT_NE(*c3, *c2);
}

TEST(OnlineSchedule, StopsAtTheBudget) {
  Fixture f;
  OnlineSchedule schedule(f.space, options(2), 0.0);
  const Config current{{64, 1}};
  for (int i = 0; i < 2; ++i) {
    auto c = schedule.next(n1000, current, 1.0 + i);
    ASSERT_TRUE(c);
    schedule.record(n1000, *c, OnlineVerdict::slower, 0.0);
  }
  EXPECT_EQ(schedule.next(n1000, current, 10.0), std::nullopt);
  EXPECT_TRUE(schedule.next(Problem{{2000}}, current, 10.0)) << "the budget is per problem";
}

TEST(OnlineSchedule, SpendsAtMostItsShareOfTheWallTime) {
  Fixture f;
  OnlineSchedule schedule(f.space, options(32, 0.1), 100.0);  // opened at t = 100 s
  const Config current{{64, 1}};
  auto c = schedule.next(n1000, current, 100.0);
  ASSERT_TRUE(c) << "nothing spent yet";
  schedule.record(n1000, *c, OnlineVerdict::slower, 0.5);  // a trial of 0.5 s
  EXPECT_EQ(schedule.next(n1000, current, 104.0), std::nullopt) << "0.5 s > 10 % of 4 s";
  EXPECT_TRUE(schedule.next(n1000, current, 105.0)) << "0.5 s = 10 % of 5 s";
  EXPECT_DOUBLE_EQ(schedule.spent_s(), 0.5);
}

TEST(OnlineSchedule, DoesNotTryAgainWhatAnEarlierRunTried) {
  Fixture f;
  OnlineSchedule schedule(f.space, options(), 0.0);
  schedule.skip(n1000, {Config{{64, 2}}, Config{{128, 1}}});
  auto c = schedule.next(n1000, Config{{64, 1}}, 1.0);
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, (Config{{128, 2}}));
  EXPECT_EQ(schedule.tried(n1000), 0u) << "skipped configs do not count against the budget";
}

TEST(OnlineOptions, FromTheEnvironment) {
  ::setenv("TILETUNE_ONLINE", "app_*,test_online", 1);
  ::setenv("TILETUNE_ONLINE_BUDGET", "5", 1);
  ::setenv("TILETUNE_ONLINE_SHARE", "0.25", 1);
  ::setenv("TILETUNE_ONLINE_SAMPLES", "7", 1);
  std::ostringstream said;
  OnlineOptions o = OnlineOptions::from_environment(said);
  EXPECT_EQ(o.patterns, (std::vector<std::string>{"app_*", "test_online"}));
  EXPECT_EQ(o.budget, 5u);
  EXPECT_EQ(o.share, 0.25);
  EXPECT_EQ(o.samples, 7u);
  EXPECT_TRUE(o.matches("app_x"));
  EXPECT_FALSE(o.matches("other"));
  ::setenv("TILETUNE_ONLINE_SHARE", "2", 1);
  o = OnlineOptions::from_environment(said);
  EXPECT_FALSE(o.enabled());
  EXPECT_NE(said.str().find("TILETUNE_ONLINE_SHARE='2' is not a share in (0, 1]"), std::string::npos) << said.str();
  for (const char* name :
       {"TILETUNE_ONLINE", "TILETUNE_ONLINE_BUDGET", "TILETUNE_ONLINE_SHARE", "TILETUNE_ONLINE_SAMPLES"})
    ::unsetenv(name);
  EXPECT_FALSE(OnlineOptions::from_environment(said).enabled());
}

TEST(OnlineOptions, TheLauncherTunesOnlineOnlyMatchingKernels) {
  Fixture f;
  Launcher::Options o;
  o.db_path = f.dir.path() / "cache.db";
  o.device = QueryDevice{"GPU-f1c71000-0000-4000-8000-00000000abcd", "Fictional H200", 9, 0};
  o.arch = "sm_90";
  o.capture = CaptureOptions{};
  o.online = options();
  auto on = Launcher::open(f.dir.path() / "space.yaml", o);
  ASSERT_NE(on.online(), nullptr);
  EXPECT_EQ(on.online()->options().budget, 32u);
  EXPECT_EQ(on.last_online(), std::nullopt);
  o.online->patterns = {"app_*"};
  auto off = Launcher::open(f.dir.path() / "space.yaml", o);
  EXPECT_EQ(off.online(), nullptr);
}

}  // namespace
}  // namespace tiletune::testing
