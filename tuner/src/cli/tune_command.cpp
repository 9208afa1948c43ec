// `tiletune tune`: a tuning sweep of a space on a GPU. Without a CUDA device it says so and
// plans the same space instead, so the command is useful (and testable) everywhere.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/plan_output.hpp"
#include "gpu/driver.hpp"
#include "tiletune/device.hpp"

namespace tiletune::cli {

Runner add_tune_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("tune", "Run a tuning sweep on the GPU (plans the space when there is no GPU)");
  auto o = std::make_shared<PlanRunOptions>();
  cmd->add_option("space", o->space, "Search space (YAML); default: the shipped configs/transpose.yaml")
      ->check(CLI::ExistingPath);
  add_plan_options(*cmd, *o);
  cmd->add_option("--arch", o->arch, "Architecture to plan for when no GPU is present (default sm_90)");
  cmd->footer(R"(Examples:
  tiletune tune                                   the shipped transpose space
  tiletune tune configs/transpose.yaml --size N=8192

Without a CUDA device, tune says so and runs `plan` on the same space.)");
  return [o]() {
    if (o->space.empty()) o->space = default_space_path().string();
    Space space = load_space(o->space);
    if (cu::device_count() == 0) {
      std::cout << fmt::format("no CUDA device present ({}): running `plan` on {} instead\n",
                               cu::driver_unavailable_reason(), o->space);
    } else {
      std::cout << "tiletune: measuring on the GPU is not built yet: running `plan` on " << o->space << "\n";
    }
    Plan plan = run_plan(space, *o);
    print_plan(std::cout, space, plan, Format::table);
    return 0;
  };
}

Runner add_devices_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "List the CUDA devices");
  auto format = std::make_shared<std::string>("table");
  cmd->add_option("--format", *format, "Output: table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->footer("Example:\n  tiletune devices --format json");
  return [format]() {
    std::vector<DeviceInfo> devices = list_devices();
    if (devices.empty()) {
      std::cout << fmt::format("no CUDA device present ({})\n", cu::driver_unavailable_reason());
      return 0;
    }
    for (const DeviceInfo& d : devices) {
      std::cout << fmt::format(
          "{}: {} ({}) sm_{}{}, {} SMs, {:.1f} GiB, L2 {} MiB, shared {}/{} KiB per block (opt-in), {} KiB per SM, "
          "SM clock {} MHz, driver {}\n",
          d.ordinal, d.name, d.uuid, d.cc_major, d.cc_minor, d.sm_count, double(d.total_memory) / (1 << 30),
          d.l2_bytes >> 20, d.shared_per_block >> 10, d.shared_per_block_optin >> 10, d.shared_per_sm >> 10,
          d.sm_clock_khz / 1000, format_driver_version(d.driver_version));
    }
    return 0;
  };
}

}  // namespace tiletune::cli
