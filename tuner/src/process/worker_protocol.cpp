// The messages between the parent and a GPU worker: every field of a TrialRequest,
// TrialResult and CopyCeiling as a CBOR map (the cubin as CBOR binary), and the 4-byte
// little-endian length that frames them. Both sides decode what the other sent, so decoding
// trusts nothing: the CBOR is parsed with a nesting limit, then every field is checked for
// presence, type and range, and anything off is an Error naming the field.
#include <cmath>
#include <filesystem>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tiletune/error.hpp"
#include "tiletune/trial_record.hpp"
#include "tiletune/worker.hpp"

namespace tiletune {
namespace {

using Json = nlohmann::json;

// Our messages nest four deep (message, buffers, buffer, init); anything much deeper is garbage,
// and nlohmann's CBOR reader recurses once per level, so a deep one could overflow the stack.
constexpr std::size_t kMaxDepth = 8;

// Builds the DOM like nlohmann's own SAX parser, but refuses to nest deeper than kMaxDepth.
class BoundedDomBuilder {
 public:
  explicit BoundedDomBuilder(Json& root) : root_(root) {}

  bool null() { return put(nullptr) != nullptr; }
  bool boolean(bool v) { return put(v) != nullptr; }
  bool number_integer(Json::number_integer_t v) { return put(v) != nullptr; }
  bool number_unsigned(Json::number_unsigned_t v) { return put(v) != nullptr; }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return put(v) != nullptr; }
  bool string(Json::string_t& v) { return put(std::move(v)) != nullptr; }
  bool binary(Json::binary_t& v) { return put(std::move(v)) != nullptr; }
  bool key(Json::string_t& k) {
    key_ = std::move(k);
    return true;
  }
  bool start_object(std::size_t) { return open(Json::object()); }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& e) {
    error_ = e.what();
    return false;
  }

  [[nodiscard]] const std::string& error() const noexcept { return error_; }

 private:
  template <class V>
  Json* put(V&& v) {
    if (stack_.empty()) {
      root_ = Json(std::forward<V>(v));
      return &root_;
    }
    Json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(Json(std::forward<V>(v)));
      return &top.back();
    }
    Json& slot = top[key_];
    slot = Json(std::forward<V>(v));
    return &slot;
  }
  bool open(Json container) {
    if (stack_.size() >= kMaxDepth) {
      error_ = fmt::format("nested deeper than {} levels", kMaxDepth);
      return false;
    }
    stack_.push_back(put(std::move(container)));
    return true;
  }
  bool close() {
    if (stack_.empty()) return false;
    stack_.pop_back();
    return true;
  }

  Json& root_;
  std::vector<Json*> stack_;  // the open containers; only the innermost grows
  std::string key_;
  std::string error_;
};

[[noreturn]] void malformed(const std::string& what) {
  throw Error("worker protocol: " + what);
}

Json parse_cbor(const std::string& payload) {
  Json root;
  BoundedDomBuilder builder(root);
  bool ok = false;
  try {
    ok = Json::sax_parse(payload, &builder, Json::input_format_t::cbor, /*strict=*/true);
  } catch (const Json::exception& e) {
    malformed(std::string("not a CBOR message: ") + e.what());
  }
  if (!ok) malformed("not a CBOR message: " + builder.error());
  if (!root.is_object()) malformed("the message is not a CBOR map");
  return root;
}

std::string to_payload(const Json& message) {
  std::vector<std::uint8_t> bytes = Json::to_cbor(message);
  return std::string(bytes.begin(), bytes.end());
}

// A view of one map in a message with checked getters; `path` names it in errors.
class Fields {
 public:
  Fields(const Json& object, std::string path) : object_(object), path_(std::move(path)) {
    if (!object_.is_object()) malformed(path_ + ": expected a map");
  }

  [[nodiscard]] const Json& at(const char* key) const {
    auto it = object_.find(key);
    if (it == object_.end()) malformed(fmt::format("{}missing field '{}'", prefix(), key));
    return *it;
  }
  [[nodiscard]] std::string name(const char* key) const { return prefix() + key; }

  [[nodiscard]] std::string str(const char* key) const {
    const Json& v = at(key);
    if (!v.is_string()) wrong(key, "a string");
    return v.get<std::string>();
  }
  [[nodiscard]] std::string bytes(const char* key) const {
    const Json& v = at(key);
    if (!v.is_binary()) wrong(key, "a byte string");
    const auto& b = v.get_binary();
    return std::string(b.begin(), b.end());
  }
  [[nodiscard]] bool boolean(const char* key) const {
    const Json& v = at(key);
    if (!v.is_boolean()) wrong(key, "a boolean");
    return v.get<bool>();
  }
  [[nodiscard]] std::uint64_t u64(const char* key) const {
    const Json& v = at(key);
    if (v.is_number_unsigned()) return v.get<std::uint64_t>();
    if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return v.get<std::uint64_t>();
    wrong(key, "an unsigned integer");
  }
  [[nodiscard]] std::int64_t i64(const char* key) const { return to_i64(at(key), key); }
  [[nodiscard]] int i32(const char* key) const {
    std::int64_t v = i64(key);
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
      wrong(key, "a 32-bit integer");
    return static_cast<int>(v);
  }
  [[nodiscard]] double f64(const char* key) const {
    const Json& v = at(key);
    if (!v.is_number()) wrong(key, "a number");
    return v.get<double>();
  }
  [[nodiscard]] const Json& array(const char* key) const {
    const Json& v = at(key);
    if (!v.is_array()) wrong(key, "an array");
    return v;
  }
  [[nodiscard]] const Json& map(const char* key) const {
    const Json& v = at(key);
    if (!v.is_object()) wrong(key, "a map");
    return v;
  }
  // Three integers: a grid or block.
  void dims(const char* key, long long (&out)[3]) const {
    const Json& v = array(key);
    if (v.size() != 3) wrong(key, "an array of 3 integers");
    for (int i = 0; i < 3; ++i) out[i] = to_i64(v[i], key);
  }

  [[noreturn]] void wrong(const char* key, const char* expected) const {
    malformed(fmt::format("field '{}{}': expected {}", prefix(), key, expected));
  }

 private:
  [[nodiscard]] std::string prefix() const { return path_.empty() ? "" : path_ + "."; }
  [[nodiscard]] std::int64_t to_i64(const Json& v, const char* key) const {
    if (v.is_number_unsigned()) {
      if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        wrong(key, "a 64-bit signed integer");
      return v.get<std::int64_t>();
    }
    if (v.is_number_integer()) return v.get<std::int64_t>();
    wrong(key, "an integer");
  }

  const Json& object_;
  std::string path_;
};

// Wire names of the enums: fixed here, independent of how messages spell them.
constexpr std::pair<ElementType, const char*> kWireElementTypes[] = {
    {ElementType::f32, "f32"}, {ElementType::f64, "f64"}, {ElementType::i32, "i32"},
    {ElementType::u32, "u32"}, {ElementType::i64, "i64"}, {ElementType::u8, "u8"},
    {ElementType::f16, "f16"}, {ElementType::i8, "i8"},   {ElementType::i16, "i16"},
    {ElementType::u16, "u16"}, {ElementType::u64, "u64"}};
static_assert(std::size(kWireElementTypes) == kElementTypeCount, "a wire name for every element type");
constexpr std::pair<BufferInit, const char*> kBufferInits[] = {
    {BufferInit::zero, "zero"},         {BufferInit::none, "none"},
    {BufferInit::random, "random"},     {BufferInit::iota, "iota"},
    {BufferInit::constant, "constant"}, {BufferInit::uniform, "uniform"},
    {BufferInit::normal, "normal"},     {BufferInit::file, "file"},
    {BufferInit::copy, "copy"},         {BufferInit::csr_offsets, "csr_offsets"},
    {BufferInit::csr_columns, "csr_columns"}};
constexpr std::pair<VerifySettings::Mode, const char*> kVerifyModes[] = {
    {VerifySettings::Mode::none, "none"},
    {VerifySettings::Mode::cpu, "cpu"},
    {VerifySettings::Mode::reference_run, "reference_run"},
    {VerifySettings::Mode::library, "library"},
    {VerifySettings::Mode::files, "files"}};
constexpr std::pair<AxisKind, const char*> kAxisKinds[] = {
    {AxisKind::integer, "integer"}, {AxisKind::real, "real"}, {AxisKind::text, "text"}};
constexpr std::pair<OutputCheck::Compare, const char*> kCompares[] = {
    {OutputCheck::Compare::elements, "elements"},
    {OutputCheck::Compare::sum, "sum"},
    {OutputCheck::Compare::none, "none"}};

template <class E, std::size_t N>
const char* enum_name(const std::pair<E, const char*> (&table)[N], E value) {
  for (const auto& [e, name] : table)
    if (e == value) return name;
  throw Error(fmt::format("worker protocol: enum value {} has no wire name", static_cast<int>(value)));
}

template <class E, std::size_t N>
E enum_value(const std::pair<E, const char*> (&table)[N], const Fields& f, const char* key) {
  std::string s = f.str(key);
  for (const auto& [e, name] : table)
    if (s == name) return e;
  malformed(fmt::format("field '{}': unknown value '{}'", f.name(key), s));
}

Json strings_json(const std::vector<std::string>& v) { return Json(v); }
Json paths_json(const std::vector<std::filesystem::path>& v) {
  Json out = Json::array();
  for (const auto& p : v) out.push_back(p.string());
  return out;
}

std::vector<std::string> strings_from(const Fields& f, const char* key) {
  std::vector<std::string> out;
  for (const Json& v : f.array(key)) {
    if (!v.is_string()) f.wrong(key, "an array of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}
std::vector<std::filesystem::path> paths_from(const Fields& f, const char* key) {
  std::vector<std::string> s = strings_from(f, key);
  return {s.begin(), s.end()};
}

Json init_json(const InitPlan& i) {
  return {{"kind", enum_name(kBufferInits, i.kind)},
          {"a", i.a},
          {"b", i.b},
          {"rows", i.rows},
          {"columns", i.columns},
          {"nnz", i.nnz},
          {"source", i.source},
          {"file", i.file}};
}

// An index into the request's buffers (0 <= index < buffers).
int buffer_index(const Fields& f, const char* key, std::size_t buffers) {
  const int index = f.i32(key);
  if (index < 0 || static_cast<std::size_t>(index) >= buffers)
    malformed(fmt::format("field '{}': {} is not a buffer index (there are {})", f.name(key), index, buffers));
  return index;
}

// `buffers`: how many buffers a `source` may index.
InitPlan init_from(const Fields& f, std::size_t buffers) {
  InitPlan i;
  i.kind = enum_value(kBufferInits, f, "kind");
  i.a = f.f64("a");
  i.b = f.f64("b");
  i.rows = f.u64("rows");
  i.columns = f.u64("columns");
  i.nnz = f.u64("nnz");
  const bool derived = i.kind == BufferInit::copy || i.kind == BufferInit::csr_columns;
  i.source = derived ? buffer_index(f, "source", buffers) : f.i32("source");
  i.file = f.str("file");
  return i;
}

Json verify_json(const VerifySettings& v) {
  Json checks = Json::array();
  for (const CheckPlan& c : v.checks)
    checks.push_back({{"buffer", c.buffer},
                      {"compare", enum_name(kCompares, c.compare)},
                      {"count", c.count},
                      {"rtol", c.rtol},
                      {"atol", c.atol},
                      {"expected_file", c.expected_file}});
  return {{"mode", enum_name(kVerifyModes, v.mode)},
          {"cpu_reference", v.cpu_reference},
          {"library", v.library},
          {"function", v.function},
          {"checks", std::move(checks)},
          {"command",
           {{"argv", strings_json(v.command.argv)},
            {"program", v.command.program},
            {"directory", v.command.directory}}}};
}

VerifySettings verify_from(const Fields& v, std::size_t buffers) {
  VerifySettings s;
  s.mode = enum_value(kVerifyModes, v, "mode");
  s.cpu_reference = v.str("cpu_reference");
  s.library = v.str("library");
  s.function = v.str("function");
  const Json& checks = v.array("checks");
  for (std::size_t i = 0; i < checks.size(); ++i) {
    Fields c(checks[i], fmt::format("verify.checks[{}]", i));
    CheckPlan check;
    check.buffer = buffer_index(c, "buffer", buffers);
    check.compare = enum_value(kCompares, c, "compare");
    check.count = c.u64("count");
    check.rtol = c.f64("rtol");
    check.atol = c.f64("atol");
    check.expected_file = c.str("expected_file");
    s.checks.push_back(std::move(check));
  }
  Fields command(v.map("command"), v.name("command"));
  s.command.argv = strings_from(command, "argv");
  s.command.program = command.str("program");
  s.command.directory = command.str("directory");
  if (!s.command.argv.empty() && s.command.program.empty()) malformed("field 'verify.command.program': empty");
  return s;
}

Json request_json(const TrialRequest& r) {
  Json buffers = Json::array();
  for (const BufferPlan& b : r.buffers)
    buffers.push_back({{"name", b.name},
                       {"type", enum_name(kWireElementTypes, b.type)},
                       {"count", b.count},
                       {"init", init_json(b.init)},
                       {"output", b.output}});
  Json globals = Json::array();
  for (const GlobalPlan& g : r.globals)
    globals.push_back({{"name", g.name},
                       {"symbol", g.symbol},
                       {"type", enum_name(kWireElementTypes, g.type)},
                       {"count", g.count},
                       {"init", init_json(g.init)}});
  Json args = Json::array();
  for (const ArgPlan& a : r.args)
    args.push_back({{"is_buffer", a.is_buffer},
                    {"buffer", a.buffer},
                    {"type", enum_name(kWireElementTypes, a.type)},
                    {"int_value", a.int_value},
                    {"float_value", a.float_value}});
  Json sizes = Json::object();
  for (const auto& [name, value] : r.sizes) sizes[name] = value;
  Json params = Json::array();
  for (const ParamValue& p : r.params)
    params.push_back({{"name", p.name}, {"kind", enum_name(kAxisKinds, p.kind)}, {"label", p.label}});
  return {
      {"type", "trial"},
      {"id", r.id},
      {"kernel", r.kernel},
      {"config_text", r.config_text},
      {"problem_key", r.problem_key},
      {"sizes", std::move(sizes)},
      {"params", std::move(params)},
      {"cubin", Json::binary(std::vector<std::uint8_t>(r.cubin.begin(), r.cubin.end()))},
      {"function", r.function},
      {"grid", {r.grid[0], r.grid[1], r.grid[2]}},
      {"block", {r.block[0], r.block[1], r.block[2]}},
      {"shared_bytes", r.shared_bytes},
      {"buffers", std::move(buffers)},
      {"globals", std::move(globals)},
      {"args", std::move(args)},
      {"verify", verify_json(r.verify)},
      {"timing",
       {{"cold", r.timing.cold},
        {"warmup_runs", r.timing.warmup_runs},
        {"min_samples", r.timing.min_samples},
        {"max_noise", r.timing.max_noise},
        {"min_seconds", r.timing.min_seconds},
        {"max_seconds", r.timing.max_seconds}}},
      {"seed", r.seed},
      {"is_reference", r.is_reference},
      {"deadline_seconds", r.deadline_seconds},
      {"energy",
       {{"enabled", r.energy.enabled},
        {"min_seconds", r.energy.min_seconds},
        {"max_seconds", r.energy.max_seconds}}},
  };
}

TrialRequest request_from(const Fields& f) {
  TrialRequest r;
  r.id = f.u64("id");
  r.kernel = f.str("kernel");
  r.config_text = f.str("config_text");
  r.problem_key = f.str("problem_key");
  const Json& sizes = f.map("sizes");
  for (auto it = sizes.begin(); it != sizes.end(); ++it) {
    Fields s(sizes, "sizes");
    r.sizes[it.key()] = s.i64(it.key().c_str());
  }
  const Json& params = f.array("params");
  for (std::size_t i = 0; i < params.size(); ++i) {
    Fields p(params[i], fmt::format("params[{}]", i));
    r.params.push_back({p.str("name"), enum_value(kAxisKinds, p, "kind"), p.str("label")});
  }
  r.cubin = f.bytes("cubin");
  r.function = f.str("function");
  f.dims("grid", r.grid);
  f.dims("block", r.block);
  r.shared_bytes = f.i64("shared_bytes");
  const Json& buffers = f.array("buffers");
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    Fields b(buffers[i], fmt::format("buffers[{}]", i));
    BufferPlan plan;
    plan.name = b.str("name");
    plan.type = enum_value(kWireElementTypes, b, "type");
    plan.count = b.u64("count");
    plan.output = b.boolean("output");
    r.buffers.push_back(std::move(plan));
  }
  // Sources are checked once every buffer is known: a buffer may derive from a later one.
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    Fields b(buffers[i], fmt::format("buffers[{}]", i));
    r.buffers[i].init = init_from(Fields(b.map("init"), b.name("init")), r.buffers.size());
  }
  const Json& globals = f.array("globals");
  for (std::size_t i = 0; i < globals.size(); ++i) {
    Fields g(globals[i], fmt::format("globals[{}]", i));
    GlobalPlan plan;
    plan.name = g.str("name");
    plan.symbol = g.str("symbol");
    plan.type = enum_value(kWireElementTypes, g, "type");
    plan.count = g.u64("count");
    plan.init = init_from(Fields(g.map("init"), g.name("init")), r.buffers.size());
    r.globals.push_back(std::move(plan));
  }
  const Json& args = f.array("args");
  for (std::size_t i = 0; i < args.size(); ++i) {
    Fields a(args[i], fmt::format("args[{}]", i));
    ArgPlan plan;
    plan.is_buffer = a.boolean("is_buffer");
    plan.buffer = plan.is_buffer ? buffer_index(a, "buffer", r.buffers.size()) : a.i32("buffer");
    plan.type = enum_value(kWireElementTypes, a, "type");
    plan.int_value = a.i64("int_value");
    plan.float_value = a.f64("float_value");
    r.args.push_back(plan);
  }
  r.verify = verify_from(Fields(f.map("verify"), "verify"), r.buffers.size());
  Fields t(f.map("timing"), "timing");
  r.timing.cold = t.boolean("cold");
  r.timing.warmup_runs = t.i32("warmup_runs");
  r.timing.min_samples = t.i32("min_samples");
  r.timing.max_noise = t.f64("max_noise");
  r.timing.min_seconds = t.f64("min_seconds");
  r.timing.max_seconds = t.f64("max_seconds");
  r.seed = f.u64("seed");
  r.is_reference = f.boolean("is_reference");
  r.deadline_seconds = f.f64("deadline_seconds");
  Fields e(f.map("energy"), "energy");
  r.energy.enabled = e.boolean("enabled");
  r.energy.min_seconds = e.f64("min_seconds");
  r.energy.max_seconds = e.f64("max_seconds");
  return r;
}

Json result_json(const TrialResult& r) {
  return {
      {"type", "result"},
      {"id", r.id},
      {"status", status_name(r.status)},
      {"detail", r.detail},
      {"median_ms", r.median_ms},
      {"mean_ms", r.mean_ms},
      {"min_ms", r.min_ms},
      {"stddev_ms", r.stddev_ms},
      {"samples", r.samples},
      {"throttled_samples", r.throttled_samples},
      {"sm_clock_mhz", r.sm_clock_mhz},
      {"cpu_mean_ms", r.cpu_mean_ms},
      {"driver_blocks_per_sm", r.driver_blocks_per_sm},
      {"max_error", r.max_error},
      {"first_bad_index", r.first_bad_index},
      {"load_ms", r.load_ms},
      {"setup_ms", r.setup_ms},
      {"verify_ms", r.verify_ms},
      {"measure_ms", r.measure_ms},
      {"energy_mj", r.energy_mj},
      {"power_w", r.power_w},
      {"energy_note", r.energy_note},
      {"times_ms", r.times_ms},
      {"host_check_failed", r.host_check_failed},
  };
}

TrialResult result_from(const Fields& f) {
  TrialResult r;
  r.id = f.u64("id");
  std::string status = f.str("status");
  std::optional<TrialStatus> parsed = parse_status(status);
  if (!parsed) malformed(fmt::format("field 'status': unknown status '{}'", status));
  r.status = *parsed;
  r.detail = f.str("detail");
  r.median_ms = f.f64("median_ms");
  r.mean_ms = f.f64("mean_ms");
  r.min_ms = f.f64("min_ms");
  r.stddev_ms = f.f64("stddev_ms");
  r.samples = f.i32("samples");
  r.throttled_samples = f.i32("throttled_samples");
  r.sm_clock_mhz = f.f64("sm_clock_mhz");
  r.cpu_mean_ms = f.f64("cpu_mean_ms");
  r.driver_blocks_per_sm = f.i32("driver_blocks_per_sm");
  r.max_error = f.f64("max_error");
  r.first_bad_index = f.i64("first_bad_index");
  r.load_ms = f.f64("load_ms");
  r.setup_ms = f.f64("setup_ms");
  r.verify_ms = f.f64("verify_ms");
  r.measure_ms = f.f64("measure_ms");
  r.energy_mj = f.f64("energy_mj");
  r.power_w = f.f64("power_w");
  r.energy_note = f.str("energy_note");
  const Json& times = f.array("times_ms");
  if (times.size() > trial_times_max_samples)
    malformed(fmt::format("field 'times_ms': {} samples, over the {} a trial keeps", times.size(),
                          trial_times_max_samples));
  for (const Json& t : times) {
    if (!t.is_number()) f.wrong("times_ms", "an array of numbers");
    r.times_ms.push_back(t.get<double>());
  }
  r.host_check_failed = f.boolean("host_check_failed");
  return r;
}

Json source_file_json(const SourceFile& file) { return {{"name", file.name}, {"text", file.text}}; }
SourceFile source_file_from(const Fields& f) { return {f.str("name"), f.str("text")}; }

Json kernel_source_json(const KernelSource& k) {
  Json headers = Json::array();
  for (const SourceFile& h : k.headers) headers.push_back(source_file_json(h));
  Json dependencies = Json::array();
  for (const HeaderDependency& d : k.dependencies)
    dependencies.push_back({{"name", d.name}, {"path", d.path.string()}, {"hash", d.hash}});
  return {{"main", source_file_json(k.main)},
          {"headers", headers},
          {"dependencies", dependencies},
          {"search",
           {{"include_dirs", paths_json(k.search.include_dirs)},
            {"pre_includes", strings_json(k.search.pre_includes)},
            {"toolkit_dirs", paths_json(k.search.toolkit_dirs)}}},
          {"hash", k.hash}};
}

KernelSource kernel_source_from(const Fields& f) {
  KernelSource k;
  k.main = source_file_from(Fields(f.map("main"), f.name("main")));
  for (const Json& h : f.array("headers")) k.headers.push_back(source_file_from(Fields(h, f.name("headers[]"))));
  for (const Json& d : f.array("dependencies")) {
    Fields dep(d, f.name("dependencies[]"));
    k.dependencies.push_back({dep.str("name"), dep.str("path"), dep.str("hash")});
  }
  Fields search(f.map("search"), f.name("search"));
  k.search.include_dirs = paths_from(search, "include_dirs");
  k.search.pre_includes = strings_from(search, "pre_includes");
  k.search.toolkit_dirs = paths_from(search, "toolkit_dirs");
  k.hash = f.str("hash");
  return k;
}

CompileJob compile_job_from(const Fields& f) {
  CompileJob job;
  job.source = kernel_source_from(Fields(f.map("source"), "source"));
  job.options = strings_from(f, "options");
  job.arch = f.str("arch");
  job.entry = f.str("entry");
  return job;
}

Json compiled_kernel_json(const CompiledKernel& k) {
  const Resources& r = k.resources;
  return {{"cubin", Json::binary(std::vector<std::uint8_t>(k.cubin.begin(), k.cubin.end()))},
          {"lowered_name", k.lowered_name},
          {"resources",
           {{"registers", r.registers},
            {"static_shared_bytes", r.static_shared_bytes},
            {"spill_store_bytes", r.spill_store_bytes},
            {"spill_load_bytes", r.spill_load_bytes},
            {"stack_frame_bytes", r.stack_frame_bytes},
            {"barriers", r.barriers},
            {"constant_bytes", r.constant_bytes}}},
          {"log", k.log},
          {"warnings", strings_json(k.warnings)},
          {"extra_options", strings_json(k.extra_options)}};
}

CompiledKernel compiled_kernel_from(const Fields& f) {
  CompiledKernel k;
  k.cubin = f.bytes("cubin");
  k.lowered_name = f.str("lowered_name");
  Fields r(f.map("resources"), f.name("resources"));
  k.resources = {r.i32("registers"),        r.i32("static_shared_bytes"), r.i32("spill_store_bytes"),
                 r.i32("spill_load_bytes"), r.i32("stack_frame_bytes"),   r.i32("barriers"),
                 r.i32("constant_bytes")};
  k.log = f.str("log");
  k.warnings = strings_from(f, "warnings");
  k.extra_options = strings_from(f, "extra_options");
  return k;
}

Json compile_result_json(const CompileResult& r) {
  return {{"type", "compile_result"},
          {"kernel", r.kernel ? compiled_kernel_json(*r.kernel) : Json(nullptr)},
          {"error", r.error},
          {"log", r.log},
          {"warnings", strings_json(r.warnings)},
          {"options", strings_json(r.options)},
          {"seconds", r.seconds},
          {"transient", r.transient}};
}

CompileResult compile_result_from(const Fields& f) {
  CompileResult r;
  if (const Json& kernel = f.at("kernel"); !kernel.is_null())
    r.kernel = compiled_kernel_from(Fields(kernel, "kernel"));
  r.error = f.str("error");
  r.log = f.str("log");
  r.warnings = strings_from(f, "warnings");
  r.options = strings_from(f, "options");
  r.seconds = f.f64("seconds");
  r.transient = f.boolean("transient");
  if (!r.kernel && r.error.empty()) malformed("a compile_result with neither a kernel nor an error");
  return r;
}

WorkerMessage::Type message_type(const Fields& f) {
  std::string type = f.str("type");
  if (type == "trial") return WorkerMessage::Type::trial;
  if (type == "copy") return WorkerMessage::Type::copy;
  if (type == "compile") return WorkerMessage::Type::compile;
  if (type == "result") return WorkerMessage::Type::result;
  if (type == "copy_result") return WorkerMessage::Type::copy_result;
  if (type == "compile_result") return WorkerMessage::Type::compile_result;
  if (type == "error") return WorkerMessage::Type::error;
  malformed(fmt::format("unknown message type '{}'", type));
}

const char* type_name(WorkerMessage::Type t) {
  switch (t) {
    case WorkerMessage::Type::trial: return "trial";
    case WorkerMessage::Type::copy: return "copy";
    case WorkerMessage::Type::compile: return "compile";
    case WorkerMessage::Type::result: return "result";
    case WorkerMessage::Type::copy_result: return "copy_result";
    case WorkerMessage::Type::compile_result: return "compile_result";
    case WorkerMessage::Type::error: return "error";
  }
  return "?";
}

WorkerMessage decode_expecting(const std::string& payload, std::optional<WorkerMessage::Type> want) {
  Json root = parse_cbor(payload);
  Fields f(root, "");
  WorkerMessage m;
  m.type = message_type(f);
  if (want && m.type != *want)
    malformed(fmt::format("expected a '{}' message, got '{}'", type_name(*want), type_name(m.type)));
  switch (m.type) {
    case WorkerMessage::Type::trial: m.trial = request_from(f); break;
    case WorkerMessage::Type::copy: m.copy_bytes = f.u64("bytes"); break;
    case WorkerMessage::Type::compile: m.compile = compile_job_from(f); break;
    case WorkerMessage::Type::compile_result: m.compiled = compile_result_from(f); break;
    case WorkerMessage::Type::result: m.result = result_from(f); break;
    case WorkerMessage::Type::copy_result:
      m.copy.bytes = f.u64("bytes");
      m.copy.median_ms = f.f64("median_ms");
      m.copy.gbps = f.f64("gbps");
      m.copy.samples = f.i32("samples");
      m.copy.throttled_samples = f.i32("throttled_samples");
      break;
    case WorkerMessage::Type::error: m.error = f.str("message"); break;
  }
  return m;
}

}  // namespace

std::string encode_request(const TrialRequest& request) { return to_payload(request_json(request)); }

TrialRequest decode_request(const std::string& payload) {
  return std::move(decode_expecting(payload, WorkerMessage::Type::trial).trial);
}

std::string encode_result(const TrialResult& result) { return to_payload(result_json(result)); }

TrialResult decode_result(const std::string& payload) {
  return std::move(decode_expecting(payload, WorkerMessage::Type::result).result);
}

std::string encode_copy_request(std::uint64_t bytes) {
  return to_payload({{"type", "copy"}, {"bytes", bytes}});
}

std::string encode_copy_result(const CopyCeiling& copy) {
  return to_payload(
      {{"type", "copy_result"}, {"bytes", copy.bytes}, {"median_ms", copy.median_ms}, {"gbps", copy.gbps},
                     {"samples", copy.samples}, {"throttled_samples", copy.throttled_samples}});
}

std::string encode_compile_request(const CompileRequest& request) {
  if (request.source == nullptr) throw Error("encode_compile_request: a request without a source");
  return to_payload({{"type", "compile"},
                     {"source", kernel_source_json(*request.source)},
                     {"options", strings_json(request.options)},
                     {"arch", request.arch},
                     {"entry", request.entry}});
}

std::string encode_compile_result(const CompileResult& result) { return to_payload(compile_result_json(result)); }

std::string encode_error(const std::string& message) {
  return to_payload({{"type", "error"}, {"message", message}});
}

WorkerMessage decode_message(const std::string& payload) { return decode_expecting(payload, std::nullopt); }

std::string frame(const std::string& payload) {
  if (payload.size() > max_frame_bytes)
    throw Error(fmt::format("worker protocol: a {}-byte message is over the {}-byte frame limit",
                            payload.size(), max_frame_bytes));
  auto n = static_cast<std::uint32_t>(payload.size());
  std::string out;
  out.reserve(4 + payload.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xffu));
  out += payload;
  return out;
}

std::uint32_t frame_payload_size(const unsigned char (&header)[4]) {
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= static_cast<std::uint32_t>(header[i]) << (8 * i);
  if (n > max_frame_bytes)
    throw Error(fmt::format("worker protocol: a frame announces {} bytes, over the {}-byte limit", n,
                            max_frame_bytes));
  return n;
}

}  // namespace tiletune
