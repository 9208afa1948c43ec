// The timing statistics, the stopping criterion (nvbench's stdrel rule with its plateau exit) on
// synthetic sample streams, and the throttle classification.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tiletune/timing.hpp"

namespace tiletune {
namespace {

TEST(Summarize, Empty) {
  const TimingStats s = summarize({});
  EXPECT_EQ(s.samples, 0);
  EXPECT_EQ(s.median_ms, 0);
  EXPECT_TRUE(std::isinf(s.noise));
}

TEST(Summarize, OneSample) {
  const TimingStats s = summarize({2.5});
  EXPECT_EQ(s.samples, 1);
  EXPECT_EQ(s.median_ms, 2.5);
  EXPECT_EQ(s.mean_ms, 2.5);
  EXPECT_EQ(s.min_ms, 2.5);
  EXPECT_EQ(s.stddev_ms, 0);
  EXPECT_TRUE(std::isinf(s.noise));  // one sample says nothing about the noise
}

TEST(Summarize, OddCountUnsorted) {
  const TimingStats s = summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.samples, 5);
  EXPECT_DOUBLE_EQ(s.median_ms, 3);
  EXPECT_DOUBLE_EQ(s.mean_ms, 3);
  EXPECT_DOUBLE_EQ(s.min_ms, 1);
  EXPECT_DOUBLE_EQ(s.max_ms, 5);
  EXPECT_DOUBLE_EQ(s.stddev_ms, std::sqrt(2.5));    // sum of squares 10 over n - 1 = 4
  EXPECT_DOUBLE_EQ(s.noise, std::sqrt(2.5) / 3.0);  // relative standard deviation
}

TEST(Summarize, FewerThanFiveSamplesHaveNoKnownNoise) {
  const TimingStats s = summarize({1, 2, 3, 4});
  EXPECT_GT(s.stddev_ms, 0);
  EXPECT_TRUE(std::isinf(s.noise));  // nvbench's min_samples_for_noise_estimate
}

TEST(Summarize, EvenCountTakesTheMiddlePair) {
  const TimingStats s = summarize({1, 10, 2, 3});
  EXPECT_DOUBLE_EQ(s.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.mean_ms, 4);
}

TEST(Summarize, ConstantSamplesHaveNoNoise) {
  const TimingStats s = summarize(std::vector<double>(20, 0.125));
  EXPECT_EQ(s.stddev_ms, 0);
  EXPECT_EQ(s.noise, 0);
}

TEST(Summarize, CloseLargeValuesKeepTheirSpread) {
  // A one-pass sum of squares would lose these to cancellation.
  const TimingStats s = summarize({1e6 + 1, 1e6 + 2, 1e6 + 3});
  EXPECT_DOUBLE_EQ(s.stddev_ms, 1.0);
}

// Feeds samples one at a time through the criterion, as the runner does, with a fake wall clock
// that advances by the sample plus a fixed overhead; returns how many samples it took.
struct RuleRun {
  int samples = 0;
  StopReason reason = StopReason::keep_going;
  double noise = 0;
};
// The rule's numbers, fixed here so that a change of the defaults does not change the tests.
TimingSettings fixed_settings() {
  TimingSettings t;
  t.min_samples = 10;
  t.max_noise = 0.005;
  t.min_seconds = 0.02;
  t.max_seconds = 1.0;
  return t;
}

RuleRun run_rule(const TimingSettings& settings, const std::vector<double>& sequence_ms, double overhead_ms) {
  StdrelCriterion criterion(settings);
  double wall_s = 0;
  for (std::size_t i = 0;; ++i) {
    const double ms = sequence_ms[i % sequence_ms.size()];
    criterion.add_sample(ms);
    wall_s += (ms + overhead_ms) * 1e-3;
    const StopReason r = criterion.verdict(wall_s);
    if (r != StopReason::keep_going || i > 1000000) return {criterion.samples(), r, criterion.noise()};
  }
}

TEST(StdrelCriterion, QuietKernelStopsJustAfterMinSamplesOnceMinTimeIsReached) {
  TimingSettings t = fixed_settings();  // 10 samples, 0.5 %, 20 ms, 1 s
  // 5 ms samples: 10 samples are 50 ms > 20 ms, and the noise is tiny; nvbench wants more than
  // min_samples.
  const RuleRun r = run_rule(t, {5.0, 5.001, 4.999}, 0.01);
  EXPECT_EQ(r.reason, StopReason::converged);
  EXPECT_EQ(r.samples, 11);
}

TEST(StdrelCriterion, ShortKernelWaitsForMinSeconds) {
  TimingSettings t = fixed_settings();
  // 0.1 ms samples: the noise is low after 10, but more than 20 ms of GPU time takes 201.
  const RuleRun r = run_rule(t, {0.1, 0.1001, 0.0999}, 0.01);
  EXPECT_EQ(r.reason, StopReason::converged);
  EXPECT_GE(r.samples, 200);
  EXPECT_LE(r.samples, 201);
}

TEST(StdrelCriterion, TheNoiseIsTheRelativeStandardDeviationNotTheErrorOfTheMean) {
  TimingSettings t = fixed_settings();
  t.max_noise = 0.02;
  // +-1 % around 1 ms: the relative standard deviation is about 1 % whatever the count, under 2 %
  // at once; the old rule (standard error of the mean) would have said the same of +-5 % after
  // enough samples, this one never does.
  const RuleRun quiet = run_rule(t, {0.99, 1.01}, 0.0);
  EXPECT_EQ(quiet.reason, StopReason::converged);
  EXPECT_NEAR(quiet.noise, 0.01, 0.001);
  const RuleRun loud = run_rule(t, {0.95, 1.05}, 0.0);
  EXPECT_NE(loud.reason, StopReason::converged);
  EXPECT_NEAR(loud.noise, 0.05, 0.002);
}

TEST(StdrelCriterion, NoiseThatSettlesAboveMaxNoiseEndsOnThePlateau) {
  TimingSettings t = fixed_settings();
  // Alternating 1 and 1.2 ms: the noise settles near 9.1 %, far above 0.5 %. Once more than 64
  // noise values are recorded (the first at sample 5, so from sample 69), the first multiple
  // of 16 whose recent noise values spread under 5 % of the latest ends it: sample 80.
  const RuleRun r = run_rule(t, {1.0, 1.2}, 0.0);
  EXPECT_EQ(r.reason, StopReason::noise_plateau);
  EXPECT_EQ(r.samples, 80);
  EXPECT_EQ(r.samples % StdrelCriterion::kPlateauCheckEvery, 0);
  EXPECT_NEAR(r.noise, 0.1 / 1.1, 0.002);
}

TEST(StdrelCriterion, NoiseThatKeepsChangingStopsAtMaxSeconds) {
  TimingSettings t = fixed_settings();
  // A kernel that slows down steadily: its noise keeps growing, never a plateau, never under
  // max_noise, so only the time limit ends it.
  StdrelCriterion criterion(t);
  double wall = 0, ms = 1.0;
  StopReason reason = StopReason::keep_going;
  while (reason == StopReason::keep_going) {
    ms *= 1.01;
    criterion.add_sample(ms);
    wall += ms * 1e-3;
    reason = criterion.verdict(wall);
  }
  EXPECT_EQ(reason, StopReason::max_time);
  EXPECT_GT(wall, 1.0);
  EXPECT_LT(wall, 1.0 + ms * 1e-3 + 1e-9);
}

TEST(StdrelCriterion, SlowKernelStopsAtMaxSecondsBeforeMinSamples) {
  TimingSettings t = fixed_settings();
  const RuleRun r = run_rule(t, {400.0}, 0.0);
  EXPECT_EQ(r.reason, StopReason::max_time);
  EXPECT_EQ(r.samples, 3);  // 1.2 s of wall time
}

TEST(StdrelCriterion, TheTimeLimitNeedsNoSample) {
  // Every sample discarded (throttled): the loop must still end.
  StdrelCriterion criterion(fixed_settings());
  EXPECT_EQ(criterion.verdict(0.5), StopReason::keep_going);
  EXPECT_EQ(criterion.verdict(1.01), StopReason::max_time);
  EXPECT_TRUE(std::isinf(criterion.noise()));
}

TEST(StdrelCriterion, NoNoiseIsKnownBelowFiveSamples) {
  StdrelCriterion criterion(fixed_settings());
  for (double ms : {1.0, 2.0, 3.0, 4.0}) criterion.add_sample(ms);
  EXPECT_TRUE(std::isinf(criterion.noise()));
  criterion.add_sample(5.0);
  EXPECT_DOUBLE_EQ(criterion.noise(), std::sqrt(2.5) / 3.0);  // as summarize
}

TEST(StdrelCriterion, StrictBoundsAsNvbench) {
  TimingSettings t = fixed_settings();
  t.min_seconds = 0.0;
  StdrelCriterion criterion(t);
  for (int i = 0; i < 10; ++i) criterion.add_sample(1.0);
  EXPECT_EQ(criterion.verdict(0.0), StopReason::keep_going);  // 10 samples: not more than min_samples
  criterion.add_sample(1.0);
  EXPECT_EQ(criterion.verdict(0.0), StopReason::converged);  // noise 0 < 0.5 %
  TimingSettings zero_noise = fixed_settings();
  zero_noise.max_noise = 0.0;  // strictly under: a noise of 0 does not pass 0
  const RuleRun r = run_rule(zero_noise, {2.0}, 0.0);
  EXPECT_NE(r.reason, StopReason::converged);
}

TEST(StopReason, Names) {
  EXPECT_STREQ(stop_reason_name(StopReason::converged), "converged");
  EXPECT_STREQ(stop_reason_name(StopReason::noise_plateau), "noise plateau");
  EXPECT_STREQ(stop_reason_name(StopReason::max_time), "time limit");
}

TEST(Throttle, ClockUnderThreeQuartersOfTheMaximum) {
  EXPECT_FALSE(is_throttled({1980, std::nullopt}, 1980));
  EXPECT_FALSE(is_throttled({1485, std::nullopt}, 1980));  // exactly 75 %
  EXPECT_TRUE(is_throttled({1484, std::nullopt}, 1980));
  EXPECT_TRUE(is_throttled({345, 0}, 1980));
}

TEST(Throttle, ThermalAndHardwareReasonsCountEvenAtFullClock) {
  EXPECT_TRUE(is_throttled({1980, 0x8}, 1980));          // HW slowdown
  EXPECT_TRUE(is_throttled({1980, 0x20}, 1980));         // SW thermal
  EXPECT_TRUE(is_throttled({1980, 0x40}, 1980));         // HW thermal
  EXPECT_TRUE(is_throttled({1980, 0x80}, 1980));         // HW power brake
  EXPECT_FALSE(is_throttled({1980, 0x1}, 1980));         // idle
  EXPECT_FALSE(is_throttled({1980, 0x4}, 1980));         // the software power cap alone
  EXPECT_FALSE(is_throttled({1980, 0x10 | 0x2}, 1980));  // sync boost, application clocks
}

TEST(Throttle, ALowClockOfAnIdleGpuIsNotThrottled) {
  EXPECT_FALSE(is_throttled({345, 0x1}, 1980));        // read between samples, nothing running
  EXPECT_TRUE(is_throttled({345, 0x1 | 0x40}, 1980));  // idle and hot: the thermal reason wins
  EXPECT_TRUE(is_throttled({345, 0x4}, 1980));         // at the power cap and far below: the clock rule
}

TEST(Throttle, AnUnknownClockIsNotThrottled) {
  EXPECT_FALSE(is_throttled({0, std::nullopt}, 1980));
  EXPECT_FALSE(is_throttled({900, std::nullopt}, 0));
}

}  // namespace
}  // namespace tiletune
