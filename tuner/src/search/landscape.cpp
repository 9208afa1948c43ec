// Landscape files: write from a result cache, read back for replays. The CSV needs no quoting:
// problems and params hold no commas, and detail is the last column (it may hold commas and
// is cut to one line).
#include "tiletune/landscape.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>

#include "tiletune/error.hpp"

namespace tiletune {

namespace {

constexpr std::string_view kMagic = "# tiletune landscape 1";
constexpr std::string_view kColumns =
    "problem,params,status,time_ms,compile_ms,measure_ms,registers,shared_bytes,occupancy,detail";
constexpr std::size_t kDetailChars = 160;

std::string one_line(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\n' || c == '\r') {
      if (!out.empty()) break;
      continue;
    }
    out += c;
  }
  if (out.size() > kDetailChars) out = out.substr(0, kDetailChars - 3) + "...";
  return out;
}

std::string number(double v) { return fmt::format("{:.6g}", v); }

/// The landscape's problem of that name, appended when it is new (problems keep file order).
LandscapeProblem& problem_named(Landscape& l, std::string_view name) {
  for (LandscapeProblem& p : l.problems)
    if (p.problem == name) return p;
  return l.problems.emplace_back(LandscapeProblem{std::string(name), {}});
}

[[noreturn]] void fail(const std::filesystem::path& path, int line, const std::string& what) {
  throw Error(fmt::format("{}:{}: landscape: {}", path.string(), line, what));
}

std::optional<double> parse_double(std::string_view s) {
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) throw std::invalid_argument(std::string(s));
  return v;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) throw std::invalid_argument(std::string(s));
  return v;
}

}  // namespace

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
  out << kMagic << '\n' << "# kernel: " << landscape.kernel << '\n';
  for (const auto& [key, value] : landscape.header) out << "# " << key << ": " << one_line(value) << '\n';
  out << kColumns << '\n';
  for (const LandscapeProblem& p : landscape.problems) {
    for (const LandscapeTrial& t : p.trials) {
      out << p.problem << ',' << t.params << ',' << status_name(t.status) << ','
          << (t.time_ms ? number(*t.time_ms) : "") << ',' << number(t.compile_ms) << ',' << number(t.measure_ms)
          << ',' << (t.registers ? std::to_string(*t.registers) : "") << ','
          << (t.shared_bytes ? std::to_string(*t.shared_bytes) : "") << ','
          << (t.occupancy ? number(*t.occupancy) : "") << ',' << one_line(t.detail) << '\n';
    }
  }
}

Landscape load_landscape(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("{}: landscape: cannot open the file", path.string()));
  Landscape l;
  std::string line;
  int n = 0;
  bool columns_seen = false;
  std::set<std::pair<std::string, std::string>> seen;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (n == 1) {
      if (line != kMagic) fail(path, n, fmt::format("expected '{}' as the first line", kMagic));
      continue;
    }
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (columns_seen) fail(path, n, "header line after the column names");
      const auto colon = line.find(": ");
      if (colon == std::string::npos) fail(path, n, "a header line is '# key: value'");
      std::string key = line.substr(2, colon - 2), value = line.substr(colon + 2);
      if (key == "kernel")
        l.kernel = value;
      else
        l.header.emplace_back(std::move(key), std::move(value));
      continue;
    }
    if (!columns_seen) {
      if (line != kColumns) fail(path, n, fmt::format("expected the columns '{}'", kColumns));
      columns_seen = true;
      continue;
    }
    // Nine separated columns, then the detail (the rest of the line).
    std::vector<std::string_view> f;
    std::string_view rest = line;
    for (int i = 0; i < 9; ++i) {
      const auto comma = rest.find(',');
      if (comma == std::string_view::npos) fail(path, n, fmt::format("expected 10 columns, found {}", i + 1));
      f.push_back(rest.substr(0, comma));
      rest.remove_prefix(comma + 1);
    }
    LandscapeTrial t;
    t.params = std::string(f[1]);
    if (f[0].empty() || t.params.empty()) fail(path, n, "empty problem or params");
    const auto status = parse_status(f[2]);
    if (!status) fail(path, n, fmt::format("unknown status '{}'", f[2]));
    t.status = *status;
    try {
      t.time_ms = parse_double(f[3]);
      t.compile_ms = parse_double(f[4]).value_or(0);
      t.measure_ms = parse_double(f[5]).value_or(0);
      t.registers = parse_int(f[6]);
      t.shared_bytes = parse_int(f[7]);
      t.occupancy = parse_double(f[8]);
    } catch (const std::invalid_argument& e) {
      fail(path, n, fmt::format("'{}' is not a number", e.what()));
    }
    if (t.status == TrialStatus::ok && !(t.time_ms && *t.time_ms > 0))
      fail(path, n, "an ok trial needs a positive time_ms");
    if (t.compile_ms < 0 || t.measure_ms < 0) fail(path, n, "negative compile_ms or measure_ms");
    t.detail = std::string(rest);
    if (!seen.emplace(std::string(f[0]), t.params).second)
      fail(path, n, fmt::format("a second trial of {} at {}", t.params, f[0]));
    problem_named(l, f[0]).trials.push_back(std::move(t));
  }
  if (n == 0) fail(path, 1, "the file is empty");
  if (l.kernel.empty()) fail(path, n, "no '# kernel: NAME' line in the header");
  if (!columns_seen) fail(path, n, "no column names line");
  if (l.problems.empty()) fail(path, n, "no trials");
  return l;
}

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
    throw Error(fmt::format("landscape: '{}' has trials on {} devices; name one with --device (UUID or name)",
                            kernel, uuids.size()));

  Landscape l;
  l.kernel = kernel;
  const TrialRow& first = rows.front();
  for (const DeviceRow& d : db.devices()) {
    if (d.device.uuid != first.device_uuid) continue;
    l.header.emplace_back("device", d.device.name);
    l.header.emplace_back("device_uuid", d.device.uuid);
    l.header.emplace_back("compute_capability", fmt::format("{}.{}", d.device.cc_major, d.device.cc_minor));
    if (d.device.sm_count) l.header.emplace_back("sm_count", std::to_string(*d.device.sm_count));
    if (d.device.memory_bytes) l.header.emplace_back("memory_bytes", std::to_string(*d.device.memory_bytes));
    if (d.device.l2_bytes) l.header.emplace_back("l2_bytes", std::to_string(*d.device.l2_bytes));
    if (d.device.driver_version) l.header.emplace_back("driver_version", std::to_string(*d.device.driver_version));
    if (d.device.copy_gbps) l.header.emplace_back("copy_gbps", number(*d.device.copy_gbps));
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
