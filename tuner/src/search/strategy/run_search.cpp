// run_search: the driver loop shared by a GPU sweep and a replay. It asks the strategy for a
// batch, evaluates the points one by one, and checks the budget before each evaluation, so a
// budget is never overrun by more than the cost of the evaluation that crossed it.
#include <fmt/format.h>

#include <cmath>

#include "search/strategy/common.hpp"
#include "tiletune/error.hpp"
#include "tiletune/strategy.hpp"

namespace tiletune {

std::optional<std::uint64_t> budget_evaluations(const SearchBudget& budget, std::size_t domain_size) {
  std::optional<std::uint64_t> limit = budget.evaluations;
  if (budget.fraction) {
    // The epsilon keeps 0.07 * 100 (= 7.000000000000001) from becoming 8.
    const double share = std::ceil(*budget.fraction * static_cast<double>(domain_size) - 1e-9);
    const auto count = static_cast<std::uint64_t>(std::max(share, 0.0));
    limit = limit ? std::min(*limit, count) : count;
  }
  return limit;
}

SearchTrace run_search(const SearchDomain& domain, SearchStrategy& strategy,
                       const std::function<Evaluation(std::size_t)>& evaluate, const SearchBudget& budget,
                       std::size_t batch) {
  if (batch == 0) throw Error("run_search: the batch size must be at least 1");
  if (budget.fraction && !(*budget.fraction > 0 && *budget.fraction <= 1))
    throw Error(fmt::format("run_search: budget fraction {} is not in (0, 1]", *budget.fraction));
  if (budget.seconds && !(*budget.seconds >= 0))
    throw Error(fmt::format("run_search: budget of {} seconds is not a time", *budget.seconds));

  const std::optional<std::uint64_t> max_evaluations = budget_evaluations(budget, domain.size());
  const auto budget_left = [&](const SearchTrace& t) {
    if (max_evaluations && t.evaluations.size() >= *max_evaluations) return false;
    if (budget.seconds && t.cost_seconds >= *budget.seconds) return false;
    return true;
  };

  SearchTrace trace;
  std::vector<std::uint8_t> proposed(domain.size(), 0);
  for (;;) {
    const std::vector<std::size_t> points = strategy.propose(batch);
    // Every proposed point is observed before the next propose, so none is outstanding here.
    if (points.empty()) break;
    for (const std::size_t point : points) {
      if (point >= domain.size())
        throw Error(fmt::format("run_search: strategy '{}' proposed point {} outside the domain of {} points",
                                strategy.name(), point, domain.size()));
      if (proposed[point])
        throw Error(fmt::format("run_search: strategy '{}' proposed point {} ({}) twice", strategy.name(), point,
                                strategy_detail::describe_point(domain, point)));
      proposed[point] = 1;
    }
    for (const std::size_t point : points) {
      if (!budget_left(trace)) {
        trace.budget_exhausted = true;
        return trace;
      }
      Evaluation e = evaluate(point);
      e.point = point;
      if (e.time && !(std::isfinite(*e.time) && *e.time > 0))
        throw Error(fmt::format("run_search: point {} ({}) evaluated to time {}; a time must be positive and finite "
                                "(nullopt marks a failed point)",
                                point, strategy_detail::describe_point(domain, point), *e.time));
      strategy.observe(point, e.time);
      trace.cost_seconds += e.cost_seconds;
      if (e.time && (!trace.best || *e.time < trace.best_time)) {
        trace.best = point;
        trace.best_time = *e.time;
      }
      trace.evaluations.push_back(e);
    }
  }
  return trace;
}

}  // namespace tiletune
