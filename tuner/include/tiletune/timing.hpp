// How timing samples are judged, as plain functions of their inputs so that they are tested on
// the CPU: the summary of a set of samples, the stopping criterion (nvbench's "stdrel" rule with
// its noise-plateau exit, or the time limit) and the classification of a sample taken while the
// GPU throttled. GpuRunner (runner.hpp) and bench/bench_kernels.cu drive them.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace tiletune {

/// How samples are taken: warm-up, then samples until StdrelCriterion (timing.hpp: nvbench's
/// stdrel rule) stops them -- the relative standard deviation under max_noise after more than
/// min_samples samples and min_seconds of GPU time, or a noise plateau -- or until max_seconds.
struct TimingSettings {
  bool cold = true;  ///< flush L2 (1x its size) before each sample (else back-to-back, hot)
  int warmup_runs = 1;
  int min_samples = 10;
  double max_noise = 0.02;     ///< relative standard deviation of the samples (nvbench: 0.005)
  double min_seconds = 0.005;  ///< GPU time accumulated before the noise rule may stop
  double max_seconds = 0.5;    ///< stop here whatever the noise (wall time of the sampling loop)
  friend bool operator==(const TimingSettings&, const TimingSettings&) = default;
};

/// Summary of timing samples (milliseconds).
struct TimingStats {
  int samples = 0;
  double median_ms = 0;
  double mean_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  double stddev_ms = 0;  ///< sample standard deviation (n - 1); 0 for one sample
  /// stddev / mean, the relative standard deviation (nvbench's "noise"); +inf with fewer than
  /// kMinSamplesForNoise samples or a mean that is not positive (nothing is known about it).
  double noise = 0;
};

/// Fewer samples than this say nothing about the noise (nvbench's
/// min_samples_for_noise_estimate, 5).
inline constexpr int kMinSamplesForNoise = 5;

/// Median, mean, min, max, standard deviation and noise of `samples_ms`.
/// Empty input gives all zeros and noise = +inf.
[[nodiscard]] TimingStats summarize(std::vector<double> samples_ms);

/// Why sampling stops.
enum class StopReason {
  keep_going,     ///< take another sample
  converged,      ///< > min_samples, > min_seconds of GPU time and noise < max_noise
  noise_plateau,  ///< as converged, but the noise stopped improving above max_noise
  max_time,       ///< the wall time of the loop passed max_seconds
};

/// "converged", "noise plateau", "time limit" (for messages).
[[nodiscard]] const char* stop_reason_name(StopReason reason) noexcept;

/// nvbench's "stdrel" stopping criterion (nvbench/detail/stdrel_criterion.cxx and
/// measure_cold.cu's is_finished), fed one kept sample at a time.
///
/// The same as nvbench:
///  - the noise is the sample standard deviation (n - 1) over the mean of every sample so far,
///    and it is not known (not recorded) below 5 samples;
///  - it stops when it has more than min_samples samples and more than min_seconds of GPU time
///    and the latest noise is under max_noise;
///  - the plateau exit: under the same two conditions, when more than 64 noise values are
///    recorded and the sample count is a multiple of 16, the standard deviation of the last
///    (at most 512) noise values around the latest one, relative to the latest one, is under 5 %:
///    the noise has stopped improving, so more samples would not bring it under max_noise;
///  - the time limit: the wall time of the sampling loop over max_seconds (nvbench's timeout).
/// What differs:
///  - the defaults (TimingSettings): a sweep times hundreds of configs, so min_seconds is 5 ms
///    and max_seconds 0.5 s, where nvbench's min-time is 0.5 s and its timeout 15 s; and
///    max_noise is 2 % where nvbench's is 0.5 %: cold samples of 0.1-0.3 ms kernels have a
///    relative standard deviation of 0.3-1.5 % on the H200, so at 0.5 % half of the transpose
///    configs sampled until the plateau exit or the time limit (timing 10.5 s instead of 0.57 s),
///    while the medians moved by 0.29 % (median over the configs) between the two settings and
///    the winner was the same (bench/results/2026-12-01-h200-noise-and-compile.md);
///  - the mean and variance are kept as running sums (Welford), not recomputed over every
///    sample at each step (the same value up to rounding, in O(1) per sample);
///  - the time limit needs no sample: a loop whose every sample was discarded (throttled)
///    still ends, and the runner says so.
class StdrelCriterion {
 public:
  explicit StdrelCriterion(const TimingSettings& settings) : settings_(settings) {}

  /// One kept sample's GPU time. A throttled sample is not added (nvbench discards it too).
  void add_sample(double ms);
  /// Whether to stop, `wall_seconds` after the sampling loop began.
  [[nodiscard]] StopReason verdict(double wall_seconds) const;

  [[nodiscard]] int samples() const noexcept { return samples_; }
  /// The latest relative standard deviation, +inf while it is not known.
  [[nodiscard]] double noise() const noexcept;

  /// nvbench's plateau constants.
  static constexpr std::size_t kNoiseWindow = 512;
  static constexpr std::size_t kPlateauMinValues = 64;
  static constexpr int kPlateauCheckEvery = 16;
  static constexpr double kPlateauThreshold = 0.05;

 private:
  [[nodiscard]] bool noise_plateaued() const;

  TimingSettings settings_;
  int samples_ = 0;
  double total_seconds_ = 0;
  double mean_ms_ = 0;
  double m2_ = 0;             // sum of squared deviations from the running mean
  std::deque<double> noise_;  // the last kNoiseWindow noise values
};

/// NVML's clock-event reasons (nvmlClocksEventReasons) that mean the clock was pulled down by
/// heat or by the hardware: HW slowdown, SW thermal, HW thermal, HW power brake. The software
/// power cap (0x4) is left out: a GPU at its power limit trims its clock a little in steady
/// state, and a clock that falls far is caught by the clock rule anyway.
inline constexpr std::uint64_t kThrottleEventReasons = 0x8 | 0x20 | 0x40 | 0x80;

/// NVML's GpuIdle clock-event reason: the clock is low because nothing ran.
inline constexpr std::uint64_t kGpuIdleEventReason = 0x1;

/// A sample counts as throttled when the SM clock is below this fraction of its maximum
/// (nvbench's default --throttle-threshold, 75 %).
inline constexpr double kThrottleClockFraction = 0.75;

/// The SM clock read right after a sample (NVML).
struct ClockReading {
  unsigned sm_mhz = 0;                         ///< nvmlDeviceGetClockInfo(NVML_CLOCK_SM)
  std::optional<std::uint64_t> event_reasons;  ///< nvmlDeviceGetCurrentClocksEventReasons, where NVML has it
};

/// Whether a sample taken at `reading` is throttled: the clock under kThrottleClockFraction of
/// `max_sm_mhz` (CU_DEVICE_ATTRIBUTE_CLOCK_RATE, the device's maximum, which is also the
/// reference nvbench compares with), or a reason of kThrottleEventReasons set. A low clock with
/// only the GpuIdle reason (read between samples, while nothing ran) is not throttled, nor is a
/// zero maximum or clock (not known). nvbench measures the clock across the kernel instead.
[[nodiscard]] bool is_throttled(const ClockReading& reading, unsigned max_sm_mhz) noexcept;

}  // namespace tiletune
