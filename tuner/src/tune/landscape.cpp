// Landscape files: write from a result cache, read back for replays. The rows are CSV as RFC 4180
// says, written and read through the one CSV layer (common/text_out.hpp), so that a hostile cache
// cannot forge rows that a replay believes: a field with a comma, a quote or a line break is
// quoted. Params and problems hold none of those but quotes (recordable_value, which Kernel
// Tuner's comma-joined keys need too: a cache whose params do is refused, nothing written); the
// detail may. A recording written before quoting has the detail, the last column, unquoted with
// its commas: a row of more than 10 fields whose extra ones are unquoted is read that way.
#include "tiletune/landscape.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <ostream>
#include <set>
#include <unordered_map>

#include "common/input_file.hpp"
#include "common/text_out.hpp"
#include "tiletune/error.hpp"

namespace tiletune {

namespace {

constexpr std::string_view kMagic = "# tiletune landscape 1";
constexpr std::string_view kColumns =
    "problem,params,status,time_ms,compile_ms,measure_ms,registers,shared_bytes,occupancy,detail";
constexpr std::size_t kDetailChars = 160;

/// The first line of s that is not empty, cut to kDetailChars characters (never inside one).
std::string one_line(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\n' || c == '\r') {
      if (!out.empty()) break;
      continue;
    }
    out += c;
  }
  return text_out::cut_chars(out, kDetailChars);
}

std::string number(double v) { return fmt::format("{:.6g}", v); }

/// The landscape's problem of that name, appended when it is new (problems keep file order).
LandscapeProblem& problem_named(Landscape& l, std::string_view name) {
  for (LandscapeProblem& p : l.problems)
    if (p.problem == name) return p;
  return l.problems.emplace_back(LandscapeProblem{std::string(name), {}});
}

// A recording is a few hundred KB (matmul's 1420 configs at two sizes: 330 KB); the cap keeps a
// wrong file from being read into memory whole.
constexpr std::size_t kMaxRecordingBytes = std::size_t{64} << 20;

/// A field as an error message shows it: at most 40 characters, control characters as '?'.
std::string shown(std::string_view field) {
  std::string out(field.substr(0, 40));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return "'" + out + (field.size() > 40 ? "...'" : "'");
}

/// The whole file, read only when it is a regular file (a FIFO or a device would block or never
/// end) of at most kMaxRecordingBytes.
std::string read_recording(const std::filesystem::path& path) {
  try {
    InputFile file(path, "a recording");
    return file.read_all(kMaxRecordingBytes);
  } catch (const Error& e) { throw Error(fmt::format("{}: landscape: {}", path.string(), e.what())); }
}

bool is_identifier(std::string_view s) {
  if (s.empty() || s.size() > 64 || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

/// What is wrong with a problem ("N=8192;R=3": whole numbers; empty for a space without problem
/// sizes) or params field ("TILE=32;T=half;ALPHA=0.5": recordable values), or nullopt.
std::optional<std::string> assignments_error(std::string_view text, bool params) {
  const char* what = params ? "params" : "problem";
  if (text.empty()) return params ? std::optional<std::string>("empty params") : std::nullopt;
  for (std::string_view rest = text;;) {
    const auto semi = rest.find(';');
    const std::string_view item = rest.substr(0, semi);
    const auto eq = item.find('=');
    const std::string_view value = eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
    bool fine = eq != std::string_view::npos && is_identifier(item.substr(0, eq));
    if (fine && params) {
      fine = recordable_value(value);
    } else if (fine) {
      std::int64_t v = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      fine = !value.empty() && ec == std::errc() && end == value.data() + value.size();
    }
    if (!fine)
      return fmt::format("{} {}: expected {}", what, shown(text),
                         params ? "NAME=VALUE;NAME=VALUE... (a value: 1 to " + std::to_string(max_param_value_chars) +
                                      " characters, none a ',', ';' or control character)"
                                : std::string("NAME=INTEGER;NAME=INTEGER..."));
    if (semi == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(semi + 1);
  }
}

/// Reads one recording, line by line; every problem is an Error "FILE:LINE: landscape: reason".
class Reader {
 public:
  explicit Reader(const std::filesystem::path& path) : path_(path) {}

  Landscape read(std::string_view text) {
    if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
      line_ = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n'));
      fail("a NUL byte in the line");
    }
    text_out::CsvReader csv(text);
    std::vector<text_out::CsvField> fields;
    while (!csv.at_end()) {
      line_ = csv.line();
      const std::string_view line = csv.peek_line();
      // Lines before the rows (and empty ones) are not CSV; a row is one record, maybe of several lines.
      if (line_ == 1 || line.empty() || line[0] == '#' || !columns_seen_) {
        take(line);
        csv.skip_line();
        continue;
      }
      if (const auto error = csv.record(fields)) fail(*error);
      row(fields);
    }
    if (line_ == 0) fail("the file is empty");
    if (l_.kernel.empty()) fail("no '# kernel: NAME' line in the header");
    if (!columns_seen_) fail("no column names line");
    if (l_.problems.empty()) fail("no trials");
    return std::move(l_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("{}:{}: landscape: {}", path_.string(), std::max(line_, 1), what));
  }

  void take(std::string_view line) {
    if (line_ == 1) {
      if (line != kMagic) fail(fmt::format("expected '{}' as the first line", kMagic));
    } else if (line.empty()) {
      return;
    } else if (line[0] == '#') {
      header(line);
    } else {
      if (line != kColumns) fail(fmt::format("expected the columns '{}'", kColumns));
      columns_seen_ = true;
    }
  }

  void header(std::string_view line) {
    if (columns_seen_) fail("header line after the column names");
    const auto colon = line.find(": ");
    if (!line.starts_with("# ") || colon == std::string_view::npos || colon == 2)
      fail("a header line is '# key: value'");
    const std::string_view key = line.substr(2, colon - 2), value = line.substr(colon + 2);
    if (!is_identifier(key)) fail(fmt::format("header key {} is not a name (letters, digits, _)", shown(key)));
    if (key != "kernel") {
      l_.header.emplace_back(std::string(key), std::string(value));
      return;
    }
    if (!l_.kernel.empty()) fail("a second '# kernel:' line");
    if (!is_identifier(value)) fail(fmt::format("kernel name {} is not a name (letters, digits, _)", shown(value)));
    l_.kernel = std::string(value);
  }

  void row(std::vector<text_out::CsvField>& fields) {
    // Ten fields; more only from a recording written before quoting, whose unquoted detail kept
    // its commas: those are joined back.
    if (fields.size() > 10 && std::none_of(fields.begin() + 9, fields.end(), [](const auto& f) { return f.quoted; })) {
      for (std::size_t i = 10; i < fields.size(); ++i) fields[9].text += "," + fields[i].text;
      fields.resize(10);
    }
    if (fields.size() != 10) fail(fmt::format("expected 10 columns, found {}", fields.size()));
    std::vector<std::string_view> f;
    for (const auto& field : fields) f.push_back(field.text);
    const std::string_view rest = f[9];
    if (const auto wrong = assignments_error(f[0], false)) fail(*wrong);
    if (const auto wrong = assignments_error(f[1], true)) fail(*wrong);
    LandscapeTrial t;
    t.params = std::string(f[1]);
    const auto status = parse_status(f[2]);
    if (!status) fail(fmt::format("unknown status {}", shown(f[2])));
    t.status = *status;
    t.time_ms = decimal(f[3], "time_ms", true);
    t.compile_ms = decimal(f[4], "compile_ms", false).value_or(0);
    t.measure_ms = decimal(f[5], "measure_ms", false).value_or(0);
    t.registers = whole(f[6], "registers");
    t.shared_bytes = whole(f[7], "shared_bytes");
    t.occupancy = decimal(f[8], "occupancy", false);
    if (t.occupancy && *t.occupancy > 1) fail(fmt::format("occupancy {} is more than 1", shown(f[8])));
    if (t.status == TrialStatus::ok && !t.time_ms) fail("an ok trial needs a positive time_ms");
    if (t.status != TrialStatus::ok && t.time_ms)
      fail(fmt::format("a {} trial has no time_ms (only ok trials ran to the end)", status_name(t.status)));
    t.detail = std::string(rest);
    if (!seen_.emplace(std::string(f[0]), t.params).second)
      fail(fmt::format("a second trial of {} at {}", shown(t.params), shown(f[0])));
    // An index rather than problem_named's scan: a file of many problems must not take quadratic time.
    const auto [it, added] = problem_index_.try_emplace(std::string(f[0]), l_.problems.size());
    if (added) l_.problems.push_back(LandscapeProblem{std::string(f[0]), {}});
    l_.problems[it->second].trials.push_back(std::move(t));
  }

  /// An empty field, or a finite number >= 0 (> 0 when positive).
  std::optional<double> decimal(std::string_view s, const char* what, bool positive) const {
    if (s.empty()) return std::nullopt;
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) fail(fmt::format("{} {} is not a number", what, shown(s)));
    if (!std::isfinite(v)) fail(fmt::format("{} {} is not a finite number", what, shown(s)));
    if (positive ? v <= 0 : v < 0)
      fail(fmt::format("{} {} is {}", what, shown(s), positive ? "not positive" : "negative"));
    return v;
  }

  /// An empty field, or a whole number >= 0.
  std::optional<std::int64_t> whole(std::string_view s, const char* what) const {
    if (s.empty()) return std::nullopt;
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v < 0)
      fail(fmt::format("{} {} is not a whole number", what, shown(s)));
    return v;
  }

  std::filesystem::path path_;
  int line_ = 0;
  bool columns_seen_ = false;
  Landscape l_;
  std::set<std::pair<std::string, std::string>> seen_;
  std::unordered_map<std::string, std::size_t> problem_index_;
};

/// The first number of a trial that is not finite (a hand-edited cache's inf), named, or nullopt.
std::optional<std::pair<const char*, double>> first_not_finite(const LandscapeTrial& t) {
  const std::pair<const char*, std::optional<double>> numbers[] = {
      {"time_ms", t.time_ms}, {"compile_ms", t.compile_ms}, {"measure_ms", t.measure_ms}, {"occupancy", t.occupancy}};
  for (const auto& [name, v] : numbers)
    if (v && !std::isfinite(*v)) return std::pair{name, *v};
  return std::nullopt;
}

}  // namespace

bool recordable_value(std::string_view value) {
  if (value.empty() || value.size() > max_param_value_chars) return false;
  return std::none_of(value.begin(), value.end(),
                      [](char c) { return c == ',' || c == ';' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

std::optional<std::string> Landscape::header_value(const std::string& key) const {
  for (const auto& [k, v] : header)
    if (k == key) return v;
  return std::nullopt;
}

const LandscapeProblem* Landscape::find_problem(const std::string& canonical) const {
  for (const LandscapeProblem& p : problems)
    if (p.problem == canonical) return &p;
  return nullptr;
}

void write_landscape(std::ostream& out, const Landscape& landscape) {
  // Checked before anything is written: a value the reader refuses would make the file unreadable.
  for (const LandscapeProblem& p : landscape.problems) {
    if (const auto wrong = assignments_error(p.problem, false))
      throw Error(fmt::format("landscape of {}: {}", landscape.kernel, *wrong));
    for (const LandscapeTrial& t : p.trials)
      if (const auto wrong = assignments_error(t.params, true))
        throw Error(fmt::format("landscape of {}: {} (a recording cannot hold it)", landscape.kernel, *wrong));
      else if (const auto number = first_not_finite(t))
        throw Error(fmt::format("landscape of {}: params {} at {}: {} is {} (a recording holds finite numbers)",
                                landscape.kernel, shown(t.params), shown(p.problem), number->first, number->second));
  }
  out << kMagic << '\n' << "# kernel: " << landscape.kernel << '\n';
  for (const auto& [key, value] : landscape.header) out << "# " << key << ": " << one_line(value) << '\n';
  out << kColumns << '\n';
  for (const LandscapeProblem& p : landscape.problems) {
    for (const LandscapeTrial& t : p.trials) {
      out << text_out::csv_field(p.problem) << ',' << text_out::csv_field(t.params) << ',' << status_name(t.status)
          << ',' << (t.time_ms ? number(*t.time_ms) : "") << ',' << number(t.compile_ms) << ',' << number(t.measure_ms)
          << ',' << (t.registers ? std::to_string(*t.registers) : "") << ','
          << (t.shared_bytes ? std::to_string(*t.shared_bytes) : "") << ',' << (t.occupancy ? number(*t.occupancy) : "")
          << ',' << text_out::csv_field(one_line(t.detail)) << '\n';
    }
  }
}

Landscape load_landscape(const std::filesystem::path& path) { return Reader(path).read(read_recording(path)); }

Landscape landscape_from_cache(const CacheDb& db, const std::string& kernel, const std::string& device) {
  TrialFilter filter;
  filter.kernel = kernel;
  filter.current_only = true;
  if (!device.empty()) filter.device = device;
  const std::vector<TrialRow> rows = db.trials(filter);
  if (rows.empty())
    throw Error(fmt::format("landscape: the cache has no trials of the current version of '{}'{}", kernel,
                            device.empty() ? "" : " on " + device));
  std::set<std::string> uuids;
  for (const TrialRow& r : rows) uuids.insert(r.device_uuid);
  if (uuids.size() > 1)
    throw Error(fmt::format("landscape: '{}' has trials on {} devices; name one with --device (UUID or name)", kernel,
                            uuids.size()));

  Landscape l;
  l.kernel = kernel;
  const TrialRow& first = rows.front();
  for (const DeviceRow& d : db.devices()) {
    if (d.device.uuid != first.device_uuid) continue;
    l.header.emplace_back("device", d.device.name);
    l.header.emplace_back("device_uuid", d.device.uuid);
    l.header.emplace_back("compute_capability", d.device.compute_capability());
    for (const DeviceColumn& c : device_columns) {  // each described field the cache knows
      if (!c.description) continue;
      const TrialValue v = c.get(d.device);
      if (const auto* i = std::get_if<std::int64_t>(&v))
        l.header.emplace_back(c.name, std::to_string(*i));
      else if (const auto* real = std::get_if<double>(&v))
        l.header.emplace_back(c.name, number(*real));
    }
  }
  l.header.emplace_back("source_hash", first.kernel.source_hash);
  l.header.emplace_back("options", first.kernel.options);
  l.header.emplace_back("nvrtc_version", first.kernel.nvrtc_version);
  std::string earliest = first.created_at, latest = first.created_at;
  for (const TrialRow& r : rows) {
    earliest = std::min(earliest, r.created_at);
    latest = std::max(latest, r.created_at);
  }
  l.header.emplace_back("recorded", earliest + " to " + latest);
  l.header.emplace_back("trials", std::to_string(rows.size()));

  for (const TrialRow& r : rows) {
    const TrialRecord& t = r.trial;
    LandscapeTrial lt;
    lt.params = t.key.params;
    lt.status = t.status;
    lt.time_ms = t.status == TrialStatus::ok ? t.time_ms : std::nullopt;
    lt.compile_ms = t.compile_ms.value_or(0);
    lt.measure_ms = t.measure_ms.value_or(0);
    lt.registers = t.registers;
    lt.shared_bytes = t.shared_bytes;
    lt.occupancy = t.occupancy_driver ? t.occupancy_driver : t.occupancy_offline;
    lt.detail = t.detail;
    problem_named(l, t.key.problem).trials.push_back(std::move(lt));
  }
  // A stable order (the cache's is by id): problems and params sorted as text.
  std::sort(l.problems.begin(), l.problems.end(),
            [](const LandscapeProblem& a, const LandscapeProblem& b) { return a.problem < b.problem; });
  for (LandscapeProblem& p : l.problems)
    std::sort(p.trials.begin(), p.trials.end(),
              [](const LandscapeTrial& a, const LandscapeTrial& b) { return a.params < b.params; });
  return l;
}

}  // namespace tiletune
