// Loading a search space: YAML (configs/*.yaml, format in docs/reference/space.md) to a validated Space.
// Everything that can be checked without a problem size is checked here, so that `plan` and
// `tune` stop before compiling anything: every key, type, name and reference, and every
// expression is parsed and bound to the variable slots. Expressions are not evaluated (they
// need a problem point), except constants. Every error is a SpaceError at file:line:column.
// This file holds the public helpers of space.hpp, the top level, the problem sizes and the
// params; loader.hpp lists the other parts.
#include "tiletune/space.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <system_error>
#include <type_traits>
#include <unordered_set>

#include <sys/stat.h>

#include <fmt/format.h>

#include "common/input_file.hpp"
#include "space/loader.hpp"

namespace tiletune {

const char* element_type_name(ElementType t) {
  // The YAML spellings, so that messages and exports read like the search space.
  switch (t) {
    case ElementType::f32: return "float";
    case ElementType::f64: return "double";
    case ElementType::i32: return "int";
    case ElementType::u32: return "uint";
    case ElementType::i64: return "int64";
    case ElementType::u8: return "uint8";
    case ElementType::f16: return "half";
    case ElementType::i8: return "int8";
    case ElementType::i16: return "int16";
    case ElementType::u16: return "uint16";
    case ElementType::u64: return "uint64";
  }
  return "?";
}

std::string element_type_list() {
  std::string list;
  for (const ElementType t : kElementTypes) list += (list.empty() ? "" : ", ") + std::string(element_type_name(t));
  return list;
}

std::optional<ElementType> element_type_from_name(std::string_view name) {
  struct Spelling {
    std::string_view name;
    ElementType type;
  };
  // The C and C++ spellings a kernel's -DT=... would use (the YAML names are element_type_name's).
  static constexpr Spelling kSpellings[] = {
      {"__half", ElementType::f16},       {"int32_t", ElementType::i32},
      {"unsigned", ElementType::u32},     {"unsigned int", ElementType::u32},
      {"uint32_t", ElementType::u32},     {"long long", ElementType::i64},
      {"int64_t", ElementType::i64},      {"uint8_t", ElementType::u8},
      {"unsigned char", ElementType::u8}, {"signed char", ElementType::i8},
      {"int8_t", ElementType::i8},        {"short", ElementType::i16},
      {"int16_t", ElementType::i16},      {"unsigned short", ElementType::u16},
      {"uint16_t", ElementType::u16},     {"unsigned long long", ElementType::u64},
      {"uint64_t", ElementType::u64}};
  for (const ElementType t : kElementTypes)
    if (name == element_type_name(t)) return t;
  for (const Spelling& s : kSpellings)
    if (s.name == name) return s.type;
  return std::nullopt;
}

namespace {

// The range of an integer type, as the 64-bit values an expression can give.
struct IntegerRange {
  std::int64_t low;
  std::int64_t high;
};

template <class T>
constexpr IntegerRange range_of() {
  if constexpr (std::is_same_v<T, std::uint64_t>)
    return {0, std::numeric_limits<std::int64_t>::max()};
  else
    return {std::numeric_limits<T>::min(), std::numeric_limits<T>::max()};
}

std::optional<IntegerRange> integer_range(ElementType t) {
  switch (t) {
    case ElementType::i8: return range_of<std::int8_t>();
    case ElementType::i16: return range_of<std::int16_t>();
    case ElementType::i32: return range_of<std::int32_t>();
    case ElementType::i64: return range_of<std::int64_t>();
    case ElementType::u8: return range_of<std::uint8_t>();
    case ElementType::u16: return range_of<std::uint16_t>();
    case ElementType::u32: return range_of<std::uint32_t>();
    case ElementType::u64: return range_of<std::uint64_t>();
    case ElementType::f32:
    case ElementType::f64:
    case ElementType::f16: return std::nullopt;
  }
  return std::nullopt;
}

// The largest finite value of a floating type, and the magnitude from which rounding to it
// gives infinity (half: 65520, halfway between 65504 and the next step).
struct FloatLimit {
  double largest;
  double overflows_at;
};

FloatLimit float_limit(ElementType t) {
  switch (t) {
    case ElementType::f16: return {65504.0, 65520.0};
    case ElementType::f32:
      return {std::numeric_limits<float>::max(),
              static_cast<double>(std::numeric_limits<float>::max()) + std::ldexp(1.0, 103)};
    default: return {std::numeric_limits<double>::max(), std::numeric_limits<double>::infinity()};
  }
}

std::string integer_misfit(ElementType t, const IntegerRange& range, std::string_view value) {
  return fmt::format("{} does not fit {} ({} to {})", value, element_type_name(t), range.low, range.high);
}

}  // namespace

std::optional<std::string> value_misfit(ElementType t, std::int64_t value) {
  if (const auto range = integer_range(t)) {
    if (value < range->low || value > range->high) return integer_misfit(t, *range, std::to_string(value));
    return std::nullopt;
  }
  return value_misfit(t, static_cast<double>(value));
}

std::optional<std::string> value_misfit(ElementType t, double value) {
  if (const auto range = integer_range(t)) {
    // high + 1 in double is the first value past the range (2^63 for int64 and uint64, whose
    // high rounds up to it).
    if (!std::isfinite(value) || value != std::trunc(value) || value < static_cast<double>(range->low) ||
        value >= static_cast<double>(range->high) + 1.0)
      return integer_misfit(t, *range, fmt::format("{}", value));
    return std::nullopt;
  }
  const FloatLimit limit = float_limit(t);
  if (std::isfinite(value) && std::fabs(value) >= limit.overflows_at)
    return fmt::format("{} does not fit {} (its largest value is {})", value, element_type_name(t), limit.largest);
  return std::nullopt;
}

std::string Axis::text_of(std::int64_t value) const {
  if (kind == AxisKind::integer) return std::to_string(value);
  if (value < 0 || static_cast<std::size_t>(value) >= labels.size())
    throw Error(where.str() + ": param " + name + " has no value #" + std::to_string(value));
  return labels[static_cast<std::size_t>(value)];
}

std::string HostCommand::text() const {
  std::string out = "[";
  for (std::size_t i = 0; i < argv.size(); ++i) out += (i ? ", " : "") + escaped_excerpt(argv[i], 80);
  return out + "]";
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

namespace detail {

namespace {

constexpr std::string_view kTopKeys[] = {"kernel", "source",      "entry",   "options", "problem_defines", "problem",
                                         "params", "constraints", "launch",  "buffers", "globals",         "args",
                                         "verify", "metrics",     "default", "allowed"};
constexpr std::string_view kLaunchKeys[] = {"grid", "block", "shared_bytes"};
constexpr std::string_view kMetricKeys[] = {"bytes", "flops", "flop_type"};
constexpr std::string_view kRangeKeys[] = {"from", "to", "step", "pow2"};
constexpr std::string_view kPythonKeys[] = {"python"};
constexpr const char* kPythonHint =
    "a {python: \"...\"} expression is Python 3 (true division /, floor division //, **, and/or/not, "
    "chained comparisons, a if c else b, comprehensions) over the problem sizes and params; it may call ";

constexpr const char* kValuesHint =
    "give a list such as [16, 32, 64] (or words such as [float, double], or numbers such as "
    "[0.5, 1.5]), one value, a range {from: 1, to: 32, step: 1} or powers of two {pow2: [16, 1024]}";

bool is_pow2(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// True when v is a map with the scalar key `key` (without touching the node).
bool has_key(const YamlValue& v, std::string_view key) {
  if (!v.is_map()) return false;
  for (const auto& kv : v.node)
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return true;
  return false;
}

std::string decimal(std::uint64_t v) {
  // 1e+12 reads better than 1000000000000 in a message about size.
  return v >= 1'000'000'000 ? std::to_string(v) + " (about 1e" + std::to_string(std::to_string(v).size() - 1) + ")"
                            : std::to_string(v);
}

}  // namespace

const YamlEntry* SpaceLoader::find(const Entries& entries, std::string_view key) const {
  for (const YamlEntry& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

const YamlEntry& SpaceLoader::require(const Entries& entries, const YamlValue& map, std::string_view key,
                                      std::string_view example) const {
  if (const YamlEntry* e = find(entries, key)) return *e;
  const std::string place = map.path.empty() ? "at the top level" : "in " + map.path;
  yaml_.fail(map, "missing required key '" + std::string(key) + "' " + place,
             "add it, for example '" + std::string(example) + "'");
}

Space SpaceLoader::load() {
  const YamlValue root = yaml_.root();
  if (!root.is_map())
    yaml_.fail_type(root, "a map of keys (kernel, source, entry, params, launch, args, verify, ...)",
                    "write one 'key: value' per line at the top level, as in configs/transpose.yaml");
  const Entries top = yaml_.entries(root, kTopKeys);

  std::error_code ec;
  space_.yaml_path = std::filesystem::absolute(yaml_path_, ec).lexically_normal();
  if (ec) space_.yaml_path = yaml_path_;

  read_kernel(top, root);
  if (const YamlEntry* e = find(top, "problem_defines")) space_.problem_defines = yaml_.boolean(e->value);

  const YamlEntry* problem = find(top, "problem");
  if (problem) {
    space_.problem = read_axes(problem->value, false);
    for (std::size_t i = 0; i < space_.problem.size(); ++i)
      if (space_.problem[i].kind != AxisKind::integer)
        yaml_.fail(problem_marks_[i],
                   "problem size " + space_.problem[i].name + " takes integers, not " +
                       (space_.problem[i].kind == AxisKind::real ? "decimal numbers" : "words"),
                   "problem sizes are whole numbers such as 1024");
  }
  const YamlEntry& params = require(top, root, "params", "params: {TILE: [16, 32, 64]}");
  if (params.value.is_null() || (params.value.is_map() && params.value.node.size() == 0))
    yaml_.fail(params.value, "params is empty: there is nothing to tune",
               "add at least one tunable, for example 'TILE: [16, 32, 64]'");
  space_.params = read_axes(params.value, true);
  check_counts(problem ? *problem : params, params, find(top, "allowed") != nullptr);
  names_ = space_.variable_names();
  for (const Axis& a : space_.params)
    if (a.kind != AxisKind::integer) non_integer_names_.push_back(a.name);
  make_slot_decodings();

  if (const YamlEntry* e = find(top, "options"); e && !e->value.is_null()) read_options(e->value);
  if (const YamlEntry* e = find(top, "constraints"); e && !e->value.is_null()) {
    for (const YamlValue& item :
         yaml_.items(e->value, "a list of expressions", "write one expression per line, each after '- '"))
      space_.constraints.push_back(Constraint{read_expr(item, true)});
  }
  if (const YamlEntry* e = find(top, "allowed")) read_allowed(e->value);

  space_.launch =
      read_launch(require(top, root, "launch", "launch: {grid: [\"ceil_div(N, TILE)\"], block: [TILE]}").value, names_);

  const YamlEntry* buffers = find(top, "buffers");
  if (buffers) read_buffers(buffers->value);
  if (const YamlEntry* e = find(top, "globals")) read_globals(e->value);
  check_inits();
  const YamlEntry& args = require(top, root, "args", "args: [in, out, N]");
  space_.args = read_args(args.value, names_);
  check_buffers_used();

  read_verify(find(top, "verify"), root);
  if (const YamlEntry* e = find(top, "metrics")) read_metrics(e->value);
  if (const YamlEntry* e = find(top, "default")) {
    default_mark_ = e->value.mark;
    space_.default_config = read_config(e->value, "default");
    space_.default_where = yaml_.at(e->value.mark);
    check_config_in_space(*space_.default_config, default_mark_, "default");
  }
  check_family();
  check_kernel_parameters();
  return std::move(space_);
}

void SpaceLoader::read_kernel(const Entries& top, const YamlValue& root) {
  const YamlEntry& kernel = require(top, root, "kernel", "kernel: my_transpose");
  kernel_mark_ = kernel.value.mark;
  space_.kernel = yaml_.string(kernel.value, "an identifier", "for example 'kernel: my_transpose'", kMaxNameLength);
  if (!is_identifier(space_.kernel))
    yaml_.fail(kernel.value, "kernel: '" + excerpt(space_.kernel) + "' is not an identifier",
               "a kernel family name uses letters, digits and '_' and does not start with a digit");
  const YamlEntry& source = require(top, root, "source", "source: my_kernel.cu");
  space_.source_where = yaml_.at(source.value.mark);
  space_.source = read_path(source.value, "source file", "for example 'source: ../kernels/transpose.cu'");
  space_.entry = yaml_.string(require(top, root, "entry", "entry: transpose").value, "a string",
                              "the kernel's name, or a template instantiation such as 'scale<float, 4>'");
}

std::filesystem::path SpaceLoader::read_path(const YamlValue& v, std::string_view what,
                                             std::string_view example) const {
  const std::string text = yaml_.string(v, "a path", std::string(example));
  std::filesystem::path p(text);
  if (p.is_relative()) p = space_.yaml_path.parent_path() / p;
  p = p.lexically_normal();
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0)
    yaml_.fail(v,
               std::string(what) + " '" + excerpt(text) + "' does not exist (looked for " + excerpt(p.string()) + ")",
               "a relative path is resolved from the directory of the YAML file");
  if (S_ISDIR(st.st_mode))
    yaml_.fail(v,
               std::string(what) + " '" + excerpt(text) + "' is a directory, not a file (" + excerpt(p.string()) + ")",
               "name the file itself");
  if (!S_ISREG(st.st_mode))
    yaml_.fail(v, std::string(what) + " '" + excerpt(text) + "' is not a regular file (a FIFO, device or socket)",
               "name a regular file");
  return p;
}

void SpaceLoader::read_options(const YamlValue& v) {
  for (const YamlValue& item : yaml_.items(v, "a list of strings", "for example 'options: [-use_fast_math]'"))
    space_.compile_options.push_back(read_option(item));
}

OptionTemplate SpaceLoader::read_option(const YamlValue& v) const {
  OptionTemplate option;
  option.text = yaml_.string(v, "a string", "one NVRTC option per item, for example \"-DWIDTH=${N}\"");
  option.where = yaml_.at(v.mark);
  // "${EXPR}" pieces: an expression over the problem sizes and params, evaluated per config.
  std::string piece;
  for (std::size_t i = 0; i < option.text.size(); ++i) {
    if (option.text.compare(i, 2, "${") != 0) {
      piece += option.text[i];
      continue;
    }
    const std::size_t close = option.text.find('}', i + 2);
    if (close == std::string::npos)
      yaml_.fail(v, v.name() + ": '${' without its closing '}' in option '" + excerpt(option.text) + "'",
                 "write an expression as ${N} or ${N * 2}");
    const std::string inner = option.text.substr(i + 2, close - i - 2);
    // ${python: TEXT}: the piece in Python (its value a whole number), like {python: ...} elsewhere.
    constexpr std::string_view kPythonPrefix = "python:";
    const bool python = inner.starts_with(kPythonPrefix);
    const std::size_t skip = python ? kPythonPrefix.size() : 0;
    LocatedExpr e{Expr(), yaml_.at_offset(v, i + 2 + skip)};
    try {
      e.expr = python ? Expr::parse_python(inner.substr(skip)) : Expr::parse(inner);
      e.expr.bind(names_, slot_decodings_);
    } catch (const ExprSyntaxError& err) {
      yaml_.fail(v,
                 v.name() + ": bad expression '${" + excerpt(inner) + "}' in option '" + excerpt(option.text) +
                     "': " + err.what(),
                 "expressions in options use the problem sizes and integer params: " + join_names(names_) +
                     "; ${python: ...} takes Python over every param");
    }
    if (!python)
      for (const std::string& name : e.expr.variables())
        if (std::find(non_integer_names_.begin(), non_integer_names_.end(), name) != non_integer_names_.end())
          yaml_.fail(v, v.name() + ": '" + name + "' is not an integer param; ${...} takes integer expressions",
                     "a real or text param reaches the kernel as -D" + name + "=... already; or write ${python: ...}");
    option.pieces.push_back(std::move(piece));
    piece.clear();
    option.exprs.push_back(std::move(e));
    i = close;
  }
  option.pieces.push_back(std::move(piece));
  return option;
}

std::vector<Axis> SpaceLoader::read_axes(const YamlValue& v, bool params) {
  std::vector<Axis> axes;
  if (v.is_null()) return axes;
  const std::string_view kind = params ? "param" : "problem size";
  const std::string example = params ? "params: {TILE: [16, 32, 64]}" : "problem: {N: [1024, 4096]}";
  for (const YamlEntry& e : yaml_.entries(v, {}, "a map of name -> values", "for example '" + example + "'")) {
    check_name(e, kind, params || space_.problem_defines);
    if (params && space_.problem_index(e.key) >= 0)
      yaml_.fail(e.key_mark, "'" + e.key + "' is both a problem size and a param",
                 "a name is either fixed per run (problem) or tuned (params): rename one");
    Axis axis;
    axis.name = e.key;
    axis.where = yaml_.at(e.key_mark);
    read_values(e.value, axis);
    (params ? param_marks_ : problem_marks_).push_back(e.key_mark);
    axes.push_back(std::move(axis));
  }
  return axes;
}

namespace {

enum class ValueKind { integer, real, text };

// What one list item is, or nullopt for something no axis holds (a boolean, a map, ...).
std::optional<ValueKind> value_kind(const YamlValue& item) {
  if (!item.is_scalar()) return std::nullopt;
  const std::string s = item.text();
  if (!item.is_plain()) return s.empty() ? std::nullopt : std::optional(ValueKind::text);
  // Digits alone are an integer, even one too large for 64 bits (reported as such).
  const std::string_view digits = std::string_view(s).substr(s.front() == '-' || s.front() == '+' ? 1 : 0);
  if (parse_integer(s) || (!digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      })))
    return ValueKind::integer;
  if (parse_number(s)) return ValueKind::real;
  std::string l = s;
  for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (l == "true" || l == "false" || l == "yes" || l == "no" || l == "on" || l == "off" || l == "null" || l == "~")
    return std::nullopt;
  return ValueKind::text;
}

const char* kind_name(ValueKind k) {
  return k == ValueKind::integer ? "an integer" : k == ValueKind::real ? "a decimal number" : "a word";
}

}  // namespace

void SpaceLoader::read_values(const YamlValue& v, Axis& axis) const {
  if (v.is_null()) yaml_.fail(v, v.name() + " has no values", kValuesHint);
  if (has_key(v, "python")) {
    read_python_values(v, axis);
    return;
  }
  if (v.is_map()) {
    axis.values = read_range(v);
    return;
  }
  const std::vector<YamlValue> items =
      v.is_scalar() ? std::vector<YamlValue>{v} : yaml_.items(v, "a list", kValuesHint);
  if (items.empty()) yaml_.fail(v, v.name() + " has no values (an empty list)", kValuesHint);
  if (items.size() > kMaxAxisValues)
    yaml_.fail(
        v, v.name() + " has " + std::to_string(items.size()) + " values, more than " + std::to_string(kMaxAxisValues),
        "an axis is a short list: use fewer values");
  // The first item decides the kind; integers may stand among decimals (0.5, 1, 2.5).
  const auto first = value_kind(items.front());
  if (!first) yaml_.fail_type(items.front(), "an integer, a decimal number or a word", kValuesHint);
  // A quoted number among plain ones is a number quoted by mistake: say so at the quotes.
  const auto quoted_number = [](const YamlValue& item) {
    return item.is_scalar() && !item.is_plain() && parse_number(item.text());
  };
  const bool any_plain_number = std::any_of(
      items.begin(), items.end(), [](const YamlValue& item) { return item.is_plain() && parse_number(item.text()); });
  for (const YamlValue& item : items)
    if (any_plain_number && quoted_number(item))
      yaml_.fail_type(item, "a number like the other values", "remove the quotes: a quoted value is a word");
  ValueKind kind = *first;
  for (const YamlValue& item : items) {
    const auto k = value_kind(item);
    if (k == ValueKind::real && kind == ValueKind::integer) kind = ValueKind::real;
    const bool fits = k && (*k == kind || (kind == ValueKind::real && *k == ValueKind::integer));
    if (!fits) {
      yaml_.fail(item,
                 item.name() + ": expected " + std::string(kind_name(kind)) + " like the values before it, got " +
                     yaml_.describe(item),
                 kind == ValueKind::text && item.is_plain()
                     ? std::string("quote it to make it a word: \"") + excerpt(item.text()) + "\""
                     : std::string("the values of one axis are all integers, all numbers or all words; ") +
                           (item.is_scalar() && !item.is_plain() && parse_integer(item.text())
                                ? "remove the quotes: a quoted value is a word"
                                : "fix this one"));
    }
  }
  axis.kind = kind == ValueKind::integer ? AxisKind::integer
              : kind == ValueKind::real  ? AxisKind::real
                                         : AxisKind::text;
  if (axis.kind == AxisKind::integer) {
    std::unordered_set<std::int64_t> seen;
    for (const YamlValue& item : items) {
      const std::int64_t x = yaml_.integer(item);
      if (!seen.insert(x).second)
        yaml_.fail(item, "duplicate value " + std::to_string(x) + " in " + v.name(),
                   "each value may appear once; remove the repeat");
      axis.values.push_back(x);
    }
    return;
  }
  std::unordered_set<std::string> seen_labels;
  std::vector<double> numbers;
  for (const YamlValue& item : items) {
    const std::string label = item.text();
    if (label.size() > kMaxTextValue || label.find_first_of("\n\r") != std::string::npos)
      yaml_.fail(
          item,
          item.name() + ": a value of a param is one line of at most " + std::to_string(kMaxTextValue) + " characters",
          "values are passed to the compiler as -D" + axis.name + "=VALUE");
    if (axis.kind == AxisKind::real) {
      const double x = *parse_number(label);
      if (std::find(numbers.begin(), numbers.end(), x) != numbers.end() && numbers.size() < 4096)
        yaml_.fail(item, "duplicate value " + excerpt(label) + " in " + v.name(),
                   "each value may appear once; remove the repeat");
      numbers.push_back(x);
    }
    if (!seen_labels.insert(label).second)
      yaml_.fail(item, "duplicate value " + excerpt(label) + " in " + v.name(),
                 "each value may appear once; remove the repeat");
    axis.values.push_back(static_cast<std::int64_t>(axis.labels.size()));
    axis.labels.push_back(label);
  }
}

std::vector<std::int64_t> SpaceLoader::read_range(const YamlValue& v) const {
  const Entries es = yaml_.entries(v, kRangeKeys);
  const YamlEntry* from = find(es, "from");
  const YamlEntry* to = find(es, "to");
  const YamlEntry* step = find(es, "step");
  const YamlEntry* pow2 = find(es, "pow2");
  std::vector<std::int64_t> values;
  if (pow2) {
    if (from || to || step) yaml_.fail(v, v.name() + " mixes a range (from/to/step) with pow2", kValuesHint);
    const std::vector<YamlValue> bounds = yaml_.items(pow2->value, "a list [lo, hi]", "for example {pow2: [16, 1024]}");
    if (bounds.size() != 2)
      yaml_.fail(pow2->value,
                 pow2->value.name() + ": expected two bounds [lo, hi], got " + std::to_string(bounds.size()),
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
      yaml_.fail(
          pow2->value,
          pow2->value.name() + ": lower bound " + std::to_string(lo) + " is above upper bound " + std::to_string(hi),
          "write [lo, hi] with lo <= hi");
    for (std::int64_t x = lo;; x *= 2) {
      values.push_back(x);
      if (x == hi) break;
    }
    return values;
  }
  if (!from || !to)
    yaml_.fail(v,
               v.name() + ": a range needs both 'from' and 'to'" +
                   (es.empty() ? std::string(", got an empty map") : std::string()),
               kValuesHint);
  const std::int64_t a = yaml_.integer(from->value);
  const std::int64_t b = yaml_.integer(to->value);
  const std::int64_t s = step ? yaml_.integer(step->value) : 1;
  if (s <= 0)
    yaml_.fail(step->value, step->value.name() + ": step must be positive, got " + std::to_string(s),
               "a range counts up from 'from' to 'to'");
  if (a > b)
    yaml_.fail(to->value, v.name() + ": range is empty (from " + std::to_string(a) + " > to " + std::to_string(b) + ")",
               "write the smaller bound in 'from'");
  // Unsigned arithmetic: to - from may not fit in int64, and (to - from) / step + 1 may wrap to 0.
  const std::uint64_t span =
      (static_cast<std::uint64_t>(b) - static_cast<std::uint64_t>(a)) / static_cast<std::uint64_t>(s);
  if (span >= kMaxAxisValues)
    yaml_.fail(v,
               v.name() + ": range has " + decimal(span) + (span == UINT64_MAX ? "" : " + 1") + " values, more than " +
                   std::to_string(kMaxAxisValues),
               "use a larger step, or pow2");
  const std::uint64_t count = span + 1;
  const auto first = static_cast<std::uint64_t>(a);
  const auto stride = static_cast<std::uint64_t>(s);
  for (std::uint64_t i = 0; i < count; ++i) values.push_back(static_cast<std::int64_t>(first + i * stride));
  return values;
}

void SpaceLoader::check_counts(const YamlEntry& problem, const YamlEntry& params, bool listed) const {
  // Counted, not walked. A search never walks the product (its domain checks the constraints of
  // what it samples), so the bound is what a point's 64-bit id can number, with room to spare.
  auto product = [](const std::vector<Axis>& axes) {
    std::uint64_t n = 1;
    for (const Axis& a : axes)
      n = a.values.size() != 0 && n > UINT64_MAX / a.values.size() ? UINT64_MAX : n * a.values.size();
    return n;
  };
  // With an allowed list only its configs are enumerated: the product does not bound the work.
  if (const std::uint64_t points = product(space_.params); points > kMaxPoints && !listed)
    yaml_.fail(
        params.key_mark,
        "the params span " + decimal(points) + " points, more than tiletune indexes (" + decimal(kMaxPoints) + ")",
        "use fewer values per param (a search samples a space: it need not list every value)");
  if (const std::uint64_t problems = product(space_.problem); problems > kMaxProblems)
    yaml_.fail(problem.key_mark,
               "the problem sizes make " + decimal(problems) + " problems, more than " + decimal(kMaxProblems),
               "list the sizes you tune for; `--size` picks others at run time");
}

LocatedExpr SpaceLoader::read_expr(const YamlValue& v, bool allow_bool) const {
  return read_expr_in(v, names_, allow_bool);
}

LocatedExpr SpaceLoader::read_expr_in(const YamlValue& v, std::span<const std::string> slots, bool allow_bool) const {
  if (v.is_null())
    yaml_.fail(v, v.name() + ": expected an expression, got nothing",
               "write an integer or an expression such as 'ceil_div(N, TILE)'");
  // {python: "..."}: the same place, in Python.
  const bool python = v.is_map();
  const YamlValue source = python ? python_text(v) : v;
  if (!source.is_scalar()) yaml_.fail_type(source, "an expression", "write an integer or an expression such as 'N*N'");
  const std::string text = source.text();
  LocatedExpr out{Expr(), yaml_.at(source.mark)};
  if (!python && allow_bool && v.is_plain() && (text == "true" || text == "false")) {
    out.expr = Expr::constant(text == "true" ? 1 : 0);
    return out;
  }
  const std::vector<std::string> slot_names(slots.begin(), slots.end());
  try {
    out.expr = python ? Expr::parse_python(text) : Expr::parse(text);
  } catch (const ExprSyntaxError& e) {
    if (python)
      throw SpaceError(yaml_.at_offset(source, e.offset()),
                       source.name() + ": Python expression '" + excerpt(text) + "': " + e.what(), python_hint());
    throw SpaceError(yaml_.at_offset(v, e.offset()),
                     v.name() + ": syntax error in expression '" + excerpt(text) + "': " + e.what(),
                     "expressions are C-like over 64-bit integers: + - * / % comparisons "
                     "&& || ! ?: and " +
                         join_names(kFunctions) + "; or write {python: \"...\"}");
  }
  // Python sees real and text params as their values; tiletune's own expressions see integers.
  const bool all_names = slots.data() == names_.data() && slots.size() == names_.size();
  try {
    out.expr.bind(slots, all_names ? std::span<const Expr::SlotDecoding>(slot_decodings_)
                                   : std::span<const Expr::SlotDecoding>());
  } catch (const ExprSyntaxError& e) {
    // Name the culprit ourselves (the identifier at the offset), so that the message reads
    // like every other did-you-mean of the loader.
    const std::size_t begin = std::min(e.offset(), text.size());
    std::size_t end = begin;
    while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
    std::string name = text.substr(begin, end - begin);
    if (!is_identifier(name)) {
      for (const std::string& var : out.expr.variables())
        if (std::find(slots.begin(), slots.end(), var) == slots.end()) {
          name = var;
          break;
        }
    }
    std::string what = source.name() + ": unknown name '" + excerpt(name) + "' in expression '" + excerpt(text) + "'";
    if (auto s = did_you_mean(name, slot_names)) what += "; did you mean '" + *s + "'?";
    throw SpaceError(
        yaml_.at_offset(source, e.offset()), what,
        "expressions here may use: " + (slot_names.empty() ? std::string("constants only") : join_names(slot_names)));
  }
  if (python) return out;
  for (const std::string& name : out.expr.variables())
    if (std::find(non_integer_names_.begin(), non_integer_names_.end(), name) != non_integer_names_.end())
      yaml_.fail(
          v,
          v.name() + ": '" + name + "' is a " +
              (space_.params[static_cast<std::size_t>(space_.param_index(name))].kind == AxisKind::real ? "real"
                                                                                                        : "text") +
              " param; expressions take integer params and problem sizes only",
          "give the choice an integer param, constrain it through one, or write the expression in Python: "
          "{python: \"...\"} sees real and text params as numbers and strings");
  return out;
}

YamlValue SpaceLoader::python_text(const YamlValue& v) const {
  if (!has_key(v, "python"))
    yaml_.fail_type(v, "an expression", "write an expression such as 'N*N', or Python as {python: \"N * N\"}");
  const Entries es = yaml_.entries(v, kPythonKeys, "an expression, or a map {python: \"...\"}",
                                   "write an expression such as 'N*N', or Python as {python: \"N * N\"}");
  const YamlEntry* e = find(es, "python");
  if (!e) yaml_.fail(v, v.name() + ": a map here must be {python: \"...\"}", "write {python: \"a * b <= 1024\"}");
  if (!e->value.is_scalar()) yaml_.fail_type(e->value, "Python text", "quote it: {python: \"a * b <= 1024\"}");
  return e->value;
}

std::string SpaceLoader::python_hint() const {
  std::vector<std::string_view> functions(py::function_names().begin(), py::function_names().end());
  return kPythonHint + join_names(functions) +
         " (also as math.NAME); names: " + (names_.empty() ? std::string("none") : join_names(names_));
}

void SpaceLoader::read_python_values(const YamlValue& v, Axis& axis) const {
  const YamlValue source = python_text(v);
  const std::string text = source.text();
  py::Value list;
  try {
    list = py::eval_constant(text);
  } catch (const ExprSyntaxError& e) {
    throw SpaceError(yaml_.at_offset(source, e.offset()),
                     source.name() + ": Python values '" + excerpt(text) + "': " + e.what(), python_hint());
  } catch (const EvalError& e) {
    yaml_.fail(source, source.name() + ": Python values '" + excerpt(text) + "': " + e.what(),
               "the text must evaluate to a list such as [2**i for i in range(6)]");
  }
  if (list.kind() != py::Value::Kind::list)
    yaml_.fail(source, source.name() + ": '" + excerpt(text) + "' is " + excerpt(list.repr()) + ", not a list",
               "values in Python are a list: [16, 32], list(range(32, 1025, 32)), [2**i for i in range(6)]");
  const py::Value::List& items = list.as_list();
  if (items.empty()) yaml_.fail(source, v.name() + " has no values (the Python list is empty)", kValuesHint);
  if (items.size() > kMaxAxisValues)
    yaml_.fail(
        source,
        v.name() + " has " + std::to_string(items.size()) + " values, more than " + std::to_string(kMaxAxisValues),
        "an axis is a short list: use fewer values");
  const auto all = [&](auto pred) { return std::all_of(items.begin(), items.end(), pred); };
  const auto fail_item = [&](const py::Value& item, const std::string& why) {
    yaml_.fail(source, v.name() + ": the value " + excerpt(item.repr()) + " " + why, kValuesHint);
  };
  for (const py::Value& item : items)
    if (item.kind() == py::Value::Kind::boolean || item.kind() == py::Value::Kind::none ||
        item.kind() == py::Value::Kind::list)
      fail_item(item, "is not an integer, a number or a word (write booleans as 0 and 1)");
  if (all([](const py::Value& x) { return x.kind() == py::Value::Kind::integer; })) {
    std::unordered_set<std::int64_t> seen;
    for (const py::Value& item : items) {
      if (!seen.insert(item.as_int()).second) fail_item(item, "is listed twice");
      axis.values.push_back(item.as_int());
    }
    return;
  }
  const bool numbers = all([](const py::Value& x) { return x.is_number(); });
  if (!numbers && !all([](const py::Value& x) { return x.kind() == py::Value::Kind::text; }))
    fail_item(items.front(),
              "is among values of another kind: the values of one axis are all integers, all numbers or all words");
  axis.kind = numbers ? AxisKind::real : AxisKind::text;
  std::unordered_set<std::string> seen;
  std::vector<double> reals;
  for (const py::Value& item : items) {
    const std::string label = item.str();
    if (label.empty() || label.size() > kMaxTextValue || label.find_first_of("\n\r") != std::string::npos)
      fail_item(item, "is not one line of 1 to " + std::to_string(kMaxTextValue) + " characters");
    if (numbers) {
      if (!std::isfinite(item.as_real())) fail_item(item, "is not finite");
      if (std::find(reals.begin(), reals.end(), item.as_real()) != reals.end() && reals.size() < 4096)
        fail_item(item, "is listed twice");
      reals.push_back(item.as_real());
    }
    if (!seen.insert(label).second) fail_item(item, "is listed twice");
    axis.values.push_back(static_cast<std::int64_t>(axis.labels.size()));
    axis.labels.push_back(label);
  }
}

void SpaceLoader::make_slot_decodings() {
  slot_decodings_.assign(names_.size(), nullptr);
  for (std::size_t i = 0; i < space_.params.size(); ++i) {
    const Axis& a = space_.params[i];
    if (a.kind == AxisKind::integer) continue;
    auto table = std::make_shared<std::vector<py::Value>>();
    for (const std::string& label : a.labels)
      table->push_back(a.kind == AxisKind::real ? py::Value::real(a.real_of(static_cast<std::int64_t>(table->size())))
                                                : py::Value::text(label));
    slot_decodings_[space_.problem.size() + i] = std::move(table);
  }
}

std::optional<std::int64_t> SpaceLoader::constant(const LocatedExpr& e, const YamlValue& v) const {
  if (!e.expr.is_constant()) return std::nullopt;
  try {
    return e.expr.eval({});
  } catch (const EvalError& err) {
    yaml_.fail(v, v.name() + ": cannot evaluate '" + excerpt(v.text()) + "': " + err.what(),
               "fix the constant expression");
  }
}

void SpaceLoader::read_dims(const YamlValue& v, LocatedExpr (&dims)[3], std::span<const std::string> slots) const {
  std::vector<YamlValue> items;
  if (v.is_sequence()) {
    items = yaml_.items(v, "a list", "for example [\"ceil_div(N, TILE)\", \"ceil_div(N, TILE)\"]");
    if (items.empty())
      yaml_.fail(v, v.name() + ": expected 1 to 3 dimensions, got an empty list",
                 "for example [\"ceil_div(N, TILE)\", \"ceil_div(N, TILE)\"]");
    if (items.size() > 3)
      yaml_.fail(items[3],
                 v.name() + " has " + std::to_string(items.size()) + " dimensions; CUDA has at most 3 (x, y, z)",
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
    dims[i] = read_expr_in(items[i], slots);
    if (auto c = constant(dims[i], items[i]); c && *c < 1)
      yaml_.fail(items[i], items[i].name() + " is " + std::to_string(*c) + "; a launch dimension must be at least 1",
                 "grid and block dimensions count blocks and threads: write 1 for an unused one");
  }
}

LaunchSpec SpaceLoader::read_launch(const YamlValue& v, std::span<const std::string> slots) const {
  LaunchSpec launch;
  const Entries es = yaml_.entries(v, kLaunchKeys, "a map {grid, block, shared_bytes}",
                                   "for example 'launch: {grid: [\"ceil_div(N, TILE)\"], block: [TILE]}'");
  read_dims(require(es, v, "grid", "grid: [\"ceil_div(N, TILE)\", \"ceil_div(N, TILE)\"]").value, launch.grid, slots);
  read_dims(require(es, v, "block", "block: [TILE, BLOCK_ROWS]").value, launch.block, slots);
  if (const YamlEntry* e = find(es, "shared_bytes")) {
    launch.shared_bytes = read_expr_in(e->value, slots);
    if (auto c = constant(launch.shared_bytes, e->value); c && *c < 0)
      yaml_.fail(e->value, e->value.name() + " is " + std::to_string(*c) + "; it cannot be negative",
                 "shared_bytes is the dynamic shared memory per block in bytes: 0 or more");
  } else {
    launch.shared_bytes = LocatedExpr{Expr::constant(0), yaml_.at(v.mark)};
  }
  return launch;
}

void SpaceLoader::read_metrics(const YamlValue& v) {
  if (v.is_null()) return;
  const Entries es =
      yaml_.entries(v, kMetricKeys, "a map {bytes, flops, flop_type}", "for example 'metrics: {bytes: 2*N*N*4}'");
  if (const YamlEntry* e = find(es, "bytes")) space_.metric_bytes = read_expr(e->value);
  if (const YamlEntry* e = find(es, "flops")) space_.metric_flops = read_expr(e->value);
  if (const YamlEntry* e = find(es, "flop_type")) {
    const std::string remedy = "one of " + flop_type_names() + " (the unit whose peak bounds the flops)";
    const std::string name = yaml_.string(e->value, "a flop type", remedy, 16);
    const std::optional<FlopType> type = parse_flop_type(name);
    if (!type) yaml_.fail(e->value, "metrics.flop_type: '" + excerpt(name) + "' is not a flop type", remedy);
    space_.metric_flop_type = *type;
  }
}

std::vector<std::int64_t> SpaceLoader::read_config(const YamlValue& v, std::string_view what) const {
  std::vector<std::string> param_names;
  for (const Axis& a : space_.params) param_names.push_back(a.name);
  const std::string label(what);
  const Entries es =
      yaml_.entries(v, {}, "a map of param -> value", "for example '" + label + ": {TILE: 32}', naming every param");
  std::vector<std::optional<std::int64_t>> values(space_.params.size());
  for (const YamlEntry& e : es) {
    const int i = space_.param_index(e.key);
    if (i < 0) {
      std::string message = label + ": '" + excerpt(e.key) + "' is not a param";
      if (auto s = did_you_mean(e.key, param_names)) message += "; did you mean '" + *s + "'?";
      yaml_.fail(e.key_mark, message, "params: " + join_names(param_names));
    }
    const Axis& axis = space_.params[static_cast<std::size_t>(i)];
    if (axis.kind == AxisKind::integer) {
      values[static_cast<std::size_t>(i)] = yaml_.integer(e.value);
      continue;
    }
    // A real or text param by its label (a real one by its number: 1.0 is 1).
    const std::string text = e.value.is_scalar() ? e.value.text() : std::string();
    for (std::size_t k = 0; k < axis.labels.size(); ++k) {
      const bool same = axis.labels[k] == text || (axis.kind == AxisKind::real && parse_number(text) &&
                                                   parse_number(axis.labels[k]) == parse_number(text));
      if (same) values[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(k);
    }
    if (!values[static_cast<std::size_t>(i)])
      yaml_.fail(e.value, label + ": " + axis.name + " = " + yaml_.describe(e.value) + " is not one of its values",
                 axis.name + " takes: " + join_names(axis.labels));
  }
  std::vector<std::string> missing;
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!values[i]) missing.push_back(space_.params[i].name);
  if (!missing.empty())
    yaml_.fail(v, label + ": no value for " + join_names(missing), "a config gives every param exactly once");
  std::vector<std::int64_t> config;
  for (const auto& x : values) config.push_back(*x);
  return config;
}

}  // namespace detail

Space parse_space(const std::string& yaml_text, const std::filesystem::path& yaml_path) {
  try {
    return detail::SpaceLoader(yaml_text, yaml_path).load();
  } catch (const SpaceError&) { throw; } catch (const YAML::Exception& e) {
    // Node access that yaml-cpp refuses (it should not happen after the checks above).
    SourceLocation loc{yaml_path.string(), 0, 0};
    if (e.mark.line >= 0) loc = {yaml_path.string(), e.mark.line + 1, e.mark.column + 1};
    throw SpaceError(loc, "cannot read the YAML: " + e.msg, "check the YAML syntax here");
  } catch (const std::bad_alloc&) {
    throw SpaceError(SourceLocation{yaml_path.string(), 0, 0}, "out of memory while loading the search space",
                     "the space asks for more than this machine holds: make it smaller");
  } catch (const std::exception& e) {
    throw SpaceError(SourceLocation{yaml_path.string(), 0, 0}, std::string("cannot load the search space: ") + e.what(),
                     "check the file");
  }
}

std::string read_space_file(const std::filesystem::path& yaml_path) {
  return read_input_file(yaml_path, "a search space", detail::kMaxSpaceFileBytes);
}

Space load_space(const std::filesystem::path& yaml_path) {
  std::string text;
  try {
    text = read_space_file(yaml_path);
  } catch (const Error& e) {
    throw SpaceError(SourceLocation{shown_path(yaml_path), 0, 0}, e.what(),
                     "name a YAML file, for example configs/transpose.yaml");
  }
  return parse_space(text, yaml_path);
}

}  // namespace tiletune
