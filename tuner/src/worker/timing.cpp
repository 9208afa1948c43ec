// The statistics of timing samples, the stopping criterion (nvbench's stdrel rule, see
// timing.hpp for what is the same and what differs) and the throttle classification, kept
// apart from the driver code so that they are plain functions of their inputs and tested on
// the CPU.
#include "tiletune/timing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tiletune {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// stddev / mean, or +inf where it says nothing (too few samples, a mean that is not positive).
double relative_stddev(int samples, double stddev, double mean) {
  if (samples < kMinSamplesForNoise || !(mean > 0) || !std::isfinite(stddev)) return kInfinity;
  return stddev / mean;
}

}  // namespace

TimingStats summarize(std::vector<double> samples_ms) {
  TimingStats s;
  s.noise = kInfinity;
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
  s.noise = relative_stddev(s.samples, s.stddev_ms, s.mean_ms);
  return s;
}

const char* stop_reason_name(StopReason reason) noexcept {
  switch (reason) {
    case StopReason::keep_going: return "keep going";
    case StopReason::converged: return "converged";
    case StopReason::noise_plateau: return "noise plateau";
    case StopReason::max_time: return "time limit";
  }
  return "?";
}

void StdrelCriterion::add_sample(double ms) {
  ++samples_;
  total_seconds_ += ms * 1e-3;
  const double delta = ms - mean_ms_;
  mean_ms_ += delta / samples_;
  m2_ += delta * (ms - mean_ms_);
  const double stddev = samples_ >= 2 ? std::sqrt(m2_ / (samples_ - 1)) : kInfinity;
  const double noise = relative_stddev(samples_, stddev, mean_ms_);
  if (!std::isfinite(noise)) return;  // nvbench records finite values only
  noise_.push_back(noise);
  if (noise_.size() > kNoiseWindow) noise_.pop_front();
}

double StdrelCriterion::noise() const noexcept { return noise_.empty() ? kInfinity : noise_.back(); }

bool StdrelCriterion::noise_plateaued() const {
  if (noise_.size() <= kPlateauMinValues || samples_ % kPlateauCheckEvery != 0) return false;
  // The spread of the recent noise values around the latest one (not around their mean).
  const double current = noise_.back();
  if (!(current > 0)) return false;
  double squares = 0;
  for (const double x : noise_) squares += (x - current) * (x - current);
  const double spread = std::sqrt(squares / static_cast<double>(noise_.size() - 1));
  return spread / current < kPlateauThreshold;
}

StopReason StdrelCriterion::verdict(double wall_seconds) const {
  if (samples_ > settings_.min_samples && total_seconds_ > settings_.min_seconds) {
    if (noise() < settings_.max_noise) return StopReason::converged;
    if (noise_plateaued()) return StopReason::noise_plateau;
  }
  // The time limit wins over min_samples: a slow kernel must not hold the worker past its
  // deadline.
  if (wall_seconds > settings_.max_seconds) return StopReason::max_time;
  return StopReason::keep_going;
}

bool is_throttled(const ClockReading& reading, unsigned max_sm_mhz) noexcept {
  if (reading.event_reasons && (*reading.event_reasons & kThrottleEventReasons) != 0) return true;
  // A clock that NVML says is low because the GPU was idle (between two samples) is not a
  // throttle: the kernel itself ran at the clock it was given.
  if (reading.event_reasons && (*reading.event_reasons & kGpuIdleEventReason) != 0) return false;
  if (max_sm_mhz == 0 || reading.sm_mhz == 0) return false;
  return static_cast<double>(reading.sm_mhz) < kThrottleClockFraction * static_cast<double>(max_sm_mhz);
}

}  // namespace tiletune
