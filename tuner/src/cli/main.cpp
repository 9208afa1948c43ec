// tiletune: the command-line tool. A thin layer: parse arguments, call the library, print.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/help_format.hpp"
#include "cli/stdout_errors.hpp"
#include "tiletune/error.hpp"
#include "tiletune/message.hpp"

int main(int argc, char** argv) {
  // With a driver present, NVRTC may serve a repeated compile from the driver's compute cache,
  // and such a hit carries no ptxas report (registers, shared memory, spills). tiletune has its
  // own cubin cache, so the driver's is turned off before NVRTC or the driver is loaded.
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  CLI::App app{"tiletune: a tile-size and launch-config autotuner for CUDA kernels", "tiletune"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tiletune 0.1.0");
  app.formatter(std::make_shared<tiletune::cli::CompactHelp>());  // the commands inherit it
  app.footer(R"(Examples:
  tiletune plan configs/transpose.yaml --arch sm_90     plan a space without a GPU
  tiletune tune configs/transpose.yaml --size N=8192   tune it on the GPU
  tiletune devices                                      list the CUDA devices
  tiletune best                                         the best config per device, kernel, problem
  tiletune show --kernel transpose --status ok          the trials in the result cache
  tiletune merge all.db h200.db a100.db                 merge caches from several machines
  tiletune report -o report.html                        an HTML report of the cache, with plots
  tiletune import-t1 space.json -o space.yaml           a Kernel Tuner / KTT (T1) space as tiletune YAML
  tiletune import-kt-cache A100.json.gz                 a Kernel Tuner cache as a recording to replay

Run `tiletune COMMAND --help` for the options of a command.

)" + std::string(tiletune::cli::exit_status_help) +
             "\nDocs: README.md, docs/ (docs/reference/COMMAND.md for each command)");

  std::vector<std::pair<CLI::App*, tiletune::cli::Runner>> commands;
  auto add = [&](auto adder) {
    auto runner = adder(app);
    commands.emplace_back(app.get_subcommands({}).back(), std::move(runner));
  };
  add(tiletune::cli::add_plan_command);
  add(tiletune::cli::add_tune_command);
  add(tiletune::cli::add_devices_command);
  add(tiletune::cli::add_show_command);
  add(tiletune::cli::add_best_command);
  add(tiletune::cli::add_export_command);
  add(tiletune::cli::add_merge_command);
  add(tiletune::cli::add_diff_command);
  add(tiletune::cli::add_pin_command);
  add(tiletune::cli::add_unpin_command);
  add(tiletune::cli::add_upgrade_command);
  add(tiletune::cli::add_report_command);
  add(tiletune::cli::add_import_t1_command);
  add(tiletune::cli::add_import_kt_cache_command);
  add(tiletune::cli::add_nvml_command);
  add(tiletune::cli::add_worker_command);

  // A first word that names no command is an error of its own, whatever follows it (CLI11 would
  // say "A subcommand is required", or print the main help for `frobnicate --help` and exit 0).
  const auto is_command = [&](const char* word) {
    return std::any_of(commands.begin(), commands.end(), [&](const auto& c) { return c.first->check_name(word); });
  };
  if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1])) {
    std::string names;
    for (const auto& [sub, run] : commands)
      if (!sub->get_group().empty()) names += (names.empty() ? "" : ", ") + sub->get_name();
    std::fprintf(stderr, "tiletune: unknown command %s (commands: %s; see tiletune --help)\n",
                 tiletune::quote(argv[1]).c_str(), names.c_str());
    return tiletune::cli::exit_usage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) { return app.exit(e); } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) { return app.exit(e); } catch (const CLI::ParseError& e) {
    // One line, like every other error (CLI11 would add a second one).
    std::fprintf(stderr, "tiletune: %s (see --help)\n", e.what());
    return tiletune::cli::exit_usage;
  }
  tiletune::cli::StdoutErrors stdout_errors;  // a command whose output was lost exits 1
  try {
    for (auto& [sub, run] : commands)
      if (sub->parsed()) return stdout_errors.checked(run());
  } catch (const tiletune::cli::UsageError& e) {
    std::fprintf(stderr, "tiletune: %s\n", e.what());
    return tiletune::cli::exit_usage;
  } catch (const tiletune::Error& e) {
    std::fprintf(stderr, "tiletune: %s\n", e.what());
    return tiletune::cli::exit_error;
  } catch (...) {
    // A library's exception, from where no stage caught it: one line naming the command.
    std::string command = "tiletune";
    for (auto& [sub, run] : commands)
      if (sub->parsed()) command = sub->get_name();
    std::fprintf(stderr, "tiletune: %s: %s\n", command.c_str(),
                 tiletune::exception_reason(std::current_exception()).c_str());
    return tiletune::cli::exit_error;
  }
  return tiletune::cli::exit_ok;
}
