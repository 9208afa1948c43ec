// `verify:` of a search space: which reference the outputs are checked against, chosen
// explicitly (a built-in CPU reference by name, a config of this kernel, another kernel, a CPU
// reference in a shared library, files of expected outputs, or none), how each output is
// compared, and the host check (`command:`, a program found here as a shell would find it).
// Whether a named built-in reference, library or file really fits is checked later, before any
// GPU work, by the engine (validate_checks); here, everything the YAML alone shows.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <system_error>

#include "space/loader.hpp"

namespace tiletune::detail {

namespace {

constexpr std::string_view kVerifyKeys[] = {"reference", "rtol", "atol", "outputs", "command", "command_buffers"};
constexpr std::string_view kReferenceKinds[] = {"builtin", "config", "kernel", "library", "files"};
constexpr std::string_view kLibraryKeys[] = {"library", "function"};
constexpr std::string_view kKernelKeys[] = {"source", "entry", "params", "options", "launch", "args"};
constexpr std::string_view kOutputKeys[] = {"compare", "count", "reference_count", "rtol", "atol"};
constexpr std::string_view kCompares[] = {"elements", "sum", "none"};

constexpr const char* kCommandHint =
    "command is a list: the program and its arguments, e.g. [python3, check.py, --flag]; the program is "
    "found on PATH, or from the YAML's directory when it holds a '/' (./check.py)";

// Where a shell would find `name` when it holds no '/': the first executable regular file of that
// name in $PATH's directories (an empty entry is the current directory; no PATH is /bin:/usr/bin,
// as execvp). nullopt when there is none; `skipped` names one found but not executable.
std::optional<std::filesystem::path> find_on_path(const std::string& name, std::string& skipped) {
  const char* env = std::getenv("PATH");
  const std::string path = env != nullptr ? env : "/bin:/usr/bin";
  std::size_t begin = 0;
  while (begin <= path.size()) {
    const std::size_t end = std::min(path.find(':', begin), path.size());
    std::error_code ec;
    const std::filesystem::path dir =
        end == begin ? std::filesystem::current_path(ec) : std::filesystem::path(path.substr(begin, end - begin));
    begin = end + 1;
    if (ec) continue;
    const std::filesystem::path candidate = std::filesystem::absolute(dir / name, ec).lexically_normal();
    struct stat st {};
    if (ec || ::stat(candidate.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (skipped.empty()) skipped = candidate.string();
  }
  return std::nullopt;
}

constexpr const char* kReferenceHint =
    "reference is none, {builtin: NAME}, {config: {PARAM: value, ...}}, "
    "{kernel: {entry: NAME, launch: {...}}}, {library: PATH, function: NAME} or {files: {BUFFER: PATH}}";

}  // namespace

void SpaceLoader::read_verify(const YamlEntry* verify, const YamlValue& root) {
  if (!verify) {
    const bool shipped = std::any_of(shipped_families().begin(), shipped_families().end(),
                                     [&](const ShippedFamily& f) { return f.name == space_.kernel; });
    yaml_.fail(root, "no 'verify': a space says how its outputs are checked",
               shipped
                   ? "add 'verify: {reference: {builtin: " + space_.kernel +
                         "}}' (what earlier versions chose by the kernel's name), another reference, or 'verify: none'"
                   : std::string("add 'verify: {reference: ...}' (") + kReferenceHint + "), or 'verify: none'");
  }
  const YamlValue& v = verify->value;
  space_.verify.where = yaml_.at(v.mark);
  space_.verify.file_dir = space_.yaml_path.parent_path();
  if (v.is_scalar() && v.is_plain() && v.text() == "none") {
    space_.verify.reference = VerifySpec::Reference::none;
    return;
  }
  const Entries es = yaml_.entries(v, kVerifyKeys, "none or a map {reference, rtol, atol, outputs}",
                                   "for example 'verify: {reference: {builtin: transpose}, rtol: 1e-5}'");
  read_reference(require(es, v, "reference", "reference: {builtin: transpose}").value);
  double tolerances[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    const YamlEntry* e = find(es, i == 0 ? "rtol" : "atol");
    if (!e) continue;
    tolerances[i] = yaml_.number(e->value);
    if (tolerances[i] < 0) yaml_.fail(e->value, e->value.name() + " is negative", "tolerances are numbers >= 0");
  }
  const YamlEntry* outputs = find(es, "outputs");
  read_outputs(outputs ? &outputs->value : nullptr, tolerances[0], tolerances[1]);
  if (const YamlEntry* command = find(es, "command")) read_command(*command);
  if (const YamlEntry* reads = find(es, "command_buffers")) read_command_buffers(*reads);
  if (space_.verify.reference == VerifySpec::Reference::none) return;
  const bool any = std::any_of(space_.verify.outputs.begin(), space_.verify.outputs.end(),
                               [](const OutputCheck& c) { return c.compare != OutputCheck::Compare::none; });
  if (!any)
    yaml_.fail(verify->key_mark, "nothing to verify: no buffer is an output that is compared",
               "mark the buffer the kernel writes with 'output: true', or set 'verify: none'");
  if (space_.verify.reference == VerifySpec::Reference::files) {
    for (const OutputCheck& c : space_.verify.outputs) {
      const bool has = std::any_of(space_.verify.files.begin(), space_.verify.files.end(),
                                   [&](const auto& f) { return f.first == c.buffer; });
      if (!has && c.compare != OutputCheck::Compare::none)
        yaml_.fail(v, v.name() + ": no expected file for output '" + c.buffer + "'",
                   "give every compared output a file in reference.files, or 'compare: none' in outputs");
    }
  }
}

void SpaceLoader::read_reference(const YamlValue& v) {
  VerifySpec& verify = space_.verify;
  if (v.is_scalar()) {
    const std::string r = v.text();
    if (v.is_plain() && r == "none") {
      verify.reference = VerifySpec::Reference::none;
      return;
    }
    if (v.is_plain() && r == "cpu") {
      const bool shipped = std::any_of(shipped_families().begin(), shipped_families().end(),
                                       [&](const ShippedFamily& f) { return f.name == space_.kernel; });
      yaml_.fail(v, v.name() + ": 'cpu' chose a built-in reference by the kernel's name; references are named now",
                 shipped ? "write 'reference: {builtin: " + space_.kernel + "}'" : std::string(kReferenceHint));
    }
    std::string what = v.name() + ": unknown reference '" + excerpt(r) + "'";
    if (auto s = did_you_mean(r, kReferenceKinds)) what += "; did you mean {" + *s + ": ...}?";
    yaml_.fail(v, what, kReferenceHint);
  }
  if (!v.is_map()) yaml_.fail_type(v, "none or a map with one key", kReferenceHint);
  // A map of params is the reference config of earlier versions.
  const Entries raw = yaml_.entries(v, {}, "a map", kReferenceHint);
  const bool old_config = !raw.empty() && std::all_of(raw.begin(), raw.end(), [&](const YamlEntry& e) {
    return space_.param_index(e.key) >= 0;
  });
  if (old_config)
    yaml_.fail(v, v.name() + ": a map of params is a reference config: write it as {config: {...}}",
               "for example 'reference: {config: {" + raw.front().key + ": ...}}'");
  const bool library = std::any_of(raw.begin(), raw.end(), [](const YamlEntry& e) { return e.key == "library"; });
  if (library) {
    const Entries es = yaml_.entries(v, kLibraryKeys, "a map {library, function}",
                                     "for example {library: ./libref.so, function: my_reference}");
    verify.reference = VerifySpec::Reference::library;
    verify.library = read_path(require(es, v, "library", "library: ./libref.so").value, "reference library",
                               "the shared library that holds the reference");
    verify.function = yaml_.string(require(es, v, "function", "function: my_reference").value, "a function name",
                                   "the extern \"C\" function, as declared in tiletune/reference.h", kMaxNameLength);
    if (!is_identifier(verify.function))
      yaml_.fail(find(es, "function")->value,
                 "reference.function: '" + excerpt(verify.function) + "' is not a C identifier",
                 "the reference is an extern \"C\" function");
    return;
  }
  const Entries es = yaml_.entries(v, kReferenceKinds, "a map with one key", kReferenceHint);
  if (es.size() != 1)
    yaml_.fail(v, v.name() + ": give one reference, got " + std::to_string(es.size()), kReferenceHint);
  const YamlEntry& e = es.front();
  if (e.key == "builtin") {
    verify.reference = VerifySpec::Reference::builtin;
    verify.builtin = yaml_.string(e.value, "a reference name", "for example {builtin: transpose}", kMaxNameLength);
    if (!is_identifier(verify.builtin))
      yaml_.fail(e.value, e.value.name() + ": '" + excerpt(verify.builtin) + "' is not a reference name",
                 "built-in references are named like the shipped families, for example transpose");
  } else if (e.key == "config") {
    verify.reference = VerifySpec::Reference::config;
    reference_config_mark_ = e.value.mark;
    verify.reference_config = read_config(e.value, "verify.reference.config");
    check_config_in_space(verify.reference_config, reference_config_mark_, "the reference config");
  } else if (e.key == "kernel") {
    verify.reference = VerifySpec::Reference::kernel;
    verify.kernel = read_reference_kernel(e.value);
  } else {
    verify.reference = VerifySpec::Reference::files;
    read_files_reference(e.value);
  }
}

ReferenceKernel SpaceLoader::read_reference_kernel(const YamlValue& v) const {
  ReferenceKernel k;
  k.where = yaml_.at(v.mark);
  const Entries es = yaml_.entries(v, kKernelKeys, "a map {source, entry, params, options, launch, args}",
                                   "for example {entry: naive, launch: {grid: [\"ceil_div(N, 256)\"], block: [256]}}");
  const YamlEntry* source = find(es, "source");
  k.source =
      source ? read_path(source->value, "reference source", "the .cu file of the reference kernel") : space_.source;
  k.entry = yaml_.string(require(es, v, "entry", "entry: naive").value, "a kernel name",
                         "the reference kernel's name or template instantiation");
  if (const YamlEntry* p = find(es, "params"); p && !p->value.is_null()) {
    for (const YamlEntry& d :
         yaml_.entries(p->value, {}, "a map of NAME -> value", "for example {BLOCK: 16, T: float}")) {
      check_name(d, "define", true);
      ReferenceDefine define;
      define.name = d.key;
      define.text =
          yaml_.string(d.value, "a value", "a number or a word, passed as -D" + d.key + "=VALUE", kMaxTextValue);
      if (d.value.is_plain()) define.integer = parse_integer(define.text);
      k.defines.push_back(std::move(define));
    }
  }
  if (const YamlEntry* o = find(es, "options"); o && !o->value.is_null())
    for (const YamlValue& item : yaml_.items(o->value, "a list of strings", "for example [-use_fast_math]"))
      k.options.push_back(yaml_.string(item, "a string", "one NVRTC option per item"));
  const std::vector<std::string> slots = reference_slot_names(space_, k);
  k.launch = read_launch(require(es, v, "launch", "launch: {grid: [\"ceil_div(N, 256)\"], block: [256]}").value, slots);
  if (const YamlEntry* a = find(es, "args")) {
    k.args = read_args(a->value, slots);
  } else {
    // The space's arguments, if they mean the same there: scalars over problem sizes only.
    for (const ArgSpec& arg : space_.args)
      for (const std::string& name : arg.value.expr.expr.variables())
        if (std::find(slots.begin(), slots.end(), name) == slots.end())
          throw SpaceError(k.where,
                           "the reference kernel takes the space's args, but " + excerpt(name) +
                               " in them is not a problem size or one of its params",
                           "give the reference kernel its own 'args:'");
    k.args = space_.args;
  }
  return k;
}

void SpaceLoader::read_files_reference(const YamlValue& v) {
  for (const YamlEntry& e :
       yaml_.entries(v, {}, "a map of output buffer -> file", "for example {out: expected/out_{N}.npy}")) {
    const int b = space_.buffer_index(e.key);
    if (b < 0 || !space_.buffers[static_cast<std::size_t>(b)].output)
      yaml_.fail(e.key_mark, "reference.files: '" + excerpt(e.key) + "' is not an output buffer",
                 "name each output buffer (output: true) and the file of its expected contents");
    const std::string path =
        yaml_.string(e.value, "a path", "a .npy, .npy.gz or raw file; {N} stands for the problem size N");
    for (std::size_t open = path.find('{'); open != std::string::npos; open = path.find('{', open + 1)) {
      const std::size_t close = path.find('}', open);
      const std::string name = close == std::string::npos ? std::string() : path.substr(open + 1, close - open - 1);
      if (space_.problem_index(name) < 0)
        yaml_.fail(e.value, e.value.name() + ": '{" + excerpt(name) + "}' in the path is not a problem size",
                   "{NAME} in a path stands for a problem size");
    }
    if (path.find('{') == std::string::npos)
      (void)read_path(e.value, "expected output file", "a .npy, .npy.gz or raw file");
    space_.verify.files.emplace_back(e.key, path);
  }
  if (space_.verify.files.empty())
    yaml_.fail(v, v.name() + " names no file", "give each output buffer the file of its expected contents");
}

void SpaceLoader::read_outputs(const YamlValue* outputs, double rtol, double atol) {
  for (const BufferSpec& b : space_.buffers) {
    if (!b.output) continue;
    OutputCheck check;
    check.buffer = b.name;
    check.rtol = rtol;
    check.atol = atol;
    check.where = b.where;
    space_.verify.outputs.push_back(std::move(check));
  }
  if (!outputs || outputs->is_null()) return;
  for (const YamlEntry& e : yaml_.entries(*outputs, {}, "a map of output buffer -> {compare, count, rtol, atol}",
                                          "for example {partials: {compare: sum, count: \"ceil_div(N, BLOCK)\"}}")) {
    const auto it = std::find_if(space_.verify.outputs.begin(), space_.verify.outputs.end(),
                                 [&](const OutputCheck& c) { return c.buffer == e.key; });
    if (it == space_.verify.outputs.end())
      yaml_.fail(e.key_mark, "verify.outputs: '" + excerpt(e.key) + "' is not an output buffer",
                 "outputs are the buffers with 'output: true'");
    OutputCheck& check = *it;
    check.where = yaml_.at(e.key_mark);
    const Entries fields = yaml_.entries(e.value, kOutputKeys, "a map {compare, count, reference_count, rtol, atol}",
                                         "for example {compare: sum, rtol: 1e-5}");
    if (const YamlEntry* f = find(fields, "compare")) {
      const std::string c = yaml_.string(f->value, "elements, sum or none", "compare is elements, sum or none");
      const auto* k = std::find(std::begin(kCompares), std::end(kCompares), c);
      if (k == std::end(kCompares)) {
        std::string what = f->value.name() + ": unknown comparison '" + excerpt(c) + "'";
        if (auto s = did_you_mean(c, kCompares)) what += "; did you mean '" + *s + "'?";
        yaml_.fail(f->value, what, "compare is elements (each element), sum (the sum of the elements) or none");
      }
      constexpr OutputCheck::Compare kinds[] = {OutputCheck::Compare::elements, OutputCheck::Compare::sum,
                                                OutputCheck::Compare::none};
      check.compare = kinds[k - std::begin(kCompares)];
    }
    if (const YamlEntry* f = find(fields, "count")) check.count = read_expr(f->value);
    if (const YamlEntry* f = find(fields, "reference_count")) {
      if (space_.verify.reference != VerifySpec::Reference::kernel)
        yaml_.fail(f->key_mark, "reference_count is for a reference kernel's output",
                   "a reference config's output is counted with 'count'; other references fill the whole buffer");
      check.reference_count = read_expr_in(f->value, reference_slot_names(space_, *space_.verify.kernel));
    }
    for (int i = 0; i < 2; ++i) {
      const YamlEntry* f = find(fields, i == 0 ? "rtol" : "atol");
      if (!f) continue;
      const double x = yaml_.number(f->value);
      if (x < 0) yaml_.fail(f->value, f->value.name() + " is negative", "tolerances are numbers >= 0");
      (i == 0 ? check.rtol : check.atol) = x;
    }
  }
}

void SpaceLoader::read_command(const YamlEntry& entry) {
  HostCommand& command = space_.verify.command;
  space_.verify.command_where = yaml_.at(entry.key_mark);
  const std::vector<YamlValue> items = yaml_.items(entry.value, "a list: the program and its arguments", kCommandHint);
  if (items.empty())
    yaml_.fail(entry.value, entry.value.name() + " is an empty list: it names no program", kCommandHint);
  for (const YamlValue& item : items) {
    // Any scalar is an argument as written ("", "1e-3", "--flag"); the program must be a name.
    if (!item.is_scalar()) yaml_.fail_type(item, "a string", kCommandHint);
    if (item.text().size() > 4096)
      yaml_.fail(item, item.name() + ": " + std::to_string(item.text().size()) + " bytes, more than the 4096 allowed",
                 kCommandHint);
    command.argv.push_back(item.text());
  }
  const std::string& name = command.argv.front();
  if (name.empty()) yaml_.fail(items.front(), items.front().name() + " is empty: it names no program", kCommandHint);
  const std::filesystem::path dir = space_.yaml_path.parent_path();
  command.directory = dir.string();
  std::filesystem::path program;
  if (name.find('/') == std::string::npos) {
    std::string skipped;
    const auto found = find_on_path(name, skipped);
    if (!found) {
      const char* path = std::getenv("PATH");
      yaml_.fail(
          entry.key_mark,
          "command: program '" + excerpt(name) + "' is not on PATH (" + excerpt(path ? path : "unset") + ")" +
              (skipped.empty() ? "" : "; " + excerpt(skipped) + " is there but not executable"),
          "install it, or name it by a path with a '/', relative to the YAML's directory (./" + excerpt(name) + ")");
    }
    program = *found;
  } else {
    program = std::filesystem::path(name).is_relative() ? dir / name : std::filesystem::path(name);
    program = program.lexically_normal();
    struct stat st {};
    if (::stat(program.c_str(), &st) != 0)
      yaml_.fail(
          entry.key_mark,
          "command: program '" + excerpt(name) + "' does not exist (looked for " + excerpt(program.string()) + ")",
          "a program named with a '/' is resolved from the YAML's directory");
    if (!S_ISREG(st.st_mode))
      yaml_.fail(entry.key_mark,
                 "command: program '" + excerpt(name) + "' is not a regular file (" + excerpt(program.string()) + ")",
                 "name the program's file");
    if (::access(program.c_str(), X_OK) != 0)
      yaml_.fail(entry.key_mark,
                 "command: program '" + excerpt(name) + "' is not executable (" + excerpt(program.string()) + ")",
                 "make it executable (chmod +x), or run it through its interpreter: [python3, " + excerpt(name) + "]");
  }
  command.program = program.string();
}

// `command_buffers:` the buffers the host check reads (only these are downloaded and written for
// it), in the space's buffer order whatever the list's.
void SpaceLoader::read_command_buffers(const YamlEntry& entry) {
  HostCommand& command = space_.verify.command;
  if (command.empty())
    yaml_.fail(entry.key_mark, "command_buffers without a command: it names the buffers the host check reads",
               "add 'command: [PROGRAM, ARGS...]', or remove command_buffers");
  const char* hint = "command_buffers is a list of buffer names, e.g. [out]; leave it out to hand every buffer";
  const std::vector<YamlValue> items = yaml_.items(entry.value, "a list of buffer names", hint);
  if (items.empty()) yaml_.fail(entry.value, entry.value.name() + " is an empty list: it names no buffer", hint);
  std::vector<bool> named(space_.buffers.size(), false);
  for (const YamlValue& item : items) {
    const std::string name = yaml_.string(item, "a buffer name", hint);
    const auto it = std::find_if(space_.buffers.begin(), space_.buffers.end(),
                                 [&](const BufferSpec& b) { return b.name == name; });
    if (it == space_.buffers.end()) {
      std::vector<std::string_view> known;
      for (const BufferSpec& b : space_.buffers) known.push_back(b.name);
      std::string what = item.name() + ": '" + excerpt(name) + "' is not a buffer";
      if (auto s = did_you_mean(name, known)) what += "; did you mean '" + *s + "'?";
      yaml_.fail(item, what, hint);
    }
    const auto index = static_cast<std::size_t>(it - space_.buffers.begin());
    if (named[index]) yaml_.fail(item, item.name() + ": '" + excerpt(name) + "' is named twice", hint);
    named[index] = true;
  }
  for (std::size_t i = 0; i < named.size(); ++i)
    if (named[i]) command.buffers.push_back(space_.buffers[i].name);
}

}  // namespace tiletune::detail
