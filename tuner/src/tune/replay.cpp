// Replays of recorded landscapes over the domain a sweep searches (space_domain.cpp).
#include "tiletune/replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "common/random_words.hpp"
#include "tiletune/error.hpp"
#include "tiletune/physics_guard.hpp"
#include "tiletune/trial.hpp"

namespace tiletune {

namespace {

/// A replay's domain: the points of the sweep's domain that the recording has, under the
/// sweep's ids. A sample is the sweep's own sample of the same random word when that one is
/// recorded (a replay of a complete recording draws exactly what the sweep drew), else the first
/// recorded of a few more draws, else a uniform pick of the recorded points (a sparse recording
/// of a large space).
class RecordedSource final : public DomainSource {
 public:
  RecordedSource(SearchDomain sweep, std::vector<std::size_t> recorded)
      : sweep_(std::move(sweep)), recorded_(std::move(recorded)) {}

  DomainSize size() const override { return {recorded_.size(), true, 0}; }

  std::vector<std::uint16_t> coords(std::size_t point) const override {
    if (!is_recorded(point))
      throw Error(fmt::format("replay domain: id {} is not a recorded point ({} are)", point, recorded_.size()));
    return sweep_.coords(point);
  }

  std::optional<std::size_t> find(std::span<const std::uint16_t> coords) const override {
    const std::optional<std::size_t> point = sweep_.find(coords);
    return point && is_recorded(*point) ? point : std::nullopt;
  }

  std::optional<std::size_t> sample(std::uint64_t random) const override {
    if (recorded_.empty()) return std::nullopt;
    std::uint64_t state = random;
    for (int draw = 0; draw < kDraws; ++draw) {
      const std::optional<std::size_t> point = sweep_.sample(draw == 0 ? random : random_words::splitmix64(state));
      if (point && is_recorded(*point)) return point;
    }
    return recorded_[random_words::below(random_words::splitmix64(state), recorded_.size())];
  }

  std::optional<std::size_t> next(std::optional<std::size_t> after) const override {
    const auto it = after ? std::upper_bound(recorded_.begin(), recorded_.end(), *after) : recorded_.begin();
    if (it == recorded_.end()) return std::nullopt;
    return *it;
  }

 private:
  static constexpr int kDraws = 16;

  [[nodiscard]] bool is_recorded(std::size_t point) const {
    return std::binary_search(recorded_.begin(), recorded_.end(), point);
  }

  SearchDomain sweep_;
  std::vector<std::size_t> recorded_;  ///< sorted
};

/// A recorded trial as the physics guard sees it: an ok one faster than the recording's device
/// can run it becomes suspect (with the guard's detail); the rest as recorded.
LandscapeTrial held_against_physics(const Space& space, const Problem& problem, const Config& config,
                                    const CeilingInputs& device, LandscapeTrial t) {
  if (t.status != TrialStatus::ok || !t.time_ms || !(*t.time_ms > 0)) return t;
  try {
    const RunMetrics metrics = evaluate_metrics(space, problem, config);
    const double seconds = *t.time_ms * 1e-3;
    const auto rate = [&](std::optional<double> amount) {
      return amount ? std::optional(*amount / seconds / 1e9) : std::nullopt;
    };
    const Ceilings ceilings = trial_ceilings(space, problem, config, device);
    if (auto detail = suspect_detail(space, ceilings, rate(metrics.bytes), rate(metrics.flops))) {
      t.status = TrialStatus::suspect;
      t.detail = std::move(*detail);
    }
  } catch (const EvalError&) {
    // No metrics for this config: nothing to hold it against.
  }
  return t;
}

}  // namespace

ReplayProblem replay_problem(const Space& space, const Landscape& landscape, const Problem& problem,
                             const Shard& shard) {
  if (landscape.kernel != space.kernel)
    throw Error(
        fmt::format("replay: the recording is of kernel '{}', the space of '{}'", landscape.kernel, space.kernel));
  ReplayProblem r;
  r.problem = problem;
  r.canonical = canonical_problem(space, problem);
  const LandscapeProblem* recorded = landscape.find_problem(r.canonical);
  if (!recorded) {
    std::string have;
    for (const LandscapeProblem& p : landscape.problems) have += (have.empty() ? "" : ", ") + p.problem;
    throw Error(fmt::format("replay: the recording has no trials for {} (it has: {})", r.canonical, have));
  }
  // The domain is the sweep's valid configs that the recording has, under the sweep's ids: a
  // config the recording lacks cannot be answered, and a recorded trial that is no point of the
  // sweep's domain (the constraints or the shard leave it out, or other params) is no candidate.
  r.space = space_domain(space, problem, shard);
  const CeilingInputs device = ceiling_inputs(landscape);
  for (const LandscapeTrial& recorded_trial : recorded->trials) {
    const std::optional<std::size_t> point = r.space.point_of(space, recorded_trial.params);
    if (!point) continue;
    const LandscapeTrial t = held_against_physics(space, problem, r.space.config(*point), device, recorded_trial);
    if (!r.outcomes.emplace(*point, t).second) continue;
    if (t.status == TrialStatus::suspect) r.suspects.push_back(*point);
    r.exhaustive_cost_seconds += (t.compile_ms + t.measure_ms) / 1000;
    if (t.status == TrialStatus::ok &&
        (!r.optimum || *t.time_ms < r.optimum_ms || (*t.time_ms == r.optimum_ms && *point < *r.optimum))) {
      r.optimum = *point;
      r.optimum_ms = *t.time_ms;
    }
  }
  if (r.outcomes.empty())
    throw Error(
        fmt::format("replay: none of the {} recorded trials of {} is a config of {} (were they recorded "
                    "with other params?)",
                    recorded->trials.size(), r.canonical, space.yaml_path.string()));
  const std::uint64_t valid = r.space.domain.size();
  r.unrecorded = valid > r.outcomes.size() ? valid - r.outcomes.size() : 0;
  const SearchDomain& sweep = r.space.domain;
  r.sweep_size = sweep.size_info();
  const std::optional<std::size_t> start =
      sweep.start() && r.outcomes.contains(*sweep.start()) ? sweep.start() : std::nullopt;
  r.space.domain = SearchDomain::from_source(sweep.param_names(), sweep.param_values(),
                                             std::make_shared<RecordedSource>(sweep, recorded_points(r)), start);
  return r;
}

Evaluation recorded_evaluation(const ReplayProblem& problem, std::size_t point) {
  Evaluation e;
  e.point = point;
  const auto recorded = problem.outcomes.find(point);
  if (recorded == problem.outcomes.end()) return e;  // unrecorded: a failure costing nothing
  const LandscapeTrial& t = recorded->second;
  if (t.status == TrialStatus::ok) e.time = t.time_ms;
  e.cost_seconds = (t.compile_ms + t.measure_ms) / 1000;
  return e;
}

const LandscapeTrial& recorded_trial(const ReplayProblem& problem, std::size_t point) {
  static const LandscapeTrial unrecorded = [] {
    LandscapeTrial t;
    t.status = TrialStatus::pruned;
    t.detail = "not in the recording";
    return t;
  }();
  const auto recorded = problem.outcomes.find(point);
  return recorded == problem.outcomes.end() ? unrecorded : recorded->second;
}

std::vector<std::size_t> recorded_points(const ReplayProblem& problem) {
  std::vector<std::size_t> points;
  points.reserve(problem.outcomes.size());
  for (const auto& [point, trial] : problem.outcomes) points.push_back(point);
  std::sort(points.begin(), points.end());
  return points;
}

std::unique_ptr<Evaluator> replay_evaluator(const ReplayProblem& problem) {
  return std::make_unique<SimulatedEvaluator>(
      [&problem](std::size_t point) { return recorded_evaluation(problem, point); });
}

SearchTrace replay(const ReplayProblem& problem, SearchStrategy& strategy, const SearchRun& run) {
  const std::unique_ptr<Evaluator> evaluator = replay_evaluator(problem);
  return run_search(problem.space.domain, strategy, *evaluator, run);
}

std::optional<std::size_t> evaluations_to_reach(const SearchTrace& trace, double optimum_ms, double fraction) {
  double best = std::numeric_limits<double>::infinity();
  std::size_t evaluated = 0;
  for (const Evaluation& e : trace.evaluations) {
    if (e.recalled) continue;  // known without measuring: free
    ++evaluated;
    if (e.time) best = std::min(best, *e.time);
    if (optimum_ms / best >= fraction) return evaluated;
  }
  return std::nullopt;
}

}  // namespace tiletune
