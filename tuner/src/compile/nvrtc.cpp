// The NVRTC side of the compile stage: arch names, the option list, and one compile of a
// request to a CUBIN with its ptxas resource report. NVRTC 13 writes ptxas' verbose report
// (`--ptxas-options=-v`) into the program log, so the resources come from there -- but only
// when ptxas actually runs: since 12.9 NVRTC keeps its own cache of compiled code in the
// CUDA driver's compute cache (~/.nv/ComputeCache, only where libcuda loads), and a hit
// there returns the CUBIN with an empty log. `--no-cache` turns that cache off; tiletune's
// CubinCache does the caching instead, and keeps the report with the cubin.
#include <nvrtc.h>

#include <chrono>
#include <cctype>
#include <charconv>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tiletune/compile.hpp"
#include "tiletune/error.hpp"

namespace tiletune {
namespace {

void check(nvrtcResult result, const char* call, const std::string& context = {}) {
  if (result == NVRTC_SUCCESS) return;
  std::string message = std::string(call) + " failed: " + nvrtcGetErrorString(result);
  if (!context.empty()) message += " (" + context + ")";
  throw Error(message);
}

// Owns one nvrtcProgram; move-only.
class Program {
 public:
  explicit Program(const KernelSource& source) {
    std::vector<const char*> texts;
    std::vector<const char*> names;
    for (const auto& header : source.headers) {
      texts.push_back(header.text.c_str());
      names.push_back(header.name.c_str());
    }
    check(nvrtcCreateProgram(&program_, source.main.text.c_str(), source.main.name.c_str(),
                             static_cast<int>(texts.size()), texts.data(), names.data()),
          "nvrtcCreateProgram", source.main.name);
  }
  ~Program() {
    if (program_) nvrtcDestroyProgram(&program_);  // no-throw: nothing to do on failure
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
  check(nvrtcGetProgramLogSize(program, &size), "nvrtcGetProgramLogSize", context);
  std::string log(size, '\0');
  if (size > 0) check(nvrtcGetProgramLog(program, log.data()), "nvrtcGetProgramLog", context);
  while (!log.empty() && log.back() == '\0') log.pop_back();  // the size counts the NUL
  return log;
}

// The first line of an NVRTC log that reports an error: "k.cu(3): error: ...",
// "error #20-D: ...", "catastrophic error: ...", "nvrtc: error: ...". A warning that merely
// mentions a name like "error_code" does not count.
std::string first_error_line(const std::string& log) {
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    for (std::size_t at = line.find("error"); at != std::string::npos;
         at = line.find("error", at + 1)) {
      const std::size_t after = at + 5;
      if (after < line.size() && (line[after] == ':' || line.compare(after, 2, " #") == 0)) {
        return line;
      }
    }
  }
  return {};
}

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

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
    if (e1 != std::errc() || p1 != s.data() + dot || e2 != std::errc() || p2 != end ||
        dot + 2 != s.size() || dot == 0 || major < 1 || major > 99) {
      throw fail();
    }
    parsed.number = major * 10 + minor;
    return parsed;
  }
  if (starts_with(s, "sm_")) s = s.substr(3);
  else if (starts_with(s, "compute_")) s = s.substr(8);
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
  check(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
}

namespace {
// Whether this NVRTC knows `--no-cache`. Verified on 13.0; its cache appeared in 12.9, but
// whether 12.9 takes the option is not, so older versions get no option (and on 12.9 a
// cache hit can then lose the report: see the error of compile_nvrtc).
bool nvrtc_has_no_cache_option() {
  static const bool has = [] {
    int major = 0, minor = 0;
    check(nvrtcVersion(&major, &minor), "nvrtcVersion");
    return major >= 13;
  }();
  return has;
}
}  // namespace

std::vector<int> nvrtc_supported_archs() {
  int count = 0;
  check(nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<std::size_t>(count));
  if (count > 0) check(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  return archs;
}

std::vector<std::string> nvrtc_options(const CompileRequest& request) {
  // A real arch (sm_XX) so that NVRTC runs ptxas and hands back a CUBIN, not PTX.
  std::vector<std::string> options{"--gpu-architecture=" + normalize_arch(request.arch),
                                   "--ptxas-options=-v"};
  // NVRTC's own cache would hand back cubins without ptxas' report (see the top of file).
  if (nvrtc_has_no_cache_option()) options.emplace_back("--no-cache");
  bool has_std = false;
  for (const auto& option : request.options) {
    has_std = has_std || starts_with(option, "--std=") || starts_with(option, "-std=");
  }
  if (!has_std) options.emplace_back("--std=c++17");  // a request may pick its own dialect
  options.insert(options.end(), request.options.begin(), request.options.end());
  return options;
}

CompileResult compile_nvrtc(const CompileRequest& request) {
  if (request.source == nullptr) throw Error("compile_nvrtc: the request has no source");
  if (request.entry.empty()) {
    throw Error("compile_nvrtc: no entry point given for '" + request.source->main.name + "'");
  }
  const auto start = std::chrono::steady_clock::now();
  CompileResult result;
  result.options = nvrtc_options(request);
  const std::string context = request.source->main.name + ", entry '" + request.entry + "'";

  Program program(*request.source);
  // Registering the entry as a name expression instantiates a template entry
  // ("scale<float, 4>") and lets us ask for its mangled name afterwards.
  check(nvrtcAddNameExpression(program.get(), request.entry.c_str()), "nvrtcAddNameExpression",
        context);

  std::vector<const char*> argv;
  argv.reserve(result.options.size());
  for (const auto& option : result.options) argv.push_back(option.c_str());
  const nvrtcResult compiled =
      nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());
  result.log = program_log(program.get(), context);
  auto finish = [&]() {
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::move(result);
  };
  if (compiled != NVRTC_SUCCESS) {
    result.error = first_error_line(result.log);
    if (result.error.empty()) {
      result.error = std::string("nvrtcCompileProgram: ") + nvrtcGetErrorString(compiled);
    }
    return finish();
  }

  CompiledKernel kernel;
  std::size_t size = 0;
  check(nvrtcGetCUBINSize(program.get(), &size), "nvrtcGetCUBINSize", context);
  kernel.cubin.resize(size);
  if (size > 0) check(nvrtcGetCUBIN(program.get(), kernel.cubin.data()), "nvrtcGetCUBIN", context);
  if (kernel.cubin.empty()) {
    result.error = "nvrtcGetCUBIN returned no CUBIN for " + result.options.front();
    return finish();
  }
  const char* lowered = nullptr;
  check(nvrtcGetLoweredName(program.get(), request.entry.c_str(), &lowered),
        "nvrtcGetLoweredName", context);
  kernel.lowered_name = lowered ? lowered : "";
  try {
    kernel.resources = parse_ptxas_report(result.log, kernel.lowered_name);
  } catch (const Error& e) {
    // Compiled, but ptxas reported no kernel by that name: a __device__ function or a
    // misspelt entry. A property of the kernel, so a failed result rather than a throw.
    result.error = std::string(e.what());
    if (result.log.find("ptxas") == std::string::npos) {
      result.error += " (NVRTC did not run ptxas: a hit in NVRTC's own cache? "
                      "set CUDA_CACHE_DISABLE=1)";
    } else {
      result.error += " (is '" + request.entry + "' a __global__ function?)";
    }
    return finish();
  }
  kernel.log = result.log;
  result.kernel = std::move(kernel);
  return finish();
}

}  // namespace tiletune
