// The NVRTC side of the compile stage: arch names, the option list, and one compile of a
// request to a CUBIN with its ptxas resource report. NVRTC 13 writes ptxas' verbose report
// (`--ptxas-options=-v`) into the program log, so the resources come from there -- but only
// when ptxas actually runs: since 12.9 NVRTC keeps its own cache of compiled code in the
// CUDA driver's compute cache (~/.nv/ComputeCache, only where libcuda loads), and a hit
// there returns the CUBIN with an empty log. `--no-cache` turns that cache off; tiletune's
// CubinCache does the caching instead, and keeps the report with the cubin.
//
// A file with several kernels is compiled whole by the front end, but ptxas can be told to
// assemble one entry only (`--ptxas-options=--entry=SYMBOL`). That needs the entry's lowered
// name, which NVRTC gives only after a successful compile, so it is used on the failure path
// alone: when ptxas fails on a kernel, a front-end-only compile (`--fdevice-syntax-only`)
// tells whether that kernel is the entry; if not, the entry is compiled again by itself and
// the result carries a warning that names the kernel that failed.
//
// NVRTC itself is loaded at run time (compile/nvrtc_api.hpp): every call goes through
// nvrtc::require(), which throws one line naming libnvrtc when it cannot be loaded.
#include <algorithm>
#include <chrono>
#include <cctype>
#include <charconv>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compile/diagnostics.hpp"
#include "compile/includes.hpp"
#include "compile/nvrtc_api.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/error.hpp"

namespace tiletune {
namespace {

void check(nvrtcResult result, const char* call, const std::string& context = {}) {
  if (result == NVRTC_SUCCESS) return;
  std::string message = std::string(call) + " failed: " + nvrtc::require().nvrtcGetErrorString(result);
  if (!context.empty()) message += " (" + context + ")";
  throw Error(message);
}

// Owns one nvrtcProgram; move-only. `prelude` goes before the main source, which then starts
// again at its own line 1 (#line), so that diagnostics keep their line numbers.
class Program {
 public:
  Program(const KernelSource& source, const std::string& prelude) {
    std::vector<const char*> texts;
    std::vector<const char*> names;
    for (const auto& header : source.headers) {
      texts.push_back(header.text.c_str());
      names.push_back(header.name.c_str());
    }
    const std::string main =
        prelude.empty() ? source.main.text : prelude + "#line 1 \"" + source.main.name + "\"\n" + source.main.text;
    check(nvrtc::require().nvrtcCreateProgram(&program_, main.c_str(), source.main.name.c_str(),
                                              static_cast<int>(texts.size()), texts.data(), names.data()),
          "nvrtcCreateProgram", source.main.name);
  }
  ~Program() {
    if (program_) nvrtc::require().nvrtcDestroyProgram(&program_);  // no-throw: nothing to do on failure
  }
  Program(Program&& other) noexcept : program_(std::exchange(other.program_, nullptr)) {}
  Program& operator=(Program&&) = delete;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  [[nodiscard]] nvrtcProgram get() const noexcept { return program_; }

 private:
  nvrtcProgram program_ = nullptr;
};

std::string program_log(nvrtcProgram program, const std::string& context) {
  std::size_t size = 0;
  check(nvrtc::require().nvrtcGetProgramLogSize(program, &size), "nvrtcGetProgramLogSize", context);
  std::string log(size, '\0');
  if (size > 0) check(nvrtc::require().nvrtcGetProgramLog(program, log.data()), "nvrtcGetProgramLog", context);
  return compile_detail::clean_log(std::move(log));
}

bool starts_with(const std::string& s, std::string_view prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

struct ParsedArch {
  int number = 0;      // compute capability * 10
  std::string suffix;  // "", "a" or "f"
};

ParsedArch parse_arch_parts(const std::string& text) {
  auto fail = [&text]() -> Error {
    return Error("invalid GPU architecture '" + text +
                 "': expected a compute capability such as \"sm_90\", \"90\", \"9.0\", "
                 "\"compute_90\" or \"sm_90a\"");
  };
  std::string s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  s = s.substr(start);
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));

  ParsedArch parsed;
  if (const auto dot = s.find('.'); dot != std::string::npos) {
    // "9.0", "12.1": major.minor with a one-digit minor.
    int major = 0, minor = 0;
    const char* end = s.data() + s.size();
    auto [p1, e1] = std::from_chars(s.data(), s.data() + dot, major);
    auto [p2, e2] = std::from_chars(s.data() + dot + 1, end, minor);
    if (e1 != std::errc() || p1 != s.data() + dot || e2 != std::errc() || p2 != end || dot + 2 != s.size() ||
        dot == 0 || major < 1 || major > 99) {
      throw fail();
    }
    parsed.number = major * 10 + minor;
    return parsed;
  }
  if (starts_with(s, "sm_"))
    s = s.substr(3);
  else if (starts_with(s, "compute_"))
    s = s.substr(8);
  if (!s.empty() && (s.back() == 'a' || s.back() == 'f')) {
    parsed.suffix = s.substr(s.size() - 1);
    s.pop_back();
  }
  // Two or three digits: "75", "90", "100", "121".
  if (s.size() < 2 || s.size() > 3 || s[0] == '0') throw fail();
  for (char c : s) {
    if (c < '0' || c > '9') throw fail();
  }
  auto [p, e] = std::from_chars(s.data(), s.data() + s.size(), parsed.number);
  if (e != std::errc() || p != s.data() + s.size()) throw fail();
  return parsed;
}

}  // namespace

int parse_arch(const std::string& text) { return parse_arch_parts(text).number; }

std::string normalize_arch(const std::string& text) {
  const ParsedArch parsed = parse_arch_parts(text);
  return "sm_" + std::to_string(parsed.number) + parsed.suffix;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  check(nvrtc::require().nvrtcVersion(&major, &minor), "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
}

// Verified on 13.0; its cache appeared in 12.9, but whether 12.9 takes the option is not, so
// older versions get no option (and on 12.9 a cache hit can then lose the report: see the
// error of compile_nvrtc).
bool nvrtc_has_no_cache_option() {
  static const bool has = [] {
    int major = 0, minor = 0;
    check(nvrtc::require().nvrtcVersion(&major, &minor), "nvrtcVersion");
    return major >= 13;
  }();
  return has;
}

std::vector<int> nvrtc_supported_archs() {
  int count = 0;
  check(nvrtc::require().nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<std::size_t>(count));
  if (count > 0) check(nvrtc::require().nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  return archs;
}

namespace {

// The options NVRTC gets, with the include directories as they are (`by_role` false) or written
// by their role (true, for keys: see key_options).
std::vector<std::string> build_options(const CompileRequest& request, bool by_role) {
  if (request.source == nullptr) throw Error("nvrtc_options: the request has no source");
  // A real arch (sm_XX) so that NVRTC runs ptxas and hands back a CUBIN, not PTX.
  std::vector<std::string> options{"--gpu-architecture=" + normalize_arch(request.arch), "--ptxas-options=-v"};
  // NVRTC's own cache would hand back cubins without ptxas' report (see the top of file).
  if (nvrtc_has_no_cache_option()) options.emplace_back("--no-cache");
  bool has_std = false;
  for (const auto& option : request.options) {
    has_std = has_std || starts_with(option, "--std=") || starts_with(option, "-std=");
  }
  if (!has_std) options.emplace_back("--std=c++17");  // a request may pick its own dialect
  std::size_t include_dirs = 0;
  for (std::size_t i = 0; i < request.options.size(); ++i) {
    if (by_role && compile_detail::include_dir_option(request.options, i))  // may step over DIR
      options.push_back("-I<include[" + std::to_string(include_dirs++) + "]>");
    else
      options.push_back(request.options[i]);
  }
  const auto& toolkit = request.source->search.toolkit_dirs;
  for (std::size_t i = 0; i < toolkit.size(); ++i)
    options.push_back(by_role ? "-I<toolkit[" + std::to_string(i) + "]>" : "-I" + toolkit[i].string());
  return options;
}

// The request's -I and --pre-include must be those its source was loaded for: otherwise NVRTC
// would search other directories than the ones hashed.
void check_search(const CompileRequest& request) {
  const IncludeSearch wanted = include_search(request.options);
  const IncludeSearch& loaded = request.source->search;
  if (wanted.include_dirs != loaded.include_dirs || wanted.pre_includes != loaded.pre_includes)
    throw Error("compile: the -I / --pre-include options of the request for '" + request.source->main.name +
                "' differ from those its source was loaded with (use KernelSources::for_options)");
}

}  // namespace

std::vector<std::string> nvrtc_options(const CompileRequest& request) { return build_options(request, false); }

std::vector<std::string> key_options(const CompileRequest& request) { return build_options(request, true); }

namespace {

// One nvrtcCompileProgram of a request's source with the entry as a name expression, which
// instantiates a template entry ("scale<float, 4>") and gives its lowered name afterwards.
struct Attempt {
  nvrtcResult status = NVRTC_SUCCESS;
  std::string log;
  std::string cubin;         // on success
  std::string lowered_name;  // on success
};

// The -D and -U options of a list as #define / #undef lines in their order, and the options
// without them. NVRTC compiles its built-in header after the -D macros, so -DT=float rewrote
// its `template <typename T>` and failed every compile; as lines before the source they reach
// the source (and what it includes) only, like Kernel Tuner's. With a --pre-include the options
// stay as they are: a pre-included header must see the macros too.
struct MacroPrelude {
  std::string text;
  std::vector<std::string> options;
};
MacroPrelude macro_prelude(const std::vector<std::string>& options) {
  MacroPrelude out;
  if (std::any_of(options.begin(), options.end(),
                  [](const std::string& o) { return starts_with(o, "--pre-include") || starts_with(o, "-include"); })) {
    out.options = options;
    return out;
  }
  for (std::size_t i = 0; i < options.size(); ++i) {
    const std::string& o = options[i];
    std::optional<std::string> define, undefine;
    if (starts_with(o, "--define-macro="))
      define = o.substr(15);
    else if (o == "--define-macro" || o == "-D")
      define = i + 1 < options.size() ? options[++i] : std::string();
    else if (starts_with(o, "-D"))
      define = o.substr(2);
    else if (starts_with(o, "--undefine-macro="))
      undefine = o.substr(17);
    else if (o == "--undefine-macro" || o == "-U")
      undefine = i + 1 < options.size() ? options[++i] : std::string();
    else if (starts_with(o, "-U"))
      undefine = o.substr(2);
    if (define && !define->empty()) {
      // -DNAME is NAME 1, -DNAME= is NAME empty, -DNAME=VALUE is NAME VALUE (as nvcc has it).
      const std::size_t eq = define->find('=');
      out.text += "#define " +
                  (eq == std::string::npos ? *define + " 1" : define->substr(0, eq) + " " + define->substr(eq + 1)) +
                  "\n";
    } else if (undefine && !undefine->empty()) {
      out.text += "#undef " + *undefine + "\n";
    } else if (!define && !undefine) {
      out.options.push_back(o);
    }
  }
  return out;
}

Attempt run_nvrtc(const CompileRequest& request, const std::vector<std::string>& all_options,
                  const std::string& context, bool want_cubin = true) {
  const MacroPrelude prelude = macro_prelude(all_options);
  const std::vector<std::string>& options = prelude.options;
  Program program(*request.source, prelude.text);
  check(nvrtc::require().nvrtcAddNameExpression(program.get(), request.entry.c_str()), "nvrtcAddNameExpression",
        context);
  std::vector<const char*> argv;
  argv.reserve(options.size());
  for (const auto& option : options) argv.push_back(option.c_str());
  Attempt attempt;
  attempt.status = nvrtc::require().nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());
  attempt.log = program_log(program.get(), context);
  if (attempt.status != NVRTC_SUCCESS) return attempt;
  const char* lowered = nullptr;
  check(nvrtc::require().nvrtcGetLoweredName(program.get(), request.entry.c_str(), &lowered), "nvrtcGetLoweredName",
        context);
  attempt.lowered_name = lowered ? lowered : "";
  if (!want_cubin) return attempt;
  std::size_t size = 0;
  check(nvrtc::require().nvrtcGetCUBINSize(program.get(), &size), "nvrtcGetCUBINSize", context);
  attempt.cubin.resize(size);
  if (size > 0) check(nvrtc::require().nvrtcGetCUBIN(program.get(), attempt.cubin.data()), "nvrtcGetCUBIN", context);
  return attempt;
}

// The entry's lowered name from the front end alone (no code generated), or nullopt when even
// that fails.
std::optional<std::string> lowered_entry_name(const CompileRequest& request, std::vector<std::string> options,
                                              const std::string& context) {
  options.emplace_back("--fdevice-syntax-only");
  Attempt attempt = run_nvrtc(request, options, context, false);
  if (attempt.status != NVRTC_SUCCESS || attempt.lowered_name.empty()) return std::nullopt;
  return attempt.lowered_name;
}

// When ptxas failed on a kernel of the file that is not the entry: the entry compiled alone
// (ptxas --entry; `options` gets that option), and `warning` names the kernel that failed.
// nullopt when the failure is the entry's own, or not ptxas'.
std::optional<Attempt> compile_entry_alone(const CompileRequest& request, std::vector<std::string>& options,
                                           const Attempt& failed, std::string& warning, const std::string& context) {
  const auto ptxas = compile_detail::first_ptxas_error(failed.log);
  if (!ptxas || ptxas->function.empty() || ptxas->function == request.entry) return std::nullopt;
  const auto lowered = lowered_entry_name(request, options, context);
  if (!lowered || *lowered == ptxas->function) return std::nullopt;
  options.push_back("--ptxas-options=--entry=" + *lowered);
  Attempt alone = run_nvrtc(request, options, context);
  warning = "another kernel of " + request.source->main.name + " fails ptxas (" + ptxas->reason +
            "); compiled only the entry '" + request.entry + "' (--ptxas-options=--entry=" + *lowered + ")";
  alone.log = failed.log + "--- the entry alone, with --ptxas-options=--entry=" + *lowered + ":\n" + alone.log;
  return alone;
}

// The names the options define as macros (-DNAME=..., --define-macro=NAME).
std::vector<std::string> defined_macros(const std::vector<std::string>& options) {
  std::vector<std::string> names;
  const MacroPrelude prelude = macro_prelude(options);
  for (std::size_t at = prelude.text.find("#define "); at != std::string::npos;
       at = prelude.text.find("#define ", at + 8)) {
    const std::size_t begin = at + 8;
    std::size_t end = begin;
    while (end < prelude.text.size() &&
           (std::isalnum(static_cast<unsigned char>(prelude.text[end])) || prelude.text[end] == '_'))
      ++end;
    names.push_back(prelude.text.substr(begin, end - begin));
  }
  return names;
}

// A failure's reason, and whether it may not repeat.
void set_failure(CompileResult& result, nvrtcResult status, const CompileRequest& request) {
  result.error = compile_detail::first_error(result.log);
  if (result.error.empty())
    result.error = std::string("nvrtcCompileProgram: ") + nvrtc::require().nvrtcGetErrorString(status);
  if (auto macro =
          compile_detail::macro_in_first_error(result.log, request.source->main.name, defined_macros(request.options)))
    result.error += " (" + *macro + " is a macro here, -D" + *macro +
                    ", and this header uses the name: rename the param, for example to " + *macro + "_VALUE)";
  // A compile error or a bad option is a property of the inputs; anything else (out of memory,
  // an internal error, a cancelled compile) may go away on its own.
  result.transient = status != NVRTC_ERROR_COMPILATION && status != NVRTC_ERROR_INVALID_OPTION;
}

}  // namespace

CompileResult compile_nvrtc(const CompileRequest& request) {
  if (request.source == nullptr) throw Error("compile_nvrtc: the request has no source");
  if (request.entry.empty()) {
    throw Error("compile_nvrtc: no entry point given for '" + request.source->main.name + "'");
  }
  check_search(request);
  const auto start = std::chrono::steady_clock::now();
  CompileResult result;
  result.options = nvrtc_options(request);
  const std::string context = request.source->main.name + ", entry '" + request.entry + "'";
  auto finish = [&]() {
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::move(result);
  };

  Attempt attempt = run_nvrtc(request, result.options, context);
  std::string other_kernel;  // the warning when another kernel of the file failed
  if (attempt.status != NVRTC_SUCCESS) {
    if (auto alone = compile_entry_alone(request, result.options, attempt, other_kernel, context))
      attempt = std::move(*alone);
  }
  result.log = std::move(attempt.log);
  result.warnings = compile_detail::log_warnings(result.log);
  if (!other_kernel.empty()) result.warnings.insert(result.warnings.begin(), other_kernel);
  if (attempt.status != NVRTC_SUCCESS) {
    set_failure(result, attempt.status, request);
    return finish();
  }
  if (attempt.cubin.empty()) {
    result.error = "nvrtcGetCUBIN returned no CUBIN for " + result.options.front();
    result.transient = true;
    return finish();
  }
  CompiledKernel kernel;
  kernel.cubin = std::move(attempt.cubin);
  kernel.lowered_name = std::move(attempt.lowered_name);
  try {
    kernel.resources = parse_ptxas_report(result.log, kernel.lowered_name);
  } catch (const Error& e) {
    // Compiled, but ptxas reported no kernel by that name: a __device__ function or a
    // misspelt entry. A property of the kernel, so a failed result rather than a throw.
    result.error = std::string(e.what());
    if (result.log.find("ptxas") == std::string::npos) {
      result.error +=
          " (NVRTC did not run ptxas: a hit in NVRTC's own cache? "
          "set CUDA_CACHE_DISABLE=1)";
      result.transient = true;
    } else {
      result.error += " (is '" + request.entry + "' a __global__ function?)";
    }
    return finish();
  }
  kernel.log = result.log;
  kernel.warnings = result.warnings;
  const std::size_t given = nvrtc_options(request).size();
  kernel.extra_options.assign(result.options.begin() + static_cast<std::ptrdiff_t>(given), result.options.end());
  result.kernel = std::move(kernel);
  return finish();
}

}  // namespace tiletune
