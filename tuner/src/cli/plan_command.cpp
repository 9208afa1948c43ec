// `tiletune plan`: compile a space for a target arch without a GPU and print, per config,
// registers, shared memory, spills, occupancy and status, then a summary.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/plan_output.hpp"
#include "tiletune/device.hpp"
#include "tiletune/plan.hpp"
#include "tiletune/validate.hpp"

namespace tiletune::cli {

std::map<std::string, Format> format_names() {
  return {{"table", Format::table}, {"csv", Format::csv}, {"json", Format::json}};
}

bool stderr_is_tty() { return ::isatty(STDERR_FILENO) == 1; }

std::filesystem::path default_space_path() {
  // Installed layout: <prefix>/bin/tiletune and <prefix>/share/tiletune/configs.
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto installed = exe.parent_path().parent_path() / "share" / "tiletune" / "configs" / "transpose.yaml";
    if (std::filesystem::exists(installed, ec)) return installed;
  }
  return std::filesystem::path(TILETUNE_SOURCE_DIR) / "configs" / "transpose.yaml";
}

DeviceLimits resolve_target(const std::string& arch_text, bool quiet) {
  if (!arch_text.empty()) {
    const int arch = parse_arch(arch_text);
    auto limits = builtin_device_limits(arch);
    if (!limits) {
      std::string known;
      for (int a : builtin_archs()) known += fmt::format("{}sm_{}", known.empty() ? "" : ", ", a);
      throw Error(fmt::format("--arch {}: no device limits for sm_{} (known: {})", arch_text, arch, known));
    }
    return *limits;
  }
  std::vector<DeviceInfo> devices = list_devices();
  if (!devices.empty()) return device_limits(devices.front());
  if (!quiet) std::cerr << "tiletune: no CUDA device present: planning for sm_90 (the H200); use --arch to choose\n";
  return *builtin_device_limits(90);
}

PlanRunOptions::PlanRunOptions() : format("table") {}

void add_plan_options(CLI::App& cmd, PlanRunOptions& o) {
  cmd.add_option("--size", o.sizes, "Problem size NAME=VALUE (repeatable); other sizes take their first value")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false)  // one value per --size: `--size N=1 SPACE` leaves SPACE alone
      ->check(size_assignment(0));
  cmd.add_option("--threads", o.threads,
                 fmt::format("Compile threads, 1 to {} (default, or 0: one per core)", max_compile_threads))
      ->check(whole_number_in(0, max_compile_threads));
  cmd.add_option("--cubin-cache", o.cubin_cache,
                 "Compiled-kernel cache (default: $TILETUNE_CUBIN_CACHE, else ~/.cache/tiletune/cubin or XDG's)");
  cmd.add_flag("--no-cubin-cache", o.no_cache, "Compile everything, read and write no cubin cache");
  cmd.add_flag("--quiet,-q", o.quiet, "No progress and no notes on stderr");
  cmd.add_option("--shard", o.shard,
                 "Only shard I of N (a hash of each config's params); auto: from Slurm, Open MPI, PMIx or srun")
      ->type_name("I/N|auto")
      ->check(shard_text());
}

namespace {

// A guess of one compile's wall time on one thread (35-100 ms for a small kernel to sm_90 CUBIN on
// the H200's host, more on a loaded laptop), for the line that says how long a plan will take.
constexpr double kSecondsPerCompile = 0.08;
// A plan expected to take longer says so before it starts, and, where stderr is not a terminal
// (no progress bar), prints a progress line this often; a shorter one prints no line (a program
// that reads stdout and stderr together gets the plan alone).
constexpr double kAnnounceSeconds = 10;
constexpr double kProgressLineSeconds = 5;

// Where a note about the space's size points: its first param, else the file.
std::string space_place(const Space& space) {
  if (!space.params.empty() && space.params.front().where.line > 0) return space.params.front().where.str();
  return space.yaml_path.string();
}

// The notes a plan prints before it compiles: a default sample of a space past --max-configs,
// and how long it will take when that is more than kAnnounceSeconds. Returns whether it said so.
bool announce(const Space& space, const PlanRunOptions& o, const PlanStart& start) {
  if (start.sampled_by_default)
    std::cerr << fmt::format(
        "{}: note: {}{} configs after constraints, more than the {} a plan compiles (--max-configs): planning a "
        "uniform sample of {} (--sample K plans 1 in K; --max-configs N raises the limit)\n",
        space_place(space), start.in_shard_exact ? "" : "~", start.in_shard, o.max_configs, start.to_compile);
  const double seconds = static_cast<double>(start.to_compile) * kSecondsPerCompile / std::max(1u, start.threads);
  if (seconds < kAnnounceSeconds) return false;
  std::cerr << fmt::format("plan: compiling up to {} configs on {} threads, about {:.0f} s (cubins compiled before "
                           "are reused)\n",
                           start.to_compile, start.threads, seconds);
  return true;
}

// Progress on stderr: a bar that rewrites itself on a terminal, else, for a plan announced as long
// (*announced), a line every few seconds.
std::function<void(std::size_t, std::size_t)> progress_printer(std::shared_ptr<const bool> announced) {
  if (stderr_is_tty()) {
    return [](std::size_t done, std::size_t total) {
      std::cerr << fmt::format("\rplanning: {}/{} configs", done, total) << std::flush;
      if (done == total) std::cerr << "\r\033[K" << std::flush;
    };
  }
  const auto start = std::chrono::steady_clock::now();
  auto last = std::make_shared<double>(0);
  return [start, last, announced](std::size_t done, std::size_t total) {
    if (!*announced) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (done == total || elapsed - *last < kProgressLineSeconds) return;
    *last = elapsed;
    std::cerr << fmt::format("planning: {}/{} configs ({:.0f} s)\n", done, total, elapsed);
  };
}

}  // namespace

Plan run_plan(const Space& space, const PlanRunOptions& o) {
  PlanOptions options;
  options.problem = checked_problem(space, o.sizes);  // a usage error before any note or work
  options.shard = resolve_shard(o.shard);
  options.sample_every = o.sample_every;
  options.max_configs = o.max_configs;
  try {
    check_plan_size(space, options);  // a usage error before any note or work
  } catch (const PlanTooLarge& e) {
    throw UsageError(e.what());
  }
  options.device = resolve_target(o.arch, o.quiet);
  options.threads = o.threads;
  options.compiler = compile_workers();
  std::optional<CubinCache> cache;
  if (!o.no_cache) {
    cache.emplace(o.cubin_cache.empty() ? CubinCache::default_directory() : std::filesystem::path(o.cubin_cache));
    options.cache = &*cache;
  }
  validate_inputs_and_checks(space, {fmt::format("sm_{}", options.device.arch()), options.cache});
  if (!o.quiet) {
    auto announced = std::make_shared<bool>(false);
    options.progress = progress_printer(announced);
    options.on_start = [&space, &o, announced](const PlanStart& start) { *announced = announce(space, o, start); };
  }
  return plan_space(space, options);
}

// 4 when configs were compiled and none compiled, with the most common reason on stderr; 3 with
// --strict when some failed; else 0.
int plan_exit_status(const Space& space, const Plan& plan, bool strict) {
  const PlanSummary& s = plan.summary;
  if (s.compile_failed > 0 && s.compiled_ok == 0) {
    const auto common = most_common_failure(plan);
    std::cerr << fmt::format(
        "tiletune: plan: no config of {} compiled ({} failed); most common reason ({} of {}): {}\n", space.kernel,
        s.compile_failed, common ? common->configs : 0, s.compile_failed, common ? common->reason : "?");
    return exit_no_result;
  }
  if (strict && s.compile_failed > 0) return exit_compile_failures;
  return exit_ok;
}

Runner add_plan_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("plan", "Compile a search space and show resources and occupancy (no GPU needed)");
  auto o = std::make_shared<PlanRunOptions>();
  cmd->add_option("space", o->space, "Search space (YAML)")->required()->check(CLI::ExistingPath);
  cmd->add_option("--arch", o->arch,
                  "Target: sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_120 (default: the first GPU's, else sm_90)")
      ->check(known_arch());
  add_plan_options(*cmd, *o);
  cmd->add_option("--format", o->format, "Output: table, csv or json")->check(CLI::IsMember({"table", "csv", "json"}));
  cmd->add_option("--sample", o->sample_every,
                  "Plan every K-th config after constraints, 1 to 10^9 (past 2^20 configs: 1 in K, uniformly)")
      ->check(whole_number_in(1, 1'000'000'000));
  cmd->add_option("--max-configs", o->max_configs,
                  fmt::format("The most configs to compile, 0 to 10^9 (default {}; 0: no limit); past it, a uniform "
                              "sample of {}, or with --sample an error",
                              plan_default_max_configs, plan_default_sample))
      ->check(whole_number_in(0, 1'000'000'000));
  cmd->add_flag("--strict", o->strict, "Exit with status 3 when any config fails to compile");
  cmd->add_flag("--logs", o->show_logs, "Print the NVRTC log of each failed compile and each warning of the others");
  cmd->footer(help_footer("plan", R"(Examples:
  tiletune plan configs/transpose.yaml --arch sm_80 --size N=4096 --format json > plan.json
  tiletune plan configs/matmul.yaml --sample 20 --strict --logs   every 20th config; exit 3 on errors)",
                          {exit_ok, exit_error, exit_usage, exit_compile_failures, exit_no_result}));
  return [o]() {
    Space space = load_space(o->space);
    Plan plan = run_plan(space, *o);
    print_plan(std::cout, space, plan, format_names().at(o->format));
    if (o->show_logs) print_compile_logs(std::cerr, space, plan);
    return plan_exit_status(space, plan, o->strict);
  };
}

}  // namespace tiletune::cli
