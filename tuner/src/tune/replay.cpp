// Replays of recorded landscapes, and the bridge from a space to a search domain.
#include "tiletune/replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "tiletune/error.hpp"
#include "tiletune/trial.hpp"

namespace tiletune {

Config SpaceDomain::config(std::size_t point) const {
  const std::vector<std::uint16_t> coords = domain.coords(point);
  Config c;
  c.values.reserve(coords.size());
  for (std::size_t p = 0; p < coords.size(); ++p) c.values.push_back(domain.param_values()[p][coords[p]]);
  return c;
}

std::optional<std::size_t> SpaceDomain::point_of(const Config& config) const {
  const auto& values = domain.param_values();
  if (config.values.size() != values.size()) return std::nullopt;
  std::vector<std::uint16_t> coords(values.size());
  for (std::size_t p = 0; p < values.size(); ++p) {
    const auto at = std::find(values[p].begin(), values[p].end(), config.values[p]);
    if (at == values[p].end()) return std::nullopt;
    coords[p] = static_cast<std::uint16_t>(at - values[p].begin());
  }
  return domain.find(coords);
}

std::optional<std::size_t> SpaceDomain::point_of(const Space& space, const std::string& canonical_params) const {
  const std::optional<Config> config = parse_canonical_config(space, canonical_params);
  return config ? point_of(*config) : std::nullopt;
}

SpaceDomain space_domain(const Space& space, const Problem& problem, const Shard& shard) {
  std::vector<std::string> names;
  std::vector<std::vector<std::int64_t>> values;
  std::vector<std::unordered_map<std::int64_t, std::uint16_t>> index_of(space.params.size());
  for (std::size_t p = 0; p < space.params.size(); ++p) {
    const Axis& axis = space.params[p];
    if (axis.values.size() > std::numeric_limits<std::uint16_t>::max())
      throw Error(fmt::format("{}: param {} has {} values; a search handles at most 65535", space.yaml_path.string(),
                              axis.name, axis.values.size()));
    names.push_back(axis.name);
    values.push_back(axis.values);
    for (std::size_t i = 0; i < axis.values.size(); ++i)
      index_of[p].emplace(axis.values[i], static_cast<std::uint16_t>(i));
  }
  SpaceDomain out;
  std::vector<std::vector<std::uint16_t>> points;
  std::optional<std::size_t> start;
  Enumerator e(space, problem);
  while (auto config = e.next()) {
    if (!in_shard(space, *config, shard)) continue;
    if (points.size() == max_search_configs)
      throw Error(fmt::format("{}: more than {} configs pass the constraints for {}: a search holds at most that many; "
                              "narrow the params or add constraints",
                              space.yaml_path.string(), max_search_configs, format_problem(space, problem)));
    std::vector<std::uint16_t> coords(config->values.size());
    for (std::size_t p = 0; p < coords.size(); ++p) coords[p] = index_of[p].at(config->values[p]);
    if (space.default_config && config->values == *space.default_config) start = points.size();
    points.push_back(std::move(coords));
  }
  out.domain = SearchDomain(std::move(names), std::move(values), std::move(points), start);
  return out;
}

ReplayProblem replay_problem(const Space& space, const Landscape& landscape, const Problem& problem,
                             const Shard& shard) {
  if (landscape.kernel != space.kernel)
    throw Error(fmt::format("replay: the recording is of kernel '{}', the space of '{}'", landscape.kernel,
                            space.kernel));
  ReplayProblem r;
  r.problem = problem;
  r.canonical = canonical_problem(space, problem);
  const LandscapeProblem* recorded = landscape.find_problem(r.canonical);
  if (!recorded) {
    std::string have;
    for (const LandscapeProblem& p : landscape.problems) have += (have.empty() ? "" : ", ") + p.problem;
    throw Error(fmt::format("replay: the recording has no trials for {} (it has: {})", r.canonical, have));
  }
  std::unordered_map<std::string, const LandscapeTrial*> by_params;
  for (const LandscapeTrial& t : recorded->trials) by_params.emplace(t.params, &t);

  // The domain is the space's valid configs that were recorded: a config the recording lacks
  // cannot be answered, and one it has but the space does not allow is not a candidate.
  const SpaceDomain all = space_domain(space, problem, shard);
  std::vector<std::vector<std::uint16_t>> points;
  std::optional<std::size_t> start;
  for (std::size_t i = 0; i < all.domain.size(); ++i) {
    const auto it = by_params.find(canonical_config(space, all.config(i)));
    if (it == by_params.end()) {
      ++r.unrecorded;
      continue;
    }
    if (all.domain.start() == i) start = points.size();
    const auto c = all.domain.coords(i);
    points.emplace_back(c.begin(), c.end());
    r.outcomes.push_back(*it->second);
  }
  if (points.empty())
    throw Error(fmt::format("replay: none of the {} recorded trials of {} is a config of {} (were they recorded "
                            "with other params?)",
                            recorded->trials.size(), r.canonical, space.yaml_path.string()));
  r.space.domain = SearchDomain(all.domain.param_names(), all.domain.param_values(), std::move(points), start);
  for (std::size_t i = 0; i < r.outcomes.size(); ++i) {
    const LandscapeTrial& t = r.outcomes[i];
    r.exhaustive_cost_seconds += (t.compile_ms + t.measure_ms) / 1000;
    if (t.status == TrialStatus::ok && (!r.optimum || *t.time_ms < r.optimum_ms)) {
      r.optimum = i;
      r.optimum_ms = *t.time_ms;
    }
  }
  return r;
}

Evaluation recorded_evaluation(const ReplayProblem& problem, std::size_t point) {
  const LandscapeTrial& t = problem.outcomes.at(point);
  Evaluation e;
  e.point = point;
  if (t.status == TrialStatus::ok) e.time = t.time_ms;
  e.cost_seconds = (t.compile_ms + t.measure_ms) / 1000;
  return e;
}

SearchTrace replay(const ReplayProblem& problem, SearchStrategy& strategy, const SearchRun& run) {
  SimulatedEvaluator evaluator([&](std::size_t point) { return recorded_evaluation(problem, point); });
  return run_search(problem.space.domain, strategy, evaluator, run);
}

std::optional<std::size_t> evaluations_to_reach(const SearchTrace& trace, double optimum_ms, double fraction) {
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < trace.evaluations.size(); ++i) {
    if (trace.evaluations[i].time) best = std::min(best, *trace.evaluations[i].time);
    if (optimum_ms / best >= fraction) return i + 1;
  }
  return std::nullopt;
}

}  // namespace tiletune
