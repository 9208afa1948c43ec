// The statistics of timing samples and nvbench's stopping rule, kept apart from the driver
// code so that they are plain functions of their inputs and tested on the CPU.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "tiletune/runner.hpp"

namespace tiletune {

TimingStats summarize(std::vector<double> samples_ms) {
  TimingStats s;
  s.rel_std_error = std::numeric_limits<double>::infinity();
  if (samples_ms.empty()) return s;
  const std::size_t n = samples_ms.size();
  s.samples = static_cast<int>(n);
  std::sort(samples_ms.begin(), samples_ms.end());
  s.min_ms = samples_ms.front();
  s.max_ms = samples_ms.back();
  s.median_ms = n % 2 == 1 ? samples_ms[n / 2] : 0.5 * (samples_ms[n / 2 - 1] + samples_ms[n / 2]);
  s.mean_ms = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0) / static_cast<double>(n);
  if (n < 2) return s;
  // Two passes (mean first): no cancellation when the samples are close together, which
  // is exactly the case the noise rule is looking for.
  double squares = 0;
  for (const double x : samples_ms) squares += (x - s.mean_ms) * (x - s.mean_ms);
  s.stddev_ms = std::sqrt(squares / static_cast<double>(n - 1));
  if (s.mean_ms > 0) s.rel_std_error = s.stddev_ms / std::sqrt(static_cast<double>(n)) / s.mean_ms;
  return s;
}

StopReason stop_reason(const TimingSettings& settings, int samples, double kernel_seconds,
                       double rel_std_error, double wall_seconds) noexcept {
  if (samples >= settings.min_samples && kernel_seconds >= settings.min_seconds &&
      rel_std_error < settings.max_noise) {
    return StopReason::converged;
  }
  // The time limit wins over min_samples: a slow kernel must not hold the worker past its
  // deadline. One sample is the least a timed result can have.
  if (samples >= 1 && wall_seconds > settings.max_seconds) return StopReason::max_time;
  return StopReason::keep_going;
}

}  // namespace tiletune
