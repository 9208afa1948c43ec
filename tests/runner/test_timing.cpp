// The timing statistics and nvbench's stopping rule, on fixed sample sequences.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tiletune/runner.hpp"

namespace tiletune {
namespace {

TEST(Summarize, Empty) {
  const TimingStats s = summarize({});
  EXPECT_EQ(s.samples, 0);
  EXPECT_EQ(s.median_ms, 0);
  EXPECT_TRUE(std::isinf(s.rel_std_error));
}

TEST(Summarize, OneSample) {
  const TimingStats s = summarize({2.5});
  EXPECT_EQ(s.samples, 1);
  EXPECT_EQ(s.median_ms, 2.5);
  EXPECT_EQ(s.mean_ms, 2.5);
  EXPECT_EQ(s.min_ms, 2.5);
  EXPECT_EQ(s.stddev_ms, 0);
  EXPECT_TRUE(std::isinf(s.rel_std_error));  // one sample says nothing about the noise
}

TEST(Summarize, OddCountUnsorted) {
  const TimingStats s = summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.samples, 5);
  EXPECT_DOUBLE_EQ(s.median_ms, 3);
  EXPECT_DOUBLE_EQ(s.mean_ms, 3);
  EXPECT_DOUBLE_EQ(s.min_ms, 1);
  EXPECT_DOUBLE_EQ(s.max_ms, 5);
  EXPECT_DOUBLE_EQ(s.stddev_ms, std::sqrt(2.5));  // sum of squares 10 over n - 1 = 4
  EXPECT_DOUBLE_EQ(s.rel_std_error, std::sqrt(2.5) / std::sqrt(5.0) / 3.0);
}

TEST(Summarize, EvenCountTakesTheMiddlePair) {
  const TimingStats s = summarize({1, 10, 2, 3});
  EXPECT_DOUBLE_EQ(s.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.mean_ms, 4);
}

TEST(Summarize, ConstantSamplesHaveNoNoise) {
  const TimingStats s = summarize(std::vector<double>(20, 0.125));
  EXPECT_EQ(s.stddev_ms, 0);
  EXPECT_EQ(s.rel_std_error, 0);
}

TEST(Summarize, CloseLargeValuesKeepTheirSpread) {
  // A one-pass sum of squares would lose these to cancellation.
  const TimingStats s = summarize({1e6 + 1, 1e6 + 2, 1e6 + 3});
  EXPECT_DOUBLE_EQ(s.stddev_ms, 1.0);
}

// Feeds samples one at a time through the rule, as the runner does, with a fake wall clock
// that advances by the sample plus a fixed overhead; returns how many samples it took.
struct RuleRun {
  int samples = 0;
  StopReason reason = StopReason::keep_going;
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

RuleRun run_rule(const TimingSettings& settings, const std::vector<double>& sequence_ms,
                 double overhead_ms) {
  std::vector<double> taken;
  double kernel_s = 0, wall_s = 0;
  for (std::size_t i = 0;; ++i) {
    const double ms = sequence_ms[i % sequence_ms.size()];
    taken.push_back(ms);
    kernel_s += ms * 1e-3;
    wall_s += (ms + overhead_ms) * 1e-3;
    const StopReason r = stop_reason(settings, static_cast<int>(taken.size()), kernel_s,
                                     summarize(taken).rel_std_error, wall_s);
    if (r != StopReason::keep_going) return {static_cast<int>(taken.size()), r};
    if (taken.size() > 1000000) return {static_cast<int>(taken.size()), r};
  }
}

TEST(StopRule, QuietKernelStopsAtMinSamplesOnceMinTimeIsReached) {
  TimingSettings t = fixed_settings();  // 10 samples, 0.5 %, 20 ms, 1 s
  // 5 ms samples: 10 samples are 50 ms > 20 ms, and the noise is tiny.
  const RuleRun r = run_rule(t, {5.0, 5.001, 4.999}, 0.01);
  EXPECT_EQ(r.reason, StopReason::converged);
  EXPECT_EQ(r.samples, 10);
}

TEST(StopRule, ShortKernelWaitsForMinSeconds) {
  TimingSettings t = fixed_settings();
  // 0.1 ms samples: the noise is low after 10, but 20 ms of kernel time takes 200.
  const RuleRun r = run_rule(t, {0.1, 0.1001, 0.0999}, 0.01);
  EXPECT_EQ(r.reason, StopReason::converged);
  EXPECT_EQ(r.samples, 200);
}

TEST(StopRule, NoisyKernelRunsUntilTheNoiseIsLowEnough) {
  TimingSettings t = fixed_settings();
  // Alternating 1 and 1.2 ms: stddev ~0.1, mean 1.1; rel. error 0.1/sqrt(n)/1.1 < 0.005 needs
  // n > 330.
  const RuleRun r = run_rule(t, {1.0, 1.2}, 0.0);
  EXPECT_EQ(r.reason, StopReason::converged);
  EXPECT_GT(r.samples, 320);
  EXPECT_LT(r.samples, 345);
}

TEST(StopRule, NoiseThatNeverSettlesStopsAtMaxSeconds) {
  TimingSettings t = fixed_settings();
  t.max_noise = 1e-9;
  const RuleRun r = run_rule(t, {1.0, 2.0, 3.0}, 1.0);
  EXPECT_EQ(r.reason, StopReason::max_time);
  // Each sample costs 2-4 ms of wall time (3 on average): about 1 s / 3 ms.
  EXPECT_GE(r.samples, 330);
  EXPECT_LE(r.samples, 336);
}

TEST(StopRule, SlowKernelStopsAtMaxSecondsBeforeMinSamples) {
  TimingSettings t = fixed_settings();
  const RuleRun r = run_rule(t, {400.0}, 0.0);
  EXPECT_EQ(r.reason, StopReason::max_time);
  EXPECT_EQ(r.samples, 3);  // 1.2 s of wall time
}

TEST(StopRule, DirectCases) {
  TimingSettings t = fixed_settings();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(stop_reason(t, 0, 0, inf, 5.0), StopReason::keep_going);  // no sample yet
  EXPECT_EQ(stop_reason(t, 9, 1.0, 0.0, 0.5), StopReason::keep_going);
  EXPECT_EQ(stop_reason(t, 10, 1.0, 0.0049, 0.5), StopReason::converged);
  EXPECT_EQ(stop_reason(t, 10, 1.0, 0.005, 0.5), StopReason::keep_going);  // strictly under
  EXPECT_EQ(stop_reason(t, 10, 0.019, 0.0, 0.5), StopReason::keep_going);
  EXPECT_EQ(stop_reason(t, 10, 1.0, 0.1, 1.01), StopReason::max_time);
}

}  // namespace
}  // namespace tiletune
