// `tiletune nvml`: NVML's sampling limits on a GPU (how often its energy counter and power
// reading change, and by how much), the numbers docs/guides/energy.md quotes.
#include <fmt/format.h>

#include <iostream>

#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "tiletune/device.hpp"
#include "tiletune/energy.hpp"
#include "tiletune/error.hpp"

namespace tiletune::cli {

Runner add_nvml_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("nvml", "Measure NVML's energy counter resolution and update interval on a GPU");
  auto device = std::make_shared<int>(0);
  auto seconds = std::make_shared<double>(3.0);
  cmd->add_option("--device", *device, "CUDA device ordinal (default 0)")->check(whole_number_in(0, 1023));
  cmd->add_option("--seconds", *seconds, "How long to poll the counters (default 3)")->check(finite_in(0.1, 600.0));
  cmd->footer(help_footer("nvml", "Example:\n  tiletune nvml --seconds 5      on an idle GPU, then while a sweep runs",
                          {exit_ok, exit_error, exit_usage}));
  return [device, seconds]() {
    const std::vector<DeviceInfo> devices = list_devices();
    if (*device >= static_cast<int>(devices.size()))
      throw Error(fmt::format("--device {}: there are {} CUDA devices", *device, devices.size()));
    const DeviceInfo& d = devices[static_cast<std::size_t>(*device)];
    std::string why;
    auto source = NvmlEnergySource::open(d.uuid, why);
    if (!source) throw Error(fmt::format("NVML is not available for {} ({}): {}", d.name, d.uuid, why));
    const NvmlSampling s = probe_nvml_sampling(*source, *seconds);
    std::cout << fmt::format("{} ({}), NVML polled {} times in {:.2f} s\n", source->device_name(), d.uuid, s.polls,
                             s.seconds);
    std::cout << fmt::format(
        "energy counter: {} updates, median interval {:.2f} ms, steps: smallest {:.0f} mJ, "
        "median {:.0f} mJ; mean power {:.1f} W\n",
        s.energy_updates, s.energy_interval_ms, s.energy_min_step_mj, s.energy_median_step_mj, s.mean_power_w);
    std::cout << fmt::format("power reading: {} updates, median interval {:.2f} ms\n", s.power_updates,
                             s.power_interval_ms);
    if (!s.note.empty()) std::cout << "note: " << s.note << '\n';
    return exit_ok;
  };
}

}  // namespace tiletune::cli
