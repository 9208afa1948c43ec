// Power and energy of a kernel, measured through NVML (loaded at run time with dlopen, like the
// CUDA driver): the settings a sweep hands the worker, what comes back, and the measuring loop
// itself, which is pure logic over an energy counter and a "run the kernel n times" callback so
// that it is tested on the CPU (with a fake NVML library and fake kernels).
//
// Method: the kernel runs back to back in batches of a few milliseconds; the loop waits for
// the board's energy counter to tick (an edge), then runs until the counter has ticked again at
// least min_seconds later. The energy between the two edges over the runs completed between
// them is the energy per run; over the wall time between them, the mean power. Aligning both
// ends to counter updates removes the counter's update interval from the error; what is left is
// one batch of runs per edge. A GPU without an energy counter (before Volta) falls back to
// sampling the power reading after every batch and integrating it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "tiletune/timing.hpp"

namespace tiletune {

/// Whether and how long to measure energy per trial (sent to the worker with each request).
struct EnergySettings {
  bool enabled = false;
  double min_seconds = 0.2;  ///< at least this long between the two counter edges
  double max_seconds = 3.0;  ///< give up (no energy for this trial) after this long
  friend bool operator==(const EnergySettings&, const EnergySettings&) = default;
};

/// One trial's energy: per run, and the mean power while it ran back to back.
struct EnergyMeasurement {
  double energy_mj = 0;             ///< millijoules per run
  double power_w = 0;               ///< mean board power over the window
  std::int64_t runs = 0;            ///< runs between the two edges
  double window_seconds = 0;        ///< wall time between the two edges
  bool from_power_samples = false;  ///< no energy counter: integrated power readings
};

/// What the measuring loop reads: the board's cumulative energy (mJ) and its power (mW).
/// Either may be unsupported (nullopt with the reason); a failure throws Error.
class EnergySource {
 public:
  virtual ~EnergySource() = default;
  [[nodiscard]] virtual std::optional<std::uint64_t> total_energy_mj() = 0;
  [[nodiscard]] virtual std::optional<unsigned> power_mw() = 0;
};

/// Runs `run_batch(n)` (launch the kernel n times or more, return how many times: the GPU's runner
/// tops its queue up to several batches, so that the GPU stays busy while the counter is polled,
/// and returns while they run) until the counter has
/// ticked twice at least settings.min_seconds apart; run_ms (the kernel's median time) sizes
/// the batches. nullopt, with the reason in *why, when neither counter nor power reading
/// moved within settings.max_seconds. Throws what run_batch or the source throw.
[[nodiscard]] std::optional<EnergyMeasurement> measure_energy(
    EnergySource& source, const std::function<std::int64_t(std::int64_t)>& run_batch, double run_ms,
    const EnergySettings& settings, std::string* why = nullptr);

/// NVML's view of one GPU, found by its UUID: its energy and power, and its SM clock for the
/// throttle check of timing samples. Holds the loaded library (nvmlInit_v2 on open,
/// nvmlShutdown and dlclose on destruction).
class NvmlEnergySource final : public EnergySource {
 public:
  /// Loads `library` (default: $TILETUNE_NVML_LIBRARY, else libnvidia-ml.so.1) and finds the
  /// device. nullptr, with the reason in why, when NVML or the device is not there.
  [[nodiscard]] static std::unique_ptr<NvmlEnergySource> open(const std::string& device_uuid, std::string& why,
                                                              const std::string& library = {});
  ~NvmlEnergySource() override;
  NvmlEnergySource(const NvmlEnergySource&) = delete;
  NvmlEnergySource& operator=(const NvmlEnergySource&) = delete;

  [[nodiscard]] std::optional<std::uint64_t> total_energy_mj() override;
  [[nodiscard]] std::optional<unsigned> power_mw() override;
  /// The current SM clock and clock-event reasons; nullopt where this NVML cannot say.
  [[nodiscard]] std::optional<ClockReading> sm_clock();
  /// The current memory clock (NVML_CLOCK_MEM), MHz; nullopt where this NVML cannot say.
  [[nodiscard]] std::optional<unsigned> memory_clock_mhz();
  /// The GPU die's temperature (NVML_TEMPERATURE_GPU), degrees Celsius; nullopt where this NVML
  /// cannot say.
  [[nodiscard]] std::optional<unsigned> temperature_c();
  /// nvmlDeviceGetName, for messages ("NVIDIA H200").
  [[nodiscard]] std::string device_name() const;

  struct Impl;

 private:
  explicit NvmlEnergySource(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// The library NVML is loaded from: $TILETUNE_NVML_LIBRARY, else libnvidia-ml.so.1.
[[nodiscard]] std::string nvml_library_name();

/// How often NVML's counters change and by how much, seen by polling them for `seconds`
/// (`tiletune nvml` prints it). The counter's step is its resolution at the
/// board's current power; the interval its update period.
struct NvmlSampling {
  std::string device_name;
  double seconds = 0;                ///< how long it polled
  std::uint64_t polls = 0;           ///< reads of each counter
  std::uint64_t energy_updates = 0;  ///< times the energy counter changed
  double energy_interval_ms = 0;     ///< median time between its changes
  double energy_min_step_mj = 0;     ///< smallest change seen
  double energy_median_step_mj = 0;
  std::uint64_t power_updates = 0;  ///< times the power reading changed
  double power_interval_ms = 0;     ///< median time between its changes
  double mean_power_w = 0;          ///< median over the counter's updates of step / interval
  std::string note;                 ///< a counter that is not supported, ...
};
[[nodiscard]] NvmlSampling probe_nvml_sampling(EnergySource& source, double seconds);

}  // namespace tiletune
