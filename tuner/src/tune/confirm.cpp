// The confirmation of a problem's finalists on one device (sweep_stages.hpp): the top configs
// after the search, measured again in interleaved rounds and recorded as their median round.
#include <algorithm>
#include <unordered_map>

#include "tune/sweep_stages.hpp"
#include "tiletune/trial.hpp"

namespace tiletune::sweep_detail {

std::vector<std::size_t> finalist_points(const SweepStages& stages, const CacheDb& db, const std::string& device_uuid,
                                         const ProblemWork& work, std::size_t count) {
  if (count == 0) return {};
  std::vector<ScoredPoint> scored;
  for (const TrialRow& row : db.trials(current_trials(stages.space, device_uuid, work.canonical))) {
    const std::optional<double> score = trial_score(stages.objective, row.trial);
    if (!score) continue;
    if (const auto point = work.space.point_of(stages.space, row.trial.key.params))
      scored.push_back({*score, row.trial.key.params, *point});
  }
  return top_points(std::move(scored), count);  // the rule replay_sweep follows too
}

namespace {

/// One finalist's rounds: each trial and the record it makes.
struct Rounds {
  PendingTrial planned;
  std::vector<SweepTrial> trials;
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

std::uint64_t confirm_finalists(const SweepStages& stages, const ProblemWork& work, std::size_t problem_index,
                                const std::vector<std::size_t>& points, int rounds) {
  if (points.empty() || rounds <= 0) return 0;
  std::vector<Rounds> finalists;
  for (const std::size_t point : points)
    finalists.push_back(Rounds{plan_trial(stages.space, stages.limits, stages.compile, work, point), {}, {}});
  const DeviceStages device{stages.space, stages.limits, stages.compile, stages.worker};
  std::uint64_t measured = 0;
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t k = 0; k < finalists.size(); ++k) {
      Rounds& f = finalists[(k + static_cast<std::size_t>(round)) % finalists.size()];
      SweepTrial& t = f.trials.emplace_back();
      t.problem = problem_index;
      t.config = f.planned.config;
      t.finalist = true;
      (void)measure_trial(device, work, f.planned, t);  // compiled already: no wait
      f.records.push_back(stages.recorder.make(work.canonical, f.planned.launch, t));
      ++measured;
    }
  }
  for (Rounds& f : finalists) {
    SweepTrial& t = f.trials[chosen_round(f, stages.objective)];
    (void)stages.recorder.record(work.canonical, f.planned.launch, t);
    if (stages.on_trial) stages.on_trial(t);
  }
  return measured;
}

Confirmation confirm_problem(const SweepStages& stages, const CacheDb& db, const std::string& device_uuid,
                             const ProblemWork& work, std::size_t problem_index, std::size_t finalists, int rounds,
                             std::uint64_t max_trials) {
  return run_confirmation(
      ConfirmPlan{finalists, rounds}, max_trials,
      [&] { return finalist_points(stages, db, device_uuid, work, finalists); },
      [&](const std::vector<std::size_t>& points) { return confirm_finalists(stages, work, problem_index, points, rounds); });
}

}  // namespace tiletune::sweep_detail
