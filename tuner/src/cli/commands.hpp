// The subcommands of the `tiletune` CLI. Each registers its options on the app and returns
// the function that runs it; the CLI only parses arguments and calls the library.
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <vector>
#include <string>

#include "cli/help_format.hpp"
#include "common/output_file.hpp"

namespace tiletune {
struct DeviceInfo;
}

namespace tiletune::cli {

using Runner = std::function<int()>;

Runner add_plan_command(CLI::App& app);
Runner add_tune_command(CLI::App& app);
Runner add_devices_command(CLI::App& app);
Runner add_show_command(CLI::App& app);
Runner add_best_command(CLI::App& app);
Runner add_export_command(CLI::App& app);
Runner add_merge_command(CLI::App& app);
Runner add_pin_command(CLI::App& app);
Runner add_unpin_command(CLI::App& app);
Runner add_diff_command(CLI::App& app);
Runner add_worker_command(CLI::App& app);
Runner add_upgrade_command(CLI::App& app);
Runner add_report_command(CLI::App& app);
Runner add_import_t1_command(CLI::App& app);
Runner add_import_kt_cache_command(CLI::App& app);
Runner add_nvml_command(CLI::App& app);

/// The shipped transpose space: the installed copy, else the one in the source tree.
[[nodiscard]] std::filesystem::path default_space_path();

/// Output formats shared by the commands.
enum class Format { table, csv, json };
[[nodiscard]] std::map<std::string, Format> format_names();

void print_devices(std::ostream& out, const std::vector<DeviceInfo>& devices, Format format);

/// check_output (common/output_file.hpp) before any work: an output that is one of the inputs
/// is a UsageError (exit 2), any other refusal an Error. "-" (stdout) is a stream.
OutputTarget checked_output(const std::string& path, const OutputRules& rules = {});

/// Writes text to path by write_output's rules (a regular file replaced whole, a device or FIFO
/// written through, never an input); "-" is stdout. Throws Error naming the file.
void write_whole_file(const std::string& path, const std::string& text, const OutputRules& rules = {});

/// True when stderr is a terminal (progress bars go there only then).
[[nodiscard]] bool stderr_is_tty();

}  // namespace tiletune::cli
