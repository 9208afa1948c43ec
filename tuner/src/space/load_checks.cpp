// Checks of a search space across its parts: names that the compiler sees (params, and
// problem sizes with problem_defines) may not be C++ keywords, CUDA built-ins, reserved or
// predefined names, nor a parameter name of the kernel itself (-DN=1024 would turn `int N`
// into `int 1024`); every buffer is passed; a shipped family's name is kept for the shipped
// source; the default and reference configs lie in the space.
#include <algorithm>
#include <cctype>

#include "common/input_file.hpp"
#include "space/loader.hpp"
#include "tiletune/enumerate.hpp"

namespace tiletune::detail {

namespace {

// C and C++ keywords and alternative tokens (C++20), and CUDA's built-in variables and
// types a kernel uses: a -D of any of these rewrites the kernel itself.
constexpr std::string_view kCompilerNames[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
    "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
    "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
    "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
    "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
    "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires", "restrict", "return",
    "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
    "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
    "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
    // CUDA built-ins and the names of its headers that kernels rely on
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "half", "half2", "float2", "float4", "double2",
    "int2", "int4", "uint2", "uint4", "size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
    "uint32_t", "uint64_t", "NULL", "INFINITY", "NAN", "assert", "printf", "defined"};

bool reserved_identifier(std::string_view s) {
  // C++ reserves names with a double underscore or an underscore and a capital (__CUDACC__,
  // __CUDA_ARCH__, _WIN32, ...): the compiler and headers define such macros.
  return s.find("__") != std::string_view::npos ||
         (s.size() >= 2 && s[0] == '_' && std::isupper(static_cast<unsigned char>(s[1])));
}

// Comments blanked out, so that a name in a comment is not taken for code.
std::string without_comments(const std::string& text) {
  std::string out = text;
  for (std::size_t i = 0; i + 1 < out.size(); ++i) {
    if (out[i] == '"' || out[i] == '\'') {
      const char quote = out[i];
      for (++i; i < out.size() && out[i] != quote && out[i] != '\n'; ++i)
        if (out[i] == '\\') ++i;
    } else if (out[i] == '/' && out[i + 1] == '/') {
      for (; i < out.size() && out[i] != '\n'; ++i) out[i] = ' ';
    } else if (out[i] == '/' && out[i + 1] == '*') {
      for (; i + 1 < out.size() && !(out[i] == '*' && out[i + 1] == '/'); ++i)
        if (out[i] != '\n') out[i] = ' ';
      if (i + 1 < out.size()) out[i] = out[i + 1] = ' ';
    }
  }
  return out;
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The parameter names of every __global__ function called `name` in `code` (comments removed).
std::vector<std::string> kernel_parameter_names(const std::string& code, const std::string& name) {
  std::vector<std::string> names;
  for (std::size_t at = code.find("__global__"); at != std::string::npos; at = code.find("__global__", at + 10)) {
    // The declaration runs to its body or ';'; the kernel's name is followed by its '(' there
    // (after attributes such as __launch_bounds__(...) and a template's <...>).
    const std::size_t stop = std::min(code.find('{', at), code.find(';', at));
    std::size_t open = std::string::npos;
    for (std::size_t n = code.find(name, at); n < stop; n = code.find(name, n + 1)) {
      const bool whole =
          !ident_char(code[n - 1]) && n + name.size() < code.size() && !ident_char(code[n + name.size()]);
      std::size_t after = n + name.size();
      while (after < stop && std::isspace(static_cast<unsigned char>(code[after]))) ++after;
      if (whole && after < stop && code[after] == '(') {
        open = after;
        break;
      }
    }
    if (open == std::string::npos) continue;
    // Parameters: split at top-level commas; each one's name is its last identifier before a
    // default value or an array bound.
    const auto finish = [&](const std::string& parameter) {
      const std::string head = parameter.substr(0, std::min(parameter.find('='), parameter.find('[')));
      std::size_t e = head.size();
      while (e > 0 && !ident_char(head[e - 1])) --e;
      std::size_t b = e;
      while (b > 0 && ident_char(head[b - 1])) --b;
      if (e > b) names.push_back(head.substr(b, e - b));
    };
    int depth = 0;
    std::string parameter;
    for (std::size_t i = open + 1; i < code.size(); ++i) {
      const char c = code[i];
      const bool opens = c == '(' || c == '[' || c == '<' || c == '{';
      const bool closes = c == ')' || c == ']' || c == '>' || c == '}';
      if (closes && depth == 0 && c == ')') {
        finish(parameter);
        break;
      }
      if (c == ',' && depth == 0) {
        finish(parameter);
        parameter.clear();
        continue;
      }
      depth += opens ? 1 : (closes && depth > 0) ? -1 : 0;
      parameter += c;
    }
  }
  return names;
}

}  // namespace

void SpaceLoader::check_name(const YamlEntry& e, std::string_view kind, bool passed_to_compiler) const {
  const std::string k(kind);
  if (e.key.size() > kMaxNameLength)
    yaml_.fail(e.key_mark, "a " + k + " name is at most " + std::to_string(kMaxNameLength) + " characters",
               "use a shorter name");
  if (!is_identifier(e.key))
    yaml_.fail(e.key_mark, "'" + excerpt(e.key) + "' is not a valid " + k + " name",
               "names are C identifiers: letters, digits and '_', not starting with a digit");
  if (std::find(std::begin(kFunctions), std::end(kFunctions), e.key) != std::end(kFunctions))
    yaml_.fail(e.key_mark, "'" + e.key + "' is the name of an expression function",
               "rename it: " + join_names(kFunctions) + " are reserved");
  if (!passed_to_compiler) return;
  if (std::find(std::begin(kCompilerNames), std::end(kCompilerNames), e.key) != std::end(kCompilerNames))
    yaml_.fail(
        e.key_mark,
        "the " + k + " '" + e.key + "' is a C++ keyword or CUDA name: -D" + e.key + "=... would rewrite the kernel",
        "rename it, for example " + e.key + "_SIZE or TT_" + e.key);
  if (reserved_identifier(e.key))
    yaml_.fail(e.key_mark,
               "the " + k + " '" + e.key +
                   "' is a reserved name (two underscores, or '_' and a capital), "
                   "like the compiler's own macros (__CUDACC__, __CUDA_ARCH__)",
               "rename it without the leading underscore or the double underscore");
}

void SpaceLoader::check_buffers_used() const {
  for (std::size_t i = 0; i < space_.buffers.size(); ++i) {
    const BufferSpec& b = space_.buffers[i];
    const bool used = std::any_of(space_.args.begin(), space_.args.end(), [&](const ArgSpec& a) {
      return a.kind == ArgSpec::Kind::buffer && a.buffer == b.name;
    });
    // A buffer may serve only as the source of another's copy or CSR columns.
    const auto derives = [&](const InitSpec& init) {
      return (init.kind == BufferInit::copy || init.kind == BufferInit::csr_columns) && init.of == b.name;
    };
    const bool source =
        std::any_of(space_.buffers.begin(), space_.buffers.end(),
                    [&](const BufferSpec& o) { return derives(o.init); }) ||
        std::any_of(space_.globals.begin(), space_.globals.end(), [&](const GlobalSpec& g) { return derives(g.init); });
    if (!used && !source)
      yaml_.fail(buffer_marks_[i], "buffer '" + b.name + "' is never passed in args",
                 "add it to args in the kernel's parameter order, or remove it");
  }
}

void SpaceLoader::check_family() const {
  const auto families = shipped_families();
  const auto it =
      std::find_if(families.begin(), families.end(), [&](const ShippedFamily& f) { return f.name == space_.kernel; });
  if (it == families.end()) return;
  std::string text;
  try {
    text = read_input_file(space_.source, "a kernel source", kMaxSourceBytes);
  } catch (const Error&) {
    return;  // the compile stage reports an unreadable source with its reason
  }
  if (text == it->source_text) return;
  throw SpaceError(yaml_.at(kernel_mark_),
                   "kernel: '" + space_.kernel + "' is the name of a shipped family, but " +
                       excerpt(space_.source.string()) + " is not its kernel: the cache would serve your results as '" +
                       space_.kernel + "'",
                   "choose a name of your own, for example 'kernel: my_" + space_.kernel + "'");
}

void SpaceLoader::check_kernel_parameters() const {
  std::vector<std::pair<const Axis*, YAML::Mark>> defined;
  for (std::size_t i = 0; i < space_.params.size(); ++i) defined.emplace_back(&space_.params[i], param_marks_[i]);
  if (space_.problem_defines)
    for (std::size_t i = 0; i < space_.problem.size(); ++i) defined.emplace_back(&space_.problem[i], problem_marks_[i]);
  std::string text;
  try {
    text = read_input_file(space_.source, "a kernel source", kMaxSourceBytes);
  } catch (const Error&) {
    return;  // reported with its reason when the source is compiled
  }
  // "scale<float, 4>" and "ns::scale" are the kernel "scale".
  std::string name = space_.entry.substr(0, space_.entry.find('<'));
  if (const std::size_t colon = name.rfind("::"); colon != std::string::npos) name = name.substr(colon + 2);
  while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
  const std::vector<std::string> parameters = kernel_parameter_names(without_comments(text), name);
  for (const auto& [axis, mark] : defined) {
    if (std::find(parameters.begin(), parameters.end(), axis->name) == parameters.end()) continue;
    yaml_.fail(mark,
               "'" + axis->name + "' is also a parameter of the kernel " + name + "(): -D" + axis->name +
                   "=... would replace that parameter's name by a number",
               "rename the " + std::string(space_.param_index(axis->name) >= 0 ? "param" : "problem size") +
                   " (the kernel reads it as a macro), or the kernel's parameter");
  }
}

void SpaceLoader::check_config_in_space(const std::vector<std::int64_t>& config, const YAML::Mark& mark,
                                        std::string_view what) const {
  const std::string label(what);
  for (std::size_t i = 0; i < space_.params.size(); ++i) {
    const Axis& axis = space_.params[i];
    if (std::find(axis.values.begin(), axis.values.end(), config[i]) == axis.values.end())
      yaml_.fail(mark, label + ": " + axis.name + " = " + std::to_string(config[i]) + " is not one of its values",
                 axis.name + " takes: " + join_names([&] {
                   std::vector<std::string> v;
                   for (std::size_t k = 0; k < axis.values.size() && k < 16; ++k)
                     v.push_back(axis.text_of(axis.values[k]));
                   return v;
                 }()));
  }
  if (space_.allowed && !space_.allowed->contains(config))
    yaml_.fail(mark,
               label + ": the config is not listed in the allowed configs (" +
                   excerpt(space_.allowed->file.filename().string()) + ")",
               "choose a config the file lists, or add it there");
  // The constraints, for every problem of the space (they may involve problem sizes).
  const Config c{config};
  for (const Problem& problem : all_problems(space_)) {
    const std::vector<std::int64_t> slots = slot_values(problem, c);
    for (const Constraint& constraint : space_.constraints) {
      std::string why;
      try {
        if (constraint.condition.expr.eval(slots) != 0) continue;
        why = "is false";
      } catch (const EvalError& e) { why = std::string("cannot be evaluated: ") + e.what(); }
      std::string problem_text;
      for (std::size_t i = 0; i < space_.problem.size(); ++i)
        problem_text += (i ? " " : "") + space_.problem[i].name + "=" + std::to_string(problem.sizes[i]);
      yaml_.fail(mark,
                 label + " (" + format_config(space_, c) + ") is outside the space: the constraint '" +
                     excerpt(constraint.condition.expr.text()) + "' (line " +
                     std::to_string(constraint.condition.where.line) + ") " + why +
                     (problem_text.empty() ? std::string() : " for " + problem_text),
                 "choose a config that every constraint keeps");
    }
  }
}

}  // namespace tiletune::detail
