// The messages between the parent and a GPU worker: every field of a TrialRequest,
// TrialResult, CopyCeiling, compile job and compile result as a CBOR map (a cubin as CBOR
// binary), each message's fields listed once (Wire<T> below) for both directions, and the
// 4-byte little-endian length that frames them. Both sides decode what the other sent, so decoding
// trusts nothing: the CBOR is parsed with a nesting limit, then every field is checked for
// presence, type and range, and anything off is an Error naming the field.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
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

[[noreturn]] void malformed(const std::string& what) { throw Error("worker protocol: " + what); }

Json parse_cbor(const std::string& payload) {
  Json root;
  BoundedDomBuilder builder(root);
  bool ok = false;
  try {
    ok = Json::sax_parse(payload, &builder, Json::input_format_t::cbor, /*strict=*/true);
  } catch (const Json::exception& e) { malformed(std::string("not a CBOR message: ") + e.what()); }
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
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) wrong(key, "a 32-bit integer");
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
template <class E>
struct WireEnum;
template <>
struct WireEnum<ElementType> {
  static constexpr std::pair<ElementType, const char*> names[] = {
      {ElementType::f32, "f32"}, {ElementType::f64, "f64"}, {ElementType::i32, "i32"}, {ElementType::u32, "u32"},
      {ElementType::i64, "i64"}, {ElementType::u8, "u8"},   {ElementType::f16, "f16"}, {ElementType::i8, "i8"},
      {ElementType::i16, "i16"}, {ElementType::u16, "u16"}, {ElementType::u64, "u64"}};
};
static_assert(std::size(WireEnum<ElementType>::names) == kElementTypeCount, "a wire name for every element type");
template <>
struct WireEnum<BufferInit> {
  static constexpr std::pair<BufferInit, const char*> names[] = {{BufferInit::zero, "zero"},
                                                                 {BufferInit::none, "none"},
                                                                 {BufferInit::random, "random"},
                                                                 {BufferInit::iota, "iota"},
                                                                 {BufferInit::constant, "constant"},
                                                                 {BufferInit::uniform, "uniform"},
                                                                 {BufferInit::normal, "normal"},
                                                                 {BufferInit::file, "file"},
                                                                 {BufferInit::copy, "copy"},
                                                                 {BufferInit::csr_offsets, "csr_offsets"},
                                                                 {BufferInit::csr_columns, "csr_columns"}};
};
template <>
struct WireEnum<VerifySettings::Mode> {
  static constexpr std::pair<VerifySettings::Mode, const char*> names[] = {
      {VerifySettings::Mode::none, "none"},
      {VerifySettings::Mode::cpu, "cpu"},
      {VerifySettings::Mode::reference_run, "reference_run"},
      {VerifySettings::Mode::library, "library"},
      {VerifySettings::Mode::files, "files"}};
};
template <>
struct WireEnum<AxisKind> {
  static constexpr std::pair<AxisKind, const char*> names[] = {
      {AxisKind::integer, "integer"}, {AxisKind::real, "real"}, {AxisKind::text, "text"}};
};
template <>
struct WireEnum<OutputCheck::Compare> {
  static constexpr std::pair<OutputCheck::Compare, const char*> names[] = {{OutputCheck::Compare::elements, "elements"},
                                                                           {OutputCheck::Compare::sum, "sum"},
                                                                           {OutputCheck::Compare::none, "none"}};
};
template <>
struct WireEnum<WorkerMessage::Type> {
  static constexpr std::pair<WorkerMessage::Type, const char*> names[] = {
      {WorkerMessage::Type::trial, "trial"},
      {WorkerMessage::Type::copy, "copy"},
      {WorkerMessage::Type::compile, "compile"},
      {WorkerMessage::Type::result, "result"},
      {WorkerMessage::Type::copy_result, "copy_result"},
      {WorkerMessage::Type::compile_result, "compile_result"},
      {WorkerMessage::Type::error, "error"}};
};

template <class E>
const char* enum_name(E value) {
  for (const auto& [e, name] : WireEnum<E>::names)
    if (e == value) return name;
  throw Error(fmt::format("worker protocol: enum value {} has no wire name", static_cast<int>(value)));
}

// --- the fields of each message, declared once ------------------------------------------
//
// Wire<T>::fields lists every member of T once: its name on the wire and how it travels (the
// Codec of the member's type, or one named where the type does not say: a cubin is CBOR binary,
// not text). Encoding and decoding both walk that one list, and a static_assert counts T's
// members against it, so a member added to a message and not to its list does not compile:
// adding a field is one line here. Names and types on the wire are those the protocol had when
// each field was written out by hand in an encoder and a decoder.

template <class M>
struct Codec;  // static Json put(const M&); static void get(const Fields&, const char* key, M&)
template <class T>
struct Wire;  // static constexpr WireField<T> fields[]; optionally static void check(const T&, const Fields&)

template <class E>
concept WireEnumType = requires {
  WireEnum<E>::names;
};

template <class T>
struct WireField {
  const char* name;   // the key on the wire; nullptr: not sent (the member stays the parent's)
  std::size_t slots;  // initializers the member takes in T{...}: an array's extent, else 1
  void (*put)(const T&, const char* key, Json& map);
  void (*get)(const Fields& map, const char* key, T&);
};

template <class>
struct MemberPointer;
template <class C, class M>
struct MemberPointer<M C::*> {
  using Class = C;
  using Type = M;
};
template <auto Member>
using ClassOf = typename MemberPointer<decltype(Member)>::Class;
template <auto Member>
using TypeOf = typename MemberPointer<decltype(Member)>::Type;

template <auto Member>
constexpr std::size_t slots_of = std::is_array_v<TypeOf<Member>> ? std::extent_v<TypeOf<Member>> : 1;

// A member that travels under `name`, by the codec of its type or by `C`.
template <auto Member, class C = Codec<TypeOf<Member>>>
constexpr WireField<ClassOf<Member>> field(const char* name) {
  using T = ClassOf<Member>;
  return {name, slots_of<Member>, [](const T& t, const char* key, Json& map) { map[key] = C::put(t.*Member); },
          [](const Fields& f, const char* key, T& t) { C::get(f, key, t.*Member); }};
}
// A member that does not travel (the parent's own; named so that the count of members holds).
template <auto Member>
constexpr WireField<ClassOf<Member>> not_sent() {
  return {nullptr, slots_of<Member>, nullptr, nullptr};
}

// How many initializers T{...} takes: its members, an array member counting its extent (brace
// elision). For the static_assert that a message's list names every member.
struct AnyMember {
  template <class M>
  operator M() const {  // only named in the requires-expression below, never called
    std::abort();
  }
};
template <class T, class... Taken>
constexpr std::size_t aggregate_initializers() {
  if constexpr (requires { T{Taken{}..., AnyMember{}}; })
    return aggregate_initializers<T, Taken..., AnyMember>();
  else
    return sizeof...(Taken);
}
template <class T>
constexpr bool lists_every_member() {
  std::size_t slots = 0;
  for (const WireField<T>& f : Wire<T>::fields) slots += f.slots;
  return slots == aggregate_initializers<T>();
}

template <class T>
Json record_json(const T& t) {
  Json map = Json::object();
  for (const WireField<T>& f : Wire<T>::fields)
    if (f.name != nullptr) f.put(t, f.name, map);
  return map;
}
template <class T>
T record_from(const Fields& f) {
  static_assert(lists_every_member<T>(), "Wire<T>::fields must name every member of T (field or not_sent)");
  T t{};
  for (const WireField<T>& w : Wire<T>::fields)
    if (w.name != nullptr) w.get(f, w.name, t);
  if constexpr (requires { Wire<T>::check(t, f); }) Wire<T>::check(t, f);
  return t;
}

template <class T>
concept WireRecord = requires {
  Wire<T>::fields;
};

// --- codecs by type ------------------------------------------------------------------------

template <>
struct Codec<std::string> {
  static Json put(const std::string& v) { return v; }
  static void get(const Fields& f, const char* key, std::string& out) { out = f.str(key); }
};
template <>
struct Codec<bool> {
  static Json put(bool v) { return v; }
  static void get(const Fields& f, const char* key, bool& out) { out = f.boolean(key); }
};
template <>
struct Codec<int> {
  static Json put(int v) { return v; }
  static void get(const Fields& f, const char* key, int& out) { out = f.i32(key); }
};
template <class I>
requires(std::is_integral_v<I>&& std::is_signed_v<I> && sizeof(I) == 8) struct Codec<I> {
  static Json put(I v) { return v; }
  static void get(const Fields& f, const char* key, I& out) { out = static_cast<I>(f.i64(key)); }
};
template <>
struct Codec<std::uint64_t> {
  static Json put(std::uint64_t v) { return v; }
  static void get(const Fields& f, const char* key, std::uint64_t& out) { out = f.u64(key); }
};
template <>
struct Codec<double> {
  static Json put(double v) { return v; }
  static void get(const Fields& f, const char* key, double& out) { out = f.f64(key); }
};
template <>
struct Codec<std::filesystem::path> {
  static Json put(const std::filesystem::path& v) { return v.string(); }
  static void get(const Fields& f, const char* key, std::filesystem::path& out) { out = f.str(key); }
};
template <>
struct Codec<std::vector<std::string>> {
  static Json put(const std::vector<std::string>& v) { return Json(v); }
  static void get(const Fields& f, const char* key, std::vector<std::string>& out) {
    out.clear();
    for (const Json& v : f.array(key)) {
      if (!v.is_string()) f.wrong(key, "an array of strings");
      out.push_back(v.get<std::string>());
    }
  }
};
template <>
struct Codec<std::vector<std::filesystem::path>> {
  static Json put(const std::vector<std::filesystem::path>& v) {
    Json out = Json::array();
    for (const auto& p : v) out.push_back(p.string());
    return out;
  }
  static void get(const Fields& f, const char* key, std::vector<std::filesystem::path>& out) {
    std::vector<std::string> s;
    Codec<std::vector<std::string>>::get(f, key, s);
    out.assign(s.begin(), s.end());
  }
};
// A grid or a block: three integers.
template <>
struct Codec<long long[3]> {
  static Json put(const long long (&v)[3]) { return Json::array({v[0], v[1], v[2]}); }
  static void get(const Fields& f, const char* key, long long (&out)[3]) { f.dims(key, out); }
};
// Problem sizes: a map of names to integers.
template <>
struct Codec<std::map<std::string, std::int64_t>> {
  static Json put(const std::map<std::string, std::int64_t>& v) {
    Json out = Json::object();
    for (const auto& [name, value] : v) out[name] = value;
    return out;
  }
  static void get(const Fields& f, const char* key, std::map<std::string, std::int64_t>& out) {
    const Json& map = f.map(key);
    const Fields sizes(map, f.name(key));
    out.clear();
    for (auto it = map.begin(); it != map.end(); ++it) out[it.key()] = sizes.i64(it.key().c_str());
  }
};
template <WireEnumType E>
struct Codec<E> {
  static Json put(E v) { return enum_name(v); }
  static void get(const Fields& f, const char* key, E& out) {
    const std::string s = f.str(key);
    for (const auto& [e, name] : WireEnum<E>::names)
      if (s == name) {
        out = e;
        return;
      }
    malformed(fmt::format("field '{}': unknown value '{}'", f.name(key), s));
  }
};
template <>
struct Codec<TrialStatus> {
  static Json put(TrialStatus v) { return status_name(v); }
  static void get(const Fields& f, const char* key, TrialStatus& out) {
    const std::string status = f.str(key);
    const std::optional<TrialStatus> parsed = parse_status(status);
    if (!parsed) malformed(fmt::format("field '{}': unknown status '{}'", f.name(key), status));
    out = *parsed;
  }
};
// A nested message: a map, named "outer.key" in errors.
template <WireRecord R>
struct Codec<R> {
  static Json put(const R& v) { return record_json(v); }
  static void get(const Fields& f, const char* key, R& out) { out = record_from<R>(Fields(f.map(key), f.name(key))); }
};
template <WireRecord R>
struct Codec<std::vector<R>> {
  static Json put(const std::vector<R>& v) {
    Json out = Json::array();
    for (const R& r : v) out.push_back(record_json(r));
    return out;
  }
  static void get(const Fields& f, const char* key, std::vector<R>& out) {
    const Json& items = f.array(key);
    out.clear();
    for (std::size_t i = 0; i < items.size(); ++i)
      out.push_back(record_from<R>(Fields(items[i], fmt::format("{}[{}]", f.name(key), i))));
  }
};
// A nested message that may be absent: null.
template <WireRecord R>
struct Codec<std::optional<R>> {
  static Json put(const std::optional<R>& v) { return v ? record_json(*v) : Json(nullptr); }
  static void get(const Fields& f, const char* key, std::optional<R>& out) {
    const Json& v = f.at(key);
    if (v.is_null())
      out.reset();
    else
      out = record_from<R>(Fields(v, f.name(key)));
  }
};
// Bytes (a cubin): CBOR binary, never inflated as text.
struct Binary {
  static Json put(const std::string& v) { return Json::binary(std::vector<std::uint8_t>(v.begin(), v.end())); }
  static void get(const Fields& f, const char* key, std::string& out) { out = f.bytes(key); }
};
// A trial's samples: numbers, at most the trial_times_max_samples a trial keeps.
struct Samples {
  static Json put(const std::vector<double>& v) { return Json(v); }
  static void get(const Fields& f, const char* key, std::vector<double>& out) {
    const Json& times = f.array(key);
    if (times.size() > trial_times_max_samples)
      malformed(fmt::format("field '{}': {} samples, over the {} a trial keeps", f.name(key), times.size(),
                            trial_times_max_samples));
    out.clear();
    for (const Json& t : times) {
      if (!t.is_number()) f.wrong(key, "an array of numbers");
      out.push_back(t.get<double>());
    }
  }
};

// --- the messages --------------------------------------------------------------------------

template <>
struct Wire<InitPlan> {
  static constexpr WireField<InitPlan> fields[] = {field<&InitPlan::kind>("kind"),
                                                   field<&InitPlan::a>("a"),
                                                   field<&InitPlan::b>("b"),
                                                   field<&InitPlan::rows>("rows"),
                                                   field<&InitPlan::columns>("columns"),
                                                   field<&InitPlan::nnz>("nnz"),
                                                   field<&InitPlan::source>("source"),
                                                   field<&InitPlan::file>("file")};
};
template <>
struct Wire<BufferPlan> {
  static constexpr WireField<BufferPlan> fields[] = {
      field<&BufferPlan::name>("name"), field<&BufferPlan::type>("type"), field<&BufferPlan::count>("count"),
      field<&BufferPlan::init>("init"), field<&BufferPlan::output>("output")};
};
template <>
struct Wire<GlobalPlan> {
  static constexpr WireField<GlobalPlan> fields[] = {
      field<&GlobalPlan::name>("name"), field<&GlobalPlan::symbol>("symbol"), field<&GlobalPlan::type>("type"),
      field<&GlobalPlan::count>("count"), field<&GlobalPlan::init>("init")};
};
template <>
struct Wire<ArgPlan> {
  static constexpr WireField<ArgPlan> fields[] = {
      field<&ArgPlan::is_buffer>("is_buffer"), field<&ArgPlan::buffer>("buffer"), field<&ArgPlan::type>("type"),
      field<&ArgPlan::int_value>("int_value"), field<&ArgPlan::float_value>("float_value")};
};
template <>
struct Wire<CheckPlan> {
  static constexpr WireField<CheckPlan> fields[] = {
      field<&CheckPlan::buffer>("buffer"), field<&CheckPlan::compare>("compare"),
      field<&CheckPlan::count>("count"),   field<&CheckPlan::rtol>("rtol"),
      field<&CheckPlan::atol>("atol"),     field<&CheckPlan::expected_file>("expected_file")};
};
template <>
struct Wire<HostCommand> {
  static constexpr WireField<HostCommand> fields[] = {field<&HostCommand::argv>("argv"),
                                                      field<&HostCommand::program>("program"),
                                                      field<&HostCommand::directory>("directory"),
                                                      field<&HostCommand::buffers>("buffers")};
  static void check(const HostCommand& c, const Fields& f) {
    if (!c.argv.empty() && c.program.empty()) malformed(fmt::format("field '{}': empty", f.name("program")));
  }
};
template <>
struct Wire<VerifySettings> {
  static constexpr WireField<VerifySettings> fields[] = {
      field<&VerifySettings::mode>("mode"),       field<&VerifySettings::cpu_reference>("cpu_reference"),
      field<&VerifySettings::library>("library"), field<&VerifySettings::function>("function"),
      field<&VerifySettings::checks>("checks"),   field<&VerifySettings::command>("command")};
};
template <>
struct Wire<ParamValue> {
  static constexpr WireField<ParamValue> fields[] = {field<&ParamValue::name>("name"), field<&ParamValue::kind>("kind"),
                                                     field<&ParamValue::label>("label")};
};
template <>
struct Wire<TimingSettings> {
  static constexpr WireField<TimingSettings> fields[] = {field<&TimingSettings::cold>("cold"),
                                                         field<&TimingSettings::warmup_runs>("warmup_runs"),
                                                         field<&TimingSettings::min_samples>("min_samples"),
                                                         field<&TimingSettings::max_noise>("max_noise"),
                                                         field<&TimingSettings::min_seconds>("min_seconds"),
                                                         field<&TimingSettings::max_seconds>("max_seconds")};
};
template <>
struct Wire<EnergySettings> {
  static constexpr WireField<EnergySettings> fields[] = {field<&EnergySettings::enabled>("enabled"),
                                                         field<&EnergySettings::min_seconds>("min_seconds"),
                                                         field<&EnergySettings::max_seconds>("max_seconds")};
};

// A field holding an index into the request's buffers (0 <= index < buffers).
void check_buffer_index(int index, const std::string& field, std::size_t buffers) {
  if (index < 0 || static_cast<std::size_t>(index) >= buffers)
    malformed(fmt::format("field '{}': {} is not a buffer index (there are {})", field, index, buffers));
}
void check_init_source(const InitPlan& init, const std::string& path, std::size_t buffers) {
  if (init.kind == BufferInit::copy || init.kind == BufferInit::csr_columns)
    check_buffer_index(init.source, path + ".init.source", buffers);
}

template <>
struct Wire<TrialRequest> {
  static constexpr WireField<TrialRequest> fields[] = {
      field<&TrialRequest::id>("id"),
      field<&TrialRequest::kernel>("kernel"),
      field<&TrialRequest::config_text>("config_text"),
      field<&TrialRequest::problem_key>("problem_key"),
      field<&TrialRequest::sizes>("sizes"),
      field<&TrialRequest::params>("params"),
      field<&TrialRequest::cubin, Binary>("cubin"),
      field<&TrialRequest::function>("function"),
      field<&TrialRequest::grid>("grid"),
      field<&TrialRequest::block>("block"),
      field<&TrialRequest::shared_bytes>("shared_bytes"),
      field<&TrialRequest::buffers>("buffers"),
      field<&TrialRequest::globals>("globals"),
      field<&TrialRequest::args>("args"),
      field<&TrialRequest::verify>("verify"),
      field<&TrialRequest::timing>("timing"),
      field<&TrialRequest::seed>("seed"),
      field<&TrialRequest::is_reference>("is_reference"),
      field<&TrialRequest::deadline_seconds>("deadline_seconds"),
      field<&TrialRequest::energy>("energy"),
  };
  // The indices into the buffers, once every buffer is known (a buffer may derive from a later one).
  static void check(const TrialRequest& r, const Fields&) {
    const std::size_t n = r.buffers.size();
    for (std::size_t i = 0; i < n; ++i) check_init_source(r.buffers[i].init, fmt::format("buffers[{}]", i), n);
    for (std::size_t i = 0; i < r.globals.size(); ++i)
      check_init_source(r.globals[i].init, fmt::format("globals[{}]", i), n);
    for (std::size_t i = 0; i < r.args.size(); ++i)
      if (r.args[i].is_buffer) check_buffer_index(r.args[i].buffer, fmt::format("args[{}].buffer", i), n);
    for (std::size_t i = 0; i < r.verify.checks.size(); ++i)
      check_buffer_index(r.verify.checks[i].buffer, fmt::format("verify.checks[{}].buffer", i), n);
  }
};

template <>
struct Wire<TrialResult> {
  static constexpr WireField<TrialResult> fields[] = {
      field<&TrialResult::id>("id"),
      field<&TrialResult::status>("status"),
      field<&TrialResult::detail>("detail"),
      field<&TrialResult::median_ms>("median_ms"),
      field<&TrialResult::mean_ms>("mean_ms"),
      field<&TrialResult::min_ms>("min_ms"),
      field<&TrialResult::stddev_ms>("stddev_ms"),
      field<&TrialResult::samples>("samples"),
      field<&TrialResult::throttled_samples>("throttled_samples"),
      field<&TrialResult::sm_clock_mhz>("sm_clock_mhz"),
      field<&TrialResult::memory_clock_mhz>("memory_clock_mhz"),
      field<&TrialResult::temperature_c>("temperature_c"),
      field<&TrialResult::cpu_mean_ms>("cpu_mean_ms"),
      field<&TrialResult::driver_blocks_per_sm>("driver_blocks_per_sm"),
      field<&TrialResult::max_error>("max_error"),
      field<&TrialResult::first_bad_index>("first_bad_index"),
      field<&TrialResult::load_ms>("load_ms"),
      field<&TrialResult::setup_ms>("setup_ms"),
      field<&TrialResult::verify_ms>("verify_ms"),
      field<&TrialResult::measure_ms>("measure_ms"),
      field<&TrialResult::energy_mj>("energy_mj"),
      field<&TrialResult::power_w>("power_w"),
      field<&TrialResult::energy_note>("energy_note"),
      field<&TrialResult::times_ms, Samples>("times_ms"),
      field<&TrialResult::host_check_failed>("host_check_failed"),
      field<&TrialResult::shared_failure>("shared_failure"),
  };
};

template <>
struct Wire<CopyCeiling> {
  static constexpr WireField<CopyCeiling> fields[] = {
      field<&CopyCeiling::bytes>("bytes"), field<&CopyCeiling::median_ms>("median_ms"),
      field<&CopyCeiling::gbps>("gbps"), field<&CopyCeiling::samples>("samples"),
      field<&CopyCeiling::throttled_samples>("throttled_samples")};
};

template <>
struct Wire<SourceFile> {
  static constexpr WireField<SourceFile> fields[] = {field<&SourceFile::name>("name"),
                                                     field<&SourceFile::text>("text")};
};
template <>
struct Wire<HeaderDependency> {
  static constexpr WireField<HeaderDependency> fields[] = {field<&HeaderDependency::name>("name"),
                                                           field<&HeaderDependency::path>("path"),
                                                           field<&HeaderDependency::hash>("hash")};
};
template <>
struct Wire<IncludeSearch> {
  static constexpr WireField<IncludeSearch> fields[] = {field<&IncludeSearch::include_dirs>("include_dirs"),
                                                        field<&IncludeSearch::pre_includes>("pre_includes"),
                                                        field<&IncludeSearch::toolkit_dirs>("toolkit_dirs")};
};
template <>
struct Wire<KernelSource> {
  static constexpr WireField<KernelSource> fields[] = {
      field<&KernelSource::main>("main"), field<&KernelSource::headers>("headers"),
      field<&KernelSource::dependencies>("dependencies"), field<&KernelSource::search>("search"),
      field<&KernelSource::hash>("hash")};
};
template <>
struct Wire<CompileJob> {
  static constexpr WireField<CompileJob> fields[] = {
      field<&CompileJob::source>("source"), field<&CompileJob::options>("options"), field<&CompileJob::arch>("arch"),
      field<&CompileJob::entry>("entry")};
};
template <>
struct Wire<Resources> {
  static constexpr WireField<Resources> fields[] = {field<&Resources::registers>("registers"),
                                                    field<&Resources::static_shared_bytes>("static_shared_bytes"),
                                                    field<&Resources::spill_store_bytes>("spill_store_bytes"),
                                                    field<&Resources::spill_load_bytes>("spill_load_bytes"),
                                                    field<&Resources::stack_frame_bytes>("stack_frame_bytes"),
                                                    field<&Resources::barriers>("barriers"),
                                                    field<&Resources::constant_bytes>("constant_bytes")};
};
template <>
struct Wire<CompiledKernel> {
  static constexpr WireField<CompiledKernel> fields[] = {
      field<&CompiledKernel::cubin, Binary>("cubin"), field<&CompiledKernel::lowered_name>("lowered_name"),
      field<&CompiledKernel::resources>("resources"), field<&CompiledKernel::log>("log"),
      field<&CompiledKernel::warnings>("warnings"),   field<&CompiledKernel::extra_options>("extra_options")};
};
template <>
struct Wire<CompileResult> {
  static constexpr WireField<CompileResult> fields[] = {
      field<&CompileResult::kernel>("kernel"),   field<&CompileResult::error>("error"),
      field<&CompileResult::log>("log"),         field<&CompileResult::warnings>("warnings"),
      field<&CompileResult::options>("options"), field<&CompileResult::seconds>("seconds"),
      not_sent<&CompileResult::cache_hit>(),     field<&CompileResult::transient>("transient"),
      not_sent<&CompileResult::cache_key>(),
  };
  static void check(const CompileResult& r, const Fields&) {
    if (!r.kernel && r.error.empty()) malformed("a compile_result with neither a kernel nor an error");
  }
};

// A whole message: its record's fields and its "type".
template <class T>
std::string message_payload(WorkerMessage::Type type, const T& t) {
  Json map = record_json(t);
  map["type"] = enum_name(type);
  return to_payload(map);
}

WorkerMessage decode_expecting(const std::string& payload, std::optional<WorkerMessage::Type> want) {
  Json root = parse_cbor(payload);
  Fields f(root, "");
  WorkerMessage m;
  Codec<WorkerMessage::Type>::get(f, "type", m.type);
  if (want && m.type != *want)
    malformed(fmt::format("expected a '{}' message, got '{}'", enum_name(*want), enum_name(m.type)));
  switch (m.type) {
    case WorkerMessage::Type::trial: m.trial = record_from<TrialRequest>(f); break;
    case WorkerMessage::Type::copy: m.copy_bytes = f.u64("bytes"); break;
    case WorkerMessage::Type::compile: m.compile = record_from<CompileJob>(f); break;
    case WorkerMessage::Type::compile_result: m.compiled = record_from<CompileResult>(f); break;
    case WorkerMessage::Type::result: m.result = record_from<TrialResult>(f); break;
    case WorkerMessage::Type::copy_result: m.copy = record_from<CopyCeiling>(f); break;
    case WorkerMessage::Type::error: m.error = f.str("message"); break;
  }
  return m;
}

}  // namespace

std::string encode_request(const TrialRequest& request) { return message_payload(WorkerMessage::Type::trial, request); }

TrialRequest decode_request(const std::string& payload) {
  return std::move(decode_expecting(payload, WorkerMessage::Type::trial).trial);
}

std::string encode_result(const TrialResult& result) { return message_payload(WorkerMessage::Type::result, result); }

TrialResult decode_result(const std::string& payload) {
  return std::move(decode_expecting(payload, WorkerMessage::Type::result).result);
}

std::string encode_copy_request(std::uint64_t bytes) {
  return to_payload({{"type", enum_name(WorkerMessage::Type::copy)}, {"bytes", bytes}});
}

std::string encode_copy_result(const CopyCeiling& copy) {
  return message_payload(WorkerMessage::Type::copy_result, copy);
}

std::string encode_compile_request(const CompileRequest& request) {
  if (request.source == nullptr) throw Error("encode_compile_request: a request without a source");
  // The job a compile worker decodes, so that one list of fields serves both sides.
  const CompileJob job{*request.source, request.options, request.arch, request.entry};
  return message_payload(WorkerMessage::Type::compile, job);
}

std::string encode_compile_result(const CompileResult& result) {
  return message_payload(WorkerMessage::Type::compile_result, result);
}

std::string encode_error(const std::string& message) {
  return to_payload({{"type", enum_name(WorkerMessage::Type::error)}, {"message", message}});
}

WorkerMessage decode_message(const std::string& payload) { return decode_expecting(payload, std::nullopt); }

std::string frame(const std::string& payload) {
  if (payload.size() > max_frame_bytes)
    throw Error(fmt::format("worker protocol: a {}-byte message is over the {}-byte frame limit", payload.size(),
                            max_frame_bytes));
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
    throw Error(fmt::format("worker protocol: a frame announces {} bytes, over the {}-byte limit", n, max_frame_bytes));
  return n;
}

}  // namespace tiletune
