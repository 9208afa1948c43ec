// Shared pieces of `plan` and `tune`: their options and how a plan is printed (through the
// printers of tiletune/printer.hpp).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "tiletune/plan.hpp"

namespace tiletune::cli {

struct PlanRunOptions {
  PlanRunOptions();
  std::string space;
  std::string arch;
  std::vector<std::string> sizes;
  unsigned threads = 0;
  std::string cubin_cache;
  bool no_cache = false;
  bool quiet = false;
  std::string format;
  bool strict = false;
  bool show_logs = false;
  std::uint64_t sample_every = 1;
  std::uint64_t max_configs = plan_default_max_configs;  ///< --max-configs (0: no limit)
  std::string shard;  ///< --shard: empty (all), I/N or auto
};

void add_plan_options(CLI::App& cmd, PlanRunOptions& options);
[[nodiscard]] DeviceLimits resolve_target(const std::string& arch, bool quiet);
[[nodiscard]] Plan run_plan(const Space& space, const PlanRunOptions& options);

void print_plan(std::ostream& out, const Space& space, const Plan& plan, Format format);
void print_compile_logs(std::ostream& out, const Space& space, const Plan& plan);

}  // namespace tiletune::cli
