// The energy measuring loop and NVML's sampling probe (see tiletune/energy.hpp): pure logic over
// an EnergySource and a callback that runs the kernel, so both run on the CPU in tests.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "tiletune/energy.hpp"

namespace tiletune {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Runs per batch: a few milliseconds of kernel time, so that an edge is placed within one batch
// (the runner keeps several batches queued, so that the GPU does not idle while NVML is polled).
constexpr double kBatchMs = 3.0;
constexpr std::int64_t kMaxBatch = 1 << 20;

std::int64_t batch_size(double run_ms) {
  if (!(run_ms > 0) || !std::isfinite(run_ms)) return 1;
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil(kBatchMs / run_ms)), 1, kMaxBatch);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// No energy counter: the mean of the power readings after each batch, over the whole window.
std::optional<EnergyMeasurement> integrate_power(EnergySource& source,
                                                 const std::function<std::int64_t(std::int64_t)>& run_batch,
                                                 std::int64_t batch, const EnergySettings& settings, std::string* why) {
  const auto start = Clock::now();
  std::int64_t runs = 0;
  double sum_mw = 0;
  std::int64_t readings = 0;
  while (seconds_between(start, Clock::now()) < settings.min_seconds) {
    runs += run_batch(batch);
    const std::optional<unsigned> mw = source.power_mw();
    if (!mw) {
      if (why) *why = "this GPU reports neither an energy counter nor a power reading through NVML";
      return std::nullopt;
    }
    sum_mw += *mw;
    ++readings;
  }
  EnergyMeasurement m;
  m.window_seconds = seconds_between(start, Clock::now());
  m.runs = runs;
  m.power_w = sum_mw / double(readings) / 1000.0;
  m.energy_mj = m.power_w * m.window_seconds * 1000.0 / double(runs);
  m.from_power_samples = true;
  return m;
}

}  // namespace

std::optional<EnergyMeasurement> measure_energy(EnergySource& source,
                                                const std::function<std::int64_t(std::int64_t)>& run_batch,
                                                double run_ms, const EnergySettings& settings, std::string* why) {
  const std::int64_t batch = batch_size(run_ms);
  std::optional<std::uint64_t> last = source.total_energy_mj();
  if (!last) return integrate_power(source, run_batch, batch, settings, why);

  const auto start = Clock::now();
  std::int64_t runs = 0;
  // The first edge: the counter has just changed, so the window starts at an update.
  std::optional<std::uint64_t> e0;
  Clock::time_point t0;
  std::int64_t runs0 = 0;
  while (seconds_between(start, Clock::now()) < settings.max_seconds) {
    runs += run_batch(batch);
    const std::optional<std::uint64_t> now = source.total_energy_mj();
    if (!now) break;
    if (*now == *last) continue;
    last = now;
    const auto t = Clock::now();
    if (!e0) {
      e0 = now;
      t0 = t;
      runs0 = runs;
      continue;
    }
    if (seconds_between(t0, t) < settings.min_seconds) continue;
    if (*now < *e0) break;  // the counter went back (driver reloaded): no measurement
    EnergyMeasurement m;
    m.runs = runs - runs0;
    m.window_seconds = seconds_between(t0, t);
    const double mj = double(*now - *e0);
    m.energy_mj = mj / double(m.runs);
    m.power_w = mj / 1000.0 / m.window_seconds;
    return m;
  }
  if (why)
    *why = fmt::format("NVML's energy counter did not tick twice {:.2f} s apart within {:.1f} s", settings.min_seconds,
                       settings.max_seconds);
  return std::nullopt;
}

NvmlSampling probe_nvml_sampling(EnergySource& source, double seconds) {
  NvmlSampling s;
  std::vector<double> energy_gaps, energy_steps, power_gaps;
  const auto start = Clock::now();
  std::optional<std::uint64_t> first_energy = source.total_energy_mj();
  std::optional<std::uint64_t> last_energy = first_energy;
  std::optional<unsigned> last_power = source.power_mw();
  if (!first_energy) s.note = "no energy counter (nvmlDeviceGetTotalEnergyConsumption is not supported)";
  if (!last_power) s.note += std::string(s.note.empty() ? "" : "; ") + "no power reading";
  Clock::time_point energy_at = start, power_at = start;
  bool energy_seen = false, power_seen = false;  // the first change ends a partial interval
  while (seconds_between(start, Clock::now()) < seconds && (first_energy || last_power)) {
    ++s.polls;
    const auto t = Clock::now();
    if (first_energy) {
      const std::optional<std::uint64_t> e = source.total_energy_mj();
      if (e && *e != *last_energy) {
        ++s.energy_updates;
        if (energy_seen) energy_gaps.push_back(seconds_between(energy_at, t) * 1000.0);
        energy_steps.push_back(double(*e - std::min(*e, *last_energy)));
        energy_seen = true;
        energy_at = t;
        last_energy = e;
      }
    }
    if (last_power) {
      const std::optional<unsigned> p = source.power_mw();
      if (p && *p != *last_power) {
        ++s.power_updates;
        if (power_seen) power_gaps.push_back(seconds_between(power_at, t) * 1000.0);
        power_seen = true;
        power_at = t;
        last_power = p;
      }
    }
  }
  s.seconds = seconds_between(start, Clock::now());
  // A poll that came late may have missed an update: such a gap spans several steps of the
  // counter, and counts as that many intervals.
  // The power of each gap (mJ / ms = W), whose median a late poll hardly moves.
  std::vector<double> powers;
  for (std::size_t i = 0; i < energy_gaps.size(); ++i)
    if (energy_gaps[i] > 0) powers.push_back(energy_steps[i + 1] / energy_gaps[i]);
  if (!energy_steps.empty()) {
    const double step = *std::min_element(energy_steps.begin(), energy_steps.end());
    for (std::size_t i = 0; i < energy_gaps.size(); ++i)
      if (step > 0) energy_gaps[i] /= std::max(1.0, std::round(energy_steps[i + 1] / step));
  }
  s.energy_interval_ms = median(energy_gaps);
  s.energy_median_step_mj = median(energy_steps);
  if (!energy_steps.empty()) s.energy_min_step_mj = *std::min_element(energy_steps.begin(), energy_steps.end());
  s.power_interval_ms = median(power_gaps);
  s.mean_power_w = median(powers);
  return s;
}

}  // namespace tiletune
