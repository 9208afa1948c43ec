// How `tiletune COMMAND --help` is laid out: a reference of at most 40 lines that ends with the
// address of the command's page in docs/reference/, where the prose lives.
#pragma once

#include <CLI/CLI.hpp>

#include <initializer_list>
#include <string>

namespace tiletune::cli {

/// The most lines a command's --help may have (tests/cli/test_cli.cpp holds every command to it).
inline constexpr int help_max_lines = 40;

/// A command's help: its description, usage, one line per option (name, value type and the
/// description's first line; no defaults, validators or "Needs:" notes, which the docs page
/// says), then the footer. The main help (the one with subcommands) keeps CLI11's layout.
class CompactHelp final : public CLI::Formatter {
 public:
  CompactHelp() { column_width(30); }
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override;
  std::string make_option(const CLI::Option* opt, bool is_positional) const override;
  std::string make_option_opts(const CLI::Option* opt) const override;
};

/// The path of a command's docs page, relative to the repository root: docs/reference/NAME.md.
[[nodiscard]] std::string docs_page(const std::string& command);

/// The end of a command's --help: its examples (as given, one per line), the exit statuses it
/// can return (each with its words from exit_codes.hpp) and the address of its docs page.
[[nodiscard]] std::string help_footer(const std::string& command, const std::string& examples,
                                      std::initializer_list<int> statuses);

}  // namespace tiletune::cli
