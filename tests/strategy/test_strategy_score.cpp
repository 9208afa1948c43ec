// The score of Willemsen et al. that bench_strategies reports (bench/strategy_score.hpp), on
// landscapes small enough that random search's expected best is counted by hand: every subset
// of t of the ok times is equally likely, and its best is its minimum.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "strategy_score.hpp"

namespace tiletune::bench {
namespace {

// Five ok times (ms). By hand, the mean minimum of every t-subset:
// t=1: (1+2+3+4+10)/5 = 4; t=2: the 10 pairs' minima sum to 4*1+3*2+2*3+1*4 = 20, so 2;
// t=3: 6*1+3*2+1*3 = 15 over 10 triples, 1.5; t=4: 4*1+1*2 = 6 over 5, 1.2; t=5: 1.
TimeDistribution five_times() { return time_distribution({4, 10, 1, 3, 2}); }

TEST(StrategyScore, DistributionIsSortedWithItsMedianAndOptimum) {
  const TimeDistribution d = five_times();
  EXPECT_EQ(d.ascending, (std::vector<double>{1, 2, 3, 4, 10}));
  EXPECT_DOUBLE_EQ(d.optimum, 1);
  EXPECT_DOUBLE_EQ(d.median, 3);
  EXPECT_DOUBLE_EQ(d.slowest, 10);
  EXPECT_DOUBLE_EQ(time_distribution({4, 1, 3, 2}).median, 2.5);  // even count: the middle two's mean
  EXPECT_THROW((void)time_distribution({}), std::invalid_argument);
}

TEST(StrategyScore, RandomExpectedBestIsTheMeanMinimumOfEverySubset) {
  const TimeDistribution d = five_times();
  EXPECT_DOUBLE_EQ(expected_random_best(d, 1), 4.0);
  EXPECT_DOUBLE_EQ(expected_random_best(d, 2), 2.0);
  EXPECT_DOUBLE_EQ(expected_random_best(d, 3), 1.5);
  EXPECT_DOUBLE_EQ(expected_random_best(d, 4), 1.2);
  EXPECT_DOUBLE_EQ(expected_random_best(d, 5), 1.0);
  EXPECT_DOUBLE_EQ(expected_random_best(d, 9), 1.0);  // past every config: the optimum
  EXPECT_THROW((void)expected_random_best(d, 0), std::invalid_argument);
}

TEST(StrategyScore, RandomExpectedBestWithTiedTimes) {
  // {1, 1, 5}: one draw 7/3; two draws always hold a 1 (only {5} avoids both ones).
  const TimeDistribution d = time_distribution({5, 1, 1});
  EXPECT_DOUBLE_EQ(expected_random_best(d, 1), 7.0 / 3);
  EXPECT_DOUBLE_EQ(expected_random_best(d, 2), 1.0);
}

TEST(StrategyScore, CutoffIsWhereRandomReachesThePercentileBetweenMedianAndOptimum) {
  const TimeDistribution d = five_times();
  // 0.95: 1 + 0.05 * (3 - 1) = 1.1, first reached at t = 5 (1.2 at t = 4 is above it).
  EXPECT_EQ(random_cutoff_evaluations(d), 5u);
  // 0.8: 1 + 0.2 * 2 = 1.4: t = 3 gives 1.5, t = 4 gives 1.2.
  EXPECT_EQ(random_cutoff_evaluations(d, 0.8), 4u);
  // 0.6: 1 + 0.4 * 2 = 1.8: t = 2 gives 2, t = 3 gives 1.5.
  EXPECT_EQ(random_cutoff_evaluations(d, 0.6), 3u);
  const std::vector<double> curve = expected_random_curve(d, 4);
  ASSERT_EQ(curve.size(), 4u);
  const double by_hand[] = {4.0, 2.0, 1.5, 1.2};
  for (std::size_t t = 0; t < 4; ++t) EXPECT_DOUBLE_EQ(curve[t], by_hand[t]) << "t=" << t + 1;
}

TEST(StrategyScore, ScoreIsTheMeanOverTheRangeOfTheGainOverRandom) {
  const TimeDistribution d = five_times();
  const std::vector<double> random_at = expected_random_curve(d, random_cutoff_evaluations(d, 0.8));  // t = 1..4
  // Found 3 ms first, the optimum from the second evaluation on:
  // (4-3)/(4-1) = 1/3, then 1, 1, 1: mean 10/12.
  EXPECT_NEAR(methodology_score({3, 1, 1, 1}, random_at, d), 10.0 / 12, 1e-12);
  // As good as random's expectation at every t: 0.
  EXPECT_NEAR(methodology_score(random_at, random_at, d), 0.0, 1e-12);
  // Stuck at the slowest: (4-10)/3 = -2, (2-10)/1 = -8, (1.5-10)/0.5 = -17, (1.2-10)/0.2 = -44.
  EXPECT_NEAR(methodology_score({10, 10, 10, 10}, random_at, d), -71.0 / 4, 1e-12);
  // A search that stopped after two evaluations keeps its best; nothing found counts as slowest.
  EXPECT_NEAR(methodology_score({3, 1}, random_at, d), 10.0 / 12, 1e-12);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_NEAR(methodology_score({inf, 1, 1, 1}, random_at, d), (-2.0 + 3) / 4, 1e-12);
}

TEST(StrategyScore, TimesWhereRandomIsAtTheOptimumAreLeftOut) {
  const TimeDistribution d = five_times();
  const std::vector<double> random_at = expected_random_curve(d, random_cutoff_evaluations(d));  // t = 1..5
  // t = 5 has E = 1, the optimum: no gain to share, so the mean is over t = 1..4 as above.
  EXPECT_NEAR(methodology_score({3, 1, 1, 1, 1}, random_at, d), 10.0 / 12, 1e-12);
  // One config: nothing to score.
  const TimeDistribution one = time_distribution({2});
  EXPECT_TRUE(std::isnan(methodology_score({2}, expected_random_curve(one, random_cutoff_evaluations(one)), one)));
}

TEST(StrategyScore, ExpectedBestOfALargeLandscapeMatchesTheClosedForm) {
  // Times 1..N: E[min of t draws] = (N + 1) / (t + 1), the order statistic of a uniform sample.
  std::vector<double> times;
  for (int i = 1; i <= 4000; ++i) times.push_back(i);
  const TimeDistribution d = time_distribution(times);
  for (const std::size_t t : {1u, 2u, 10u, 100u, 1000u, 3999u})
    EXPECT_NEAR(expected_random_best(d, t), 4001.0 / double(t + 1), 1e-9 * 4001.0 / double(t + 1)) << "t=" << t;
  // Median 2000.5: the target 1 + 0.05 * 1999.5 = 100.975; (4001)/(t+1) <= 100.975 from t = 39.
  EXPECT_EQ(random_cutoff_evaluations(d), 39u);
}

}  // namespace
}  // namespace tiletune::bench
