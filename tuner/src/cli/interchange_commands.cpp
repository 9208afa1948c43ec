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
    std::string input, output, name;
    bool force = false;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("file", o->input, "The T1 file (JSON)")->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", o->output, "The YAML to write (default: stdout; the kernel source path is made "
                                            "relative to it)");
  cmd->add_option("--name", o->name, "The space's kernel family (default: KernelName; a shipped family's name is "
                                     "taken by its kernel, so rename on import)");
  cmd->add_flag("--force", o->force, "Overwrite an existing output file");
  cmd->footer(R"HELP(Examples:
  tiletune import-t1 gemm.json -o configs/gemm.yaml && tiletune plan configs/gemm.yaml
  tiletune import-t1 convolution.json                 print the YAML
  tiletune import-t1 transpose.json --name my_transpose -o my_transpose.yaml

T1 is the JSON input format of Kernel Tuner and KTT (kernel_tuner/schema/T1/1.0.0/input-schema.json).
Values and Conditions are Python, evaluated by tiletune's Python interpreter (list(range(...)),
[2**i for i in range(6)], 32 <= a*b <= 1024, a if c else b, min, max, //, ...): values become
the params (integers, numbers or strings), conditions {python: ...} constraints. The launch is
Kernel Tuner's: with a ProblemSize, the problem is problem_size_x/_y/_z and the grid
ceil(ProblemSize / product of GridDivX/Y/Z), the divisors defaulting to the params
block_size_x/_y/_z (a GlobalSize that disagrees is a warning); without one, GlobalSize
(GlobalSizeType CUDA: blocks; OpenCL, the default: threads). LocalSize is the block,
SharedMemory the dynamic shared memory. Arguments: Vector and Scalar of every numeric T1 type
(vectors such as float4 as their elements), filled Constant, Random (normal, as Kernel Tuner's
randn), by the generator "i" or from a BinaryRaw file; a Size sees each param as the list of its
values; constant memory (MemType Constant, MemoryType Symbol) becomes a module global.
ReferenceArguments from BinaryRaw files are the expected outputs. Budget and Search become
comments (tiletune sets them with tune --budget and --strategy). Anything else is an error
naming the field; the YAML is written only when the whole file maps, after it loads.)HELP");
  return [o]() {
    namespace fs = std::filesystem;
    const fs::path out = o->output.empty() ? fs::current_path() / "imported.yaml" : fs::path(o->output);
    if (!o->output.empty() && fs::exists(out) && !o->force)
      throw Error(fmt::format("{} exists: pass --force to overwrite it", out.string()));
    const T1Import imported = import_t1(o->input, out, o->name);
    for (const std::string& n : imported.notes) std::cerr << "import-t1: note: " << n << '\n';
    for (const std::string& w : imported.warnings) std::cerr << "import-t1: warning: " << w << '\n';
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
