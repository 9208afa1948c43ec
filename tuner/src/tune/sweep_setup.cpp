// What a sweep settles before its first trial (run_sweep in sweep.cpp): the budget's text, the
// kernel's and devices' rows, the checks that need no worker, the schedule of its problems.
#include "tiletune/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "tune/sweep_stages.hpp"
#include "tiletune/replay.hpp"
#include "tiletune/strategy.hpp"
#include "tiletune/validate.hpp"
#include "tiletune/worker.hpp"

namespace tiletune {

SweepBudget parse_budget(const std::string& text) {
  SweepBudget b;
  if (text.empty()) return b;
  double value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  auto [end, ec] = std::from_chars(first, last, value);
  const std::string unit(end, last);
  if (ec != std::errc() || !(value > 0) || !std::isfinite(value))
    throw Error(
        fmt::format("--budget '{}': expected a count (200), a share of the space (25%) or a time (90s, 10m)", text));
  if (unit.empty()) {
    if (value != std::floor(value)) throw Error(fmt::format("--budget '{}': a trial count is a whole number", text));
    b.evaluations = static_cast<std::uint64_t>(value);
  } else if (unit == "%") {
    if (value > 100) throw Error(fmt::format("--budget '{}': a share of the space is at most 100%", text));
    b.fraction = value / 100.0;
  } else if (unit == "s") {
    b.seconds = value;
  } else if (unit == "m" || unit == "min") {
    b.seconds = value * 60;
  } else if (unit == "h") {
    b.seconds = value * 3600;
  } else {
    throw Error(fmt::format("--budget '{}': unknown unit '{}' (use %, s, m or h)", text, unit));
  }
  return b;
}

KernelRecord kernel_record(const Space& space, const KernelSource& source, int arch) {
  KernelRecord k;
  k.name = space.kernel;
  k.source_hash = source.hash;  // the source and every header it may include, by content
  // The options NVRTC gets, defaults included, with include directories by their role (the
  // same in every checkout); the params' -DNAME=value are the trial's key, not the version's.
  const CompileRequest request{&source, space_options(space), fmt::format("sm_{}", arch), space.entry};
  std::string options;
  for (const std::string& o : key_options(request)) options += (options.empty() ? "" : " ") + o;
  // Problem sizes as -D and ${} in options are values of the trial's problem and config; the
  // version records that they are passed.
  k.options = options + (space.problem_defines ? " problem_defines" : "") + " entry=" + space.entry;
  k.nvrtc_version = nvrtc_version();
  return k;
}

namespace sweep_detail {

DeviceRecord device_record(const DeviceInfo& d, std::optional<double> copy_gbps) {
  DeviceRecord r;
  r.uuid = d.uuid;
  r.name = d.name;
  r.cc_major = d.cc_major;
  r.cc_minor = d.cc_minor;
  r.sm_count = d.sm_count;
  r.memory_bytes = static_cast<std::int64_t>(d.total_memory);
  r.l2_bytes = static_cast<std::int64_t>(d.l2_bytes);
  r.driver_version = d.driver_version;
  r.copy_gbps = copy_gbps;  // nullopt keeps what the cache has
  if (d.sm_clock_khz > 0) r.sm_clock_khz = d.sm_clock_khz;
  return r;
}

/// Checks what needs no worker: each device's description and the objective's NVML on it, and
/// the space's inputs and checks once per architecture. Returns the energy settings the trials get.
EnergySettings check_before_work(const Space& space, const SweepOptions& options,
                                 const std::vector<DeviceInfo>& devices) {
  EnergySettings energy = options.energy;
  std::set<int> archs_checked;
  for (const DeviceInfo& device : devices) {
    if (device.uuid.empty() || device.arch() == 0)
      throw Error(
          "run_sweep: no device described (SweepOptions::device, from list_devices(); a sweep needs a GPU, "
          "`tiletune plan` needs none)");
    // An impossible check or input is the space's error: say so before any GPU work.
    if (archs_checked.insert(device.arch()).second)
      validate_inputs_and_checks(space, {fmt::format("sm_{}", device.arch()), options.cubin_cache});
    check_device_memory(space, device.total_memory, fmt::format("device {} ({})", device.ordinal, device.name));
    if (options.objective != Objective::time) {
      // Fail before measuring anything: a search for the least energy without energy is no search.
      std::string why;
      if (!NvmlEnergySource::open(device.uuid, why))
        throw Error(fmt::format("--objective {} needs NVML on {} ({}): {}", objective_name(options.objective),
                                device.name, device.uuid, why));
      energy.enabled = true;
    }
  }
  return energy;
}

SweepSchedule schedule_sweep(const SweepOptions& options, const std::vector<ProblemWork>& work, std::size_t devices,
                             SweepReport& report) {
  DomainSize unknown{0, true, 0};
  for (const ProblemWork& w : work) {
    const DomainSize size = w.space.domain.size_info();
    unknown = add_sizes(unknown, DomainSize{w.unknown, size.exact, size.relative_error});
  }
  const SweepSchedule schedule =
      sweep_schedule(options.strategy, options.budget, options.seed,
                     ConfirmPlan{options.confirm_finalists, options.confirm_rounds, options.confirm_ties}, work.size(), unknown, devices);
  report.estimated_seconds = schedule.estimated_seconds;
  report.strategy = schedule.choice.strategy;
  report.default_budget = schedule.choice.default_budget;
  return schedule;
}

ProblemSchedule schedule_problem(const Space& space, const SweepOptions& options, const SweepSchedule& schedule,
                                 const ProblemWork& work, std::size_t p, double elapsed_seconds) {
  ProblemSchedule ps = problem_schedule(schedule, p, work.space.domain.size(), elapsed_seconds);
  ps.warm_start = warm_start_of(options.warm_start, space, work.canonical, work.space);
  return ps;
}

/// Trials this run may measure on a problem: what the budget allows of what is not known.
std::uint64_t problem_limit(const SearchBudget& budget, const ProblemWork& work) {
  return budget.evaluations ? std::min(work.unknown, *budget.evaluations) : work.unknown;
}

}  // namespace sweep_detail

}  // namespace tiletune
