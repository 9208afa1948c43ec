// tiletune: the command-line tool. A thin layer: parse arguments, call the library, print.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "tiletune/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"tiletune: a tile-size and launch-config autotuner for CUDA kernels", "tiletune"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tiletune 0.1.0");
  app.footer(R"(Examples:
  tiletune plan configs/transpose.yaml --arch sm_90     plan a space without a GPU
  tiletune tune configs/transpose.yaml --size N=8192   tune it on the GPU
  tiletune devices                                      list the CUDA devices

Run `tiletune COMMAND --help` for the options of a command.)");

  std::vector<std::pair<CLI::App*, tiletune::cli::Runner>> commands;
  auto add = [&](auto adder) {
    auto runner = adder(app);
    commands.emplace_back(app.get_subcommands({}).back(), std::move(runner));
  };
  add(tiletune::cli::add_plan_command);
  add(tiletune::cli::add_tune_command);
  add(tiletune::cli::add_devices_command);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  try {
    for (auto& [sub, run] : commands)
      if (sub->parsed()) return run();
  } catch (const tiletune::Error& e) {
    std::fprintf(stderr, "tiletune: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tiletune: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
