// Warm starts (`tune --warm-start DB|RECORDING`): another device's ranking of the same kernel
// and problem, from a result cache or a landscape recording, mapped onto a problem's domain.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "common/input_file.hpp"
#include "tiletune/error.hpp"
#include "tiletune/sweep.hpp"

namespace tiletune {

namespace {

enum class WarmFile { cache, recording, other };

/// What a file is by its first bytes: SQLite's header, or a landscape's first line. Only a
/// regular file is opened (a FIFO would block the sweep before it starts).
WarmFile kind_of(const std::filesystem::path& path) {
  std::array<char, 20> head{};
  std::size_t got = 0;
  try {
    InputFile in(path, "a warm start (a cache or a recording)");
    for (std::size_t n = 1; got < head.size() && n > 0; got += n) n = in.read(head.data() + got, head.size() - got);
  } catch (const Error& e) { throw Error(fmt::format("--warm-start {}: {}", shown_path(path), e.what())); }
  const std::string text(head.data(), got);
  if (text.starts_with(std::string("SQLite format 3\0", 16))) return WarmFile::cache;
  if (text.starts_with("# tiletune landscape")) return WarmFile::recording;
  return WarmFile::other;
}

/// Ok configs of each problem of a landscape, fastest first (ties by params).
std::map<std::string, std::vector<std::string>> rankings_of(const Landscape& landscape) {
  std::map<std::string, std::vector<std::string>> out;
  for (const LandscapeProblem& p : landscape.problems) {
    std::vector<std::pair<double, std::string>> ok;
    for (const LandscapeTrial& t : p.trials)
      if (t.status == TrialStatus::ok && t.time_ms) ok.emplace_back(*t.time_ms, t.params);
    std::sort(ok.begin(), ok.end());
    std::vector<std::string>& ranking = out[p.problem];
    for (auto& [time, params] : ok) ranking.push_back(std::move(params));
  }
  return out;
}

/// Each cached device's compute capability, as 90 for sm_90, by uuid.
std::map<std::string, int> archs_of(const CacheDb& db) {
  std::map<std::string, int> archs;
  for (const DeviceRow& row : db.devices()) archs[row.device.uuid] = row.device.cc_major * 10 + row.device.cc_minor;
  return archs;
}

/// The other device of a cache with the most ok trials of the kernel's current version, one of
/// architecture `arch` first (archs: archs_of the cache).
std::string other_device(const CacheDb& db, const std::map<std::string, int>& archs, const std::filesystem::path& path,
                         const Space& space, const std::vector<std::string>& exclude_uuids,
                         const std::string& exclude_name, int arch) {
  TrialFilter filter;
  filter.kernel = space.kernel;
  filter.current_only = true;
  filter.status = TrialStatus::ok;
  std::map<std::string, std::size_t> ok_trials;  // by uuid: ties go to the first uuid
  for (const TrialRow& row : db.trials(filter))
    if (std::find(exclude_uuids.begin(), exclude_uuids.end(), row.device_uuid) == exclude_uuids.end() &&
        (exclude_name.empty() || row.device_name != exclude_name))
      ++ok_trials[row.device_uuid];
  if (ok_trials.empty())
    throw Error(fmt::format("--warm-start {}: the cache has no ok trial of kernel '{}' on a device other than this one",
                            shown_path(path), space.kernel));
  const auto same_arch = [&](const std::string& uuid) {
    const auto it = archs.find(uuid);
    return arch != 0 && it != archs.end() && it->second == arch;
  };
  const auto best = std::max_element(ok_trials.begin(), ok_trials.end(), [&](const auto& a, const auto& b) {
    return std::pair(same_arch(a.first), a.second) < std::pair(same_arch(b.first), b.second);
  });
  return best->first;
}

}  // namespace

WarmStart load_warm_start(const std::filesystem::path& path, const Space& space,
                          const std::vector<std::string>& exclude_uuids, const std::string& exclude_name, int arch) {
  WarmStart warm;
  switch (kind_of(path)) {
    case WarmFile::other:
      throw Error(
          fmt::format("--warm-start {}: neither a tiletune cache (SQLite) nor a landscape recording "
                      "(`tiletune export --format landscape`)",
                      shown_path(path)));
    case WarmFile::recording: {
      const Landscape landscape = load_landscape(path);
      if (landscape.kernel != space.kernel)
        throw Error(fmt::format("--warm-start {}: the recording is of kernel '{}', the space of '{}'", shown_path(path),
                                landscape.kernel, space.kernel));
      warm.source = fmt::format("{}: {}", shown_path(path), landscape.header_value("device").value_or("?"));
      warm.rankings = rankings_of(landscape);
      break;
    }
    case WarmFile::cache: {
      CacheDb::Options read_only;
      read_only.mode = CacheDb::Mode::read_only;
      const CacheDb db = CacheDb::open(path, read_only);
      const std::map<std::string, int> archs = archs_of(db);
      const std::string uuid = other_device(db, archs, path, space, exclude_uuids, exclude_name, arch);
      const auto other_arch = archs.find(uuid);
      if (const int other = other_arch == archs.end() ? 0 : other_arch->second;
          arch != 0 && other != 0 && other != arch)
        warm.note = fmt::format(
            "--warm-start {}: no device of sm_{} has kernel '{}' there; the ranking comes from {} "
            "(sm_{}), and across architectures another device's best configs were measured to lead "
            "the search astray rather than help (docs/guides/warm-starts.md)",
            shown_path(path), arch, space.kernel, uuid, other);
      const Landscape landscape = landscape_from_cache(db, space.kernel, uuid);
      warm.source = fmt::format("{}: {} ({})", shown_path(path), landscape.header_value("device").value_or("?"), uuid);
      warm.rankings = rankings_of(landscape);
      break;
    }
  }
  return warm;
}

std::vector<std::size_t> warm_start_of(const WarmStart& warm, const Space& space, const std::string& canonical_problem,
                                       const SpaceDomain& domain, std::size_t count) {
  std::vector<std::size_t> points;
  const auto ranking = warm.rankings.find(canonical_problem);
  if (ranking == warm.rankings.end()) return points;
  for (const std::string& params : ranking->second) {
    if (points.size() == count) break;
    const auto point = domain.point_of(space, params);
    if (point && std::find(points.begin(), points.end(), *point) == points.end()) points.push_back(*point);
  }
  return points;
}

}  // namespace tiletune
