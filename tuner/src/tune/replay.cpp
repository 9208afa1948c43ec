// Replays of recorded landscapes over the domain a sweep searches (space_domain.cpp).
#include "tiletune/replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "tiletune/error.hpp"
#include "tiletune/trial.hpp"

namespace tiletune {

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
  // The domain is the sweep's: every valid config. A recorded trial that is no point of it (a
  // config the constraints or the shard leave out, or one of other params) is not a candidate.
  r.space = space_domain(space, problem, shard);
  for (const LandscapeTrial& t : recorded->trials) {
    const std::optional<std::size_t> point = r.space.point_of(space, t.params);
    if (!point || !r.outcomes.emplace(*point, t).second) continue;
    r.exhaustive_cost_seconds += (t.compile_ms + t.measure_ms) / 1000;
    if (t.status == TrialStatus::ok && (!r.optimum || *t.time_ms < r.optimum_ms ||
                                        (*t.time_ms == r.optimum_ms && *point < *r.optimum))) {
      r.optimum = *point;
      r.optimum_ms = *t.time_ms;
    }
  }
  if (r.outcomes.empty())
    throw Error(fmt::format("replay: none of the {} recorded trials of {} is a config of {} (were they recorded "
                            "with other params?)",
                            recorded->trials.size(), r.canonical, space.yaml_path.string()));
  const std::uint64_t valid = r.space.domain.size();
  r.unrecorded = valid > r.outcomes.size() ? valid - r.outcomes.size() : 0;
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
  static const LandscapeTrial unrecorded{.status = TrialStatus::pruned, .detail = "not in the recording"};
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

std::uint64_t free_unrecorded_answers(const ReplayProblem& problem) {
  return std::max<std::uint64_t>(1000, 10 * problem.outcomes.size());
}

namespace {

/// A replay's evaluator: the recording's outcomes on a simulated clock, and a config the
/// recording lacks recalled at once as a failure (free, like a config a constraint leaves out:
/// the recording, not the search, lacks it), up to free_unrecorded_answers; past that such a
/// config is evaluated as a failure costing nothing, so a search over a sparse recording still
/// ends within its budget.
class ReplayEvaluator final : public Evaluator {
 public:
  explicit ReplayEvaluator(const ReplayProblem& problem)
      : problem_(problem),
        free_left_(free_unrecorded_answers(problem)),
        simulated_([&problem](std::size_t point) { return recorded_evaluation(problem, point); }) {}

  std::optional<Evaluation> recall(std::size_t point) override {
    if (free_left_ == 0 || problem_.outcomes.contains(point)) return std::nullopt;
    --free_left_;
    return recorded_evaluation(problem_, point);
  }
  void submit(std::size_t point) override { simulated_.submit(point); }
  Evaluation next() override { return simulated_.next(); }
  void cancel() override { simulated_.cancel(); }
  double elapsed_seconds() const override { return simulated_.elapsed_seconds(); }

 private:
  const ReplayProblem& problem_;
  std::uint64_t free_left_;
  SimulatedEvaluator simulated_;
};

}  // namespace

SearchTrace replay(const ReplayProblem& problem, SearchStrategy& strategy, const SearchRun& run) {
  ReplayEvaluator evaluator(problem);
  return run_search(problem.space.domain, strategy, evaluator, run);
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
