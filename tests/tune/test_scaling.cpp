// The scaling model of a sweep (tiletune/scaling.hpp) on cases whose wall time is known by
// hand: no overlap with a window of one, a pipeline when compile and measure overlap, a
// compile-bound sweep over the cores of one and of two hosts, a measure-bound one over GPUs,
// the compile cores of a host shared by its GPUs, and bad shapes refused.
#include <gtest/gtest.h>

#include <stdexcept>

#include "tiletune/scaling.hpp"

namespace tiletune {
namespace {

std::vector<SimulatedTrial> same(std::size_t n, double compile, double measure) {
  return std::vector<SimulatedTrial>(n, SimulatedTrial{compile, measure});
}
// Trial i on GPU i % gpus.
std::vector<std::uint32_t> round_robin(std::size_t n, unsigned gpus) {
  std::vector<std::uint32_t> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint32_t>(i % gpus);
  return out;
}

TEST(ScalingModel, AWindowOfOneAddsCompileAndMeasure) {
  const auto trials = std::vector<SimulatedTrial>{{1, 2}, {3, 4}, {0.5, 0.25}};
  const SimulatedSweep s = simulate_sweep(trials, round_robin(3, 1), ClusterShape{1, 1, 8, 1});
  EXPECT_DOUBLE_EQ(s.wall_seconds, 1 + 2 + 3 + 4 + 0.5 + 0.25);
  EXPECT_DOUBLE_EQ(s.compile_seconds, 4.5);
  EXPECT_DOUBLE_EQ(s.measure_seconds, 6.25);
}

TEST(ScalingModel, CompileAheadPipelinesOnOneCore) {
  // One core compiles trial k+1 while the GPU measures trial k: n compiles plus the last measure.
  const SimulatedSweep s = simulate_sweep(same(10, 1, 1), round_robin(10, 1), ClusterShape{1, 1, 1, 32});
  EXPECT_DOUBLE_EQ(s.wall_seconds, 10 * 1 + 1);
}

TEST(ScalingModel, CompileBoundSpreadsOverCoresAndHosts) {
  // 64 compiles of 1 s, nothing to measure: ceil(64 / cores) seconds.
  EXPECT_DOUBLE_EQ(simulate_sweep(same(64, 1, 0), round_robin(64, 1), ClusterShape{1, 1, 16, 64}).wall_seconds, 4);
  // Two hosts of one GPU and 16 cores each, half the trials each: twice as fast.
  EXPECT_DOUBLE_EQ(simulate_sweep(same(64, 1, 0), round_robin(64, 2), ClusterShape{2, 1, 16, 64}).wall_seconds, 2);
  // Two GPUs on one host share its 16 cores: no faster than one.
  EXPECT_DOUBLE_EQ(simulate_sweep(same(64, 1, 0), round_robin(64, 2), ClusterShape{1, 2, 16, 64}).wall_seconds, 4);
}

TEST(ScalingModel, TheWindowLimitsHowFarCompilesRunAhead) {
  // 16 cores but a window of 4: at most 4 compiles at once, so 64 compiles of 1 s take 16 s
  // (the measure of each is instant, freeing its slot when its compile is done).
  EXPECT_DOUBLE_EQ(simulate_sweep(same(64, 1, 0), round_robin(64, 1), ClusterShape{1, 1, 16, 4}).wall_seconds, 16);
}

TEST(ScalingModel, MeasureBoundSpreadsOverGpus) {
  const auto trials = same(64, 0, 0.5);
  for (const unsigned gpus : {1u, 2u, 8u, 64u}) {
    const SimulatedSweep s = simulate_sweep(trials, round_robin(64, gpus), ClusterShape{1, gpus, 4, 32});
    EXPECT_DOUBLE_EQ(s.wall_seconds, 0.5 * 64 / gpus) << gpus;
    EXPECT_DOUBLE_EQ(s.lower_bound_seconds, s.wall_seconds) << gpus;
  }
}

TEST(ScalingModel, NeverBeatsItsLowerBound) {
  std::vector<SimulatedTrial> trials;
  for (int i = 0; i < 200; ++i) trials.push_back({0.2 + 0.01 * (i % 17), 0.05 + 0.003 * (i % 11)});
  for (const unsigned gpus : {1u, 3u, 8u}) {
    const SimulatedSweep s = simulate_sweep(trials, round_robin(200, gpus), ClusterShape{1, gpus, 6, 24});
    EXPECT_GE(s.wall_seconds, s.lower_bound_seconds - 1e-9) << gpus;
    EXPECT_LE(s.wall_seconds, s.compile_seconds + s.measure_seconds + 1e-9) << gpus;
  }
}

TEST(ScalingModel, RefusesBadShapes) {
  const auto trials = same(2, 1, 1);
  EXPECT_THROW((void)simulate_sweep(trials, round_robin(2, 1), ClusterShape{1, 1, 0, 4}), std::invalid_argument);
  EXPECT_THROW((void)simulate_sweep(trials, round_robin(2, 1), ClusterShape{1, 1, 1, 0}), std::invalid_argument);
  EXPECT_THROW((void)simulate_sweep(trials, round_robin(1, 1), ClusterShape{}), std::invalid_argument);
  EXPECT_THROW((void)simulate_sweep(trials, round_robin(2, 2), ClusterShape{}), std::invalid_argument);
}

}  // namespace
}  // namespace tiletune
