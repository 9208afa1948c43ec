// replay_sweep: a sweep's schedule (tiletune/sweep.hpp) run against a recording. The search of
// each problem is the one loop (run_search) on recorded outcomes; the finalists are confirmed by
// the sweep's rule on the simulated clock, so that a replay with `--confirm`, `auto` and a time
// budget does what the sweep it replays did.
#include "tiletune/sweep.hpp"

#include "tiletune/physics_guard.hpp"

namespace tiletune {

namespace {

/// What a problem's search evaluated, scored by recorded time: the finalists and tie candidates
/// are chosen from it by the sweep's rules (a recording keeps one time per config, so a
/// confirmation changes none of them).
std::vector<ScoredPoint> replayed_scores(const Space& space, const ReplayedProblem& r) {
  std::vector<ScoredPoint> scored;
  for (const Evaluation& e : r.trace.evaluations)
    if (e.time) scored.push_back({*e.time, canonical_config(space, r.recording.space.config(e.point)), e.point});
  return scored;
}

/// Confirms a replayed problem's finalists: each re-evaluated plan.rounds times at its recorded
/// measure cost (compiled already, as on the GPU). Returns the simulated seconds it took.
double replay_confirmation(const Space& space, const ConfirmPlan& plan, ReplayedProblem& r) {
  double cost = 0;
  r.confirmation = run_confirmation(
      plan, confirmation_limit(plan, r.trace.evaluated), 1,
      [&] { return top_points(replayed_scores(space, r), plan.finalists); },
      [&](const std::vector<std::size_t>& points) {
        for (const std::size_t point : points)
          cost += double(plan.rounds) * recorded_trial(r.recording, point).measure_ms / 1000;
        return points.size() * static_cast<std::uint64_t>(plan.rounds);
      },
      // A recording has no answer history: no standing answer among the candidates.
      [&] { return tie_candidate_points(replayed_scores(space, r), plan.tie_candidates); });
  r.confirmation_cost_seconds = cost;
  return cost;
}

}  // namespace

ReplayedSweep replay_sweep(const Space& space, const Landscape& landscape, const std::vector<Problem>& problems,
                           const ReplaySweepOptions& options) {
  ReplayedSweep out;
  std::vector<ReplayProblem> recordings;
  DomainSize configs{0, true, 0};  // what a sweep of a fresh cache would measure: every valid config
  for (const Problem& p : problems) {
    recordings.push_back(replay_problem(space, landscape, p, options.shard));
    configs = add_sizes(configs, recordings.back().sweep_size);
  }
  out.schedule =
      sweep_schedule(options.strategy, options.budget, options.seed, options.confirm, problems.size(), configs);
  double clock = 0;  // the simulated sweep's: every search's and confirmation's recorded cost
  for (std::size_t p = 0; p < recordings.size(); ++p) {
    ReplayedProblem& r = out.problems.emplace_back();
    r.recording = std::move(recordings[p]);
    const SearchDomain& domain = r.recording.space.domain;
    r.schedule = problem_schedule(out.schedule, p, r.recording.sweep_size.count, clock);
    if (options.warm_start)
      r.schedule.warm_start = warm_start_of(*options.warm_start, space, r.recording.canonical, r.recording.space);
    const std::unique_ptr<SearchStrategy> strategy = scheduled_strategy(r.schedule, domain);
    SearchRun run = sweep_search_run(domain, *strategy, r.schedule.budget, options.compile_threads);
    if (options.in_flight) run.in_flight = options.in_flight;
    if (options.good_enough)
      run.good_enough = good_enough_check(
          space, r.recording.problem, r.recording.space, [device = ceiling_inputs(landscape)] { return device; },
          *options.good_enough);
    r.in_flight = run.in_flight;
    r.trace = replay(r.recording, *strategy, run);
    clock += r.trace.cost_seconds;
    if (confirms_after_search(out.schedule, r.trace.evaluated, clock))
      clock += replay_confirmation(space, out.schedule.confirm, r);
  }
  out.clock_seconds = clock;
  return out;
}

}  // namespace tiletune
