// Kernel Tuner's cache files (what tune_kernel(cache=...) writes in 1.x: a header, then one
// entry per config run, keyed by its param values joined with ',') into a tiletune recording and
// the space it replays in. The mapping, and what is refused or skipped, is in docs/reference/import-kt-cache.md
// ("Kernel Tuner caches in"); in short:
//  - an entry whose `time` is a number is ok with that time (Kernel Tuner's mean, in ms);
//    InvalidConfig is pruned, CompilationFailedConfig compile_failed, RuntimeFailedConfig
//    launch_failed; compile_ms is compile_time, measure_ms verification_time + benchmark_time
//    (what Kernel Tuner's own simulation mode charges; its framework_time is its Python's);
//  - params keep tune_params_keys' order: integers, booleans as 0/1, numbers with a fraction as a
//    real param, anything else as a text param, each value as Python's str() spells it (as the
//    cache's keys do);
//  - an integer problem_size (or a list of 1 to 3) is the problem problem_size_x/_y/_z;
//  - the file is parsed as a stream: each entry is mapped when it ends and dropped, its lists
//    (times, ...) never kept, so memory follows the recording and not the file.
#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "common/output_file.hpp"
#include "common/scratch_dir.hpp"
#include "interchange/kt_cache_file.hpp"
#include "tiletune/python_expr.hpp"
#include "interchange/yaml_text.hpp"
#include "tiletune/interchange.hpp"
#include "tiletune/message.hpp"
#include "tiletune/replay.hpp"
#include "tiletune/space.hpp"
#include "tiletune/trial.hpp"

namespace tiletune {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using namespace interchange_detail;

/// The names of the problem's dimensions, as the Python module and import-t1 name them.
constexpr const char* kProblemNames[] = {"problem_size_x", "problem_size_y", "problem_size_z"};
/// Kernel Tuner's default block_size_names and the threads it launches when one is not a param.
constexpr const char* kBlockNames[] = {"block_size_x", "block_size_y", "block_size_z"};
constexpr const char* kDefaultThreads[] = {"256", "1", "1"};
/// Kernel Tuner's failures, as they are written in a cache, and what each is in tiletune.
constexpr std::pair<const char*, TrialStatus> kFailures[] = {
    {"InvalidConfig", TrialStatus::pruned},
    {"CompilationFailedConfig", TrialStatus::compile_failed},
    {"RuntimeFailedConfig", TrialStatus::launch_failed},
};
/// Deeper than this the file is not a Kernel Tuner cache (which nests 4 levels); the bound keeps
/// a file of '[' from growing the parser's stacks.
constexpr int kMaxDepth = 32;
constexpr std::size_t kShownChars = 40;

/// A string from the file as a message quotes it (tiletune::quoted: at most 40 characters, escaped).
std::string cite(std::string_view s) { return quote(s, kShownChars); }

/// Text from the file for a recording's header: one line, control characters as '?'.
std::string header_text(std::string_view s) {
  std::string out(s.substr(0, 160));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out;
}

/// A bare NaN, Infinity or -Infinity of the file (kt_cache_file.hpp marks them as strings).
std::optional<double> non_finite(const Json& v) {
  if (!v.is_string()) return std::nullopt;
  const auto& s = v.get_ref<const std::string&>();
  if (!s.starts_with(kNonFiniteMark)) return std::nullopt;
  const std::string_view word = std::string_view(s).substr(kNonFiniteMark.size());
  if (word == "NaN") return std::nan("");
  return word.front() == '-' ? -HUGE_VAL : HUGE_VAL;
}

/// Python's repr of a float (its str since 3.2): the shortest digits that read back, fixed
/// notation for 1e-4 <= |v| < 1e16 (with ".0" when whole), else d.ddde+XX.
std::string python_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(end - buf));  // "-1.5e-07"
  const bool negative = sci.front() == '-';
  const std::size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(negative ? 1 : 0, e - (negative ? 1 : 0)))
    if (c != '.') digits += c;
  int exponent = 0;
  std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+' ? 1 : 0), sci.data() + sci.size(), exponent);
  const int point = exponent + 1;  // digits = 0.d1d2... x 10^point
  std::string out = negative ? "-" : "";
  const int n = static_cast<int>(digits.size());
  if (point > -4 && point <= 16) {
    if (point <= 0)
      out += "0." + std::string(static_cast<std::size_t>(-point), '0') + digits;
    else if (point >= n)
      out += digits + std::string(static_cast<std::size_t>(point - n), '0') + ".0";
    else
      out += digits.substr(0, static_cast<std::size_t>(point)) + "." + digits.substr(static_cast<std::size_t>(point));
    return out;
  }
  out += digits.substr(0, 1);
  if (n > 1) out += "." + digits.substr(1);
  return out + fmt::format("e{}{:02}", exponent < 0 ? '-' : '+', std::abs(exponent));
}

/// str(value) in Python for a JSON scalar, as Kernel Tuner joins a config's values into its key;
/// nullopt for a list or an object.
std::optional<std::string> python_str(const Json& v) {
  if (const auto x = non_finite(v)) return python_float(*x);
  switch (v.type()) {
    case Json::value_t::string: return v.get<std::string>();
    case Json::value_t::boolean: return std::string(v.get<bool>() ? "True" : "False");
    case Json::value_t::null: return std::string("None");
    case Json::value_t::number_integer: return std::to_string(v.get<std::int64_t>());
    case Json::value_t::number_unsigned: return std::to_string(v.get<std::uint64_t>());
    case Json::value_t::number_float: return python_float(v.get<double>());
    default: return std::nullopt;
  }
}

/// A JSON value as a message shows it.
std::string shown(const Json& v) {
  if (const auto s = python_str(v)) return v.is_string() && !non_finite(v) ? cite(*s) : *s;
  if (v.is_discarded()) return "a list or an object";  // not kept inside an entry
  return v.is_array() ? "a list" : v.is_object() ? "an object" : v.type_name();
}

/// A number the file spells as Python would read it back: "1e-05", "0.5", "inf".
std::optional<double> parse_python_float(std::string_view s) {
  if (s == "inf") return HUGE_VAL;
  if (s == "-inf") return -HUGE_VAL;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

/// The same number, or the same float32: a numpy.float32 param is written to JSON widened to a
/// double (0.10000000149011612) while its key spells the float32 (0.1).
bool same_number(double a, double b) {
  if (a == b) return true;
  const auto narrow = [](double x) { return static_cast<double>(static_cast<float>(x)) == x; };
  return (narrow(a) || narrow(b)) && static_cast<float>(a) == static_cast<float>(b);
}

/// One of tune_params: its values in the cache's order, as the space and the recording write
/// them, and how a key's part names one.
struct Param {
  enum class Kind { integer, boolean, real, text };
  std::string name;
  Kind kind = Kind::integer;
  std::vector<std::string> keys;      ///< each value as Kernel Tuner's keys spell it (str())
  std::vector<std::string> recorded;  ///< each value in the space and the recording ("1" for True)
  std::vector<double> numbers;        ///< real: the values
  std::unordered_map<std::string, std::size_t> by_key;

  /// The value a key's part names, or nullopt (a value tune_params does not list).
  [[nodiscard]] std::optional<std::size_t> index_of(std::string_view part) const {
    if (const auto it = by_key.find(std::string(part)); it != by_key.end()) return it->second;
    if (kind != Kind::real) return std::nullopt;
    const auto x = parse_python_float(part);
    if (!x) return std::nullopt;
    for (std::size_t i = 0; i < numbers.size(); ++i)
      if (same_number(numbers[i], *x)) return i;
    return std::nullopt;
  }

  /// Whether an entry's value of this param is what its key's part says.
  [[nodiscard]] bool agrees(const Json& value, std::string_view part) const {
    const auto text = python_str(value);
    if (text && *text == part) return true;
    if (kind != Kind::real || !value.is_number()) return false;
    const auto x = parse_python_float(part);
    return x && same_number(value.get<double>(), *x);
  }
};

class CacheImporter {
 public:
  CacheImporter(fs::path path, const KtCacheImportOptions& options) : path_(std::move(path)), options_(options) {}

  KtCacheImport run() {
    KtCacheText text = read_kt_cache_text(path_, options_.limits);
    if (text.was_open)
      result_.notes.push_back(
          "the cache was left open by an interrupted run: read as Kernel Tuner reads it, up to its "
          "last complete entry");
    try {
      // The callback keeps what it needs; the document it returns (emptied) is not used.
      [[maybe_unused]] const Json emptied =
          Json::parse(text.json, [this](int depth, Json::parse_event_t event, Json& parsed) {
            return on_event(depth, event, parsed);
          });
    } catch (const Json::exception& e) {  // a syntax error, or a number past a double (out_of_range 406)
      fail_at("", fmt::format("not JSON{}: {}", text.was_open ? " (closed as Kernel Tuner closes an open cache)" : "",
                              parse_message(e)));
    }
    std::string().swap(text.json);
    if (!cache_seen_) need("cache");
    if (!params_ready_) read_header();
    for (auto& [key, entry] : stash_) take_entry(key, entry);
    stash_.clear();
    if (text.non_finite)
      result_.notes.push_back(
          fmt::format("{} NaN or Infinity values in fields the recording does not use", text.non_finite));
    return finish();
  }

 private:
  [[noreturn]] void fail_at(const std::string& field, const std::string& why) const {
    throw InterchangeError(fmt::format("{}: {}{}", path_.string(), field.empty() ? "" : field + ": ", why));
  }
  [[noreturn]] void need(const std::string& key) const {
    fail_at(key, "missing: Kernel Tuner 1.x writes it at the start of every cache");
  }
  static std::string entry_field(const std::string& key) { return "cache[" + cite(key) + "]"; }

  /// nlohmann's message without its prefix, its quote of the input cut short.
  static std::string parse_message(const Json::exception& e) {
    std::string m = e.what();
    if (const auto at = m.find("parse error"); at != std::string::npos) m = m.substr(at);
    if (const auto last = m.find("; last read: '"); last != std::string::npos) {
      const std::size_t start = last + 14, stop = m.rfind('\'');
      const std::string token = m.substr(start, stop > start ? stop - start : 0);
      m = m.substr(0, last) + "; last read: " + cite(token);
    }
    return m.size() > 300 ? m.substr(0, 300) + "..." : m;
  }

  bool on_event(int depth, Json::parse_event_t event, Json& parsed) {
    using E = Json::parse_event_t;
    if (depth > kMaxDepth)
      fail_at("", fmt::format("nested deeper than {} levels: not a Kernel Tuner cache", kMaxDepth));
    if (depth == 0) {
      if (event != E::object_start && event != E::object_end) fail_at("", "a Kernel Tuner cache is a JSON object");
      return true;
    }
    if (depth == 1) return on_top_level(event, parsed);
    if (!in_cache_) return true;
    if (depth == 2) {
      switch (event) {
        case E::key: {
          entry_key_ = parsed.get<std::string>();
          if (++entries_ > options_.limits.max_entries)
            fail_at("cache", fmt::format("more than {} entries: a replay holds at most that many configs",
                                         options_.limits.max_entries));
          if (!keys_.insert(entry_key_).second)
            fail_at(entry_field(entry_key_), "a second entry with this key (Kernel Tuner would keep only the last)");
          return true;
        }
        case E::object_start: return true;
        case E::object_end:
          if (params_ready_)
            take_entry(entry_key_, parsed);
          else
            stash_.emplace_back(entry_key_, std::move(parsed));
          return false;
        default:
          fail_at(entry_field(entry_key_), "expected an object (the config's result), found " +
                                               (event == E::array_start ? std::string("a list") : shown(parsed)));
      }
    }
    // Inside an entry: lists and objects (times, observers' readings) are not kept.
    return event != E::object_start && event != E::array_start;
  }

  bool on_top_level(Json::parse_event_t event, Json& parsed) {
    using E = Json::parse_event_t;
    switch (event) {
      case E::key:
        top_key_ = parsed.get<std::string>();
        if (!top_keys_.insert(top_key_).second) fail_at(top_key_, "a second " + cite(top_key_) + " at the top level");
        return true;
      case E::object_start:
        if (top_key_ != "cache") return true;
        in_cache_ = true;
        // Kernel Tuner writes its header first: entries are mapped as they come once it is read.
        if (header_.contains("tune_params_keys") && header_.contains("tune_params") && header_.contains("objective"))
          read_header();
        return true;
      case E::object_end:
        if (top_key_ == "cache") {
          in_cache_ = false;
          cache_seen_ = true;
          return false;
        }
        break;
      case E::array_start:
        if (top_key_ == "cache") fail_at("cache", "expected an object of entries, found a list");
        return true;
      default: break;
    }
    if (top_key_ == "cache") fail_at("cache", "expected an object of entries, found " + shown(parsed));
    header_[top_key_] = std::move(parsed);
    return false;
  }

  const Json& header(const char* key) const {
    const auto it = header_.find(key);
    if (it == header_.end()) need(key);
    return it->second;
  }
  std::string header_string(const char* key) const {
    const Json& v = header(key);
    if (!v.is_string() || non_finite(v)) fail_at(key, "expected a string, found " + shown(v));
    return v.get<std::string>();
  }

  void read_header() {
    params_ready_ = true;
    device_ = header_string("device_name");
    kernel_name_ = header_string("kernel_name");
    if (header_.contains("objective")) objective_ = header_string("objective");
    const Json& keys = header("tune_params_keys");
    const Json& values = header("tune_params");
    if (!keys.is_array() || keys.empty()) fail_at("tune_params_keys", "expected a non-empty list of names");
    if (!values.is_object()) fail_at("tune_params", "expected an object of name: [values]");
    std::set<std::string> names;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const std::string field = fmt::format("tune_params_keys[{}]", i);
      if (!keys[i].is_string() || non_finite(keys[i])) fail_at(field, "expected a name, found " + shown(keys[i]));
      const std::string name = keys[i].get<std::string>();
      if (!is_identifier(name))
        fail_at(field, cite(name) + " is not a C identifier (a param is passed as -DNAME=VALUE)");
      if (!names.insert(name).second) fail_at(field, cite(name) + " is listed twice");
      if (!values.contains(name)) fail_at("tune_params", cite(name) + " of tune_params_keys has no values");
      params_.push_back(read_param(name, values[name]));
    }
    for (const auto& [name, v] : values.items())
      if (!names.contains(name)) fail_at("tune_params", cite(name) + " is not in tune_params_keys");
  }

  Param read_param(const std::string& name, const Json& list) const {
    const std::string field = "tune_params[" + cite(name) + "]";
    if (!list.is_array() || list.empty()) fail_at(field, "expected a non-empty list of values, found " + shown(list));
    Param p;
    p.name = name;
    const auto all = [&](auto pred) { return std::all_of(list.begin(), list.end(), pred); };
    if (all([](const Json& v) { return v.is_boolean(); }))
      p.kind = Param::Kind::boolean;
    else if (all([](const Json& v) {
               return v.is_number_integer() && (!v.is_number_unsigned() || v.get<std::uint64_t>() <= INT64_MAX);
             }))
      p.kind = Param::Kind::integer;
    else if (all([](const Json& v) { return v.is_number() || non_finite(v); }))
      p.kind = Param::Kind::real;
    else
      p.kind = Param::Kind::text;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Json& v = list[i];
      const std::string at = fmt::format("{}[{}]", field, i);
      const auto key = python_str(v);
      if (!key) fail_at(at, shown(v) + " is not a value a param can take (a list or an object)");
      if (non_finite(v)) fail_at(at, *key + " is not a value a param can take");
      std::string recorded = *key;
      if (p.kind == Param::Kind::boolean) recorded = v.get<bool>() ? "1" : "0";
      if (!recordable_value(recorded))
        fail_at(at,
                cite(recorded) + fmt::format(": a param's value is 1 to {} characters, none of them ',' or ';' (they "
                                             "separate Kernel Tuner's keys and a recording's values) or a control "
                                             "character",
                                             max_param_value_chars));
      if (p.kind == Param::Kind::real) {
        const double x = v.get<double>();
        for (std::size_t j = 0; j < p.numbers.size(); ++j)
          if (p.numbers[j] == x) fail_at(at, fmt::format("{} is the number {} again", *key, p.keys[j]));
        p.numbers.push_back(x);
      }
      if (!p.by_key.emplace(*key, i).second) fail_at(at, cite(*key) + " is listed twice");
      p.keys.push_back(*key);
      p.recorded.push_back(std::move(recorded));
    }
    return p;
  }

  std::optional<double> milliseconds(const Json& entry, const char* name, const std::string& where) const {
    const auto it = entry.find(name);
    if (it == entry.end() || it->is_discarded()) return std::nullopt;
    const auto x = it->is_number() ? std::optional(it->get<double>()) : non_finite(*it);
    if (!x || !std::isfinite(*x) || *x < 0)
      fail_at(where + "." + name, shown(*it) + " is not a time in ms (a finite number, not negative)");
    return *x;
  }

  static std::optional<TrialStatus> failure(const Json* v) {
    if (!v || !v->is_string()) return std::nullopt;
    for (const auto& [word, status] : kFailures)
      if (v->get_ref<const std::string&>() == word) return status;
    return std::nullopt;
  }

  void take_entry(const std::string& key, Json& entry) {
    const std::string where = entry_field(key);
    std::vector<std::string_view> parts;
    for (std::size_t start = 0;;) {
      const std::size_t comma = key.find(',', start);
      parts.push_back(std::string_view(key).substr(start, comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (parts.size() != params_.size())
      fail_at(where,
              fmt::format("the key has {} values for the {} params of tune_params_keys", parts.size(), params_.size()));
    std::string params;
    std::optional<std::string> foreign;
    for (std::size_t i = 0; i < params_.size(); ++i) {
      const Param& p = params_[i];
      if (const auto it = entry.find(p.name); it != entry.end() && !it->is_discarded() && !p.agrees(*it, parts[i]))
        fail_at(where + "." + p.name, fmt::format("{} disagrees with the key's {}", shown(*it), cite(parts[i])));
      const auto index = p.index_of(parts[i]);
      if (!index) {
        if (!foreign) foreign = p.name + " " + cite(parts[i]);
        continue;
      }
      params += (i ? ";" : "") + p.name + "=" + p.recorded[*index];
    }
    if (foreign) {
      if (skipped_++ == 0) first_skipped_ = where + ": " + *foreign;
      return;
    }

    LandscapeTrial t;
    t.params = std::move(params);
    const auto time = entry.find("time");
    const Json* time_value = time == entry.end() ? nullptr : &*time;
    const auto objective = objective_ == "time" ? entry.end() : entry.find(objective_);
    if (time_value && time_value->is_number()) {
      const double ms = time_value->get<double>();
      if (!std::isfinite(ms) || ms <= 0) fail_at(where + ".time", shown(*time_value) + " is not a positive time (ms)");
      t.time_ms = ms;
    } else if (const auto status = failure(time_value)) {
      t.status = *status;
    } else if (time_value) {
      fail_at(where + ".time",
              fmt::format("{} is neither a time (ms) nor one of Kernel Tuner's failures (InvalidConfig, "
                          "CompilationFailedConfig, RuntimeFailedConfig)",
                          non_finite(*time_value) ? python_str(*time_value).value() : shown(*time_value)));
    } else if (const auto status = failure(objective == entry.end() ? nullptr : &*objective)) {
      t.status = *status;  // a failure with another objective than time: `time` was never measured
    } else {
      fail_at(where, "no time and no failure (InvalidConfig, CompilationFailedConfig or RuntimeFailedConfig)");
    }
    if (t.status != TrialStatus::ok)
      t.detail =
          fmt::format("Kernel Tuner: {}", time_value ? time_value->get<std::string>() : objective->get<std::string>());
    const auto compile = milliseconds(entry, "compile_time", where);
    const auto verify = milliseconds(entry, "verification_time", where);
    const auto benchmark = milliseconds(entry, "benchmark_time", where);
    if (!compile || !verify || !benchmark) ++untimed_;
    t.compile_ms = compile.value_or(0);
    t.measure_ms = verify.value_or(0) + benchmark.value_or(0);
    if (const auto r = entry.find("num_regs");
        r != entry.end() && r->is_number_integer() && r->get<std::int64_t>() >= 0)
      t.registers = r->get<std::int64_t>();
    if (const auto s = entry.find("timestamp"); s != entry.end() && s->is_string()) {
      const std::string& when = s->get_ref<const std::string&>();
      if (first_time_.empty() || when < first_time_) first_time_ = when;
      if (when > last_time_) last_time_ = when;
    }
    trials_.push_back(std::move(t));
  }

  /// The problem: problem_size's integers, or none when it is not integers.
  void read_problem() {
    const auto it = header_.find("problem_size");
    if (it == header_.end()) {
      result_.notes.push_back("no problem_size in the cache: the space has no problem sizes");
      return;
    }
    const Json& ps = it->second;
    const Json list = ps.is_array() ? ps : Json::array({ps});
    const bool integers = !list.empty() && list.size() <= 3 && std::all_of(list.begin(), list.end(), [](const Json& v) {
      return v.is_number_integer() && (!v.is_number_unsigned() || v.get<std::uint64_t>() <= INT64_MAX);
    });
    problem_size_text_ = header_text(ps.dump(-1, ' ', false, Json::error_handler_t::replace));
    // Kernel Tuner's default grid: problem_size / block_size_*, rounded up, per dimension; each
    // entry YAML text (quoted, or {python: ...} for a size Kernel Tuner evaluates per config).
    if (integers) {
      for (std::size_t d = 0; d < list.size(); ++d) {
        problem_names_.push_back(kProblemNames[d]);
        problem_.sizes.push_back(list[d].get<std::int64_t>());
        grid_.push_back(yaml_quoted(block_param(d) ? fmt::format("ceil_div({}, {})", kProblemNames[d], kBlockNames[d])
                                                   : std::string(kProblemNames[d])));
      }
      return;
    }
    result_.notes.push_back(
        fmt::format("problem_size {} is not integers (Kernel Tuner evaluates it per config): the "
                    "space has no problem sizes",
                    cite(problem_size_text_)));
    const bool sizes = !list.empty() && list.size() <= 3 && std::all_of(list.begin(), list.end(), [](const Json& v) {
      return v.is_number_integer() || v.is_string();
    });
    if (!sizes) {
      launch_note_ = "the grid is 1: problem_size is not 1 to 3 integers or expressions of the params";
      return;
    }
    for (std::size_t d = 0; d < list.size(); ++d) {
      const std::string extent = list[d].is_string() ? "int(" + list[d].get<std::string>() + ")" : list[d].dump();
      const std::string python = block_param(d) ? fmt::format("ceil({} / {})", extent, kBlockNames[d]) : extent;
      try {
        (void)py::Program::parse(python);
      } catch (const ExprSyntaxError&) {
        grid_.clear();
        launch_note_ = "the grid is 1: problem_size is not Python tiletune reads";
        return;
      }
      grid_.push_back("{python: " + yaml_quoted(python) + "}");
    }
  }

  [[nodiscard]] bool block_param(std::size_t d) const {
    return std::any_of(params_.begin(), params_.end(), [&](const Param& p) {
      return p.name == kBlockNames[d] && (p.kind == Param::Kind::integer || p.kind == Param::Kind::boolean);
    });
  }

  std::string family() const {
    const std::string name = options_.name.empty() ? "kt_" + kernel_name_ : options_.name;
    if (!options_.name.empty() && !is_identifier(options_.name))
      fail_at("--name", cite(options_.name) + " is not a C identifier");
    if (options_.name.empty() && !is_identifier(kernel_name_))
      fail_at("kernel_name", cite(kernel_name_) + " is not a C identifier: name the kernel family with --name");
    return name;
  }

  std::string space_yaml(const std::string& family, const std::string& entry) const {
    std::ostringstream y;
    y << "# The space of Kernel Tuner's cache of " << cite(kernel_name_)
      << ", written by `tiletune import-kt-cache`\n"
         "# for replays of its recordings (tune --replay, bench_strategies). The source is a stub: nothing\n"
         "# here compiles, launches or checks a kernel.\n";
    y << fmt::format("kernel: {}\nsource: {}\nentry: {}\n", family, yaml_quoted(family + ".cu"), entry);
    if (!problem_names_.empty()) {
      y << "problem:                          # Kernel Tuner's problem_size\n";
      for (std::size_t d = 0; d < problem_names_.size(); ++d)
        y << fmt::format("  {}: [{}]\n", problem_names_[d], problem_.sizes[d]);
    } else {
      y << "# problem_size " << cite(problem_size_text_) << " is not integers: no problem sizes\n";
    }
    y << "params:                           # tune_params, in tune_params_keys order\n";
    for (const Param& p : params_)
      y << fmt::format("  {}: {}\n", p.name, yaml_list(p.recorded, p.kind == Param::Kind::text));
    y << "# No constraints: the configs in the cache are those that were run; a config of the product\n"
         "# that the cache lacks is left out of a replay (unrecorded).\n";
    std::vector<std::string> block;
    for (std::size_t d = 0; d < 3; ++d) block.push_back(block_param(d) ? kBlockNames[d] : kDefaultThreads[d]);
    while (block.size() > 1 && block.back() == "1") block.pop_back();
    y << "launch:                           # Kernel Tuner's default rule (a cache does not record grid_div_*\n"
         "                                  # or block_size_names)";
    if (!launch_note_.empty()) y << ": " << launch_note_;
    y << "\n  grid: " << yaml_list(grid_.empty() ? std::vector<std::string>{"\"1\""} : grid_, false)
      << "\n  block: " << yaml_list(block, true) << '\n';
    y << "args: [0]                         # the stub's one argument\nverify: none\n";
    return y.str();
  }

  Landscape recording(const std::string& family) {
    Landscape l;
    l.kernel = family;
    l.header.emplace_back("device", header_text(device_));
    l.header.emplace_back("source", "Kernel Tuner cache " + header_text(path_.string()));
    l.header.emplace_back("kt_kernel_name", header_text(kernel_name_));
    l.header.emplace_back("kt_problem_size", problem_size_text_.empty() ? "(none)" : problem_size_text_);
    l.header.emplace_back("objective", objective_ == "time" ? "time"
                                                            : header_text(objective_) +
                                                                  " (Kernel Tuner's; the trials "
                                                                  "hold its time, which a replay "
                                                                  "minimises)");
    l.header.emplace_back("times",
                          "time_ms is Kernel Tuner's time (the mean of its iterations); compile_ms its "
                          "compile_time; measure_ms its verification_time + benchmark_time");
    l.header.emplace_back("recorded", first_time_.empty()
                                          ? "(the entries carry no timestamp)"
                                          : header_text(first_time_) + " to " + header_text(last_time_));
    l.header.emplace_back("trials", std::to_string(trials_.size()));
    if (skipped_)
      l.header.emplace_back("skipped", fmt::format("{} entries with a value tune_params does not list", skipped_));
    std::string problem;
    for (std::size_t d = 0; d < problem_names_.size(); ++d)
      problem += fmt::format("{}{}={}", d ? ";" : "", problem_names_[d], problem_.sizes[d]);
    l.problems.push_back(LandscapeProblem{problem, std::move(trials_)});
    return l;
  }

  KtCacheImport finish() {
    read_problem();
    const std::string name = family();
    if (trials_.empty())
      fail_at("cache", skipped_ ? fmt::format("none of its {} entries has only values that tune_params lists ({})",
                                              skipped_, first_skipped_)
                                : std::string("no entries: nothing was recorded"));
    if (skipped_)
      result_.notes.push_back(
          fmt::format("{} entries skipped: a value that the header's tune_params does not list (first: "
                      "{}); Kernel Tuner appends runs of other values to a cache without checking",
                      skipped_, first_skipped_));
    if (untimed_)
      result_.notes.push_back(
          fmt::format("{} entries lack compile_time, verification_time or benchmark_time: what they "
                      "lack costs 0 in a replay",
                      untimed_));
    if (objective_ != "time")
      result_.notes.push_back(
          fmt::format("Kernel Tuner's objective was {}: the recording holds each config's time, which "
                      "a replay minimises",
                      cite(objective_)));
    result_.entries = entries_;
    const std::string entry = is_identifier(kernel_name_) ? kernel_name_ : name;
    result_.stub_file = name + ".cu";
    result_.stub_source = fmt::format(
        "extern \"C\" __global__ void {}(int) {{}}  // a stub: a replay of a Kernel Tuner cache compiles nothing\n",
        entry);
    result_.space_yaml = space_yaml(name, entry);
    result_.recording = recording(name);
    std::ostringstream csv;
    write_landscape(csv, result_.recording);
    result_.recording_csv = csv.str();
    check(result_);
    return std::move(result_);
  }

  /// What is written reads back: the space loads beside its stub, the recording reads, and every
  /// trial is a config of the space.
  void check(const KtCacheImport& r) const {
    std::optional<ScratchDir> dir;
    fs::path yaml, csv;
    try {  // a failure here names the scratch file: say whose check it was
      dir.emplace("tiletune-kt");
      write_output(dir->path() / r.stub_file, r.stub_source);
      yaml = dir->path() / "space.yaml";
      write_output(yaml, r.space_yaml);
      csv = dir->path() / "recording.csv";
      write_output(csv, r.recording_csv);
    } catch (const Error& e) { fail_at("", fmt::format("cannot check what it maps to: {}", e.what())); }
    Space space;
    try {
      space = load_space(yaml);
    } catch (const SpaceError& e) {
      fail_at("", fmt::format("the space it maps to does not load: {} ({})", e.reason(), e.remedy()));
    } catch (const Error& e) { fail_at("", fmt::format("the space it maps to does not load: {}", e.what())); }
    try {
      const ReplayProblem rp = replay_problem(space, load_landscape(csv), problem_);
      const std::size_t trials = r.recording.problems.front().trials.size();
      if (rp.outcomes.size() != trials)
        fail_at("", fmt::format("{} of its {} trials are not configs of the space it maps to (a bug: please report it)",
                                trials - rp.outcomes.size(), trials));
    } catch (const InterchangeError&) { throw; } catch (const Error& e) {
      fail_at("", fmt::format("the recording does not replay in its space: {}", e.what()));
    }
  }

  fs::path path_;
  KtCacheImportOptions options_;
  KtCacheImport result_;
  // The parse.
  std::string top_key_, entry_key_;
  std::set<std::string> top_keys_;
  std::unordered_set<std::string> keys_;
  std::map<std::string, Json> header_;
  bool in_cache_ = false, cache_seen_ = false, params_ready_ = false;
  std::vector<std::pair<std::string, Json>> stash_;  ///< entries before their header (not Kernel Tuner's order)
  // The header.
  std::string device_, kernel_name_, objective_ = "time", problem_size_text_, launch_note_;
  std::vector<Param> params_;
  std::vector<std::string> problem_names_, grid_;
  Problem problem_;
  // The entries.
  std::uint64_t entries_ = 0, skipped_ = 0, untimed_ = 0;
  std::string first_skipped_, first_time_, last_time_;
  std::vector<LandscapeTrial> trials_;
};

}  // namespace

KtCacheImport import_kt_cache(const fs::path& cache_path, const KtCacheImportOptions& options) {
  try {
    return CacheImporter(cache_path, options).run();
  } catch (const Error&) {
    throw;
  } catch (const std::exception&) {  // a JSON type error, bad_alloc, ...: located at the file
    throw InterchangeError(fmt::format("{}: {}", cache_path.string(), exception_reason(std::current_exception())));
  }
}

}  // namespace tiletune
