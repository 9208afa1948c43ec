// `tiletune upgrade-space`: rewrites search spaces of earlier versions into the current format
// (expressions with commas quoted, references named), printing the new text or, with --write,
// replacing each file (write_output: atomically, its mode kept, a regular file only).
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "common/output_file.hpp"
#include "tiletune/space.hpp"

namespace tiletune::cli {

namespace {

void replace_file(const std::string& path, const std::string& text) {
  // The one output meant to be its own input: only a regular file (never a device or a FIFO a
  // link leads to), replaced atomically with its mode kept.
  write_output(path, text, OutputRules{.inputs = {}, .regular_only = true});
}

}  // namespace

Runner add_upgrade_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("upgrade-space", "Rewrite search spaces of earlier versions into the current format");
  struct Options {
    std::vector<std::string> spaces;
    bool write = false;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("spaces", o->spaces, "Search spaces (YAML)")->required()->check(CLI::ExistingFile);
  cmd->add_flag("--write,-w", o->write, "Replace each file instead of printing the new text");
  cmd->footer(help_footer("upgrade-space", R"(Examples:
  tiletune upgrade-space old.yaml                print the upgraded space; the changes on stderr
  tiletune upgrade-space --write configs/*.yaml  upgrade files in place)",
                          {exit_ok, exit_error, exit_usage}));
  return [o]() {
    for (const std::string& path : o->spaces) {
      const SpaceUpgrade upgrade = upgrade_space_text(read_space_file(path), path);
      for (const std::string& change : upgrade.changes) std::cerr << fmt::format("{}:{}\n", path, change);
      for (const std::string& note : upgrade.notes) std::cerr << fmt::format("{}: by hand: {}\n", path, note);
      if (upgrade.changes.empty() && upgrade.notes.empty()) std::cerr << fmt::format("{}: already current\n", path);
      if (!o->write) {
        std::cout << upgrade.text;
      } else if (!upgrade.changes.empty()) {
        replace_file(path, upgrade.text);
      }
    }
    return exit_ok;
  };
}

}  // namespace tiletune::cli
