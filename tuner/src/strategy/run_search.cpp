// run_search: THE search loop, shared by a GPU sweep, a replay, the strategy benchmark and the
// tests. A sliding window of points in flight over an Evaluator; outcomes are observed in
// submission order, so a search is repeatable whatever evaluates it. The budget is checked
// before each submit (a count) and before each wait (a time), so a count is never overrun and
// a time budget by no more than the evaluation that crossed it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <thread>
#include <unordered_set>

#include "strategy/common.hpp"
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

std::size_t in_flight_width(bool learns, unsigned compile_threads) {
  if (learns) return kSearchLag;
  const std::size_t threads = compile_threads ? compile_threads : std::max(1u, std::thread::hardware_concurrency());
  return std::max<std::size_t>(32, 4 * threads);
}

SearchRun sweep_search_run(const SearchDomain& domain, const SearchStrategy& strategy, const SearchBudget& budget,
                           unsigned compile_threads) {
  SearchRun run;
  run.budget = budget;
  run.in_flight = in_flight_width(strategy.learns(), compile_threads);
  run.first = domain.start();
  return run;
}

std::optional<Evaluation> Evaluator::recall(std::size_t) { return std::nullopt; }

void SimulatedEvaluator::submit(std::size_t point) { submitted_.push_back(point); }

Evaluation SimulatedEvaluator::next() {
  if (submitted_.empty()) throw Error("SimulatedEvaluator::next: nothing was submitted");
  const std::size_t point = submitted_.front();
  submitted_.pop_front();
  Evaluation e = evaluate_(point);
  e.point = point;
  elapsed_ += e.cost_seconds;
  return e;
}

namespace {

/// The loop's state for one search: what is in flight, what the budget allows, the trace.
class SearchLoop {
 public:
  SearchLoop(const SearchDomain& domain, SearchStrategy& strategy, Evaluator& evaluator, const SearchRun& run)
      : domain_(domain),
        strategy_(strategy),
        evaluator_(evaluator),
        run_(run),
        limit_(budget_evaluations(run.budget, domain.size())) {}

  SearchTrace run() {
    if (run_.first) evaluate_first(*run_.first);
    for (;;) {
      if (trace_.good_enough) {
        evaluator_.cancel();
        outstanding_.clear();
        break;
      }
      top_up();
      if (outstanding_.empty()) {
        // Nothing in flight and nothing more proposed: the strategy is done, or the count is spent.
        trace_.budget_exhausted = !strategy_done_ && proposed_.size() < domain_.size();
        break;
      }
      const bool interrupted = run_.interrupted && run_.interrupted();
      if (interrupted || time_spent()) {
        evaluator_.cancel();
        outstanding_.clear();
        (interrupted ? trace_.interrupted : trace_.budget_exhausted) = true;
        break;
      }
      const Evaluation e = receive();
      strategy_.observe(e.point, e.time);
    }
    return std::move(trace_);
  }

 private:
  [[nodiscard]] bool time_spent() const {
    return run_.budget.seconds && evaluator_.elapsed_seconds() >= *run_.budget.seconds;
  }
  /// Points the count budget still lets this search submit.
  [[nodiscard]] std::size_t count_left() const {
    if (!limit_) return std::numeric_limits<std::size_t>::max();
    const std::uint64_t used = trace_.evaluated + outstanding_.size();
    return used >= *limit_ ? 0 : static_cast<std::size_t>(*limit_ - used);
  }

  void evaluate_first(std::size_t point) {
    if (!in_domain(point))
      throw Error(
          fmt::format("run_search: the first point {} is outside the domain of {} points", point, domain_.size()));
    if (std::optional<Evaluation> known = evaluator_.recall(point)) {
      first_ = record_recalled(point, *known);
      return;
    }
    if (count_left() == 0 || time_spent()) return;
    evaluator_.submit(point);
    outstanding_.push_back(point);
    first_ = receive();
  }

  /// Asks the strategy for as many points as the window and the count budget have room for.
  void top_up() {
    while (!strategy_done_ && !trace_.good_enough && outstanding_.size() < run_.in_flight && count_left() > 0) {
      const std::vector<std::size_t> points =
          strategy_.propose(std::min(run_.in_flight - outstanding_.size(), count_left()));
      if (points.empty()) {
        strategy_done_ = outstanding_.empty();
        return;
      }
      for (const std::size_t point : points) take(point);
    }
  }

  void take(std::size_t point) {
    check_proposal(point);
    if (first_ && first_->point == point) {
      strategy_.observe(point, first_->time);  // already in the trace, where it was evaluated
      return;
    }
    if (std::optional<Evaluation> known = evaluator_.recall(point)) {
      strategy_.observe(point, record_recalled(point, *known).time);
      return;
    }
    evaluator_.submit(point);
    outstanding_.push_back(point);
  }

  void check_proposal(std::size_t point) {
    if (!in_domain(point))
      throw Error(fmt::format("run_search: strategy '{}' proposed point {} outside the domain of {} points",
                              strategy_.name(), point, domain_.size()));
    if (!proposed_.insert(point).second)
      throw Error(fmt::format("run_search: strategy '{}' proposed point {} ({}) twice", strategy_.name(), point,
                              strategy_detail::describe_point(domain_, point)));
  }

  /// Whether point is an id the domain's source gave out (its coords are known).
  [[nodiscard]] bool in_domain(std::size_t point) const {
    try {
      (void)domain_.coords(point);
      return true;
    } catch (const Error&) { return false; }
  }

  /// The oldest outstanding evaluation, checked and traced.
  Evaluation receive() {
    Evaluation e = evaluator_.next();
    const std::size_t expected = outstanding_.front();
    outstanding_.pop_front();
    if (e.point != expected)
      throw Error(fmt::format("run_search: the evaluator returned point {} where the oldest outstanding is {}", e.point,
                              expected));
    check_time(e);
    e.recalled = false;
    ++trace_.evaluated;
    trace_.cost_seconds += e.cost_seconds;
    trace(e);
    return e;
  }

  Evaluation record_recalled(std::size_t point, Evaluation e) {
    e.point = point;
    check_time(e);
    e.recalled = true;
    e.cost_seconds = 0;
    ++trace_.resumed;
    trace(e);
    return e;
  }

  void check_time(const Evaluation& e) const {
    if (e.time && !(std::isfinite(*e.time) && *e.time > 0))
      throw Error(
          fmt::format("run_search: point {} ({}) evaluated to time {}; a time must be positive and finite "
                      "(nullopt marks a failed point)",
                      e.point, strategy_detail::describe_point(domain_, e.point), *e.time));
  }

  void trace(const Evaluation& e) {
    if (e.time && (!trace_.best || *e.time < trace_.best_time)) {
      trace_.best = e.point;
      trace_.best_time = *e.time;
    }
    trace_.evaluations.push_back(e);
    if (e.time && run_.good_enough && run_.good_enough(e)) trace_.good_enough = true;
  }

  const SearchDomain& domain_;
  SearchStrategy& strategy_;
  Evaluator& evaluator_;
  const SearchRun& run_;
  const std::optional<std::uint64_t> limit_;
  std::unordered_set<std::size_t> proposed_;  ///< every point proposed: the search's work, not the domain
  std::deque<std::size_t> outstanding_;       ///< submitted, not yet returned, oldest first
  std::optional<Evaluation> first_;           ///< run.first's outcome, until the strategy proposes it
  bool strategy_done_ = false;
  SearchTrace trace_;
};

void check_run(const SearchRun& run) {
  if (run.in_flight == 0) throw Error("run_search: the in-flight width must be at least 1");
  const SearchBudget& budget = run.budget;
  if (budget.fraction && !(*budget.fraction > 0 && *budget.fraction <= 1))
    throw Error(fmt::format("run_search: budget fraction {} is not in (0, 1]", *budget.fraction));
  if (budget.seconds && !(*budget.seconds >= 0))
    throw Error(fmt::format("run_search: budget of {} seconds is not a time", *budget.seconds));
}

}  // namespace

SearchTrace run_search(const SearchDomain& domain, SearchStrategy& strategy, Evaluator& evaluator,
                       const SearchRun& run) {
  check_run(run);
  return SearchLoop(domain, strategy, evaluator, run).run();
}

SearchTrace run_search(const SearchDomain& domain, SearchStrategy& strategy,
                       const std::function<Evaluation(std::size_t)>& evaluate, const SearchBudget& budget,
                       std::size_t in_flight) {
  SimulatedEvaluator evaluator(evaluate);
  SearchRun run;
  run.budget = budget;
  run.in_flight = in_flight;
  return run_search(domain, strategy, evaluator, run);
}

}  // namespace tiletune
