// `tiletune import-t1`: a Kernel Tuner / KTT search space (T1 JSON) as a tiletune YAML. Thin:
// the interchange stage converts; this writes the file whole (or prints it) and the notes.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "tiletune/interchange.hpp"

namespace tiletune::cli {

Runner add_import_t1_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("import-t1", "Convert a Kernel Tuner / KTT search space (T1 JSON) into a tiletune YAML");
  struct Options {
    std::string input, output;
    bool force = false;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("file", o->input, "The T1 file (JSON)")->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", o->output, "The YAML to write (default: stdout; the kernel source path is made "
                                            "relative to it)");
  cmd->add_flag("--force", o->force, "Overwrite an existing output file");
  cmd->footer(R"HELP(Examples:
  tiletune import-t1 gemm.json -o configs/gemm.yaml && tiletune plan configs/gemm.yaml
  tiletune import-t1 convolution.json                 print the YAML

T1 is the JSON input format of Kernel Tuner and KTT (kernel_tuner/schema/T1/1.0.0/input-schema.json).
Mapped: TuningParameters (integer values: a list, "[1, 2]", or "range(...)"), Conditions
(Python expressions: // and or not min max), KernelName, KernelFile, CompilerOptions,
GlobalSize/LocalSize (GlobalSizeType CUDA: blocks; OpenCL, the default: threads), SharedMemory,
Arguments (Vector: float double half int32 uint32 int64 uint8 and float/double/half vectors,
filled Random, Constant 0 or by the generator "i"; Scalar: integers). Budget and Search become
comments (tiletune sets them with tune --budget and --strategy). Anything else that does not
map is an error naming the field: the YAML is written only when the whole file maps, and it is
checked to load before it is written.)HELP");
  return [o]() {
    namespace fs = std::filesystem;
    const fs::path out = o->output.empty() ? fs::current_path() / "imported.yaml" : fs::path(o->output);
    if (!o->output.empty() && fs::exists(out) && !o->force)
      throw Error(fmt::format("{} exists: pass --force to overwrite it", out.string()));
    const T1Import imported = import_t1(o->input, out);
    for (const std::string& n : imported.notes) std::cerr << "import-t1: note: " << n << '\n';
    if (o->output.empty()) {
      std::cout << imported.yaml;
      return exit_ok;
    }
    write_whole_file(out.string(), imported.yaml);
    std::cerr << fmt::format("import-t1: wrote {}\n", out.string());
    return exit_ok;
  };
}

}  // namespace tiletune::cli
