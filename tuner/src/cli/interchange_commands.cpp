// `tiletune import-t1`: a Kernel Tuner / KTT search space (T1 JSON) as a tiletune YAML, and
// `tiletune import-kt-cache`: a Kernel Tuner cache file as a recording and its space. Thin: the
// interchange stage converts; this writes the files whole (or prints them) and the notes.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <map>

#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "common/input_file.hpp"
#include "tiletune/interchange.hpp"

namespace tiletune::cli {

Runner add_import_t1_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("import-t1", "Convert a Kernel Tuner / KTT search space (T1 JSON) into a tiletune YAML");
  struct Options {
    std::string input, output, name, global_size;
    bool force = false;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("file", o->input, "The T1 file (JSON)")->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", o->output,
                  "The YAML to write (default: stdout); the kernel's path is made relative to it");
  cmd->add_option("--name", o->name, "The space's kernel family (default: KernelName; not a shipped family's name)")
      ->check(identifier());
  cmd->add_option("--global-size-type", o->global_size,
                  "What GlobalSize counts where it sets the grid: blocks or threads (default: as the file's "
                  "GlobalSizeType says: CUDA blocks, OpenCL and Vulkan threads)")
      ->check(CLI::IsMember({"blocks", "threads"}));
  cmd->add_flag("--force", o->force, "Overwrite an existing output file");
  cmd->footer(help_footer("import-t1", R"(Examples:
  tiletune import-t1 gemm.json -o configs/gemm.yaml && tiletune plan configs/gemm.yaml
  tiletune import-t1 transpose.json --name my_transpose -o my_transpose.yaml
  tiletune import-t1 suite/hotspot.json --global-size-type blocks -o hotspot.yaml)",
                          {exit_ok, exit_error, exit_usage}));
  return [o]() {
    namespace fs = std::filesystem;
    const fs::path out = o->output.empty() ? fs::current_path() / "imported.yaml" : fs::path(o->output);
    const OutputRules rules{{fs::path(o->input)}};
    // Only a file is overwritten; a device or a FIFO is written through, as asked.
    if (!o->output.empty() && checked_output(out.string(), rules) == OutputTarget::regular && !o->force)
      throw Error(fmt::format("{} exists: pass --force to overwrite it", out.string()));
    const T1GlobalSize global_size = o->global_size == "blocks"    ? T1GlobalSize::blocks
                                     : o->global_size == "threads" ? T1GlobalSize::threads
                                                                   : T1GlobalSize::from_file;
    const T1Import imported = import_t1(o->input, out, o->name, global_size);
    for (const std::string& n : imported.notes) std::cerr << "import-t1: note: " << n << '\n';
    for (const std::string& w : imported.warnings) std::cerr << "import-t1: warning: " << w << '\n';
    if (o->output.empty()) {
      std::cout << imported.yaml;
      return exit_ok;
    }
    write_whole_file(out.string(), imported.yaml, rules);
    std::cerr << fmt::format("import-t1: wrote {}\n", out.string());
    return exit_ok;
  };
}

namespace {

namespace fs = std::filesystem;

/// Whether path already holds exactly text (a regular file no larger than it).
bool holds(const fs::path& path, const std::string& text) {
  try {
    InputFile file(path, "an output");
    return file.size() == text.size() && file.read_all(text.size()) == text;
  } catch (const Error&) { return false; }
}

/// "A100.json.gz" -> "A100.csv", in the current directory.
fs::path default_recording(const fs::path& cache) {
  fs::path name = cache.filename();
  if (name.extension() == ".gz") name = name.stem();
  if (name.extension() == ".json") name = name.stem();
  return fs::current_path() / name.concat(".csv");
}

struct Output {
  fs::path path;
  const std::string* text;
  const char* what;
};

}  // namespace

Runner add_import_kt_cache_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "import-kt-cache", "Convert a Kernel Tuner cache file into a recording for replays, and the space it needs");
  struct Options {
    std::string input, output, space, name;
    bool force = false;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("cache", o->input, "The cache file Kernel Tuner wrote (JSON, or gzip'd JSON)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", o->output, "The recording to write (default: the cache's name with .csv, here)");
  cmd->add_option("--space", o->space,
                  "The space to write (default: FAMILY.yaml beside the recording), its stub FAMILY.cu beside it");
  cmd->add_option("--name", o->name, "The space's kernel family (default: kt_ and the cache's kernel_name)")
      ->check(identifier());
  cmd->add_flag("--force", o->force, "Overwrite output files that exist with other content");
  cmd->footer(help_footer("import-kt-cache", R"(Examples:
  tiletune import-kt-cache A100.json.gz        A100.csv, kt_convolution_kernel.yaml and .cu here
  tiletune tune kt_convolution_kernel.yaml --replay A100.csv --strategy forest --budget 5%)",
                          {exit_ok, exit_error, exit_usage}));
  return [o]() {
    const fs::path cache(o->input);
    const fs::path recording = o->output.empty() ? default_recording(cache) : fs::path(o->output);
    KtCacheImportOptions options;
    options.name = o->name;
    const KtCacheImport imported = import_kt_cache(cache, options);
    const fs::path space =
        o->space.empty() ? recording.parent_path() / (imported.recording.kernel + ".yaml") : fs::path(o->space);
    const fs::path stub = space.parent_path() / imported.stub_file;
    const Output outputs[] = {{recording, &imported.recording_csv, "the recording"},
                              {space, &imported.space_yaml, "the space"},
                              {stub, &imported.stub_source, "the space's stub kernel"}};
    const OutputRules rules{{cache}};
    for (const Output& out : outputs) {
      // A device or a FIFO is written through; only a file with other content needs --force.
      if (checked_output(out.path.string(), rules) == OutputTarget::regular && !o->force && !holds(out.path, *out.text))
        throw Error(fmt::format("{} ({}) exists with other content: pass --force to overwrite it, or name another path",
                                out.path.string(), out.what));
    }
    for (const std::string& n : imported.notes) std::cerr << "import-kt-cache: note: " << n << '\n';
    std::string written, kept;
    for (const Output& out : outputs) {
      std::string& list = holds(out.path, *out.text) ? kept : written;
      list += fmt::format("{}{} ({})", list.empty() ? "" : ", ", out.path.string(), out.what);
      if (&list == &written) write_whole_file(out.path.string(), *out.text, rules);
    }

    const LandscapeProblem& p = imported.recording.problems.front();
    std::map<TrialStatus, std::size_t> counts;
    const LandscapeTrial* best = nullptr;
    double measured_ms = 0;
    for (const LandscapeTrial& t : p.trials) {
      counts[t.status] += 1;
      measured_ms += t.compile_ms + t.measure_ms;
      if (t.status == TrialStatus::ok && (!best || *t.time_ms < *best->time_ms)) best = &t;
    }
    std::string statuses;
    for (const auto& [status, n] : counts)
      statuses += fmt::format("{}{} {}", statuses.empty() ? "" : ", ", n, status_name(status));
    std::cout << fmt::format("{}: {} entries, {} on {}{}\n", cache.string(), imported.entries,
                             imported.recording.header_value("kt_kernel_name").value_or("?"),
                             imported.recording.header_value("device").value_or("?"),
                             p.problem.empty() ? "" : " at " + p.problem);
    std::cout << fmt::format("  {} trials: {}; recorded sweep time {:.1f} s (compile + measure)\n", p.trials.size(),
                             statuses, measured_ms / 1000);
    if (best)
      std::cout << fmt::format("  optimum {:.6g} ms at {}\n", *best->time_ms, best->params);
    else
      std::cout << "  no trial is ok: a replay finds nothing\n";
    if (!written.empty()) std::cout << "wrote " << written << '\n';
    if (!kept.empty()) std::cout << "unchanged (the same content): " << kept << '\n';
    std::cout << fmt::format("replay: tiletune tune {} --replay {} --strategy forest\n", space.string(),
                             recording.string());
    return exit_ok;
  };
}

}  // namespace tiletune::cli
