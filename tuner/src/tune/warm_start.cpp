// Warm starts (`tune --warm-start DB|RECORDING`): another device's ranking of the same kernel
// and problem, from a result cache or a landscape recording, mapped onto a problem's domain.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fstream>

#include "tiletune/error.hpp"
#include "tiletune/sweep.hpp"

namespace tiletune {

namespace {

enum class WarmFile { cache, recording, other };

/// What a file is by its first bytes: SQLite's header, or a landscape's first line.
WarmFile kind_of(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("--warm-start {}: cannot open it", path.string()));
  std::array<char, 20> head{};
  in.read(head.data(), head.size());
  const std::string text(head.data(), static_cast<std::size_t>(in.gcount()));
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

/// The other device of a cache with the most ok trials of the kernel's current version.
std::string other_device(const CacheDb& db, const std::filesystem::path& path, const Space& space,
                         const std::vector<std::string>& exclude_uuids, const std::string& exclude_name) {
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
                            path.string(), space.kernel));
  const auto best = std::max_element(ok_trials.begin(), ok_trials.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  return best->first;
}

}  // namespace

WarmStart load_warm_start(const std::filesystem::path& path, const Space& space,
                          const std::vector<std::string>& exclude_uuids, const std::string& exclude_name) {
  WarmStart warm;
  switch (kind_of(path)) {
    case WarmFile::other:
      throw Error(fmt::format("--warm-start {}: neither a tiletune cache (SQLite) nor a landscape recording "
                              "(`tiletune export --format landscape`)",
                              path.string()));
    case WarmFile::recording: {
      const Landscape landscape = load_landscape(path);
      if (landscape.kernel != space.kernel)
        throw Error(fmt::format("--warm-start {}: the recording is of kernel '{}', the space of '{}'", path.string(),
                                landscape.kernel, space.kernel));
      warm.source = fmt::format("{}: {}", path.string(), landscape.header_value("device").value_or("?"));
      warm.rankings = rankings_of(landscape);
      break;
    }
    case WarmFile::cache: {
      CacheDb::Options read_only;
      read_only.mode = CacheDb::Mode::read_only;
      const CacheDb db = CacheDb::open(path, read_only);
      const std::string uuid = other_device(db, path, space, exclude_uuids, exclude_name);
      const Landscape landscape = landscape_from_cache(db, space.kernel, uuid);
      warm.source = fmt::format("{}: {} ({})", path.string(), landscape.header_value("device").value_or("?"), uuid);
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
