// T1 (Kernel Tuner / KTT input format) into a tiletune YAML space, with the launch Kernel Tuner
// would use. T1 files write their values, conditions and sizes in Python: those go through
// tiletune's Python interpreter (tiletune/python_expr.hpp) — value lists are evaluated here,
// conditions are kept as {python: ...} constraints, sizes are written natively where tiletune's
// integer expressions mean the same and in Python where not. Every field of the schema is
// mapped, kept as a comment (what tiletune sets on its command line), or refused with the
// field's path and the reason; the YAML written is parsed back before it is returned.
//
// Kernel Tuner's reading of T1 (interface.tune_kernel_T1) decides the launch: ProblemSize is
// the problem (tiletune's problem: problem_size_x, _y, _z) and each grid dimension is
// ceil(ProblemSize / product of GridDiv), GridDiv defaulting to the param block_size_x, _y, _z
// where there is one; GlobalSize is used only without a ProblemSize. A Vector argument's Size
// sees ProblemSize and each param as the list of its values (max(filter_width)); a constant-
// memory argument (MemType Constant, MemoryType Symbol) is a module global.
#include <cmath>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/input_file.hpp"
#include "interchange/yaml_text.hpp"
#include "tiletune/interchange.hpp"
#include "tiletune/message.hpp"
#include "tiletune/python_expr.hpp"
#include "tiletune/space.hpp"

namespace tiletune {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using interchange_detail::is_identifier;
using interchange_detail::yaml_quoted;

constexpr std::size_t kMaxValues = std::size_t{1} << 20;
// Kernel Tuner's spaces have tens of params; the bound keeps every per-param step cheap.
constexpr std::size_t kMaxParams = 1024;
constexpr const char* kDims[] = {"X", "Y", "Z"};
constexpr const char* kProblemNames[] = {"problem_size_x", "problem_size_y", "problem_size_z"};
constexpr const char* kBlockNames[] = {"block_size_x", "block_size_y", "block_size_z"};

class Reader {
 public:
  explicit Reader(fs::path file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& why) const {
    throw InterchangeError(fmt::format("{}: {}: {}", file_.string(), field, why));
  }
  const Json& need(const Json& parent, const std::string& parent_path, const char* key) const {
    if (!parent.is_object() || !parent.contains(key))
      fail(join(parent_path, key), "required by the T1 schema, missing");
    return parent.at(key);
  }
  std::string string(const Json& v, const std::string& field) const {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer()) return std::to_string(int64(v, field));
    fail(field, fmt::format("expected a string, found {}", v.type_name()));
  }
  // An integer of the file; one past the 64-bit integers is refused, never wrapped.
  std::int64_t int64(const Json& v, const std::string& field) const {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(INT64_MAX))
      fail(field, fmt::format("{} is beyond the 64-bit integers", v.get<std::uint64_t>()));
    if (v.is_number_integer()) return v.get<std::int64_t>();
    if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
    fail(field, fmt::format("expected an integer, found {}", v.type_name()));
  }
  // A number (or a bool) of the file as a py::Value, its integers checked as int64 checks them.
  py::Value number(const Json& v, const std::string& field) const {
    if (v.is_number_float()) return py::Value::real(v.get<double>());
    return py::Value::integer(int64(v, field));
  }
  static std::string join(const std::string& a, const std::string& b) { return a.empty() ? b : a + "." + b; }
  [[nodiscard]] const fs::path& file() const { return file_; }

 private:
  fs::path file_;
};

// An expression for the YAML: tiletune's own where it means what the Python means (names,
// integers, + - * and parentheses: no division, whose rounding differs), else {python: ...}.
struct Expression {
  std::string text;
  bool python = false;
  [[nodiscard]] std::string yaml() const { return python ? "{python: " + yaml_quoted(text) + "}" : yaml_quoted(text); }
};

Expression expression_of(const std::string& python_text) {
  const bool native =
      python_text.find("**") == std::string::npos && std::all_of(python_text.begin(), python_text.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ' ' || c == '+' || c == '-' ||
               c == '*' || c == '(' || c == ')';
      });
  return {python_text, !native};
}

// A JSON value as text for a message; invalid UTF-8 in it replaced, never thrown over.
std::string dumped(const Json& v) { return v.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string search_name(const Json& search) {
  if (!search.contains("Name")) return "?";
  return search["Name"].is_string() ? search["Name"].get<std::string>() : dumped(search["Name"]);
}

// --- params -------------------------------------------------------------------------------------

struct Param {
  std::string name;
  std::vector<py::Value> values;  // ints, floats or strs, as the file gives them
  std::optional<py::Value> default_value;
  [[nodiscard]] bool integers() const {
    return std::all_of(values.begin(), values.end(), [](const py::Value& v) { return v.is_integral(); });
  }
  [[nodiscard]] bool numbers() const {
    return std::all_of(values.begin(), values.end(), [](const py::Value& v) { return v.is_number(); });
  }
  // The YAML list of the values: integers, numbers (Python's repr, which reads back to the same
  // double) or quoted words.
  [[nodiscard]] std::string yaml_values() const {
    std::string out = "[";
    for (std::size_t i = 0; i < values.size(); ++i) {
      const py::Value& v = values[i];
      out += i ? ", " : "";
      out += v.kind() == py::Value::Kind::text ? yaml_quoted(v.as_text())
             : v.is_integral()                 ? std::to_string(v.as_int())
                                               : v.repr();
    }
    return out + "]";
  }
};

// Whether a whole number x is a 64-bit integer (2^63 is not: it is one past).
bool fits_int64(double x) { return x >= -0x1p63 && x < 0x1p63; }

// Whether a float of the file is an integer exactly: from 2^53 on a JSON float is rounded, and an
// integer literal past 64 bits is read as one (-2^63 - 1 becomes -2^63).
bool exact_integer(double x) { return std::fabs(x) < 0x1p53; }
constexpr const char* kNotExact = "{} is not an exact integer (a float from 2^53 on, or a number past 64 bits)";

// A file the T1 file names; a name the system cannot look up (too long, ...) is not one.
bool is_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

// A value as a sort key where equal values (1 and 1.0, as Python compares) are equal keys:
// integers exactly, not through a double that would merge 2^53 + 1 with 2^53.
std::string value_key(const py::Value& x) {
  if (x.kind() == py::Value::Kind::text) return "s" + x.as_text();
  if (x.is_integral()) return fmt::format("n{}", x.as_int());
  const double d = x.as_real();
  if (d == std::floor(d) && fits_int64(d)) return fmt::format("n{}", static_cast<std::int64_t>(d));
  return fmt::format("r{}", d);
}

// A param's values, from KTT's array or Kernel Tuner's Python text.
std::vector<py::Value> param_values(const Reader& r, const Json& p, const std::string& field, const std::string& type) {
  const Json& v = r.need(p, field, "Values");
  std::vector<py::Value> out;
  if (v.is_array()) {
    if (v.size() > kMaxValues) r.fail(field + ".Values", fmt::format("more than {} values", kMaxValues));
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i].is_boolean() || v[i].is_number())
        out.push_back(r.number(v[i], fmt::format("{}.Values[{}]", field, i)));
      else if (v[i].is_string())
        out.push_back(py::Value::text(v[i].get<std::string>()));
      else
        r.fail(fmt::format("{}.Values[{}]", field, i), fmt::format("{} is not a number or a string", v[i].type_name()));
    }
  } else if (v.is_string()) {
    py::Value list;
    const std::string text = v.get<std::string>();
    try {
      list = py::eval_constant(text);
    } catch (const ExprSyntaxError& e) {
      r.fail(field + ".Values", fmt::format("{}: {} (at offset {})", quote(text), one_line(e.what()), e.offset()));
    } catch (const EvalError& e) { r.fail(field + ".Values", fmt::format("{}: {}", quote(text), one_line(e.what()))); }
    if (list.kind() != py::Value::Kind::list)
      r.fail(field + ".Values", fmt::format("{} is {}, not a list of values", quote(text), quote(list.repr())));
    for (const py::Value& x : list.as_list())
      out.push_back(x.kind() == py::Value::Kind::boolean ? py::Value::integer(x.as_int()) : x);
  } else {
    r.fail(field + ".Values", fmt::format("expected a string or an array, found {}", v.type_name()));
  }
  if (out.empty()) r.fail(field + ".Values", "no values");
  for (std::size_t i = 0; i < out.size(); ++i) {
    const py::Value& x = out[i];
    if (x.kind() == py::Value::Kind::list || x.kind() == py::Value::Kind::none)
      r.fail(field + ".Values", fmt::format("{} is not a number or a string", quote(x.repr())));
    if (x.kind() == py::Value::Kind::real && !std::isfinite(x.as_real()))
      r.fail(field + ".Values", fmt::format("{} is not a finite number", x.repr()));
    if (x.kind() == py::Value::Kind::real && type == "int" && !exact_integer(x.as_real()))
      r.fail(field + ".Values", fmt::format(fmt::runtime(kNotExact), x.repr()));
    if (x.kind() == py::Value::Kind::text &&
        (x.as_text().empty() || x.as_text().size() > 128 || x.as_text().find_first_of("\n\r") != std::string::npos))
      r.fail(field + ".Values", fmt::format("{} is not one line of 1 to 128 characters", quote(x.as_text())));
  }
  const bool words =
      std::all_of(out.begin(), out.end(), [](const py::Value& x) { return x.kind() == py::Value::Kind::text; });
  const bool numbers = std::all_of(out.begin(), out.end(), [](const py::Value& x) { return x.is_number(); });
  if (!words && !numbers) r.fail(field + ".Values", "mixes numbers and strings: a tiletune param holds one kind");
  if (type == "string" && !words) r.fail(field + ".Values", "Type string, but the values are numbers");
  if (words && type != "string") r.fail(field + ".Values", fmt::format("Type {}, but the values are strings", type));
  // Sorted copies find repeats in n log n, whatever n.
  std::vector<std::string> keys;
  for (const py::Value& x : out) keys.push_back(value_key(x));
  std::sort(keys.begin(), keys.end());
  if (const auto twice = std::adjacent_find(keys.begin(), keys.end()); twice != keys.end())
    r.fail(field + ".Values", fmt::format("{} is listed twice", quote(twice->substr(1))));
  return out;
}

std::vector<Param> read_params(const Reader& r, const Json& space) {
  const Json& list = r.need(space, "ConfigurationSpace", "TuningParameters");
  if (!list.is_array() || list.empty()) r.fail("ConfigurationSpace.TuningParameters", "expected a non-empty array");
  if (list.size() > kMaxParams)
    r.fail("ConfigurationSpace.TuningParameters",
           fmt::format("{} params, more than the {} a space may have", list.size(), kMaxParams));
  std::vector<Param> out;
  std::set<std::string> declared;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string field = fmt::format("ConfigurationSpace.TuningParameters[{}]", i);
    Param p;
    p.name = r.string(r.need(list[i], field, "Name"), field + ".Name");
    if (!is_identifier(p.name))
      r.fail(field + ".Name", fmt::format("{} is not a C identifier (it becomes -DNAME=...)", quote(p.name)));
    for (const char* reserved : kProblemNames)
      if (p.name == reserved)
        r.fail(field + ".Name", fmt::format("'{}' is the name tiletune gives ProblemSize", p.name));
    std::string type = r.string(r.need(list[i], field, "Type"), field + ".Type");
    static const std::pair<const char*, const char*> types[] = {
        {"int", "int"},       {"uint", "int"},     {"bool", "int"},        {"float", "float"},
        {"string", "string"}, {"Int", "int"},      {"UnsignedInt", "int"}, {"Bool", "int"},
        {"Float", "float"},   {"Double", "float"}, {"String", "string"}};
    const auto t = std::find_if(std::begin(types), std::end(types), [&](const auto& x) { return type == x.first; });
    if (t == std::end(types))
      r.fail(field + ".Type", fmt::format("{} is not a T1 type (int, uint, float, bool, string)", quote(type)));
    p.values = param_values(r, list[i], field, t->second);
    if (list[i].contains("Default")) {
      const Json& d = list[i]["Default"];
      if (d.is_boolean() || d.is_number())
        p.default_value = r.number(d, field + ".Default");
      else if (d.is_string())
        p.default_value = py::Value::text(d.get<std::string>());
      else
        r.fail(field + ".Default", fmt::format("expected a value, found {}", d.type_name()));
    }
    if (!declared.insert(p.name).second) r.fail(field + ".Name", fmt::format("'{}' is declared twice", p.name));
    out.push_back(std::move(p));
  }
  return out;
}

// --- names in Python text -------------------------------------------------------------------------

// How a T1 Python text sees the space: ProblemSize[i] is problem size i, the bare ProblemSize the
// list of them; with `params_as_lists`, a param is the list of its values (Kernel Tuner evaluates
// an argument's Size so: max(filter_width)).
struct Names {
  const std::vector<Param>* params = nullptr;
  std::vector<std::int64_t> problem;  // ProblemSize as the file gives it

  [[nodiscard]] const Param* param(std::string_view name) const {
    for (const Param& p : *params)
      if (p.name == name) return &p;
    return nullptr;
  }

  std::string rewrite(const Reader& r, const std::string& field, const std::string& text, bool params_as_lists) const {
    try {
      return py::rename(
          text, [&](std::string_view name, std::optional<std::int64_t> index) -> std::optional<std::string> {
            if (name == "ProblemSize") {
              if (problem.empty())
                r.fail(field, fmt::format("{} uses ProblemSize, which the file does not give", quote(text)));
              if (index) {
                if (*index < 0 || *index >= static_cast<std::int64_t>(problem.size()))
                  r.fail(field, fmt::format("ProblemSize[{}]: ProblemSize has {} entries", *index, problem.size()));
                return std::string(kProblemNames[*index]);
              }
              std::string list = "[";
              for (std::size_t d = 0; d < problem.size(); ++d) list += (d ? ", " : "") + std::string(kProblemNames[d]);
              return list + "]";
            }
            if (!params_as_lists || index) return std::nullopt;
            if (const Param* p = param(name)) {
              std::string list = "[";
              for (std::size_t i = 0; i < p->values.size(); ++i) list += (i ? ", " : "") + p->values[i].repr();
              return list + "]";
            }
            return std::nullopt;
          });
    } catch (const ExprSyntaxError& e) { r.fail(field, fmt::format("{}: {}", quote(text), one_line(e.what()))); }
  }

  // Checks that text is Python tiletune reads, over these names only; returns the parsed program.
  py::Program check(const Reader& r, const std::string& field, const std::string& text,
                    const std::vector<std::string>& allowed) const {
    py::Program program;
    try {
      program = py::Program::parse(text);
    } catch (const ExprSyntaxError& e) { r.fail(field, fmt::format("{}: {}", quote(text), one_line(e.what()))); }
    for (const std::string& n : program.free_names())
      if (std::find(allowed.begin(), allowed.end(), n) == allowed.end())
        r.fail(field, fmt::format("{}: unknown name '{}' (not a tuning parameter of this file)", quote(text), n));
    return program;
  }
};

// The value of one Python field or value of the file: a string of Python or a number.
std::string python_text(const Reader& r, const Json& v, const std::string& field) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(r.int64(v, field));
  if (v.is_number_float()) return py::Value::real(v.get<double>()).repr();
  r.fail(field, fmt::format("expected a string or a number, found {}", v.type_name()));
}

// --- the import ---------------------------------------------------------------------------------

struct Buffer {
  std::string name, type, init;
  Expression count;
  bool output = false;
};
struct Global {
  std::string name, type, init;
  Expression count;
};

class Importer {
 public:
  Importer(const Reader& r, const Json& root, const fs::path& yaml_path, std::string family, T1GlobalSize global_size)
      : r_(r), root_(root), yaml_path_(yaml_path), family_(std::move(family)), global_size_(global_size) {}

  T1Import run() {
    const Json& space = r_.need(root_, "", "ConfigurationSpace");
    spec_ = &r_.need(root_, "", "KernelSpecification");
    read_kernel();
    params_ = read_params(r_, space);
    names_.params = &params_;
    read_problem();
    for (const Param& p : params_) slot_names_.push_back(p.name);
    for (std::size_t d = 0; d < names_.problem.size(); ++d) slot_names_.push_back(kProblemNames[d]);
    read_conditions(space);
    read_launch();
    read_arguments();
    read_references();
    check_default();
    out_.notes = command_line_notes();
    out_.yaml = yaml();
    return std::move(out_);
  }

 private:
  void read_kernel() {
    const Json& spec = *spec_;
    const std::string language =
        r_.string(r_.need(spec, "KernelSpecification", "Language"), "KernelSpecification.Language");
    if (language != "CUDA")
      r_.fail("KernelSpecification.Language", fmt::format("{}: tiletune tunes CUDA kernels", quote(language)));
    kernel_name_ = r_.string(r_.need(spec, "KernelSpecification", "KernelName"), "KernelSpecification.KernelName");
    if (!is_identifier(kernel_name_))
      r_.fail("KernelSpecification.KernelName", fmt::format("{} is not a C identifier", quote(kernel_name_)));
    if (family_.empty()) family_ = kernel_name_;
    if (spec.contains("KernelTypeNames") && !spec["KernelTypeNames"].empty())
      r_.fail("KernelSpecification.KernelTypeNames",
              "template kernels do not map yet: name the instantiation as entry");
    const std::string kernel_file =
        r_.string(r_.need(spec, "KernelSpecification", "KernelFile"), "KernelSpecification.KernelFile");
    // As Kernel Tuner looks for it: next to the T1 file, then one folder up.
    const fs::path here = fs::absolute(r_.file()).parent_path();
    source_ = here / kernel_file;
    if (!is_file(source_) && is_file(here.parent_path() / kernel_file)) source_ = here.parent_path() / kernel_file;
    if (!is_file(source_))
      r_.fail("KernelSpecification.KernelFile", fmt::format("{} is not a file (KernelFile is relative to the T1 file)",
                                                            quote((here / kernel_file).lexically_normal().string())));
    if (spec.contains("CompilerOptions")) {
      const Json& o = spec["CompilerOptions"];
      if (!o.is_array()) r_.fail("KernelSpecification.CompilerOptions", "expected an array of strings");
      for (std::size_t i = 0; i < o.size(); ++i)
        options_.push_back(r_.string(o[i], fmt::format("KernelSpecification.CompilerOptions[{}]", i)));
    }
  }

  void read_problem() {
    if (!spec_->contains("ProblemSize")) return;
    const Json& ps = (*spec_)["ProblemSize"];
    const Json list = ps.is_array() ? ps : Json::array({ps});
    if (list.empty() || list.size() > 3) r_.fail("KernelSpecification.ProblemSize", "expected 1 to 3 sizes");
    for (std::size_t d = 0; d < list.size(); ++d) {
      const std::string field = fmt::format("KernelSpecification.ProblemSize[{}]", d);
      if (!list[d].is_number_integer() || r_.int64(list[d], field) < 1)
        r_.fail(field, fmt::format("{} is not a positive integer (a problem size)", quote(dumped(list[d]))));
      names_.problem.push_back(r_.int64(list[d], field));
    }
  }

  void read_conditions(const Json& space) {
    if (!space.contains("Conditions")) return;
    const Json& list = space["Conditions"];
    if (!list.is_array()) r_.fail("ConfigurationSpace.Conditions", "expected an array");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string field = fmt::format("ConfigurationSpace.Conditions[{}]", i);
      const Json& params = r_.need(list[i], field, "Parameters");
      if (!params.is_array()) r_.fail(field + ".Parameters", "expected an array of parameter names");
      for (std::size_t j = 0; j < params.size(); ++j) {
        const std::string n = r_.string(params[j], fmt::format("{}.Parameters[{}]", field, j));
        if (!names_.param(n))
          r_.fail(fmt::format("{}.Parameters[{}]", field, j), fmt::format("{} is not a tuning parameter", quote(n)));
      }
      const std::string text = names_.rewrite(
          r_, field + ".Expression", r_.string(r_.need(list[i], field, "Expression"), field + ".Expression"), false);
      conditions_.push_back(names_.check(r_, field + ".Expression", text, slot_names_));
      constraints_.push_back(text);
    }
  }

  // A launch size: a Python text over the params (scalars) and ProblemSize.
  std::string launch_text(const Json& v, const std::string& field) {
    const std::string text = names_.rewrite(r_, field, python_text(r_, v, field), false);
    (void)names_.check(r_, field, text, slot_names_);
    return text;
  }

  std::vector<std::string> dims(const char* key, bool required) {
    std::vector<std::string> out;
    if (!spec_->contains(key)) {
      if (required) r_.fail(std::string("KernelSpecification.") + key, "required by the T1 schema, missing");
      return out;
    }
    const Json& size = (*spec_)[key];
    const std::string field = std::string("KernelSpecification.") + key;
    if (!size.is_object()) r_.fail(field, "expected an object with X, Y, Z");
    for (const char* d : kDims)
      if (size.contains(d))
        out.push_back(launch_text(size[d], field + "." + d));
      else if (std::string(d) == "X")
        r_.fail(field + ".X", "required by the T1 schema, missing");
      else
        out.push_back("1");
    return out;
  }

  // Kernel Tuner's grid divisor of dimension d: GridDivX/Y/Z's terms multiplied, or the param
  // block_size_x/y/z where there is one.
  std::vector<std::string> grid_divisors(std::size_t d) {
    const std::string key = std::string("GridDiv") + kDims[d];
    std::vector<std::string> terms;
    if (spec_->contains(key) && !(*spec_)[key].empty()) {
      const Json& list = (*spec_)[key];
      if (!list.is_array())
        r_.fail("KernelSpecification." + key, "expected an array of parameter names or expressions");
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string field = fmt::format("KernelSpecification.{}[{}]", key, i);
        const std::string text = launch_text(list[i], field);
        const Param* p = names_.param(text);
        terms.push_back(p && p->integers() ? text : "int(" + text + ")");
      }
    } else if (const Param* p = names_.param(kBlockNames[d])) {
      terms.push_back(p->integers() ? p->name : "int(" + p->name + ")");
    }
    return terms;
  }

  // Dimension d of Kernel Tuner's grid, in Python (for evaluation) and for the YAML: ceil_div
  // where every divisor is an integer param or a number, Python's ceil of a true division else.
  void problem_grid(std::size_t d) {
    const std::string size = d < names_.problem.size() ? kProblemNames[d] : "1";
    const std::vector<std::string> terms = grid_divisors(d);
    const std::string divisor = fmt::format("{}", fmt::join(terms, " * "));
    grid_.push_back(divisor.empty() ? size : fmt::format("ceil({} / ({}))", size, divisor));
    const bool simple = std::all_of(terms.begin(), terms.end(),
                                    [](const std::string& t) { return t.find_first_of("()") == std::string::npos; });
    grid_yaml_.push_back(divisor.empty() ? expression_of(size)
                         : simple        ? Expression{fmt::format("ceil_div({}, {})", size, divisor), false}
                                         : Expression{grid_.back(), true});
  }

  void read_launch() {
    block_ = dims("LocalSize", true);
    const std::vector<std::string> global = dims("GlobalSize", names_.problem.empty());
    const std::string size_type = spec_->contains("GlobalSizeType")
                                      ? r_.string((*spec_)["GlobalSizeType"], "KernelSpecification.GlobalSizeType")
                                      : "OpenCL";
    if (size_type != "CUDA" && size_type != "OpenCL" && size_type != "Vulkan")
      r_.fail("KernelSpecification.GlobalSizeType", fmt::format("{} is not CUDA, OpenCL or Vulkan", quote(size_type)));
    const bool blocks = global_size_ == T1GlobalSize::blocks ||
                        (global_size_ == T1GlobalSize::from_file && size_type == "CUDA");
    std::vector<std::string> from_global;
    for (std::size_t d = 0; d < global.size(); ++d) {
      if (blocks) {
        from_global.push_back(global[d]);
        continue;
      }
      if (global_size_ == T1GlobalSize::from_file) warn_if_counting_blocks(global[d], d, size_type);
      from_global.push_back(fmt::format("(({}) + ({}) - 1) // ({})", global[d], block_[d], block_[d]));
    }
    if (names_.problem.empty()) {
      grid_ = from_global;
      for (const std::string& g : grid_) grid_yaml_.push_back(expression_of(g));
    } else {
      for (std::size_t d = 0; d < 3; ++d) problem_grid(d);
      if (!from_global.empty()) compare_grids(from_global);
    }
    if (spec_->contains("SharedMemory"))
      shared_ = launch_text((*spec_)["SharedMemory"], "KernelSpecification.SharedMemory");
  }

  // A GlobalSize read as threads that divides by the param its dimension's LocalSize is
  // (`(N // BLOCK_SIZE // WPT) + 1` with LocalSize BLOCK_SIZE) most likely counts blocks: divided
  // by LocalSize once more, the grid would be BLOCK_SIZE times smaller than the file means.
  void warn_if_counting_blocks(const std::string& global, std::size_t d, const std::string& size_type) {
    const std::string& block = block_[d];
    if (!names_.param(block)) return;
    const std::regex divides_by_block("/\\s*\\(*\\s*" + block + "(?![A-Za-z0-9_])");
    if (!std::regex_search(global, divides_by_block)) return;
    out_.warnings.push_back(fmt::format(
        "{}: KernelSpecification.GlobalSize.{} ({}) divides by {}, the param LocalSize.{} is, so it seems to count "
        "blocks, but GlobalSizeType {} reads it as threads (divided by {} once more): pass --global-size-type blocks "
        "if it counts blocks",
        r_.file().string(), kDims[d], global, block, kDims[d], size_type, block));
  }

  // The params' values at the default config (the first value of each where there is none).
  std::vector<py::Value> default_values() const {
    std::vector<py::Value> v;
    for (const Param& p : params_) v.push_back(p.default_value.value_or(p.values.front()));
    for (const std::int64_t s : names_.problem) v.push_back(py::Value::integer(s));
    return v;
  }

  std::optional<std::int64_t> evaluate(const std::string& text, const std::vector<py::Value>& values) const {
    try {
      const py::Program p = py::Program::parse(text);
      std::vector<py::Value> free;
      for (const std::string& n : p.free_names()) {
        const auto at = std::find(slot_names_.begin(), slot_names_.end(), n);
        if (at == slot_names_.end()) return std::nullopt;
        free.push_back(values[static_cast<std::size_t>(at - slot_names_.begin())]);
      }
      return py::to_integer(p.eval(free), text);
    } catch (const Error&) { return std::nullopt; }
  }

  // Where a file gives both, GlobalSize and ProblemSize with GridDiv should agree; tiletune uses
  // the second, as Kernel Tuner does, and says so when they differ at the default config.
  void compare_grids(const std::vector<std::string>& from_global) {
    const std::vector<py::Value> at = default_values();
    std::vector<std::string> a, b;
    bool differ = false;
    for (std::size_t d = 0; d < 3; ++d) {
      const auto x = evaluate(d < from_global.size() ? from_global[d] : "1", at);
      const auto y = evaluate(grid_[d], at);
      a.push_back(x ? std::to_string(*x) : "?");
      b.push_back(y ? std::to_string(*y) : "?");
      differ = differ || x != y;
    }
    if (differ)
      out_.warnings.push_back(fmt::format(
          "KernelSpecification.GlobalSize gives a grid of {} at the default config, ProblemSize with GridDiv gives {}: "
          "tiletune uses ProblemSize with GridDiv, as Kernel Tuner does",
          fmt::join(a, " x "), fmt::join(b, " x ")));
  }

  // T1 types -> tiletune types; vectors of n (float4, half8) as n elements of theirs.
  std::pair<std::string, int> element_type(const std::string& t, const std::string& field) const {
    static const std::pair<const char*, const char*> scalars[] = {
        {"bool", "uint8"},    {"int8", "int8"}, {"uint8", "uint8"}, {"int16", "int16"},
        {"uint16", "uint16"}, {"int32", "int"}, {"uint32", "uint"}, {"int64", "int64"},
        {"uint64", "uint64"}, {"half", "half"}, {"float", "float"}, {"double", "double"}};
    for (const auto& [from, to] : scalars)
      if (t == from) return {to, 1};
    for (const char* base : {"float", "double", "half"})
      for (int n : {2, 4, 8, 16})
        if (t == fmt::format("{}{}", base, n)) return {base, n};
    r_.fail(field, fmt::format("type {} has no tiletune buffer type (the T1 schema's numeric types and their vectors "
                               "map; custom does not)",
                               quote(t)));
  }

  std::string fill(const Json& a, const std::string& field, const std::string& type) {
    const std::string kind = a.contains("FillType") ? r_.string(a["FillType"], field + ".FillType") : "Constant";
    const bool floating = type == "float" || type == "double" || type == "half";
    if (kind == "Random") return floating ? "{normal: {mean: 0, stddev: 1}}" : "random";  // Kernel Tuner: randn
    if (kind == "Constant") {
      const Json& v = a.contains("FillValue") ? a["FillValue"] : Json(0);
      if (!v.is_number()) r_.fail(field + ".FillValue", "expected a number");
      const double x = v.get<double>();
      if (!std::isfinite(x)) r_.fail(field + ".FillValue", "not a finite number");
      if (x == 0) return "zero";
      if (!floating && x != std::floor(x))
        r_.fail(field + ".FillValue", fmt::format("{} is not a whole number, and the buffer holds {}", x, type));
      if (!floating && !exact_integer(x))
        r_.fail(field + ".FillValue", fmt::format(fmt::runtime(kNotExact), dumped(v)));
      if (!floating) return fmt::format("{{constant: {}}}", static_cast<std::int64_t>(x));
      return fmt::format("{{constant: {}}}", py::Value::real(x).repr());
    }
    if (kind == "Generator") {
      const std::string source = a.contains("DataSource") ? r_.string(a["DataSource"], field + ".DataSource") : "";
      if (source == "i") return "iota";
      r_.fail(field + ".DataSource",
              fmt::format("the generator {} does not map (only \"i\", which is iota)", quote(source)));
    }
    if (kind == "BinaryRaw") return fmt::format("{{file: {}}}", yaml_quoted(data_file(a, field)));
    r_.fail(field + ".FillType",
            fmt::format("{} does not map (Constant, Random, the generator \"i\" and BinaryRaw do)", quote(kind)));
  }

  // A DataSource file, relative to the T1 file, written relative to the YAML.
  std::string data_file(const Json& a, const std::string& field) const {
    const std::string source = r_.string(r_.need(a, field, "DataSource"), field + ".DataSource");
    const fs::path path = fs::absolute(r_.file()).parent_path() / source;
    if (!is_file(path))
      r_.fail(field + ".DataSource",
              fmt::format("{} is not a file (DataSource is relative to the T1 file)", quote(source)));
    return relative_to_yaml(path);
  }

  std::string relative_to_yaml(const fs::path& path) const {
    const fs::path yaml_dir = fs::weakly_canonical(fs::absolute(yaml_path_).parent_path());
    return fs::weakly_canonical(path).lexically_relative(yaml_dir).generic_string();
  }

  std::string scalar(const Json& a, const std::string& field, const std::string& type) {
    const auto [element, lanes] = element_type(type, field + ".Type");
    if (lanes != 1) r_.fail(field + ".Type", "a vector type is not a scalar argument");
    const Json& v = a.contains("FillValue") ? a["FillValue"] : Json(0);
    if (!v.is_number()) r_.fail(field + ".FillValue", "a scalar argument needs a number");
    const bool floating = element == "float" || element == "double" || element == "half";
    if (!floating && v.is_number_float() && v.get<double>() != std::floor(v.get<double>()))
      r_.fail(field + ".FillValue", fmt::format("{} is not a whole number, and the argument is {}", dumped(v), type));
    if (!floating && v.is_number_float() && !exact_integer(v.get<double>()))
      r_.fail(field + ".FillValue", fmt::format(fmt::runtime(kNotExact), dumped(v)));
    const std::string value = v.is_number_float() ? py::Value::real(v.get<double>()).repr()
                                                  : std::to_string(r_.int64(v, field + ".FillValue"));
    return fmt::format("{{value: {}, type: {}}}", value, element);
  }

  void read_arguments() {
    const Json& spec = *spec_;
    if (!spec.contains("Arguments"))
      r_.fail("KernelSpecification.Arguments", "missing: tiletune needs the kernel's arguments");
    const Json& list = spec["Arguments"];
    if (!list.is_array()) r_.fail("KernelSpecification.Arguments", "expected an array");
    std::set<std::string> used;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string field = fmt::format("KernelSpecification.Arguments[{}]", i);
      const Json& a = list[i];
      const std::string name = a.contains("Name") ? r_.string(a["Name"], field + ".Name") : fmt::format("arg{}", i);
      if (!is_identifier(name)) r_.fail(field + ".Name", fmt::format("{} is not an identifier", quote(name)));
      if (!used.insert(name).second) r_.fail(field + ".Name", fmt::format("'{}' is used twice", name));
      const std::string memory = r_.string(r_.need(a, field, "MemoryType"), field + ".MemoryType");
      const std::string type = r_.string(r_.need(a, field, "Type"), field + ".Type");
      if (memory == "Scalar") {
        args_.push_back(scalar(a, field, type));
        continue;
      }
      if (memory == "Local")
        r_.fail(field + ".MemoryType",
                "Local memory is not a kernel argument in tiletune: give its bytes as SharedMemory");
      if (memory != "Vector" && memory != "Symbol")
        r_.fail(field + ".MemoryType", fmt::format("{} does not map (Vector, Scalar and Symbol do)", quote(memory)));
      const auto [element, lanes] = element_type(type, field + ".Type");
      const std::string size_field = field + ".Size";
      // Kernel Tuner evaluates Size with each param as the list of its values (max(filter_width)).
      std::string count = names_.rewrite(r_, size_field, python_text(r_, r_.need(a, field, "Size"), size_field), true);
      (void)names_.check(r_, size_field, count, slot_names_);
      if (lanes > 1) count = fmt::format("({}) * {}", count, lanes);
      if (const auto n = evaluate(count, default_values()); !n || *n < 1)
        r_.fail(size_field, fmt::format("{} is not a positive whole number of elements", quote(count)));
      const std::string init = fill(a, field, element);
      const bool constant = memory == "Symbol" || (a.contains("MemType") && a["MemType"] == "Constant");
      if (constant) {  // a __constant__ symbol of the module, as Kernel Tuner's cmem_args
        globals_.push_back(Global{name, element, init, expression_of(count)});
        continue;
      }
      const std::string access =
          a.contains("AccessType") ? r_.string(a["AccessType"], field + ".AccessType") : "ReadWrite";
      const bool output = access != "ReadOnly" || (a.contains("Output") && a["Output"] == 1);
      buffers_.push_back(Buffer{name, element, init, expression_of(count), output});
      args_.push_back(name);
    }
    if (std::none_of(buffers_.begin(), buffers_.end(), [](const Buffer& b) { return b.output; }))
      r_.fail("KernelSpecification.Arguments",
              "no Vector argument is WriteOnly or ReadWrite: tiletune needs an output");
  }

  // ReferenceArguments with BinaryRaw data become the expected outputs of their targets.
  void read_references() {
    if (!spec_->contains("ReferenceArguments")) return;
    const Json& list = (*spec_)["ReferenceArguments"];
    if (!list.is_array()) r_.fail("KernelSpecification.ReferenceArguments", "expected an array");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string field = fmt::format("KernelSpecification.ReferenceArguments[{}]", i);
      const Json& ref = list[i];
      const std::string target = r_.string(r_.need(ref, field, "TargetName"), field + ".TargetName");
      const auto b = std::find_if(buffers_.begin(), buffers_.end(), [&](const Buffer& x) { return x.name == target; });
      if (b == buffers_.end() || !b->output)
        r_.fail(field + ".TargetName", fmt::format("{} is not an output argument", quote(target)));
      const std::string kind = r_.string(r_.need(ref, field, "FillType"), field + ".FillType");
      if (kind != "BinaryRaw") {
        out_.notes.push_back(
            fmt::format("{}: reference data filled by {} is not imported: add a verify: reference", field, kind));
        continue;
      }
      const std::string source = r_.string(r_.need(ref, field, "DataSource"), field + ".DataSource");
      if (!is_file(fs::absolute(r_.file()).parent_path() / source)) {
        out_.warnings.push_back(
            fmt::format("{}: the reference data {} is not a file: candidates are not verified", field, quote(source)));
        continue;
      }
      references_.emplace_back(target, data_file(ref, field));
      if (ref.contains("ValidationThreshold") && ref["ValidationThreshold"].is_number()) {
        const std::string method = ref.contains("ValidationMethod")
                                       ? r_.string(ref["ValidationMethod"], field + ".ValidationMethod")
                                       : "AbsoluteDifference";
        (method == "SideBySideRelativeComparison" ? rtol_ : atol_) = ref["ValidationThreshold"].get<double>();
      }
    }
  }

  // The defaults name a value of each param and pass the conditions; else they are left out.
  void check_default() {
    has_default_ =
        std::all_of(params_.begin(), params_.end(), [](const Param& p) { return p.default_value.has_value(); });
    if (!has_default_) return;
    for (const Param& p : params_)
      if (std::none_of(p.values.begin(), p.values.end(), [&](const py::Value& v) { return v == *p.default_value; })) {
        out_.warnings.push_back(fmt::format("the Default of {} ({}) is not one of its values: no default config",
                                            p.name, p.default_value->repr()));
        has_default_ = false;
        return;
      }
    const std::vector<py::Value> at = default_values();
    for (std::size_t i = 0; i < constraints_.size(); ++i)
      if (const auto v = evaluate(constraints_[i], at); !v || *v == 0) {
        out_.warnings.push_back(fmt::format(
            "the defaults fail ConfigurationSpace.Conditions[{}] ({}): no default config", i, quote(constraints_[i])));
        has_default_ = false;
        return;
      }
  }

  std::vector<std::string> command_line_notes() const {
    std::vector<std::string> notes = out_.notes;
    if (root_.contains("Budget")) {
      const Json& b = root_["Budget"];
      for (const Json& item : b.is_array() ? b : Json::array({b})) {
        if (!item.is_object()) continue;
        const std::string type =
            item.contains("Type") && item["Type"].is_string() ? item["Type"].get<std::string>() : "";
        const double v =
            item.contains("BudgetValue") && item["BudgetValue"].is_number() ? item["BudgetValue"].get<double>() : 0;
        if (type == "ConfigurationCount")
          notes.push_back(fmt::format("Budget ConfigurationCount {}: tune --budget {}", v, v));
        else if (type == "ConfigurationFraction")
          notes.push_back(fmt::format("Budget ConfigurationFraction {}: tune --budget {}%", v, v * 100));
        else if (type == "TuningDuration")
          notes.push_back(fmt::format("Budget TuningDuration {} s: tune --budget {}s", v, v));
      }
    }
    if (root_.contains("Search") && root_["Search"].is_object())
      notes.push_back(
          fmt::format("Search {}: choose a tiletune strategy with tune --strategy (exhaustive, random, "
                      "local, genetic, forest)",
                      quote(search_name(root_["Search"]))));
    if (references_.empty())
      notes.push_back("no reference data is imported: candidates are not verified; add a verify: reference");
    if (spec_->contains("Device")) notes.push_back("KernelSpecification.Device: choose the GPU with tune --device");
    if (spec_->contains("SimulationInput"))
      notes.push_back("KernelSpecification.SimulationInput: import it with import-kt-cache, then tune --replay");
    return notes;
  }

  std::string yaml() const {
    std::ostringstream y;
    y << fmt::format("# Imported from {} (T1, the Kernel Tuner / KTT input format) by `tiletune import-t1`.\n",
                     r_.file().filename().string());
    for (const std::string& n : out_.notes) y << "# note: " << n << '\n';
    for (const std::string& w : out_.warnings) y << "# warning: " << w << '\n';
    y << fmt::format("kernel: {}\nsource: {}\nentry: {}\n", family_, yaml_quoted(relative_to_yaml(source_)),
                     kernel_name_);
    if (!options_.empty()) {
      y << "options: [";
      for (std::size_t i = 0; i < options_.size(); ++i) y << (i ? ", " : "") << yaml_quoted(options_[i]);
      y << "]\n";
    }
    if (!names_.problem.empty()) {
      y << "problem:\n";
      for (std::size_t d = 0; d < names_.problem.size(); ++d)
        y << fmt::format("  {}: [{}]\n", kProblemNames[d], names_.problem[d]);
    }
    y << "params:\n";
    for (const Param& p : params_) y << fmt::format("  {}: {}\n", p.name, p.yaml_values());
    if (!constraints_.empty()) {
      y << "constraints:\n";
      for (const std::string& c : constraints_) y << "  - {python: " << yaml_quoted(c) << "}\n";
    }
    const auto list = [](const std::vector<Expression>& items) {
      std::string out = "[";
      for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i].yaml();
      return out + "]";
    };
    std::vector<Expression> block;
    for (const std::string& b : block_) block.push_back(expression_of(b));
    y << "launch:\n  grid: " << list(grid_yaml_) << "\n  block: " << list(block)
      << "\n  shared_bytes: " << expression_of(shared_).yaml() << '\n';
    y << "buffers:\n";
    for (const Buffer& b : buffers_)
      y << fmt::format("  {}: {{type: {}, count: {}, init: {}{}}}\n", b.name, b.type, b.count.yaml(), b.init,
                       b.output ? ", output: true" : "");
    if (!globals_.empty()) {
      y << "globals:\n";
      for (const Global& g : globals_)
        y << fmt::format("  {}: {{type: {}, count: {}, init: {}}}\n", g.name, g.type, g.count.yaml(), g.init);
    }
    y << "args: [";
    for (std::size_t i = 0; i < args_.size(); ++i) y << (i ? ", " : "") << args_[i];
    y << "]\n";
    if (references_.empty()) {
      y << "verify: {reference: none}   # T1 carries no reference tiletune can run: add one\n";
    } else {
      y << "verify:\n  reference:\n    files:\n";
      for (const auto& [target, file] : references_) y << fmt::format("      {}: {}\n", target, yaml_quoted(file));
      y << fmt::format("  rtol: {}\n  atol: {}\n", py::Value::real(rtol_).repr(), py::Value::real(atol_).repr());
    }
    if (has_default_) {
      y << "default: {";
      for (std::size_t i = 0; i < params_.size(); ++i) {
        const py::Value& v = *params_[i].default_value;
        y << (i ? ", " : "") << params_[i].name << ": "
          << (v.kind() == py::Value::Kind::text ? yaml_quoted(v.as_text())
              : v.is_integral()                 ? std::to_string(v.as_int())
                                                : v.repr());
      }
      y << "}\n";
    }
    return y.str();
  }

  const Reader& r_;
  const Json& root_;
  const Json* spec_ = nullptr;
  fs::path yaml_path_;
  std::string family_;
  T1GlobalSize global_size_ = T1GlobalSize::from_file;
  std::string kernel_name_;
  fs::path source_;
  std::vector<std::string> options_;
  std::vector<Param> params_;
  Names names_;
  std::vector<std::string> slot_names_;  // params, then the problem sizes
  std::vector<py::Program> conditions_;
  std::vector<std::string> constraints_;
  std::vector<std::string> grid_, block_;  // in Python, for evaluation
  std::vector<Expression> grid_yaml_;
  std::string shared_ = "0";
  std::vector<Buffer> buffers_;
  std::vector<Global> globals_;
  std::vector<std::string> args_;
  std::vector<std::pair<std::string, std::string>> references_;  // output, expected file
  double atol_ = 0, rtol_ = 0;
  bool has_default_ = false;
  T1Import out_;
};

}  // namespace

T1Import import_t1_text(const std::string& text, const fs::path& json_path, const fs::path& yaml_path,
                        const std::string& family, T1GlobalSize global_size) {
  const Reader r(json_path);
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::exception& e) {  // a syntax error, or a number past a double (out_of_range 406)
    throw InterchangeError(fmt::format("{}: not JSON: {}", json_path.string(), one_line(e.what())));
  }
  if (!root.is_object()) r.fail("(top level)", "a T1 file is a JSON object");
  if (!family.empty() && !is_identifier(family))
    throw InterchangeError(fmt::format("--name {}: a family name is an identifier", quote(family)));
  T1Import out;
  try {
    out = Importer(r, root, yaml_path, family, global_size).run();
  } catch (const Error&) {
    throw;
  } catch (const std::exception&) {  // a JSON type error, bad_alloc, ...: located at the file
    throw InterchangeError(fmt::format("{}: {}", json_path.string(), exception_reason(std::current_exception())));
  }
  // What we write must load: parse it as tiletune would. Its reason only: the YAML is not written
  // yet, and a space error's hint would be a second line.
  try {
    (void)parse_space(out.yaml, yaml_path);
  } catch (const SpaceError& e) {
    throw InterchangeError(
        fmt::format("{}: the space it maps to does not load: {}", json_path.string(), one_line(e.reason())));
  } catch (const Error& e) {
    throw InterchangeError(
        fmt::format("{}: the space it maps to does not load: {}", json_path.string(), one_line(e.what())));
  }
  return out;
}

T1Import import_t1(const fs::path& json_path, const fs::path& yaml_path, const std::string& family,
                   T1GlobalSize global_size) {
  constexpr std::size_t kMaxT1Bytes = std::size_t{64} << 20;
  std::string text;
  try {
    text = read_input_file(json_path, "a T1 file", kMaxT1Bytes);
  } catch (const Error& e) { throw InterchangeError(e.what()); }
  return import_t1_text(text, json_path, yaml_path, family, global_size);
}

}  // namespace tiletune
