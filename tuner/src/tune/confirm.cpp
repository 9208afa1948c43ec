// The confirmation of a problem's finalists on a pool (device_pool.hpp): the top configs after
// the search, measured again on every device in interleaved rounds, the devices at once, and
// recorded per device as its median round.
#include <algorithm>
#include <map>

#include "tune/device_pool.hpp"
#include "tiletune/trial.hpp"

namespace tiletune::sweep_detail {

namespace {

/// Each config of the problem that any device of the pool measured ok, scored by the best of
/// them (ok trials of the current kernel version, this run's and earlier ones), and the
/// standing answers of the pool's devices (CacheDb::standing_answer).
struct PoolScores {
  std::vector<ScoredPoint> scored;
  std::vector<std::string> standing;
};

PoolScores pool_scores(const PoolStages& stages, const DevicePool& pool, const CacheDb& db, const ProblemWork& work) {
  PoolScores out;
  std::map<std::string, ScoredPoint> best;  // by params
  for (std::size_t d = 0; d < pool.size(); ++d) {
    const std::vector<TrialRow> rows = db.trials(current_trials(stages.space, pool.device(d).uuid, work.canonical));
    if (!rows.empty())
      if (std::string s = db.standing_answer(rows.front().trial.key); !s.empty()) out.standing.push_back(std::move(s));
    for (const TrialRow& row : rows) {
      const std::optional<double> score = trial_score(stages.objective, row.trial);
      if (!score) continue;
      const std::string& params = row.trial.key.params;
      if (const auto it = best.find(params); it != best.end()) {
        it->second.score = std::min(it->second.score, *score);
      } else if (const auto point = work.space.point_of(stages.space, params)) {
        best.emplace(params, ScoredPoint{*score, params, *point});
      }
    }
  }
  for (auto& [params, s] : best) out.scored.push_back(std::move(s));
  return out;
}

}  // namespace

std::vector<std::size_t> finalist_points(const PoolStages& stages, const DevicePool& pool, const CacheDb& db,
                                         const ProblemWork& work, std::size_t count) {
  if (count == 0) return {};
  return top_points(pool_scores(stages, pool, db, work).scored, count);  // the rule replay_sweep follows too
}

std::vector<std::size_t> tie_candidates(const PoolStages& stages, const DevicePool& pool, const CacheDb& db,
                                        const ProblemWork& work, std::size_t count) {
  if (stages.objective != Objective::time) return {};  // tie sets are of times (answers.hpp)
  PoolScores scores = pool_scores(stages, pool, db, work);
  return tie_candidate_points(std::move(scores.scored), count, scores.standing);
}

namespace {

/// One finalist's rounds on one device: each trial's result, and the row it makes.
struct Rounds {
  std::size_t device = 0;  ///< index into the pool
  const PendingTrial* planned = nullptr;
  std::vector<PoolResult> results;
  std::vector<TrialRecord> records;
};

/// The round a finalist is recorded as: its first failed one, else the median by the objective.
std::size_t chosen_round(const Rounds& r, Objective objective) {
  std::vector<std::pair<double, std::size_t>> scored;
  for (std::size_t i = 0; i < r.records.size(); ++i) {
    const std::optional<double> score = trial_score(objective, r.records[i]);
    if (!score) return i;
    scored.emplace_back(*score, i);
  }
  std::sort(scored.begin(), scored.end());
  return scored[(scored.size() - 1) / 2].second;  // the lower median of an even count
}

}  // namespace

std::uint64_t confirm_finalists(DevicePool& pool, const PoolStages& stages, const ProblemWork& work,
                                std::size_t problem_index, const std::vector<std::size_t>& points, int rounds) {
  if (points.empty() || rounds <= 0) return 0;
  std::vector<PendingTrial> planned;
  for (const std::size_t point : points)
    planned.push_back(plan_trial(stages.space, stages.limits, stages.compile, work, point));
  // Every device's rounds are queued at once: each device measures its own in this order while
  // the others measure theirs.
  std::vector<Rounds> finalists;                                               // device-major
  std::vector<std::pair<std::size_t, std::shared_future<PoolResult>>> queued;  // index into finalists
  for (const std::size_t d : pool.active()) {
    const std::size_t first = finalists.size();
    for (const PendingTrial& p : planned) finalists.push_back(Rounds{d, &p, {}, {}});
    for (int round = 0; round < rounds; ++round)
      for (std::size_t k = 0; k < planned.size(); ++k) {
        const std::size_t f = first + (k + static_cast<std::size_t>(round)) % planned.size();
        queued.emplace_back(f, pool.run(work, problem_index, *finalists[f].planned, d));
      }
  }
  std::uint64_t measured = 0;
  for (auto& [f, result] : queued) {
    PoolResult r = result.get();  // rethrows PoolLost, or the reference's failure
    if (r.skipped) continue;      // its device left the pool meanwhile
    Rounds& rounds_of = finalists[f];
    r.trial.finalist = true;
    rounds_of.records.push_back(
        stages.recorders.at(r.device)->make(work.canonical, rounds_of.planned->launch, r.trial));
    rounds_of.results.push_back(std::move(r));
    ++measured;
  }
  for (Rounds& f : finalists) {
    if (f.results.empty()) continue;
    PoolResult& chosen = f.results[chosen_round(f, stages.objective)];
    (void)record_pool_result(stages, work, *f.planned, chosen);
  }
  return measured;
}

Confirmation confirm_problem(DevicePool& pool, const PoolStages& stages, const CacheDb& db, const ProblemWork& work,
                             std::size_t problem_index, const ConfirmPlan& plan, std::uint64_t max_trials) {
  // Each device confirms at most max_trials; they measure at once.
  const std::size_t devices = std::max<std::size_t>(1, pool.active().size());
  return run_confirmation(
      plan, max_trials * devices, devices, [&] { return finalist_points(stages, pool, db, work, plan.finalists); },
      [&](const std::vector<std::size_t>& points) {
        return confirm_finalists(pool, stages, work, problem_index, points, plan.rounds);
      },
      [&] { return tie_candidates(stages, pool, db, work, plan.tie_candidates); });
}

}  // namespace tiletune::sweep_detail
