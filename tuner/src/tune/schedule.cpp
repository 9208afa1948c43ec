// The schedule of a sweep (tiletune/sweep.hpp): `auto` resolved once, each problem's budget,
// seed and warm start, and the confirmation's rule and passes. run_sweep, the pool sweep and
// replay_sweep all take them from here, so that a replay simulates the sweep it replays.
#include <algorithm>
#include <cmath>
#include <set>

#include "tiletune/sweep.hpp"

namespace tiletune {

namespace {

// Otherwise auto measures this share of each problem's configs, at least kAutoMinTrials and at
// most kAutoMaxTrials, unless --budget says otherwise. The cap: on the published landscapes,
// the H200 recordings and synthetic domains of 10^5 and 10^7 configs the forest reaches 95 % of
// the optimum within 150 evaluations (median) and, where it gets there, 99 % within about 200
// (bench/results/2026-12-02-devvm-strategies-any-size.md); 10 % of 10^7 configs would be a
// million trials.
constexpr double kAutoFraction = 0.10;
constexpr std::uint64_t kAutoMinTrials = 30;
constexpr std::uint64_t kAutoMaxTrials = 500;

bool budgeted(const SearchBudget& b) { return b.evaluations || b.fraction || b.seconds; }

/// Best score first; equal scores by canonical params (the same in a sweep and a replay).
void sort_by_score(std::vector<ScoredPoint>& scored) {
  std::sort(scored.begin(), scored.end(), [](const ScoredPoint& a, const ScoredPoint& b) {
    return a.score != b.score ? a.score < b.score : a.params < b.params;
  });
}

}  // namespace

double estimated_sweep_seconds(const DomainSize& configs, std::size_t devices) {
  const double count = double(configs.count) * (configs.exact ? 1.0 : 1.0 + configs.relative_error);
  return count * auto_seconds_per_trial / double(std::max<std::size_t>(devices, 1));
}

StrategyChoice choose_strategy(const std::string& requested, const SearchBudget& budget, const DomainSize& configs,
                               std::size_t devices) {
  StrategyChoice c{requested.empty() ? std::string("auto") : requested, budget, false};
  if (c.strategy != "auto") return c;
  // A budget asks for a search that stops early: exhaustive only when there is none and
  // measuring everything is short.
  if (!budgeted(budget) && estimated_sweep_seconds(configs, devices) <= auto_exhaustive_seconds) {
    c.strategy = "exhaustive";
    return c;
  }
  c.strategy = auto_large_space_strategy;
  if (!budgeted(budget)) {
    c.budget.fraction = kAutoFraction;
    c.default_budget = true;
  }
  return c;
}

std::optional<std::uint64_t> choice_evaluations(const StrategyChoice& choice, std::uint64_t configs) {
  std::optional<std::uint64_t> limit = budget_evaluations(choice.budget, configs);
  if (limit && choice.default_budget)
    limit = std::clamp<std::uint64_t>(*limit, std::min<std::uint64_t>(configs, kAutoMinTrials), kAutoMaxTrials);
  return limit;
}

DomainSize add_sizes(const DomainSize& a, const DomainSize& b) {
  DomainSize s;
  s.count = a.count + b.count;
  s.exact = a.exact && b.exact;
  const double error = double(a.count) * a.relative_error + double(b.count) * b.relative_error;
  s.relative_error = s.count > 0 ? error / double(s.count) : 0;
  return s;
}

SweepSchedule sweep_schedule(const std::string& strategy, const SearchBudget& budget, std::uint64_t seed,
                             const ConfirmPlan& confirm, std::size_t problems, const DomainSize& configs,
                             std::size_t devices) {
  SweepSchedule s;
  s.estimated_seconds = estimated_sweep_seconds(configs, devices);
  s.choice = choose_strategy(strategy, budget, configs, devices);
  s.seed = seed;
  s.problems = problems;
  s.confirm = confirm;
  return s;
}

ProblemSchedule problem_schedule(const SweepSchedule& schedule, std::size_t p, std::uint64_t domain_size,
                                 double elapsed_seconds) {
  ProblemSchedule ps;
  ps.strategy = schedule.choice.strategy;
  ps.seed = schedule.seed + p;
  ps.budget.evaluations = choice_evaluations(schedule.choice, domain_size);  // the share counted in evaluations
  if (const auto total = schedule.choice.budget.seconds) {
    const std::size_t left = schedule.problems > p ? schedule.problems - p : 1;
    ps.budget.seconds = std::max(0.0, (*total - elapsed_seconds) / double(left));
  }
  return ps;
}

std::unique_ptr<SearchStrategy> scheduled_strategy(const ProblemSchedule& schedule, const SearchDomain& domain,
                                                   std::size_t lag) {
  std::unique_ptr<SearchStrategy> strategy = make_strategy(schedule.strategy, domain, schedule.seed, lag);
  if (!schedule.warm_start.empty()) strategy->prefer(schedule.warm_start);
  return strategy;
}

bool confirms_after_search(const SweepSchedule& schedule, std::uint64_t evaluated, double elapsed_seconds) {
  const auto& total = schedule.choice.budget.seconds;
  return evaluated > 0 && schedule.confirm.any() && !(total && elapsed_seconds >= *total);
}

std::uint64_t confirmation_limit(const ConfirmPlan& plan, std::uint64_t evaluated) {
  const std::uint64_t pass = plan.finalists * static_cast<std::uint64_t>(std::max(plan.rounds, 0));
  return std::max(pass, evaluated);
}

std::vector<std::size_t> top_points(std::vector<ScoredPoint> scored, std::size_t count) {
  sort_by_score(scored);
  std::vector<std::size_t> points;
  for (std::size_t i = 0; i < std::min(count, scored.size()); ++i) points.push_back(scored[i].point);
  return points;
}

namespace {

/// The tie pass of run_confirmation: the candidates, as many as max_trials allows, measured
/// together; none when the last pass measured every one of them together already.
void confirm_tie_candidates(Confirmation& c, const ConfirmPlan& plan, std::uint64_t max_trials, std::size_t devices,
                            const std::vector<std::size_t>& last_pass,
                            const std::function<std::vector<std::size_t>()>& ties,
                            const std::function<std::uint64_t(const std::vector<std::size_t>&)>& measure) {
  if (!ties || plan.tie_candidates < 2) return;
  std::vector<std::size_t> points = ties();
  const std::uint64_t per_point = static_cast<std::uint64_t>(plan.rounds) * std::max<std::size_t>(devices, 1);
  points.resize(std::min<std::uint64_t>(points.size(), max_trials / per_point));
  const bool measured_together = std::all_of(points.begin(), points.end(), [&](std::size_t p) {
    return std::find(last_pass.begin(), last_pass.end(), p) != last_pass.end();
  });
  if (points.size() < 2 || measured_together) return;
  c.trials += measure(points);
  c.tie_candidates = points.size();
  for (const std::size_t p : points)
    if (std::find(c.confirmed.begin(), c.confirmed.end(), p) == c.confirmed.end()) c.confirmed.push_back(p);
  c.finalists = c.confirmed.size();
}

}  // namespace

std::vector<std::size_t> tie_candidate_points(std::vector<ScoredPoint> scored, std::size_t count,
                                              const std::vector<std::string>& standing) {
  if (scored.empty() || count < 2) return {};
  sort_by_score(scored);
  const double bound = scored.front().score * (1.0 + kTieCandidateWindow);
  std::vector<std::size_t> points{scored.front().point};
  for (const ScoredPoint& s : scored)  // the standing answers first: a cut to the budget keeps them
    if (&s != &scored.front() && points.size() < count &&
        std::find(standing.begin(), standing.end(), s.params) != standing.end())
      points.push_back(s.point);
  for (const ScoredPoint& s : scored) {
    if (points.size() >= count || s.score > bound) break;
    if (std::find(points.begin(), points.end(), s.point) == points.end()) points.push_back(s.point);
  }
  return points.size() < 2 ? std::vector<std::size_t>{} : points;
}

Confirmation run_confirmation(const ConfirmPlan& plan, std::uint64_t max_trials, std::size_t devices,
                              const std::function<std::vector<std::size_t>()>& finalists,
                              const std::function<std::uint64_t(const std::vector<std::size_t>&)>& measure,
                              const std::function<std::vector<std::size_t>()>& ties) {
  Confirmation c;
  if (!plan.any()) return c;
  std::set<std::size_t> confirmed;
  std::vector<std::size_t> last_pass;
  for (int pass = 0; pass < kMaxConfirmPasses; ++pass) {
    std::vector<std::size_t> points = finalists();
    const bool all_confirmed =
        std::all_of(points.begin(), points.end(), [&](std::size_t p) { return confirmed.contains(p); });
    if (points.empty() || all_confirmed) break;
    if (c.trials + points.size() * static_cast<std::uint64_t>(plan.rounds) * devices > max_trials) break;
    c.trials += measure(points);
    for (const std::size_t p : points)
      if (confirmed.insert(p).second) c.confirmed.push_back(p);
    last_pass = std::move(points);
  }
  c.finalists = confirmed.size();
  confirm_tie_candidates(c, plan, max_trials, devices, last_pass, ties, measure);
  return c;
}

}  // namespace tiletune
