// T1 (Kernel Tuner / KTT input format) into a tiletune YAML space. Every field of the published
// schema is either mapped, kept as a comment (what tiletune sets on its command line), or
// refused with the field's path and the reason; the YAML written is parsed back with
// parse_space before it is returned, so what comes out always loads.
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "interchange/python_expr.hpp"
#include "interchange/yaml_text.hpp"
#include "tiletune/interchange.hpp"
#include "tiletune/space.hpp"

namespace tiletune {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using interchange_detail::python_values;
using interchange_detail::translate_python;
using interchange_detail::Untranslatable;
using interchange_detail::is_identifier;
using interchange_detail::yaml_list;
using interchange_detail::yaml_quoted;

class Reader {
 public:
  explicit Reader(fs::path file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& why) const {
    throw InterchangeError(fmt::format("{}: {}: {}", file_.string(), field, why));
  }
  const Json& need(const Json& parent, const std::string& parent_path, const char* key) const {
    if (!parent.is_object() || !parent.contains(key)) fail(join(parent_path, key), "required by the T1 schema, missing");
    return parent.at(key);
  }
  std::string string(const Json& v, const std::string& field) const {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
    fail(field, fmt::format("expected a string, found {}", v.type_name()));
  }
  static std::string join(const std::string& a, const std::string& b) { return a.empty() ? b : a + "." + b; }
  [[nodiscard]] const fs::path& file() const { return file_; }

 private:
  fs::path file_;
};

struct Param {
  std::string name;
  std::vector<std::int64_t> values;
  std::optional<std::int64_t> default_value;
};

std::vector<std::int64_t> param_values(const Reader& r, const Json& p, const std::string& field) {
  const Json& v = r.need(p, field, "Values");
  std::vector<std::int64_t> out;
  if (v.is_array()) {  // KTT's schema: an array of integers
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i].is_boolean()) out.push_back(v[i].get<bool>() ? 1 : 0);
      else if (v[i].is_number_integer()) out.push_back(v[i].get<std::int64_t>());
      else r.fail(fmt::format("{}.Values[{}]", field, i), "tiletune's params are integers");
    }
  } else if (v.is_string()) {  // Kernel Tuner's schema: Python text
    try {
      out = python_values(v.get<std::string>());
    } catch (const Untranslatable& e) {
      r.fail(field + ".Values", fmt::format("'{}': {}", v.get<std::string>(), e.what()));
    } catch (const Error& e) {
      r.fail(field + ".Values", fmt::format("'{}': {}", v.get<std::string>(), e.what()));
    }
  } else {
    r.fail(field + ".Values", fmt::format("expected a string or an array, found {}", v.type_name()));
  }
  if (out.empty()) r.fail(field + ".Values", "no values");
  for (std::size_t i = 0; i < out.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (out[i] == out[j]) r.fail(field + ".Values", fmt::format("{} is listed twice", out[i]));
  return out;
}

std::vector<Param> read_params(const Reader& r, const Json& space) {
  const Json& list = r.need(space, "ConfigurationSpace", "TuningParameters");
  if (!list.is_array() || list.empty()) r.fail("ConfigurationSpace.TuningParameters", "expected a non-empty array");
  std::vector<Param> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string field = fmt::format("ConfigurationSpace.TuningParameters[{}]", i);
    Param p;
    p.name = r.string(r.need(list[i], field, "Name"), field + ".Name");
    if (!is_identifier(p.name)) r.fail(field + ".Name", fmt::format("'{}' is not a C identifier (it becomes -D{}=...)", p.name, p.name));
    const std::string type = r.string(r.need(list[i], field, "Type"), field + ".Type");
    static const std::string integral[] = {"int", "uint", "bool", "Int", "UnsignedInt", "Bool"};
    if (std::find(std::begin(integral), std::end(integral), type) == std::end(integral))
      r.fail(field + ".Type", fmt::format("'{}' does not map: tiletune's params are integers (int, uint, bool)", type));
    p.values = param_values(r, list[i], field);
    if (list[i].contains("Default")) {
      const Json& d = list[i]["Default"];
      if (d.is_number_integer()) p.default_value = d.get<std::int64_t>();
      else if (d.is_boolean()) p.default_value = d.get<bool>() ? 1 : 0;
      else r.fail(field + ".Default", "expected an integer");
    }
    for (const Param& q : out)
      if (q.name == p.name) r.fail(field + ".Name", fmt::format("'{}' is declared twice", p.name));
    out.push_back(std::move(p));
  }
  return out;
}

std::string expression(const Reader& r, const Json& v, const std::string& field, const std::vector<std::string>& names) {
  const std::string text = r.string(v, field);
  try {
    return translate_python(text, names);
  } catch (const Untranslatable& e) {
    r.fail(field, fmt::format("'{}': {}", text, e.what()));
  }
}

std::vector<std::string> read_constraints(const Reader& r, const Json& space, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  if (!space.contains("Conditions")) return out;
  const Json& list = space["Conditions"];
  if (!list.is_array()) r.fail("ConfigurationSpace.Conditions", "expected an array");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string field = fmt::format("ConfigurationSpace.Conditions[{}]", i);
    const Json& params = r.need(list[i], field, "Parameters");
    if (!params.is_array()) r.fail(field + ".Parameters", "expected an array of parameter names");
    for (std::size_t j = 0; j < params.size(); ++j) {
      const std::string n = r.string(params[j], fmt::format("{}.Parameters[{}]", field, j));
      if (std::find(names.begin(), names.end(), n) == names.end())
        r.fail(fmt::format("{}.Parameters[{}]", field, j), fmt::format("'{}' is not a tuning parameter", n));
    }
    out.push_back(expression(r, r.need(list[i], field, "Expression"), field + ".Expression", names));
  }
  return out;
}

struct Buffer {
  std::string name, type, count, init;
  bool output = false;
};
struct Argument {
  std::string yaml;  // how it appears in args:
};

// T1 types → tiletune element types; vector types (float4, ...) become their element type with
// the count multiplied.
std::pair<std::string, int> element_type(const Reader& r, const std::string& t, const std::string& field) {
  static const std::pair<const char*, const char*> scalars[] = {
      {"float", "float"}, {"double", "double"}, {"half", "half"}, {"int32", "int"},
      {"uint32", "uint"}, {"int64", "int64"},   {"uint8", "uint8"}};
  for (const auto& [from, to] : scalars)
    if (t == from) return {to, 1};
  for (const char* base : {"float", "double", "half"})
    for (int n : {2, 4, 8, 16})
      if (t == fmt::format("{}{}", base, n)) return {base, n};
  r.fail(field, fmt::format("type '{}' has no tiletune buffer type (float, double, half, int32, uint32, int64, uint8 "
                            "and the float/double/half vectors map)",
                            t));
}

std::string buffer_init(const Reader& r, const Json& a, const std::string& field) {
  const std::string fill = a.contains("FillType") ? r.string(a["FillType"], field + ".FillType") : "Constant";
  if (fill == "Random") return "random";
  if (fill == "Constant") {
    const double v = a.contains("FillValue") && a["FillValue"].is_number() ? a["FillValue"].get<double>() : 0.0;
    if (v != 0)
      r.fail(field + ".FillValue", fmt::format("a constant fill of {} does not map (tiletune fills with zero, random "
                                               "or iota)",
                                               v));
    return "zero";
  }
  if (fill == "Generator") {
    const std::string source = a.contains("DataSource") ? r.string(a["DataSource"], field + ".DataSource") : "";
    if (source == "i") return "iota";
    r.fail(field + ".DataSource", fmt::format("the generator '{}' does not map (only \"i\", which is iota)", source));
  }
  r.fail(field + ".FillType", fmt::format("'{}' does not map (Constant 0, Random and the generator \"i\" do; inputs "
                                          "from files do not yet)",
                                          fill));
}

void read_arguments(const Reader& r, const Json& spec, const std::vector<std::string>& names,
                    std::vector<Buffer>& buffers, std::vector<std::string>& args) {
  if (!spec.contains("Arguments")) r.fail("KernelSpecification.Arguments", "missing: tiletune needs the kernel's arguments");
  const Json& list = spec["Arguments"];
  if (!list.is_array()) r.fail("KernelSpecification.Arguments", "expected an array");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string field = fmt::format("KernelSpecification.Arguments[{}]", i);
    const Json& a = list[i];
    std::string name = a.contains("Name") ? r.string(a["Name"], field + ".Name") : fmt::format("arg{}", i);
    if (!is_identifier(name)) r.fail(field + ".Name", fmt::format("'{}' is not an identifier", name));
    const std::string memory = r.string(r.need(a, field, "MemoryType"), field + ".MemoryType");
    const std::string type = r.string(r.need(a, field, "Type"), field + ".Type");
    if (memory == "Scalar") {
      const Json& v = a.contains("FillValue") ? a["FillValue"] : Json(0);
      if (!v.is_number() || std::floor(v.get<double>()) != v.get<double>())
        r.fail(field + ".FillValue", "a scalar argument that is not an integer does not map (tiletune's scalar "
                                     "arguments are integer expressions)");
      static const std::pair<const char*, const char*> scalar_types[] = {
          {"int32", "int"}, {"uint32", "uint"}, {"int64", "int64"}, {"float", "float"}, {"double", "double"}};
      const char* to = nullptr;
      for (const auto& [from, t] : scalar_types)
        if (type == from) to = t;
      if (!to) r.fail(field + ".Type", fmt::format("a scalar of type '{}' does not map (int32, uint32, int64, float, double)", type));
      args.push_back(fmt::format("{{value: {}, type: {}}}", yaml_quoted(std::to_string(v.get<std::int64_t>())), to));
      continue;
    }
    if (memory != "Vector")
      r.fail(field + ".MemoryType", fmt::format("'{}' does not map (Vector and Scalar do; Local and Symbol memory are "
                                                "not kernel arguments in tiletune)",
                                                memory));
    const auto [element, lanes] = element_type(r, type, field + ".Type");
    const Json& size = r.need(a, field, "Size");
    std::string count = expression(r, size, field + ".Size", names);
    if (lanes > 1) count = fmt::format("({}) * {}", count, lanes);
    const std::string access = a.contains("AccessType") ? r.string(a["AccessType"], field + ".AccessType") : "ReadWrite";
    Buffer b{name, element, count, buffer_init(r, a, field), access != "ReadOnly"};
    if (b.output && access == "WriteOnly" && b.init == "zero") b.init = "zero";
    for (const Buffer& o : buffers)
      if (o.name == name) r.fail(field + ".Name", fmt::format("'{}' is used twice", name));
    buffers.push_back(b);
    args.push_back(name);
  }
  if (std::none_of(buffers.begin(), buffers.end(), [](const Buffer& b) { return b.output; }))
    r.fail("KernelSpecification.Arguments", "no Vector argument is WriteOnly or ReadWrite: tiletune needs an output");
}

std::vector<std::string> launch_dims(const Reader& r, const Json& spec, const char* key,
                                     const std::vector<std::string>& names) {
  const std::string field = std::string("KernelSpecification.") + key;
  const Json& size = r.need(spec, "KernelSpecification", key);
  if (!size.is_object()) r.fail(field, "expected an object with X, Y, Z");
  std::vector<std::string> out;
  for (const char* d : {"X", "Y", "Z"})
    if (size.contains(d)) out.push_back(expression(r, size[d], field + "." + d, names));
    else if (std::string(d) == "X") r.fail(field + ".X", "required by the T1 schema, missing");
    else out.push_back("1");
  while (out.size() > 1 && out.back() == "1") out.pop_back();
  return out;
}

// What tiletune sets on the command line rather than in the space, kept as comments.
std::vector<std::string> command_line_notes(const Json& root) {
  std::vector<std::string> notes;
  if (root.contains("Budget")) {
    const Json& b = root["Budget"];
    for (const Json& item : b.is_array() ? b : Json::array({b})) {
      if (!item.is_object()) continue;
      const std::string type = item.value("Type", "");
      const double v = item.contains("BudgetValue") && item["BudgetValue"].is_number() ? item["BudgetValue"].get<double>() : 0;
      if (type == "ConfigurationCount") notes.push_back(fmt::format("Budget ConfigurationCount {}: tune --budget {}", v, v));
      else if (type == "ConfigurationFraction") notes.push_back(fmt::format("Budget ConfigurationFraction {}: tune --budget {}%", v, v * 100));
      else if (type == "TuningDuration") notes.push_back(fmt::format("Budget TuningDuration {} s: tune --budget {}s", v, v));
    }
  }
  if (root.contains("Search") && root["Search"].is_object())
    notes.push_back(fmt::format("Search {}: choose a tiletune strategy with tune --strategy (exhaustive, random, local, "
                                "genetic, forest)",
                                root["Search"].value("Name", "?")));
  const Json spec = root.value("KernelSpecification", Json::object());
  if (spec.contains("ReferenceArguments") || spec.contains("ReferenceData"))
    notes.push_back("the T1 reference data is not imported: candidates are not verified; add a verify: reference");
  if (spec.contains("Device")) notes.push_back("KernelSpecification.Device: choose the GPU with tune --device");
  if (spec.contains("SimulationInput")) notes.push_back("KernelSpecification.SimulationInput: see tune --replay");
  return notes;
}

}  // namespace

T1Import import_t1_text(const std::string& text, const fs::path& json_path, const fs::path& yaml_path) {
  const Reader r(json_path);
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw InterchangeError(fmt::format("{}: not JSON: {}", json_path.string(), e.what()));
  }
  if (!root.is_object()) r.fail("(top level)", "a T1 file is a JSON object");
  const Json& space = r.need(root, "", "ConfigurationSpace");
  const Json& spec = r.need(root, "", "KernelSpecification");
  const std::string language = r.string(r.need(spec, "KernelSpecification", "Language"), "KernelSpecification.Language");
  if (language != "CUDA") r.fail("KernelSpecification.Language", fmt::format("'{}': tiletune tunes CUDA kernels", language));
  const std::string kernel_name = r.string(r.need(spec, "KernelSpecification", "KernelName"), "KernelSpecification.KernelName");
  if (!is_identifier(kernel_name)) r.fail("KernelSpecification.KernelName", fmt::format("'{}' is not a C identifier", kernel_name));
  if (spec.contains("KernelTypeNames") && !spec["KernelTypeNames"].empty())
    r.fail("KernelSpecification.KernelTypeNames", "template kernels do not map yet: name the instantiation as entry");
  const std::string kernel_file = r.string(r.need(spec, "KernelSpecification", "KernelFile"), "KernelSpecification.KernelFile");

  const std::vector<Param> params = read_params(r, space);
  std::vector<std::string> names;
  for (const Param& p : params) names.push_back(p.name);
  const std::vector<std::string> constraints = read_constraints(r, space, names);
  std::vector<std::string> local = launch_dims(r, spec, "LocalSize", names);
  std::vector<std::string> global = launch_dims(r, spec, "GlobalSize", names);
  // GlobalSizeType CUDA: GlobalSize counts blocks; OpenCL (the default) and Kernel Tuner: threads.
  const std::string size_type = spec.contains("GlobalSizeType") ? r.string(spec["GlobalSizeType"], "KernelSpecification.GlobalSizeType") : "OpenCL";
  if (size_type != "CUDA" && size_type != "OpenCL" && size_type != "Vulkan")
    r.fail("KernelSpecification.GlobalSizeType", fmt::format("'{}' is not CUDA, OpenCL or Vulkan", size_type));
  std::vector<std::string> grid;
  for (std::size_t d = 0; d < global.size(); ++d)
    grid.push_back(size_type == "OpenCL" ? fmt::format("ceil_div({}, {})", global[d], d < local.size() ? local[d] : "1")
                                         : global[d]);
  std::string shared = "0";
  if (spec.contains("SharedMemory")) shared = expression(r, spec["SharedMemory"], "KernelSpecification.SharedMemory", names);
  std::vector<std::string> options;
  if (spec.contains("CompilerOptions")) {
    const Json& o = spec["CompilerOptions"];
    if (!o.is_array()) r.fail("KernelSpecification.CompilerOptions", "expected an array of strings");
    for (std::size_t i = 0; i < o.size(); ++i) options.push_back(r.string(o[i], fmt::format("KernelSpecification.CompilerOptions[{}]", i)));
  }
  std::vector<Buffer> buffers;
  std::vector<std::string> args;
  read_arguments(r, spec, names, buffers, args);

  T1Import out;
  out.notes = command_line_notes(root);
  const fs::path source = fs::absolute(json_path).parent_path() / kernel_file;
  if (!fs::is_regular_file(source))
    r.fail("KernelSpecification.KernelFile", fmt::format("{} is not a file (KernelFile is relative to the T1 file)",
                                                         source.lexically_normal().string()));
  const fs::path yaml_dir = fs::weakly_canonical(fs::absolute(yaml_path).parent_path());
  std::ostringstream y;
  y << fmt::format("# Imported from {} (T1, the Kernel Tuner / KTT input format) by `tiletune import-t1`.\n",
                   json_path.filename().string());
  for (const std::string& n : out.notes) y << "# note: " << n << '\n';
  y << fmt::format("kernel: {}\nsource: {}\nentry: {}\n", kernel_name, yaml_quoted(fs::weakly_canonical(source).lexically_relative(yaml_dir).generic_string()), kernel_name);
  if (!options.empty()) y << "options: " << yaml_list(options, true) << '\n';
  y << "params:\n";
  for (const Param& p : params) {
    std::vector<std::string> v;
    for (const auto x : p.values) v.push_back(std::to_string(x));
    y << fmt::format("  {}: {}\n", p.name, yaml_list(v, false));
  }
  if (!constraints.empty()) {
    y << "constraints:\n";
    for (const std::string& c : constraints) y << "  - " << yaml_quoted(c) << '\n';
  }
  y << "launch:\n  grid: " << yaml_list(grid, true) << "\n  block: " << yaml_list(local, true)
    << "\n  shared_bytes: " << yaml_quoted(shared) << '\n';
  y << "buffers:\n";
  for (const Buffer& b : buffers)
    y << fmt::format("  {}: {{type: {}, count: {}, init: {}{}}}\n", b.name, b.type, yaml_quoted(b.count), b.init,
                     b.output ? ", output: true" : "");
  y << "args: " << yaml_list(args, false) << '\n';
  y << "verify: {reference: none}   # T1 carries no reference tiletune can run: add one\n";
  if (std::all_of(params.begin(), params.end(), [](const Param& p) { return p.default_value.has_value(); })) {
    y << "default: {";
    for (std::size_t i = 0; i < params.size(); ++i) y << (i ? ", " : "") << params[i].name << ": " << *params[i].default_value;
    y << "}\n";
  }
  out.yaml = y.str();
  // What we write must load: parse it as tiletune would.
  try {
    (void)parse_space(out.yaml, yaml_path);
  } catch (const Error& e) {
    throw InterchangeError(fmt::format("{}: the space it maps to does not load: {}", json_path.string(), e.what()));
  }
  return out;
}

T1Import import_t1(const fs::path& json_path, const fs::path& yaml_path) {
  std::ifstream in(json_path, std::ios::binary);
  if (!in) throw InterchangeError(fmt::format("{}: cannot read the file", json_path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return import_t1_text(text.str(), json_path, yaml_path);
}

}  // namespace tiletune
