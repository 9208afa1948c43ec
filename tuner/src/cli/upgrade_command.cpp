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
  cmd->footer(R"(Examples:
  tiletune upgrade-space old.yaml              print the upgraded space
  tiletune upgrade-space --write configs/*.yaml  upgrade files in place

What changes: an expression with a comma inside [...] or {...} is quoted (YAML splits it at
the comma: [ceil_div(N, TILE)] is two items to any YAML reader); `reference: cpu` and a missing
`verify:`, which picked a built-in reference by the kernel's name, name it
(`reference: {builtin: transpose}`); a reference config given as a bare map of params becomes
`reference: {config: {...}}`. Comments and layout are kept. The changes go to stderr, one per
line; what must be done by hand too. Exit status: 0 done, 1 a file could not be read or
written, 2 bad arguments.)");
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
