// The data of a search space: buffers (their element types, counts and how each is filled),
// module globals, and the kernel's arguments. Every check that needs no problem size is made
// here: kinds of fill that fit the element type, bounds in order, constant values (fills and
// scalar arguments) within their type's range, files that exist, copies and CSR columns that
// name a buffer of the right kind.
#include <algorithm>
#include <limits>
#include <sys/stat.h>

#include "space/loader.hpp"

namespace tiletune::detail {

namespace {

// CUDA's vector types: a buffer of N float2 is a buffer of 2N floats to tiletune.
struct VectorType {
  std::string_view name;
  ElementType type;
  int lanes;
};
constexpr VectorType kVectorTypes[] = {
    {"float2", ElementType::f32, 2}, {"float4", ElementType::f32, 4},  {"double2", ElementType::f64, 2},
    {"half2", ElementType::f16, 2},  {"char2", ElementType::i8, 2},    {"char4", ElementType::i8, 4},
    {"short2", ElementType::i16, 2}, {"short4", ElementType::i16, 4},  {"int2", ElementType::i32, 2},
    {"int4", ElementType::i32, 4},   {"ushort2", ElementType::u16, 2}, {"ushort4", ElementType::u16, 4},
    {"uint2", ElementType::u32, 2},  {"uint4", ElementType::u32, 4},   {"ulonglong2", ElementType::u64, 2}};

constexpr std::string_view kBufferKeys[] = {"type", "count", "init", "output"};
constexpr std::string_view kGlobalKeys[] = {"type", "count", "init"};
constexpr std::string_view kArgKeys[] = {"value", "type"};
constexpr std::string_view kSimpleInits[] = {"zero", "random", "iota", "none"};
constexpr std::string_view kInitKinds[] = {"constant", "uniform",     "normal",     "file",
                                           "copy",     "csr_offsets", "csr_columns"};
constexpr std::string_view kNormalKeys[] = {"mean", "stddev"};
constexpr std::string_view kCsrKeys[] = {"rows", "columns", "nnz", "density"};

constexpr const char* kInitHint =
    "init is zero, none, random, iota, or one of {constant: 0.5}, {uniform: [-1, 1]}, "
    "{normal: {mean: 0, stddev: 1}}, {file: data/x.npy}, {copy: BUFFER}, "
    "{csr_offsets: {rows: N, columns: N, nnz: NNZ}}, {csr_columns: OFFSETS_BUFFER}";

std::vector<std::string_view> element_type_names() {
  std::vector<std::string_view> names;
  for (const ElementType t : kElementTypes) names.push_back(element_type_name(t));
  return names;
}

std::vector<std::string_view> vector_type_names() {
  std::vector<std::string_view> names;
  for (const VectorType& t : kVectorTypes) names.push_back(t.name);
  return names;
}

bool is_integer_type(ElementType t) { return !is_floating(t); }

// Every type a buffer, global or argument may take: its own, and the labels of its type param
// (read_type checked that each names one).
std::vector<ElementType> possible_types(const Space& space, ElementType type, int type_param) {
  std::vector<ElementType> types{type};
  if (type_param >= 0)
    for (const std::string& label : space.params[static_cast<std::size_t>(type_param)].labels)
      types.push_back(*element_type_from_name(label));
  return types;
}

// A count of vectors as a count of their elements: "N" of float2 is "(N) * 2".
LocatedExpr vector_count(LocatedExpr count, int lanes, std::span<const std::string> slots,
                         std::span<const Expr::SlotDecoding> decodings) {
  if (lanes == 1) return count;
  const std::string scaled_text = "(" + count.expr.text() + ") * " + std::to_string(lanes);
  Expr scaled = count.expr.is_python() ? Expr::parse_python(scaled_text) : Expr::parse(scaled_text);
  scaled.bind(slots, decodings);
  return LocatedExpr{std::move(scaled), count.where};
}

// A C++ name, possibly qualified: "weights", "conv::weights".
bool is_qualified_identifier(std::string_view s) {
  if (s.starts_with("::")) s.remove_prefix(2);
  while (true) {
    const std::size_t sep = s.find("::");
    if (!is_identifier(s.substr(0, sep))) return false;
    if (sep == std::string_view::npos) return true;
    s.remove_prefix(sep + 2);
  }
}

}  // namespace

ElementType SpaceLoader::read_type(const YamlValue& v, int& type_param, bool scalar, int* lanes) const {
  const std::string hint = std::string(scalar ? "scalar argument" : "element") + " types: " + element_type_list() +
                           (lanes ? ", the vector types " + join_names(vector_type_names()) : "") +
                           ", or a text param whose values are such types";
  const std::string t = yaml_.string(v, "a type", hint, kMaxNameLength);
  for (const ElementType type : kElementTypes)
    if (t == element_type_name(type)) return type;
  if (lanes)
    for (const VectorType& vt : kVectorTypes)
      if (vt.name == t) {
        *lanes = vt.lanes;
        return vt.type;
      }
  // A text param: every value must name an element type.
  if (const int p = space_.param_index(t);
      p >= 0 && space_.params[static_cast<std::size_t>(p)].kind == AxisKind::text) {
    const Axis& axis = space_.params[static_cast<std::size_t>(p)];
    ElementType first = ElementType::f32;
    for (std::size_t k = 0; k < axis.labels.size(); ++k) {
      const auto type = element_type_from_name(axis.labels[k]);
      if (!type)
        yaml_.fail(v,
                   v.name() + ": the type follows param " + axis.name + ", whose value '" + excerpt(axis.labels[k]) +
                       "' is not an element type",
                   hint);
      if (k == 0) first = *type;
    }
    type_param = p;
    return first;
  }
  std::string what = v.name() + ": unknown type '" + excerpt(t) + "'";
  if (auto s = did_you_mean(t, element_type_names())) what += "; did you mean '" + *s + "'?";
  yaml_.fail(v, what, hint);
}

NumberSpec SpaceLoader::read_number(const YamlValue& v, std::span<const std::string> slots) const {
  NumberSpec n;
  n.expr.where = yaml_.at(v.mark);
  if (v.is_scalar() && v.is_plain()) {
    const std::string text = v.text();
    if (!parse_integer(text) && parse_number(text)) {
      n.real = parse_number(text);
      return n;
    }
    if (const int p = space_.param_index(text); p >= 0 &&
                                                space_.params[static_cast<std::size_t>(p)].kind == AxisKind::real &&
                                                std::find(slots.begin(), slots.end(), text) != slots.end()) {
      n.real_param = p;
      return n;
    }
  }
  n.expr = read_expr_in(v, slots);
  return n;
}

void SpaceLoader::check_fits(const NumberSpec& n, const YamlValue& v, std::span<const ElementType> types,
                             bool excluded) const {
  if (n.real_param >= 0) return;  // a real param: checked when a config is run
  std::optional<std::int64_t> integer;
  if (!n.real && !(integer = constant(n.expr, v))) return;  // needs a problem: checked by validate
  for (const ElementType t : types) {
    if (n.real && !is_floating(t)) continue;         // a decimal for a type param that may be integer: truncated
    const bool below = excluded && !is_floating(t);  // integers drawn from [low, high - 1]
    const bool past = below && *integer > std::numeric_limits<std::int64_t>::min();
    const auto why = n.real ? value_misfit(t, *n.real) : value_misfit(t, past ? *integer - 1 : *integer);
    if (why)
      yaml_.fail(v, v.name() + ": " + (below ? "the largest value drawn, " : "") + *why,
                 std::string(below ? "the high bound is excluded: " : "") +
                     "give a value of the type's range, or another type");
  }
}

InitSpec SpaceLoader::read_init(const YamlValue& v, ElementType type, int type_param) const {
  InitSpec init;
  init.where = yaml_.at(v.mark);
  init.file_dir = space_.yaml_path.parent_path();
  const std::vector<ElementType> types = possible_types(space_, type, type_param);
  const bool all_integer = std::all_of(types.begin(), types.end(), is_integer_type);
  const bool all_floating = std::none_of(types.begin(), types.end(), is_integer_type);
  if (v.is_scalar()) {
    const std::string name = yaml_.string(v, "an init", kInitHint, kMaxNameLength);
    const auto* it = std::find(std::begin(kSimpleInits), std::end(kSimpleInits), name);
    if (it == std::end(kSimpleInits)) {
      std::string what = v.name() + ": unknown init '" + excerpt(name) + "'";
      if (auto s = did_you_mean(name, kSimpleInits)) what += "; did you mean '" + *s + "'?";
      if (std::find(std::begin(kInitKinds), std::end(kInitKinds), name) != std::end(kInitKinds))
        what += " (" + name + " takes a value: {" + name + ": ...})";
      yaml_.fail(v, what, kInitHint);
    }
    constexpr BufferInit kinds[] = {BufferInit::zero, BufferInit::random, BufferInit::iota, BufferInit::none};
    init.kind = kinds[it - std::begin(kSimpleInits)];
    return init;
  }
  const Entries es = yaml_.entries(v, kInitKinds, "an init name or a map with one key", kInitHint);
  if (es.size() != 1)
    yaml_.fail(v, v.name() + ": an init map has exactly one key, got " + std::to_string(es.size()), kInitHint);
  const YamlEntry& e = es.front();
  const YamlValue& arg = e.value;
  const auto integers_only = [&](const NumberSpec& n, const YamlValue& where) {
    if (!all_integer || n.is_integer()) return;
    yaml_.fail(where, where.name() + ": the buffer holds integers, so this value must be an integer", kInitHint);
  };
  if (e.key == "constant") {
    init.kind = BufferInit::constant;
    init.a = read_number(arg, names_);
    integers_only(init.a, arg);
    check_fits(init.a, arg, types);
  } else if (e.key == "uniform") {
    init.kind = BufferInit::uniform;
    const std::vector<YamlValue> bounds = yaml_.items(arg, "a list [low, high]", "for example {uniform: [-1, 1]}");
    if (bounds.size() != 2)
      yaml_.fail(arg, arg.name() + ": expected two bounds [low, high], got " + std::to_string(bounds.size()),
                 "floats are drawn from [low, high), integers from low to high - 1");
    init.a = read_number(bounds[0], names_);
    init.b = read_number(bounds[1], names_);
    integers_only(init.a, bounds[0]);
    integers_only(init.b, bounds[1]);
    const auto constant_value = [&](const NumberSpec& n) -> std::optional<double> {
      if (n.real) return n.real;
      if (n.real_param < 0 && n.expr.expr.is_constant()) return static_cast<double>(n.expr.expr.eval({}));
      return std::nullopt;
    };
    if (auto lo = constant_value(init.a), hi = constant_value(init.b); lo && hi && !(*lo < *hi))
      yaml_.fail(arg, arg.name() + ": the low bound must be below the high bound", "write [low, high] with low < high");
    check_fits(init.a, bounds[0], types);
    check_fits(init.b, bounds[1], types, true);
  } else if (e.key == "normal") {
    init.kind = BufferInit::normal;
    if (!all_floating)
      yaml_.fail(arg, arg.name() + ": a normal distribution fills floating-point buffers only",
                 "use {uniform: [low, high]} for integers");
    const Entries ps =
        yaml_.entries(arg, kNormalKeys, "a map {mean, stddev}", "for example {normal: {mean: 0, stddev: 1}}");
    const YamlEntry* mean = find(ps, "mean");
    const YamlEntry* stddev = find(ps, "stddev");
    if (!mean || !stddev)
      yaml_.fail(arg, arg.name() + ": give both mean and stddev", "for example {normal: {mean: 0, stddev: 1}}");
    init.a = read_number(mean->value, names_);
    init.b = read_number(stddev->value, names_);
    if (init.b.real && *init.b.real < 0)
      yaml_.fail(stddev->value, stddev->value.name() + " is negative", "a standard deviation is 0 or more");
    if (init.b.is_integer() && init.b.expr.expr.is_constant() && init.b.expr.expr.eval({}) < 0)
      yaml_.fail(stddev->value, stddev->value.name() + " is negative", "a standard deviation is 0 or more");
  } else if (e.key == "file") {
    init.kind = BufferInit::file;
    init.file = yaml_.string(arg, "a path", "for example {file: data/x.npy}; {N} stands for the problem size N");
    for (std::size_t open = init.file.find('{'); open != std::string::npos; open = init.file.find('{', open + 1)) {
      const std::size_t close = init.file.find('}', open);
      const std::string name =
          close == std::string::npos ? std::string() : init.file.substr(open + 1, close - open - 1);
      if (space_.problem_index(name) < 0)
        yaml_.fail(arg, arg.name() + ": '{" + excerpt(name) + "}' in the path is not a problem size",
                   "{NAME} in a path stands for a problem size; problem sizes: " +
                       join_names(std::span(names_).first(space_.problem.size())));
    }
    if (init.file.find('{') == std::string::npos) (void)read_path(arg, "input file", "for example {file: data/x.npy}");
  } else if (e.key == "copy" || e.key == "csr_columns") {
    init.kind = e.key == "copy" ? BufferInit::copy : BufferInit::csr_columns;
    init.of = yaml_.string(arg, "a buffer name", "name the buffer it derives from", kMaxNameLength);
    if (init.kind == BufferInit::csr_columns && !all_integer)
      yaml_.fail(arg, arg.name() + ": CSR column indices are integers", "give the buffer an integer type such as int");
  } else {  // csr_offsets
    init.kind = BufferInit::csr_offsets;
    if (!all_integer)
      yaml_.fail(arg, arg.name() + ": CSR row offsets are integers", "give the buffer an integer type such as int");
    const Entries ps = yaml_.entries(arg, kCsrKeys, "a map {rows, columns, nnz or density}",
                                     "for example {csr_offsets: {rows: N, columns: N, density: 0.01}}");
    const YamlEntry* rows = find(ps, "rows");
    const YamlEntry* columns = find(ps, "columns");
    const YamlEntry* nnz = find(ps, "nnz");
    const YamlEntry* density = find(ps, "density");
    if (!rows || !columns || (!nnz && !density) || (nnz && density))
      yaml_.fail(arg, arg.name() + ": give rows, columns, and one of nnz or density",
                 "for example {csr_offsets: {rows: N, columns: N, nnz: 16 * N}}");
    init.rows = read_expr(rows->value);
    init.columns = read_expr(columns->value);
    if (nnz) {
      init.nnz = read_expr(nnz->value);
    } else {
      init.density = yaml_.number(density->value);
      if (!(*init.density > 0 && *init.density <= 1))
        yaml_.fail(density->value, density->value.name() + " must lie in (0, 1]",
                   "density is the share of stored entries");
      init.nnz.where = yaml_.at(density->value.mark);
    }
  }
  return init;
}

void SpaceLoader::read_buffers(const YamlValue& v) {
  if (v.is_null()) return;
  for (const YamlEntry& e : yaml_.entries(v, {}, "a map of buffer name -> {type, count, init, output}",
                                          "for example 'buffers: {out: {count: N*N, output: true}}'")) {
    check_name(e, "buffer", false);
    if (std::find(names_.begin(), names_.end(), e.key) != names_.end())
      yaml_.fail(e.key_mark, "buffer '" + e.key + "' has the name of a problem size or param",
                 "rename the buffer: in args a name must mean one thing");
    BufferSpec b;
    b.name = e.key;
    b.where = yaml_.at(e.key_mark);
    const Entries fields = yaml_.entries(e.value, kBufferKeys, "a map {type, count, init, output}",
                                         "for example '" + e.key + ": {type: float, count: N*N}'");
    int lanes = 1;
    if (const YamlEntry* f = find(fields, "type")) b.type = read_type(f->value, b.type_param, false, &lanes);
    const YamlEntry& count = require(fields, e.value, "count", "count: N*N");
    b.count = vector_count(read_expr(count.value), lanes, names_, slot_decodings_);
    if (auto c = constant(b.count, count.value); c && *c < 1)
      yaml_.fail(count.value,
                 count.value.name() + " is " + std::to_string(*c) + "; a buffer holds at least one element",
                 "count is the number of elements, for example N*N");
    if (const YamlEntry* f = find(fields, "init")) {
      b.init = read_init(f->value, b.type, b.type_param);
    } else {
      b.init.where = b.where;
    }
    if (const YamlEntry* f = find(fields, "output")) b.output = yaml_.boolean(f->value);
    space_.buffers.push_back(std::move(b));
    buffer_marks_.push_back(e.key_mark);
  }
}

void SpaceLoader::read_globals(const YamlValue& v) {
  if (v.is_null()) return;
  for (const YamlEntry& e : yaml_.entries(v, {}, "a map of symbol -> {type, count, init}",
                                          "for example 'globals: {weights: {type: float, count: 81, init: random}}'")) {
    if (e.key.size() > kMaxNameLength || !is_qualified_identifier(e.key))
      yaml_.fail(e.key_mark, "'" + excerpt(e.key) + "' is not a C++ name of a __constant__ or __device__ variable",
                 "write the symbol as in the source: weights, or conv::weights");
    if (space_.buffer_index(e.key) >= 0)
      yaml_.fail(e.key_mark, "global '" + e.key + "' has the name of a buffer", "a name means one thing: rename one");
    GlobalSpec g;
    g.name = e.key;
    g.where = yaml_.at(e.key_mark);
    const Entries fields = yaml_.entries(e.value, kGlobalKeys, "a map {type, count, init}",
                                         "for example '" + e.key + ": {type: float, count: 81, init: random}'");
    int lanes = 1;
    if (const YamlEntry* f = find(fields, "type")) g.type = read_type(f->value, g.type_param, false, &lanes);
    const YamlEntry& count = require(fields, e.value, "count", "count: 81");
    g.count = vector_count(read_expr(count.value), lanes, names_, slot_decodings_);
    if (auto c = constant(g.count, count.value); c && *c < 1)
      yaml_.fail(count.value,
                 count.value.name() + " is " + std::to_string(*c) + "; a global holds at least one element",
                 "count is the number of elements of the variable");
    const YamlEntry& init = require(fields, e.value, "init", "init: random");
    g.init = read_init(init.value, g.type, g.type_param);
    if (g.init.kind == BufferInit::csr_columns)
      yaml_.fail(init.value, init.value.name() + ": a global cannot hold CSR columns",
                 "fill it from a buffer with {copy: BUFFER}");
    for (const GlobalSpec& other : space_.globals)
      if (other.name == g.name) yaml_.fail(e.key_mark, "global '" + g.name + "' is given twice", "keep one of them");
    space_.globals.push_back(std::move(g));
  }
}

void SpaceLoader::check_inits() const {
  // A copy or CSR columns name a buffer of the right kind; copies form no cycle.
  auto check = [&](const InitSpec& init, const std::string& owner, ElementType type, int type_param, bool is_global) {
    if (init.kind != BufferInit::copy && init.kind != BufferInit::csr_columns) return;
    const int source = space_.buffer_index(init.of);
    const SourceLocation& at = init.where;
    std::vector<std::string> buffer_names;
    for (const BufferSpec& b : space_.buffers) buffer_names.push_back(b.name);
    if (source < 0) {
      std::string what = owner + ": '" + excerpt(init.of) + "' is not a buffer";
      if (auto s = did_you_mean(init.of, buffer_names)) what += "; did you mean '" + *s + "'?";
      throw SpaceError(at, what, "buffers: " + join_names(buffer_names));
    }
    const BufferSpec& of = space_.buffers[static_cast<std::size_t>(source)];
    if (!is_global && of.name == owner)
      throw SpaceError(
          at, owner + " cannot be " + (init.kind == BufferInit::copy ? "a copy" : "the CSR columns") + " of itself",
          "name another buffer");
    if (init.kind == BufferInit::csr_columns) {
      if (of.init.kind != BufferInit::csr_offsets)
        throw SpaceError(at, owner + ": '" + of.name + "' holds no CSR row offsets (its init is not csr_offsets)",
                         "give " + of.name + " init: {csr_offsets: {rows: ..., columns: ..., nnz: ...}}");
      return;
    }
    if (of.type != type || of.type_param != type_param)
      throw SpaceError(at, owner + " is a copy of '" + of.name + "', but their element types differ",
                       "give both the same type");
    // Follow the chain of copies: it must end in a buffer filled some other way.
    std::size_t steps = 0;
    for (const BufferSpec* b = &of; b->init.kind == BufferInit::copy; ++steps) {
      const int next = space_.buffer_index(b->init.of);
      if (next < 0) break;  // reported at that buffer
      b = &space_.buffers[static_cast<std::size_t>(next)];
      if (b->name == owner || steps > space_.buffers.size())
        throw SpaceError(at, owner + ": the copies form a cycle", "one buffer of the chain must be filled another way");
    }
  };
  for (const BufferSpec& b : space_.buffers) check(b.init, b.name, b.type, b.type_param, false);
  for (const GlobalSpec& g : space_.globals) check(g.init, g.name, g.type, g.type_param, true);
}

std::vector<ArgSpec> SpaceLoader::read_args(const YamlValue& v, std::span<const std::string> slots) const {
  std::vector<std::string> buffer_names;
  for (const BufferSpec& b : space_.buffers) buffer_names.push_back(b.name);
  const std::vector<YamlValue> items =
      yaml_.items(v, "a list of buffer names and scalar expressions", "for example 'args: [in, out, N]'");
  if (items.empty())
    yaml_.fail(v, v.name() + " is empty", "list the kernel's parameters in order, for example [in, out, N]");
  const std::vector<std::string> slot_names(slots.begin(), slots.end());
  std::vector<ArgSpec> args;
  for (const YamlValue& item : items) {
    ArgSpec a;
    a.where = yaml_.at(item.mark);
    a.value.expr.where = a.where;
    if (item.is_map()) {
      const Entries fields =
          yaml_.entries(item, kArgKeys, "a map {value, type}", "for example {value: 0.5, type: float}");
      const YamlValue& value = require(fields, item, "value", "value: N").value;
      if (const YamlEntry* f = find(fields, "type")) a.scalar_type = read_type(f->value, a.type_param, true);
      a.value = read_number(value, slots);
      const bool floating = a.type_param >= 0 ? is_floating(a.scalar_type) : is_floating(a.scalar_type);
      if (!a.value.is_integer() && !floating)
        yaml_.fail(value, value.name() + ": a decimal value needs a floating-point argument",
                   "write {value: " + excerpt(value.text()) + ", type: float} (or double, half)");
      if (a.type_param >= 0) {
        // Every type the param may give must be floating (a decimal) or anything (an integer).
        for (const std::string& label : space_.params[static_cast<std::size_t>(a.type_param)].labels)
          if (!a.value.is_integer() && !is_floating(*element_type_from_name(label)))
            yaml_.fail(value, value.name() + ": a decimal value, but the type may be " + label,
                       "give decimal values float or double arguments only");
      }
      check_fits(a.value, value, possible_types(space_, a.scalar_type, a.type_param));
    } else if (item.is_scalar()) {
      const std::string text = item.text();
      if (std::find(buffer_names.begin(), buffer_names.end(), text) != buffer_names.end()) {
        a.kind = ArgSpec::Kind::buffer;
        a.buffer = text;
      } else {
        if (item.is_plain() && !parse_integer(text) && parse_number(text))
          yaml_.fail(item, item.name() + ": a decimal argument needs its type",
                     "write {value: " + excerpt(text) + ", type: float} (or double)");
        // A bare unknown name is most likely a misspelt buffer: say so before the expression
        // parser would call it an unknown variable.
        if (is_identifier(text) && std::find(slots.begin(), slots.end(), text) == slots.end() &&
            space_.param_index(text) < 0) {
          std::vector<std::string> known = buffer_names;
          known.insert(known.end(), slot_names.begin(), slot_names.end());
          std::string what = item.name() + ": '" + excerpt(text) + "' is not a buffer, problem size or param";
          if (auto s = did_you_mean(text, known)) what += "; did you mean '" + *s + "'?";
          const std::string buffers = buffer_names.empty() ? std::string("(none)") : join_names(buffer_names);
          yaml_.fail(item, what,
                     "buffers: " + buffers + "; sizes and params: " +
                         (slot_names.empty() ? std::string("(none)") : join_names(slot_names)));
        }
        if (const int p = space_.param_index(text);
            p >= 0 && space_.params[static_cast<std::size_t>(p)].kind != AxisKind::integer)
          yaml_.fail(item, item.name() + ": '" + text + "' is a real or text param: pass it with its type",
                     "write {value: " + text +
                         ", type: float} for a real param; a text param reaches the kernel as -D" + text);
        a.value.expr = read_expr_in(item, slots);
        check_fits(a.value, item, std::span(&a.scalar_type, 1));
      }
    } else {
      yaml_.fail_type(item, "a buffer name, an expression or {value: EXPR, type: TYPE}",
                      "for example 'args: [in, out, N, {value: 0.5, type: float}]'");
    }
    args.push_back(std::move(a));
  }
  return args;
}

}  // namespace tiletune::detail
