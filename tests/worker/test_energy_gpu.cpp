// On a GPU: NVML is there for device 0, and its counters move. Prints the sampling limits (the
// update interval and step of the energy counter, the power reading's interval) for docs/guides/energy.md:
// the same numbers `tiletune nvml` prints.
#include <gtest/gtest.h>

#include <cstdio>

#include "tiletune/device.hpp"
#include "tiletune/energy.hpp"

namespace tiletune {
namespace {

TEST(NvmlGpu, CountersMoveAndTheirLimitsArePrinted) {
  const std::vector<DeviceInfo> devices = list_devices();
  ASSERT_FALSE(devices.empty());
  std::string why;
  auto source = NvmlEnergySource::open(devices[0].uuid, why);
  ASSERT_NE(source, nullptr) << why;
  const NvmlSampling s = probe_nvml_sampling(*source, 3.0);
  std::printf(
      "NVML on %s: %llu polls in %.2f s; energy counter %llu updates, median interval %.2f ms, "
      "smallest step %.0f mJ, median step %.0f mJ, mean power %.1f W; power reading %llu updates, "
      "median interval %.2f ms%s%s\n",
      source->device_name().c_str(), static_cast<unsigned long long>(s.polls), s.seconds,
      static_cast<unsigned long long>(s.energy_updates), s.energy_interval_ms, s.energy_min_step_mj,
      s.energy_median_step_mj, s.mean_power_w, static_cast<unsigned long long>(s.power_updates), s.power_interval_ms,
      s.note.empty() ? "" : "; ", s.note.c_str());
  EXPECT_GT(s.energy_updates, 0u) << s.note;
  EXPECT_GT(s.mean_power_w, 10.0);
}

}  // namespace
}  // namespace tiletune
