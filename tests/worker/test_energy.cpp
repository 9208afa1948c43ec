// Every NVML code path on the CPU, against fake NVML libraries built here (fake_nvml.c): loading
// (missing library, missing functions, init and device failures), the edge-aligned measuring
// loop (against a board of known power), the power-sampling fallback, the failures inside the
// loop, NVML's sampling probe, and the energy fields across the worker protocol.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "tiletune/energy.hpp"
#include "tiletune/error.hpp"
#include "tiletune/worker.hpp"

namespace tiletune {
namespace {

constexpr const char* kUuid = "GPU-dc2af457-36c6-6b6a-4522-234063d451fe";

// Sets the fake's variables for one test and clears them after.
class FakeNvml : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    for (const char* v : {"FAKE_NVML_INIT_FAIL", "FAKE_NVML_NO_DEVICE", "FAKE_NVML_NO_ENERGY", "FAKE_NVML_NO_POWER",
                          "FAKE_NVML_ENERGY_LOST", "FAKE_NVML_POWER_MW", "FAKE_NVML_UPDATE_MS", "FAKE_NVML_SM_MHZ",
                          "FAKE_NVML_CLOCK_REASONS", "FAKE_NVML_MEM_MHZ", "FAKE_NVML_TEMPERATURE_C"})
      ::unsetenv(v);
  }
  static void set(const char* name, const char* value) { ::setenv(name, value, 1); }
  static std::unique_ptr<NvmlEnergySource> open(std::string& why, const char* library = FAKE_NVML_LIBRARY) {
    return NvmlEnergySource::open(kUuid, why, library);
  }
};

// A "kernel" that takes 50 µs a run.
std::int64_t sleep_runs(std::int64_t runs) {
  std::this_thread::sleep_for(std::chrono::microseconds(50 * runs));
  return runs;
}

TEST_F(FakeNvml, AMissingLibraryIsAReasonNotAFailure) {
  std::string why;
  EXPECT_EQ(open(why, "/nonexistent/libnvidia-ml.so.1"), nullptr);
  EXPECT_NE(why.find("cannot load /nonexistent/libnvidia-ml.so.1"), std::string::npos) << why;
}

TEST_F(FakeNvml, ALibraryWithoutTheEnergyFunctionIsNamed) {
  std::string why;
  EXPECT_EQ(open(why, FAKE_NVML_INCOMPLETE_LIBRARY), nullptr);
  EXPECT_NE(why.find("lacks NVML functions tiletune needs: nvmlDeviceGetTotalEnergyConsumption"), std::string::npos)
      << why;
}

TEST_F(FakeNvml, InitAndDeviceFailuresCarryNvmlsWords) {
  std::string why;
  set("FAKE_NVML_INIT_FAIL", "1");
  EXPECT_EQ(open(why), nullptr);
  EXPECT_NE(why.find("nvmlInit_v2 failed: Unknown Error (NVML code 999)"), std::string::npos) << why;
  clear();
  set("FAKE_NVML_NO_DEVICE", "1");
  EXPECT_EQ(open(why), nullptr);
  EXPECT_NE(why.find(std::string("nvmlDeviceGetHandleByUUID(") + kUuid + ") failed: Not Found"), std::string::npos)
      << why;
}

TEST_F(FakeNvml, TheLibraryNameComesFromTheEnvironment) {
  ::unsetenv("TILETUNE_NVML_LIBRARY");
  EXPECT_EQ(nvml_library_name(), "libnvidia-ml.so.1");
  ::setenv("TILETUNE_NVML_LIBRARY", FAKE_NVML_LIBRARY, 1);
  EXPECT_EQ(nvml_library_name(), FAKE_NVML_LIBRARY);
  std::string why;
  EXPECT_NE(NvmlEnergySource::open(kUuid, why), nullptr) << why;
  ::unsetenv("TILETUNE_NVML_LIBRARY");
}

// The clock check of timing samples reads NVML's SM clock and clock-event reasons; the runner
// classifies them with is_throttled (test_timing.cpp).
TEST_F(FakeNvml, ReadsTheSmClockAndItsEventReasons) {
  std::string why;
  set("FAKE_NVML_SM_MHZ", "1410");
  set("FAKE_NVML_CLOCK_REASONS", "32");  // SW thermal slowdown
  auto nvml = open(why);
  ASSERT_NE(nvml, nullptr) << why;
  const std::optional<ClockReading> reading = nvml->sm_clock();
  ASSERT_TRUE(reading.has_value());
  EXPECT_EQ(reading->sm_mhz, 1410u);
  ASSERT_TRUE(reading->event_reasons.has_value());
  EXPECT_EQ(*reading->event_reasons, 32u);
  EXPECT_TRUE(is_throttled(*reading, 1980));
  set("FAKE_NVML_SM_MHZ", "1980");
  set("FAKE_NVML_CLOCK_REASONS", "4");  // the software power cap alone is not throttling
  EXPECT_FALSE(is_throttled(*nvml->sm_clock(), 1980));
}

// A trial's conditions beside its times: the memory clock and the temperature (Kernel Tuner's
// NVMLObserver mem_freq and temperature).
TEST_F(FakeNvml, ReadsTheMemoryClockAndTheTemperature) {
  std::string why;
  set("FAKE_NVML_MEM_MHZ", "2619");
  set("FAKE_NVML_TEMPERATURE_C", "63");
  auto nvml = open(why);
  ASSERT_NE(nvml, nullptr) << why;
  EXPECT_EQ(nvml->memory_clock_mhz(), 2619u);
  EXPECT_EQ(nvml->temperature_c(), 63u);
}

TEST_F(FakeNvml, MeasuresTheBoardsPowerAndTheEnergyPerRun) {
  set("FAKE_NVML_POWER_MW", "250000");
  set("FAKE_NVML_UPDATE_MS", "10");
  std::string why;
  auto source = open(why);
  ASSERT_NE(source, nullptr) << why;
  EXPECT_EQ(source->device_name(), "Fake GPU");
  EnergySettings s;
  s.enabled = true;
  s.min_seconds = 0.2;
  s.max_seconds = 3.0;
  std::int64_t runs = 0;
  const auto m = measure_energy(
      *source,
      [&](std::int64_t n) {
        runs += n;
        return sleep_runs(n);
      },
      0.05, s, &why);
  ASSERT_TRUE(m) << why;
  EXPECT_FALSE(m->from_power_samples);
  EXPECT_GE(m->window_seconds, 0.2);
  EXPECT_LE(m->runs, runs);
  // Both ends sit on counter updates, so the power is the board's to within a batch (2 ms of 200+;
  // the margin is for a loaded CI machine that polls late).
  EXPECT_NEAR(m->power_w, 250.0, 250.0 * 0.08);
  EXPECT_NEAR(m->energy_mj, m->power_w * m->window_seconds * 1000.0 / double(m->runs), 1e-9 * m->energy_mj);
  // A run of 50 µs plus the sleep's overhead at 250 W: between 12.5 and 40 mJ.
  EXPECT_GT(m->energy_mj, 12.5);
  EXPECT_LT(m->energy_mj, 40.0);
}

TEST_F(FakeNvml, WithoutAnEnergyCounterPowerIsSampled) {
  set("FAKE_NVML_NO_ENERGY", "1");
  std::string why;
  auto source = open(why);
  ASSERT_NE(source, nullptr) << why;
  EnergySettings s;
  s.min_seconds = 0.05;
  const auto m = measure_energy(*source, sleep_runs, 0.05, s, &why);
  ASSERT_TRUE(m) << why;
  EXPECT_TRUE(m->from_power_samples);
  EXPECT_NEAR(m->power_w, 300.0, 1.0);
  EXPECT_NEAR(m->energy_mj, m->power_w * m->window_seconds * 1000.0 / double(m->runs), 1e-9 * m->energy_mj);
}

TEST_F(FakeNvml, NeitherCounterNorPowerIsAReason) {
  set("FAKE_NVML_NO_ENERGY", "1");
  set("FAKE_NVML_NO_POWER", "1");
  std::string why;
  auto source = open(why);
  ASSERT_NE(source, nullptr);
  EXPECT_FALSE(measure_energy(*source, sleep_runs, 0.05, {}, &why));
  EXPECT_NE(why.find("neither an energy counter nor a power reading"), std::string::npos) << why;
}

TEST_F(FakeNvml, ACounterTooSlowForTheWindowGivesNoMeasurement) {
  set("FAKE_NVML_UPDATE_MS", "5000");
  std::string why;
  auto source = open(why);
  ASSERT_NE(source, nullptr);
  EnergySettings s;
  s.min_seconds = 0.05;
  s.max_seconds = 0.3;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(measure_energy(*source, sleep_runs, 0.05, s, &why));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  EXPECT_NE(why.find("did not tick twice"), std::string::npos) << why;
}

TEST_F(FakeNvml, ALostGpuThrowsNamingTheCall) {
  std::string why;
  auto source = open(why);
  ASSERT_NE(source, nullptr);
  set("FAKE_NVML_ENERGY_LOST", "1");
  try {
    (void)measure_energy(*source, sleep_runs, 0.05, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nvmlDeviceGetTotalEnergyConsumption failed: GPU is lost"), std::string::npos)
        << e.what();
  }
}

TEST_F(FakeNvml, TheProbeSeesTheUpdateIntervalAndTheStep) {
  set("FAKE_NVML_POWER_MW", "300000");
  set("FAKE_NVML_UPDATE_MS", "50");
  std::string why;
  auto source = open(why);
  ASSERT_NE(source, nullptr);
  const NvmlSampling s = probe_nvml_sampling(*source, 1.0);
  // On a loaded machine a poll may come late and miss an update: the energy interval counts a
  // gap over two steps as two intervals and the smallest step is still one update's; the power
  // reading cannot tell a missed change, so its interval is only bounded below.
  EXPECT_GE(s.energy_updates, 10u);
  EXPECT_NEAR(s.energy_interval_ms, 50.0, 10.0);
  EXPECT_DOUBLE_EQ(s.energy_min_step_mj, 15000.0);  // 300 W for 50 ms
  EXPECT_GE(s.power_updates, 5u);
  EXPECT_GE(s.power_interval_ms, 35.0);
  EXPECT_NEAR(s.mean_power_w, 300.0, 30.0);
  EXPECT_TRUE(s.note.empty());
}

TEST(EnergyProtocol, SettingsAndResultsCrossTheWorkerPipe) {
  TrialRequest request;
  request.energy.enabled = true;
  request.energy.min_seconds = 0.25;
  request.energy.max_seconds = 4;
  const TrialRequest back = decode_request(encode_request(request));
  EXPECT_TRUE(back.energy.enabled);
  EXPECT_EQ(back.energy.min_seconds, 0.25);
  EXPECT_EQ(back.energy.max_seconds, 4);
  TrialResult result;
  result.energy_mj = 12.5;
  result.power_w = 410;
  result.energy_note = "cannot load libnvidia-ml.so.1";
  const TrialResult r = decode_result(encode_result(result));
  EXPECT_EQ(r.energy_mj, 12.5);
  EXPECT_EQ(r.power_w, 410);
  EXPECT_EQ(r.energy_note, "cannot load libnvidia-ml.so.1");
}

}  // namespace
}  // namespace tiletune
