// Loading a search space: YAML (configs/*.yaml, format in DESIGN.md) to a validated Space.
// Everything that can be checked without a problem size is checked here, so that `plan` and
// `tune` stop before compiling anything: every key, type, name and reference, and every
// expression is parsed and bound to the variable slots. Expressions are not evaluated (they
// need a problem point), except constants. Every error is a SpaceError at file:line:column.
#include "tiletune/space.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include "space/yaml_reader.hpp"

namespace tiletune {

namespace {

struct TypeName {
  std::string_view name;
  ElementType type;
};

constexpr TypeName kBufferTypes[] = {
    {"float", ElementType::f32}, {"double", ElementType::f64}, {"int", ElementType::i32},
    {"uint", ElementType::u32},  {"int64", ElementType::i64},  {"uint8", ElementType::u8},
    {"half", ElementType::f16}};
constexpr TypeName kScalarTypes[] = {{"int", ElementType::i32},
                                     {"uint", ElementType::u32},
                                     {"int64", ElementType::i64},
                                     {"float", ElementType::f32},
                                     {"double", ElementType::f64}};

}  // namespace

const char* element_type_name(ElementType t) {
  // The YAML spellings, so that messages and exports read like the search space.
  for (const TypeName& n : kBufferTypes)
    if (n.type == t) return n.name.data();
  return "?";
}

std::optional<ElementType> element_type_from_name(std::string_view name) {
  struct Spelling {
    std::string_view name;
    ElementType type;
  };
  // The YAML names first, then the C and C++ spellings a kernel's -DT=... would use.
  static constexpr Spelling kSpellings[] = {
      {"float", ElementType::f32},        {"double", ElementType::f64},
      {"int", ElementType::i32},          {"uint", ElementType::u32},
      {"int64", ElementType::i64},        {"uint8", ElementType::u8},
      {"half", ElementType::f16},         {"__half", ElementType::f16},
      {"int32_t", ElementType::i32},      {"unsigned", ElementType::u32},
      {"unsigned int", ElementType::u32}, {"uint32_t", ElementType::u32},
      {"long long", ElementType::i64},    {"int64_t", ElementType::i64},
      {"uint8_t", ElementType::u8},       {"unsigned char", ElementType::u8}};
  for (const Spelling& s : kSpellings)
    if (s.name == name) return s.type;
  return std::nullopt;
}

std::string Axis::text_of(std::int64_t value) const {
  if (kind == AxisKind::integer) return std::to_string(value);
  if (value < 0 || static_cast<std::size_t>(value) >= labels.size())
    throw Error(where.str() + ": param " + name + " has no value #" + std::to_string(value));
  return labels[static_cast<std::size_t>(value)];
}

double Axis::real_of(std::int64_t value) const {
  if (kind == AxisKind::integer) return static_cast<double>(value);
  const std::string label = text_of(value);
  char* end = nullptr;
  const double v = std::strtod(label.c_str(), &end);
  if (kind != AxisKind::real || end != label.c_str() + label.size())
    throw Error(where.str() + ": param " + name + " = '" + label + "' is not a number");
  return v;
}

int Space::buffer_index(std::string_view name) const {
  for (std::size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == name) return static_cast<int>(i);
  return -1;
}

std::vector<std::string> reference_slot_names(const Space& space, const ReferenceKernel& kernel) {
  std::vector<std::string> names;
  for (const Axis& a : space.problem) names.push_back(a.name);
  for (const ReferenceDefine& d : kernel.defines)
    if (d.integer) names.push_back(d.name);
  return names;
}

std::vector<std::string> Space::variable_names() const {
  std::vector<std::string> names;
  names.reserve(problem.size() + params.size());
  for (const Axis& a : problem) names.push_back(a.name);
  for (const Axis& a : params) names.push_back(a.name);
  return names;
}

int Space::param_index(std::string_view name) const {
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].name == name) return static_cast<int>(i);
  return -1;
}

int Space::problem_index(std::string_view name) const {
  for (std::size_t i = 0; i < problem.size(); ++i)
    if (problem[i].name == name) return static_cast<int>(i);
  return -1;
}

namespace {

using detail::YamlEntry;
using detail::YamlReader;
using detail::YamlValue;

constexpr std::string_view kTopKeys[] = {"kernel",  "source",      "entry",  "options", "problem",
                                         "params",  "constraints", "launch", "buffers", "args",
                                         "verify",  "metrics",     "default"};
constexpr std::string_view kLaunchKeys[] = {"grid", "block", "shared_bytes"};
constexpr std::string_view kBufferKeys[] = {"type", "count", "init", "output"};
constexpr std::string_view kArgKeys[] = {"value", "type"};
constexpr std::string_view kVerifyKeys[] = {"reference", "rtol", "atol"};
constexpr std::string_view kMetricKeys[] = {"bytes", "flops"};
constexpr std::string_view kRangeKeys[] = {"from", "to", "step", "pow2"};
constexpr std::string_view kFunctions[] = {"min", "max", "ceil_div", "round_up", "log2", "is_pow2"};
constexpr std::string_view kInits[] = {"zero", "random", "iota", "none"};
constexpr std::string_view kReferences[] = {"cpu", "none"};

// An axis holding more values than this is surely a mistake (and would be slow to sweep).
constexpr std::uint64_t kMaxAxisValues = std::uint64_t{1} << 20;

constexpr const char* kValuesHint =
    "give a list such as [16, 32, 64], one integer, a range {from: 1, to: 32, step: 1} or "
    "powers of two {pow2: [16, 1024]}";

template <std::size_t N>
std::vector<std::string_view> names_of(const TypeName (&table)[N]) {
  std::vector<std::string_view> names;
  for (const TypeName& t : table) names.push_back(t.name);
  return names;
}

bool is_pow2(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

class SpaceLoader {
 public:
  SpaceLoader(const std::string& text, const std::filesystem::path& yaml_path)
      : yaml_(text, yaml_path.string()), yaml_path_(yaml_path) {}

  [[nodiscard]] Space load();

 private:
  [[nodiscard]] const YamlEntry* find(const std::vector<YamlEntry>& entries, std::string_view key) const;
  [[nodiscard]] const YamlEntry& require(const std::vector<YamlEntry>& entries, const YamlValue& map,
                           std::string_view key, std::string_view example) const;

  void read_source(const YamlValue& v);
  [[nodiscard]] std::vector<Axis> read_axes(const YamlValue& v, bool params);
  void check_name(const YamlEntry& e, std::string_view kind) const;
  [[nodiscard]] std::vector<std::int64_t> read_values(const YamlValue& v) const;
  [[nodiscard]] std::vector<std::int64_t> read_range(const YamlValue& v) const;
  [[nodiscard]] LocatedExpr read_expr(const YamlValue& v, bool allow_bool = false) const;
  [[nodiscard]] std::optional<std::int64_t> constant(const LocatedExpr& e, const YamlValue& v) const;
  void read_dims(const YamlValue& v, LocatedExpr (&dims)[3]) const;
  void read_launch(const YamlValue& v);
  void read_buffers(const YamlValue& v);
  void read_args(const YamlValue& v);
  void read_verify(const YamlValue& v);
  void read_metrics(const YamlValue& v);
  void read_default(const YamlValue& v);
  void check_buffers_used() const;
  void check_output(const YamlValue& root, const YamlEntry* verify, const YamlEntry* buffers) const;

  YamlReader yaml_;
  std::filesystem::path yaml_path_;
  Space space_;
  std::vector<std::string> names_;          // variable slots, once problem and params are read
  std::vector<YAML::Mark> buffer_marks_;    // where each buffer was declared
  double rtol_ = 0, atol_ = 0;              // verify's tolerances, for every output
};

const YamlEntry* SpaceLoader::find(const std::vector<YamlEntry>& entries, std::string_view key) const {
  for (const YamlEntry& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

const YamlEntry& SpaceLoader::require(const std::vector<YamlEntry>& entries, const YamlValue& map,
                                      std::string_view key, std::string_view example) const {
  if (const YamlEntry* e = find(entries, key)) return *e;
  const std::string place = map.path.empty() ? "at the top level" : "in " + map.path;
  yaml_.fail(map, "missing required key '" + std::string(key) + "' " + place,
             "add it, for example '" + std::string(example) + "'");
}

Space SpaceLoader::load() {
  const YamlValue root = yaml_.root();
  if (!root.is_map())
    yaml_.fail_type(root, "a map of keys (kernel, source, entry, params, launch, args, ...)",
                    "write one 'key: value' per line at the top level, as in configs/transpose.yaml");
  const std::vector<YamlEntry> top = yaml_.entries(root, kTopKeys);

  std::error_code ec;
  space_.yaml_path = std::filesystem::absolute(yaml_path_, ec).lexically_normal();
  if (ec) space_.yaml_path = yaml_path_;

  const YamlEntry& kernel = require(top, root, "kernel", "kernel: transpose");
  space_.kernel = yaml_.string(kernel.value, "an identifier", "for example 'kernel: transpose'");
  if (!detail::is_identifier(space_.kernel))
    yaml_.fail(kernel.value, "kernel: '" + space_.kernel + "' is not an identifier",
               "a kernel family name uses letters, digits and '_' and does not start with a digit");

  read_source(require(top, root, "source", "source: ../kernels/transpose.cu").value);
  space_.entry = yaml_.string(require(top, root, "entry", "entry: transpose").value, "a string",
                              "the kernel's extern \"C\" name, for example 'entry: transpose'");

  if (const YamlEntry* e = find(top, "options"); e && !e->value.is_null()) {
    for (const YamlValue& item :
         yaml_.items(e->value, "a list of strings", "for example 'options: [-use_fast_math]'"))
    {
      OptionTemplate option;
      option.text = yaml_.string(item, "a string", "one NVRTC option per item");
      option.pieces = {option.text};
      option.where = yaml_.at(item.mark);
      space_.compile_options.push_back(std::move(option));
    }
  }

  if (const YamlEntry* e = find(top, "problem")) space_.problem = read_axes(e->value, false);
  const YamlEntry& params = require(top, root, "params", "params: {TILE: [16, 32, 64]}");
  if (params.value.is_null() || (params.value.is_map() && params.value.node.size() == 0))
    yaml_.fail(params.value, "params is empty: there is nothing to tune",
               "add at least one tunable, for example 'TILE: [16, 32, 64]'");
  space_.params = read_axes(params.value, true);
  names_ = space_.variable_names();

  if (const YamlEntry* e = find(top, "constraints"); e && !e->value.is_null()) {
    for (const YamlValue& item : yaml_.items(e->value, "a list of expressions",
                                             "write one expression per line, each after '- '"))
      space_.constraints.push_back(Constraint{read_expr(item, true)});
  }

  read_launch(require(top, root, "launch", "launch: {grid: [ceil_div(N, TILE)], block: [TILE]}").value);

  const YamlEntry* buffers = find(top, "buffers");
  if (buffers) read_buffers(buffers->value);
  const YamlEntry& args = require(top, root, "args", "args: [in, out, N]");
  read_args(args.value);
  check_buffers_used();

  // Until the explicit `verify:` of the new format: the built-in reference named like the family.
  space_.verify.reference = VerifySpec::Reference::builtin;
  space_.verify.builtin = space_.kernel;
  const YamlEntry* verify = find(top, "verify");
  if (verify) read_verify(verify->value);
  check_output(root, verify, buffers);
  for (const BufferSpec& b : space_.buffers) {
    if (!b.output) continue;
    OutputCheck check;
    check.buffer = b.name;
    check.rtol = rtol_;
    check.atol = atol_;
    check.where = b.where;
    space_.verify.outputs.push_back(std::move(check));
  }
  if (const YamlEntry* e = find(top, "metrics")) read_metrics(e->value);
  if (const YamlEntry* e = find(top, "default")) read_default(e->value);
  return std::move(space_);
}

void SpaceLoader::read_source(const YamlValue& v) {
  const std::string text = yaml_.string(v, "a path to the kernel source",
                                        "for example 'source: ../kernels/transpose.cu'");
  std::filesystem::path p(text);
  if (p.is_relative()) p = space_.yaml_path.parent_path() / p;
  p = p.lexically_normal();
  std::error_code ec;
  const auto status = std::filesystem::status(p, ec);
  if (!std::filesystem::exists(status))
    yaml_.fail(v, "source file '" + text + "' does not exist (looked for " + p.string() + ")",
               "a relative source is resolved from the directory of the YAML file");
  if (std::filesystem::is_directory(status))
    yaml_.fail(v, "source '" + text + "' is a directory, not a file (" + p.string() + ")",
               "name the .cu file of the kernel");
  space_.source = p;
}

void SpaceLoader::check_name(const YamlEntry& e, std::string_view kind) const {
  if (!detail::is_identifier(e.key))
    yaml_.fail(e.key_mark, "'" + e.key + "' is not a valid " + std::string(kind) + " name",
               "names are C identifiers: letters, digits and '_', not starting with a digit");
  if (std::find(std::begin(kFunctions), std::end(kFunctions), e.key) != std::end(kFunctions))
    yaml_.fail(e.key_mark, "'" + e.key + "' is the name of an expression function",
               "rename it: " + detail::join_names(kFunctions) + " are reserved");
}

std::vector<Axis> SpaceLoader::read_axes(const YamlValue& v, bool params) {
  std::vector<Axis> axes;
  if (v.is_null()) return axes;
  const std::string_view kind = params ? "param" : "problem size";
  const std::string example = params ? "params: {TILE: [16, 32, 64]}" : "problem: {N: [1024, 4096]}";
  for (const YamlEntry& e :
       yaml_.entries(v, {}, "a map of name -> values", "for example '" + example + "'")) {
    check_name(e, kind);
    if (params && space_.problem_index(e.key) >= 0)
      yaml_.fail(e.key_mark, "'" + e.key + "' is both a problem size and a param",
                 "a name is either fixed per run (problem) or tuned (params): rename one");
    Axis axis;
    axis.name = e.key;
    axis.values = read_values(e.value);
    axis.where = yaml_.at(e.key_mark);
    axes.push_back(std::move(axis));
  }
  return axes;
}

std::vector<std::int64_t> SpaceLoader::read_values(const YamlValue& v) const {
  if (v.is_null()) yaml_.fail(v, v.name() + " has no values", kValuesHint);
  if (v.is_map()) return read_range(v);
  if (v.is_scalar()) return {yaml_.integer(v, "an integer, a list of integers or a range", kValuesHint)};
  std::vector<std::int64_t> values;
  const std::vector<YamlValue> items = yaml_.items(v, "a list", kValuesHint);
  if (items.empty()) yaml_.fail(v, v.name() + " has no values (an empty list)", kValuesHint);
  for (const YamlValue& item : items) {
    const std::int64_t x = yaml_.integer(item);
    if (std::find(values.begin(), values.end(), x) != values.end())
      yaml_.fail(item, "duplicate value " + std::to_string(x) + " in " + v.name(),
                 "each value may appear once; remove the repeat");
    values.push_back(x);
  }
  return values;
}

std::vector<std::int64_t> SpaceLoader::read_range(const YamlValue& v) const {
  const std::vector<YamlEntry> es = yaml_.entries(v, kRangeKeys);
  const YamlEntry* from = find(es, "from");
  const YamlEntry* to = find(es, "to");
  const YamlEntry* step = find(es, "step");
  const YamlEntry* pow2 = find(es, "pow2");
  std::vector<std::int64_t> values;
  if (pow2) {
    if (from || to || step)
      yaml_.fail(v, v.name() + " mixes a range (from/to/step) with pow2", kValuesHint);
    const std::vector<YamlValue> bounds =
        yaml_.items(pow2->value, "a list [lo, hi]", "for example {pow2: [16, 1024]}");
    if (bounds.size() != 2)
      yaml_.fail(pow2->value, pow2->value.name() + ": expected two bounds [lo, hi], got " +
                                  std::to_string(bounds.size()),
                 "for example {pow2: [16, 1024]} gives 16, 32, ..., 1024");
    const std::int64_t lo = yaml_.integer(bounds[0]);
    const std::int64_t hi = yaml_.integer(bounds[1]);
    for (std::size_t i = 0; i < 2; ++i) {
      const std::int64_t b = i == 0 ? lo : hi;
      if (!is_pow2(b))
        yaml_.fail(bounds[i], bounds[i].name() + ": " + std::to_string(b) + " is not a power of two",
                   "both bounds of pow2 are powers of two (1, 2, 4, ...)");
    }
    if (lo > hi)
      yaml_.fail(pow2->value, pow2->value.name() + ": lower bound " + std::to_string(lo) +
                                  " is above upper bound " + std::to_string(hi),
                 "write [lo, hi] with lo <= hi");
    for (std::int64_t x = lo;; x *= 2) {
      values.push_back(x);
      if (x == hi) break;
    }
    return values;
  }
  if (!from || !to)
    yaml_.fail(v, v.name() + ": a range needs both 'from' and 'to'" +
                      (es.empty() ? std::string(", got an empty map") : std::string()),
               kValuesHint);
  const std::int64_t a = yaml_.integer(from->value);
  const std::int64_t b = yaml_.integer(to->value);
  const std::int64_t s = step ? yaml_.integer(step->value) : 1;
  if (s <= 0)
    yaml_.fail(step->value, step->value.name() + ": step must be positive, got " + std::to_string(s),
               "a range counts up from 'from' to 'to'");
  if (a > b)
    yaml_.fail(to->value, v.name() + ": range is empty (from " + std::to_string(a) + " > to " +
                              std::to_string(b) + ")",
               "write the smaller bound in 'from'");
  // Unsigned arithmetic: to - from may not fit in int64.
  const std::uint64_t count =
      (static_cast<std::uint64_t>(b) - static_cast<std::uint64_t>(a)) / static_cast<std::uint64_t>(s) + 1;
  if (count > kMaxAxisValues)
    yaml_.fail(v, v.name() + ": range has " + std::to_string(count) + " values, more than " +
                      std::to_string(kMaxAxisValues),
               "use a larger step, or pow2");
  const auto first = static_cast<std::uint64_t>(a);
  const auto stride = static_cast<std::uint64_t>(s);
  for (std::uint64_t i = 0; i < count; ++i)
    values.push_back(static_cast<std::int64_t>(first + i * stride));
  return values;
}

LocatedExpr SpaceLoader::read_expr(const YamlValue& v, bool allow_bool) const {
  if (v.is_null())
    yaml_.fail(v, v.name() + ": expected an expression, got nothing",
               "write an integer or an expression such as 'ceil_div(N, TILE)'");
  if (!v.is_scalar())
    yaml_.fail_type(v, "an expression", "write an integer or an expression such as 'N*N'");
  const std::string text = v.text();
  LocatedExpr out{Expr(), yaml_.at(v.mark)};
  if (allow_bool && v.is_plain() && (text == "true" || text == "false")) {
    out.expr = Expr::constant(text == "true" ? 1 : 0);
    return out;
  }
  try {
    out.expr = Expr::parse(text);
  } catch (const ExprSyntaxError& e) {
    throw SpaceError(yaml_.at_offset(v, e.offset()),
                     v.name() + ": syntax error in expression '" + text + "': " + e.what(),
                     "expressions are C-like over 64-bit integers: + - * / % comparisons "
                     "&& || ! ?: and " + detail::join_names(kFunctions));
  }
  try {
    out.expr.bind(names_);
  } catch (const ExprSyntaxError& e) {
    // Name the culprit ourselves (the identifier at the offset), so that the message reads
    // like every other did-you-mean of the loader.
    const std::size_t begin = std::min(e.offset(), text.size());
    std::size_t end = begin;
    while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_'))
      ++end;
    std::string name = text.substr(begin, end - begin);
    if (!detail::is_identifier(name)) {
      for (const std::string& var : out.expr.variables())
        if (std::find(names_.begin(), names_.end(), var) == names_.end()) {
          name = var;
          break;
        }
    }
    std::string what = v.name() + ": unknown name '" + name + "' in expression '" + text + "'";
    if (auto s = detail::did_you_mean(name, names_)) what += "; did you mean '" + *s + "'?";
    throw SpaceError(yaml_.at_offset(v, e.offset()), what,
                     "expressions may use the problem sizes and params: " + detail::join_names(names_));
  }
  return out;
}

std::optional<std::int64_t> SpaceLoader::constant(const LocatedExpr& e, const YamlValue& v) const {
  if (!e.expr.is_constant()) return std::nullopt;
  try {
    return e.expr.eval({});
  } catch (const EvalError& err) {
    yaml_.fail(v, v.name() + ": cannot evaluate '" + v.text() + "': " + err.what(),
               "fix the constant expression");
  }
}

void SpaceLoader::read_dims(const YamlValue& v, LocatedExpr (&dims)[3]) const {
  std::vector<YamlValue> items;
  if (v.is_sequence()) {
    items = yaml_.items(v, "a list", "for example [ceil_div(N, TILE), ceil_div(N, TILE)]");
    if (items.empty())
      yaml_.fail(v, v.name() + ": expected 1 to 3 dimensions, got an empty list",
                 "for example [ceil_div(N, TILE), ceil_div(N, TILE)]");
    if (items.size() > 3)
      yaml_.fail(items[3], v.name() + " has " + std::to_string(items.size()) +
                               " dimensions; CUDA has at most 3 (x, y, z)",
                 "fold the extra dimensions into x, y and z");
  } else if (v.is_map()) {
    yaml_.fail_type(v, "an expression or a list of 1 to 3 expressions");
  } else {
    items.push_back(v);  // a scalar is one dimension (and nothing is reported by read_expr)
  }
  for (std::size_t i = 0; i < 3; ++i) {
    if (i >= items.size()) {
      dims[i] = LocatedExpr{Expr::constant(1), yaml_.at(v.mark)};
      continue;
    }
    dims[i] = read_expr(items[i]);
    if (auto c = constant(dims[i], items[i]); c && *c < 1)
      yaml_.fail(items[i], items[i].name() + " is " + std::to_string(*c) +
                               "; a launch dimension must be at least 1",
                 "grid and block dimensions count blocks and threads: write 1 for an unused one");
  }
}

void SpaceLoader::read_launch(const YamlValue& v) {
  const std::vector<YamlEntry> es =
      yaml_.entries(v, kLaunchKeys, "a map {grid, block, shared_bytes}",
                    "for example 'launch: {grid: [ceil_div(N, TILE)], block: [TILE]}'");
  read_dims(require(es, v, "grid", "grid: [ceil_div(N, TILE), ceil_div(N, TILE)]").value,
            space_.launch.grid);
  read_dims(require(es, v, "block", "block: [TILE, BLOCK_ROWS]").value, space_.launch.block);
  if (const YamlEntry* e = find(es, "shared_bytes")) {
    space_.launch.shared_bytes = read_expr(e->value);
    if (auto c = constant(space_.launch.shared_bytes, e->value); c && *c < 0)
      yaml_.fail(e->value, e->value.name() + " is " + std::to_string(*c) + "; it cannot be negative",
                 "shared_bytes is the dynamic shared memory per block in bytes: 0 or more");
  } else {
    space_.launch.shared_bytes = LocatedExpr{Expr::constant(0), yaml_.at(v.mark)};
  }
}

void SpaceLoader::read_buffers(const YamlValue& v) {
  if (v.is_null()) return;
  const std::vector<std::string_view> types = names_of(kBufferTypes);
  for (const YamlEntry& e : yaml_.entries(v, {}, "a map of buffer name -> {type, count, init, output}",
                                          "for example 'buffers: {out: {count: N*N, output: true}}'")) {
    check_name(e, "buffer");
    if (std::find(names_.begin(), names_.end(), e.key) != names_.end())
      yaml_.fail(e.key_mark, "buffer '" + e.key + "' has the name of a problem size or param",
                 "rename the buffer: in args a name must mean one thing");
    BufferSpec b;
    b.name = e.key;
    b.where = yaml_.at(e.key_mark);
    const std::vector<YamlEntry> fields =
        yaml_.entries(e.value, kBufferKeys, "a map {type, count, init, output}",
                      "for example '" + e.key + ": {type: float, count: N*N}'");
    if (const YamlEntry* f = find(fields, "type")) {
      const std::string t =
          yaml_.string(f->value, "an element type", "element types: " + detail::join_names(types));
      const auto it = std::find_if(std::begin(kBufferTypes), std::end(kBufferTypes),
                                   [&](const TypeName& n) { return n.name == t; });
      if (it == std::end(kBufferTypes)) {
        std::string what = f->value.name() + ": unknown element type '" + t + "'";
        if (auto s = detail::did_you_mean(t, types)) what += "; did you mean '" + *s + "'?";
        yaml_.fail(f->value, what, "element types: " + detail::join_names(types));
      }
      b.type = it->type;
    }
    const YamlEntry& count = require(fields, e.value, "count", "count: N*N");
    b.count = read_expr(count.value);
    if (auto c = constant(b.count, count.value); c && *c < 1)
      yaml_.fail(count.value, count.value.name() + " is " + std::to_string(*c) +
                                  "; a buffer holds at least one element",
                 "count is the number of elements, for example N*N");
    if (const YamlEntry* f = find(fields, "init")) {
      const std::string init = yaml_.string(f->value, "zero, random, iota or none",
                                            "init is one of: " + detail::join_names(kInits));
      const auto* it = std::find(std::begin(kInits), std::end(kInits), init);
      if (it == std::end(kInits)) {
        std::string what = f->value.name() + ": unknown init '" + init + "'";
        if (auto s = detail::did_you_mean(init, kInits)) what += "; did you mean '" + *s + "'?";
        yaml_.fail(f->value, what, "init is one of: " + detail::join_names(kInits));
      }
      constexpr BufferInit inits[] = {BufferInit::zero, BufferInit::random, BufferInit::iota,
                                      BufferInit::none};  // kInits order
      b.init.kind = inits[it - std::begin(kInits)];
      b.init.where = yaml_.at(f->value.mark);
    }
    if (const YamlEntry* f = find(fields, "output")) b.output = yaml_.boolean(f->value);
    space_.buffers.push_back(std::move(b));
    buffer_marks_.push_back(e.key_mark);
  }
}

void SpaceLoader::read_args(const YamlValue& v) {
  std::vector<std::string> buffer_names;
  for (const BufferSpec& b : space_.buffers) buffer_names.push_back(b.name);
  const std::vector<YamlValue> items = yaml_.items(v, "a list of buffer names and scalar expressions",
                                                   "for example 'args: [in, out, N]'");
  if (items.empty())
    yaml_.fail(v, "args is empty", "list the kernel's parameters in order, for example [in, out, N]");
  const std::vector<std::string_view> scalar_types = names_of(kScalarTypes);
  for (const YamlValue& item : items) {
    ArgSpec a;
    a.where = yaml_.at(item.mark);
    if (item.is_map()) {
      const std::vector<YamlEntry> fields = yaml_.entries(item, kArgKeys, "a map {value, type}",
                                                          "for example {value: N, type: int64}");
      a.value.expr = read_expr(require(fields, item, "value", "value: N").value);
      a.value.where = a.where;
      if (const YamlEntry* f = find(fields, "type")) {
        const std::string t = yaml_.string(f->value, "a scalar type",
                                           "scalar argument types: " + detail::join_names(scalar_types));
        const auto it = std::find_if(std::begin(kScalarTypes), std::end(kScalarTypes),
                                     [&](const TypeName& n) { return n.name == t; });
        if (it == std::end(kScalarTypes)) {
          std::string what = f->value.name() + ": unknown scalar type '" + t + "'";
          if (auto s = detail::did_you_mean(t, scalar_types)) what += "; did you mean '" + *s + "'?";
          yaml_.fail(f->value, what, "scalar argument types: " + detail::join_names(scalar_types));
        }
        a.scalar_type = it->type;
      }
    } else if (item.is_scalar()) {
      const std::string text = item.text();
      if (std::find(buffer_names.begin(), buffer_names.end(), text) != buffer_names.end()) {
        a.kind = ArgSpec::Kind::buffer;
        a.buffer = text;
        a.value.where = a.where;
      } else {
        // A bare unknown name is most likely a misspelt buffer: say so before the expression
        // parser would call it an unknown variable.
        if (detail::is_identifier(text) &&
            std::find(names_.begin(), names_.end(), text) == names_.end()) {
          std::vector<std::string> known = buffer_names;
          known.insert(known.end(), names_.begin(), names_.end());
          std::string what = item.name() + ": '" + text + "' is not a buffer, problem size or param";
          if (auto s = detail::did_you_mean(text, known)) what += "; did you mean '" + *s + "'?";
          const std::string buffers =
              buffer_names.empty() ? std::string("(none)") : detail::join_names(buffer_names);
          yaml_.fail(item, what,
                     "buffers: " + buffers + "; problem sizes and params: " + detail::join_names(names_));
        }
        a.value.expr = read_expr(item);
        a.value.where = a.where;
      }
    } else {
      yaml_.fail_type(item, "a buffer name, an expression or {value: EXPR, type: TYPE}",
                      "for example 'args: [in, out, N, {value: N*N, type: int64}]'");
    }
    space_.args.push_back(std::move(a));
  }
}

void SpaceLoader::check_buffers_used() const {
  for (std::size_t i = 0; i < space_.buffers.size(); ++i) {
    const BufferSpec& b = space_.buffers[i];
    const bool used = std::any_of(space_.args.begin(), space_.args.end(), [&](const ArgSpec& a) {
      return a.kind == ArgSpec::Kind::buffer && a.buffer == b.name;
    });
    if (!used)
      yaml_.fail(buffer_marks_[i], "buffer '" + b.name + "' is never passed in args",
                 "add it to args in the kernel's parameter order, or remove it");
  }
}

void SpaceLoader::read_verify(const YamlValue& v) {
  space_.verify.where = yaml_.at(v.mark);
  if (v.is_null()) return;
  const std::vector<YamlEntry> es = yaml_.entries(v, kVerifyKeys, "a map {reference, rtol, atol}",
                                                  "for example 'verify: {reference: cpu, rtol: 1e-5}'");
  if (const YamlEntry* e = find(es, "reference")) {
    const YamlValue& ref = e->value;
    if (ref.is_map()) {
      space_.verify.reference = VerifySpec::Reference::config;
      std::map<std::string, std::int64_t> given;
      std::vector<std::string> param_names;
      for (const Axis& a : space_.params) param_names.push_back(a.name);
      const std::vector<YamlEntry> values = yaml_.entries(ref, {}, "a map", "for example {TILE: 32}");
      if (values.empty())
        yaml_.fail(ref, ref.name() + " is an empty config",
                   "give param values of a trusted config, for example {TILE: 32}, or use cpu");
      for (const YamlEntry& p : values) {
        if (space_.param_index(p.key) < 0) {
          std::string what = ref.name() + ": '" + p.key + "' is not a param";
          if (auto s = detail::did_you_mean(p.key, param_names)) what += "; did you mean '" + *s + "'?";
          yaml_.fail(p.key_mark, what, "params: " + detail::join_names(param_names));
        }
        given[p.key] = yaml_.integer(p.value);
      }
      for (const Axis& a : space_.params) {
        const auto it = given.find(a.name);
        if (it == given.end())
          yaml_.fail(ref, ref.name() + ": the reference config gives no value for " + a.name,
                     "a reference config gives every param exactly once");
        space_.verify.reference_config.push_back(it->second);
      }
    } else {
      const std::string r = yaml_.string(ref, "cpu, none or a map of param values",
                                         "reference is cpu, none, or a reference config such as {TILE: 32}");
      if (r == "cpu") {
        space_.verify.reference = VerifySpec::Reference::builtin;
        space_.verify.builtin = space_.kernel;
      } else if (r == "none") {
        space_.verify.reference = VerifySpec::Reference::none;
      } else {
        std::string what = ref.name() + ": unknown reference '" + r + "'";
        if (auto s = detail::did_you_mean(r, kReferences)) what += "; did you mean '" + *s + "'?";
        yaml_.fail(ref, what, "reference is cpu, none, or a reference config such as {TILE: 32}");
      }
    }
  }
  for (const char* key : {"rtol", "atol"}) {
    const YamlEntry* e = find(es, key);
    if (!e) continue;
    const double x = yaml_.number(e->value);
    if (x < 0)
      yaml_.fail(e->value, e->value.name() + " is negative", "tolerances are numbers >= 0");
    (std::string_view(key) == "rtol" ? rtol_ : atol_) = x;
  }
}

void SpaceLoader::check_output(const YamlValue& root, const YamlEntry* verify,
                               const YamlEntry* buffers) const {
  if (space_.verify.reference == VerifySpec::Reference::none) return;
  const bool any = std::any_of(space_.buffers.begin(), space_.buffers.end(),
                               [](const BufferSpec& b) { return b.output; });
  if (any) return;
  const YAML::Mark mark = verify ? verify->key_mark : buffers ? buffers->key_mark : root.mark;
  yaml_.fail(mark, "nothing to verify: no buffer has 'output: true'",
             "mark the buffer the kernel writes with 'output: true', or set 'verify: {reference: none}'");
}

void SpaceLoader::read_metrics(const YamlValue& v) {
  if (v.is_null()) return;
  const std::vector<YamlEntry> es = yaml_.entries(v, kMetricKeys, "a map {bytes, flops}",
                                                  "for example 'metrics: {bytes: 2*N*N*4}'");
  if (const YamlEntry* e = find(es, "bytes")) space_.metric_bytes = read_expr(e->value);
  if (const YamlEntry* e = find(es, "flops")) space_.metric_flops = read_expr(e->value);
}

void SpaceLoader::read_default(const YamlValue& v) {
  std::vector<std::string> param_names;
  for (const Axis& a : space_.params) param_names.push_back(a.name);
  const std::vector<YamlEntry> es = yaml_.entries(v, {}, "a map of param -> value",
                                                  "for example 'default: {TILE: 32}', naming every param");
  std::vector<std::optional<std::int64_t>> values(space_.params.size());
  for (const YamlEntry& e : es) {
    const int i = space_.param_index(e.key);
    if (i < 0) {
      std::string what = "default: '" + e.key + "' is not a param";
      if (auto s = detail::did_you_mean(e.key, param_names)) what += "; did you mean '" + *s + "'?";
      yaml_.fail(e.key_mark, what, "params: " + detail::join_names(param_names));
    }
    values[static_cast<std::size_t>(i)] = yaml_.integer(e.value);
  }
  std::vector<std::string> missing;
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!values[i]) missing.push_back(space_.params[i].name);
  if (!missing.empty())
    yaml_.fail(v, "default: no value for " + detail::join_names(missing),
               "the default config gives every param exactly once");
  space_.default_config.emplace();
  for (const auto& x : values) space_.default_config->push_back(*x);
  space_.default_where = yaml_.at(v.mark);
}

}  // namespace

Space parse_space(const std::string& yaml_text, const std::filesystem::path& yaml_path) {
  try {
    return SpaceLoader(yaml_text, yaml_path).load();
  } catch (const SpaceError&) {
    throw;
  } catch (const YAML::Exception& e) {
    // Node access that yaml-cpp refuses (it should not happen after the checks above).
    SourceLocation loc{yaml_path.string(), 0, 0};
    if (e.mark.line >= 0) loc = {yaml_path.string(), e.mark.line + 1, e.mark.column + 1};
    throw SpaceError(loc, "cannot read the YAML: " + e.msg);
  } catch (const std::exception& e) {
    throw SpaceError(SourceLocation{yaml_path.string(), 0, 0},
                     std::string("cannot load the search space: ") + e.what());
  }
}

Space load_space(const std::filesystem::path& yaml_path) {
  const SourceLocation file{yaml_path.string(), 0, 0};
  std::error_code ec;
  const auto status = std::filesystem::status(yaml_path, ec);
  if (!std::filesystem::exists(status))
    throw SpaceError(file, "no such file", "check the path of the search space");
  if (std::filesystem::is_directory(status))
    throw SpaceError(file, "is a directory, not a search space file",
                     "name a YAML file, for example configs/transpose.yaml");
  std::ifstream in(yaml_path, std::ios::binary);
  if (!in.is_open()) throw SpaceError(file, "cannot open the file", "check its permissions");
  std::ostringstream text;
  if (in.peek() != std::ifstream::traits_type::eof()) text << in.rdbuf();
  if (in.bad()) throw SpaceError(file, "cannot read the file", "check its permissions");
  return parse_space(text.str(), yaml_path);
}

}  // namespace tiletune
