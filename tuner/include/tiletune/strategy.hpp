// Search strategies: which configs of a space to measure, in what order, and when to stop.
// A strategy sees the space only as a SearchDomain (the valid configs as coordinates on each
// param's value list), proposes points, and is told each point's time (or that it failed).
// The same strategy drives a real sweep on the GPU and a replay of a recorded landscape.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tiletune {

/// The configs a strategy searches. points[i][p] is the index of config i's value in
/// param_values[p]; the points are distinct and are exactly the configs that pass the space's
/// constraints (a strategy never proposes anything else).
class SearchDomain {
 public:
  SearchDomain() = default;
  /// Throws Error when a coordinate is out of range, a point has the wrong arity, a point
  /// repeats, or start is not a point.
  SearchDomain(std::vector<std::string> param_names, std::vector<std::vector<std::int64_t>> param_values,
               std::vector<std::vector<std::uint16_t>> points, std::optional<std::size_t> start = {});

  [[nodiscard]] std::size_t size() const noexcept { return points_.size(); }
  [[nodiscard]] bool empty() const noexcept { return points_.empty(); }
  [[nodiscard]] std::size_t dimensions() const noexcept { return names_.size(); }
  [[nodiscard]] const std::vector<std::string>& param_names() const noexcept { return names_; }
  [[nodiscard]] const std::vector<std::vector<std::int64_t>>& param_values() const noexcept { return values_; }
  [[nodiscard]] std::span<const std::uint16_t> coords(std::size_t point) const { return points_.at(point); }
  /// The value of param p at a point (param_values[p][coords(point)[p]]).
  [[nodiscard]] std::int64_t value(std::size_t point, std::size_t param) const;
  /// The point at these coordinates, if it is a valid config.
  [[nodiscard]] std::optional<std::size_t> find(std::span<const std::uint16_t> coords) const;
  /// Valid points that differ from this one in exactly one param, by one step along its value
  /// list (grid neighbours), in a fixed order.
  [[nodiscard]] std::vector<std::size_t> neighbours(std::size_t point) const;
  /// The space's default config when it is valid: strategies that start somewhere start here.
  [[nodiscard]] std::optional<std::size_t> start() const noexcept { return start_; }

 private:
  [[nodiscard]] std::uint64_t key(std::span<const std::uint16_t> coords) const;

  std::vector<std::string> names_;
  std::vector<std::vector<std::int64_t>> values_;
  std::vector<std::vector<std::uint16_t>> points_;
  std::unordered_map<std::uint64_t, std::size_t> index_;
  std::optional<std::size_t> start_;
};

/// A search strategy. Protocol: the driver calls propose(k), evaluates the points it gets (in
/// any order, possibly in parallel), calls observe once for each, and calls propose again. A
/// strategy never proposes a point twice. propose returns fewer than k points, or none, when it
/// needs the outcome of outstanding points first; none with no point outstanding means done
/// (every point was proposed, or the strategy has nothing left worth trying).
class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  [[nodiscard]] virtual std::vector<std::size_t> propose(std::size_t max_count) = 0;
  /// time: the measured time of a proposed point (lower is better, > 0); nullopt: it failed
  /// (did not compile, faulted, gave a wrong result...). Failed points are never the optimum.
  virtual void observe(std::size_t point, std::optional<double> time) = 0;
};

/// Names of the strategies make_strategy knows, in the order the docs list them:
/// exhaustive, random, local, genetic, forest.
[[nodiscard]] const std::vector<std::string>& strategy_names();

/// A strategy over domain (which must outlive it), repeatable for a given seed. Throws Error
/// naming the known strategies when name is not one.
[[nodiscard]] std::unique_ptr<SearchStrategy> make_strategy(std::string_view name, const SearchDomain& domain,
                                                            std::uint64_t seed);

/// When a search stops: after this many evaluations, this share of the domain, or this many
/// seconds of evaluation cost (wall time on a GPU, recorded time in a replay). Unset: no limit.
struct SearchBudget {
  std::optional<std::uint64_t> evaluations;
  std::optional<double> fraction;  ///< (0, 1]
  std::optional<double> seconds;
};

/// The evaluations a budget's count and fraction allow on a domain of domain_size points (the
/// smaller of the two; nullopt when it sets neither).
[[nodiscard]] std::optional<std::uint64_t> budget_evaluations(const SearchBudget& budget, std::size_t domain_size);

/// The outcome of evaluating one point.
struct Evaluation {
  std::size_t point = 0;
  std::optional<double> time;  ///< nullopt: failed
  double cost_seconds = 0;     ///< what the evaluation cost (compile + measure)
};

struct SearchTrace {
  std::vector<Evaluation> evaluations;  ///< in the order they were observed
  std::optional<std::size_t> best;      ///< fastest ok point
  double best_time = 0;
  double cost_seconds = 0;              ///< sum of the evaluations' costs
  bool budget_exhausted = false;        ///< stopped by the budget rather than by the strategy
};

/// Drives a strategy to the end or to the budget, asking for up to batch points at a time and
/// evaluating them in order with evaluate. The budget is checked before each evaluation.
[[nodiscard]] SearchTrace run_search(const SearchDomain& domain, SearchStrategy& strategy,
                                     const std::function<Evaluation(std::size_t)>& evaluate,
                                     const SearchBudget& budget, std::size_t batch = 1);

}  // namespace tiletune
