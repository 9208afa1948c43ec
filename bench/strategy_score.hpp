// The performance score of Willemsen, van Nieuwpoort and van Werkhoven, "A methodology for
// comparing optimization algorithms for auto-tuning" (FGCS 2024; the autotuning_methodology
// package of the AutoTuningAssociation, which Kernel Tuner's hyperparameter tuning calls), for
// bench_strategies and its test. Header-only and free of the engine: a landscape is its list of
// ok times, a search its best time after each evaluation.
//
// What is implemented, and where we chose (the package's code is the reference read):
// - The distribution is the landscape's ok times only (the package's default, include_nan=False):
//   failed configs are not draws of the baseline. Our random strategy does draw them, so on a
//   landscape with failures the baseline is a little stronger than our own random search.
// - Random search's expected best after t evaluations is exact: the expectation of the minimum of
//   t draws without replacement from the ok times, E(t) = v1 + sum_{i>=2} (v_i - v_{i-1}) C(V-i+1, t)
//   / C(V, t) over the times sorted ascending (v1 the optimum, V of them). The package's calculated
//   baseline rounds the best's expected rank, t (V+1) / (t+1), to one of the times instead.
// - The budget is counted in evaluations (the package's cutoff_type "fevals"; Kernel Tuner's
//   hyperparameter tuning counts time). Its end T is the first t with E(t) <= optimum + (1 - 0.95)
//   (median - optimum) (the 95th percentile between the median and the optimum; the median of the
//   ok times, the mean of the middle two for an even count). The package finds T from the same
//   rank rounding; the exact E(t) is used here too.
// - The range is t = 1..T (the wording). The package starts it where random reaches the
//   1st percentile (cutoff_percentile_start 0.01), which is t = 1 to 3 on our landscapes.
// - The search's curve is the median over seeds of the best time found after t evaluations (the
//   package takes the median over repeats of the best's rank in the distribution, the same order);
//   a seed that has found no ok config yet counts the slowest ok time; a seed that stopped before t
//   keeps its best (the package extends a curve with its last value too).
// - score(t) = (E(t) - best(t)) / (E(t) - optimum): 1 at the optimum, 0 as good as random, below
//   0 worse (unbounded); a t where E(t) is the optimum already (a degenerate landscape) is left
//   out. The score is the mean of score(t) over the range.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <vector>

namespace tiletune::bench {

/// A landscape's ok times, ascending, with the optimum and the median the methodology uses.
struct TimeDistribution {
  std::vector<double> ascending;
  double optimum = 0;
  double median = 0;
  double slowest = 0;
};

/// The distribution of a landscape's ok times (any order). Throws std::invalid_argument when
/// there are none.
[[nodiscard]] inline TimeDistribution time_distribution(std::vector<double> ok_times) {
  if (ok_times.empty()) throw std::invalid_argument("a landscape without ok times has no score");
  std::sort(ok_times.begin(), ok_times.end());
  TimeDistribution d;
  const std::size_t n = ok_times.size();
  d.optimum = ok_times.front();
  d.slowest = ok_times.back();
  d.median = n % 2 ? ok_times[n / 2] : 0.5 * (ok_times[n / 2 - 1] + ok_times[n / 2]);
  d.ascending = std::move(ok_times);
  return d;
}

/// Random search's exact expected best time after t evaluations (t >= 1; past every ok time,
/// the optimum): the minimum of t uniform draws without replacement.
[[nodiscard]] inline double expected_random_best(const TimeDistribution& d, std::size_t t) {
  const std::vector<double>& v = d.ascending;
  const std::size_t count = v.size();
  if (t == 0) throw std::invalid_argument("expected_random_best: t must be at least 1");
  if (t >= count) return v.front();
  // q = P(every draw is among the ranks i..V) = C(V-i+1, t) / C(V, t), from q = 1 at i = 1 by
  // q_i = q_{i-1} (V-i+2-t) / (V-i+2): a product of factors below 1, so nothing overflows.
  double expected = v.front();
  double q = 1;
  const double spread = v.back() - v.front();
  for (std::size_t i = 2; i <= count; ++i) {
    const double remaining = double(count - i + 2);
    if (remaining <= double(t)) break;  // fewer ranks left than draws: q is 0 from here on
    q *= (remaining - double(t)) / remaining;
    expected += (v[i - 1] - v[i - 2]) * q;
    if (q * spread < 1e-15 * v.front()) break;  // the rest cannot move the sum
  }
  return expected;
}

/// The end of the score's range: the first t at which random search's expected best is within
/// (1 - percentile) of the way from the median to the optimum (percentile 0.95: the 95th
/// percentile between them). At most the number of ok times (where E(t) is the optimum).
[[nodiscard]] inline std::size_t random_cutoff_evaluations(const TimeDistribution& d, double percentile = 0.95) {
  const double target = d.optimum + (d.median - d.optimum) * (1 - percentile);
  for (std::size_t t = 1; t < d.ascending.size(); ++t)
    if (expected_random_best(d, t) <= target) return t;
  return d.ascending.size();
}

/// E(t) for t = 1..last.
[[nodiscard]] inline std::vector<double> expected_random_curve(const TimeDistribution& d, std::size_t last) {
  std::vector<double> curve;
  curve.reserve(last);
  for (std::size_t t = 1; t <= last; ++t) curve.push_back(expected_random_best(d, t));
  return curve;
}

/// The score of a search's curve: best_at[t-1] is its best time after t evaluations (the median
/// over seeds), random_at[t-1] random search's expected best; the mean of
/// (random - best) / (random - optimum) over t = 1..random_at.size() where random_at[t-1] is
/// above the optimum. NaN when no t is. best_at shorter than random_at is extended with its
/// last value (a search that stopped keeps its best); infinity (nothing found) counts as slowest.
[[nodiscard]] inline double methodology_score(const std::vector<double>& best_at, const std::vector<double>& random_at,
                                              const TimeDistribution& d) {
  double sum = 0;
  std::size_t counted = 0;
  for (std::size_t t = 0; t < random_at.size(); ++t) {
    const double random = random_at[t];
    if (!(random > d.optimum)) continue;
    double best = best_at.empty() ? d.slowest : best_at[std::min(t, best_at.size() - 1)];
    if (!std::isfinite(best)) best = d.slowest;
    sum += (random - best) / (random - d.optimum);
    ++counted;
  }
  return counted ? sum / double(counted) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace tiletune::bench
