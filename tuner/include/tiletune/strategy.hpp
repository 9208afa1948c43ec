// Search strategies: which configs of a space to measure, in what order, and when to stop.
// A strategy sees the space only as a SearchDomain (the valid configs as coordinates on each
// param's value list), proposes points, and is told each point's time (or that it failed).
// The same strategy drives a real sweep on the GPU and a replay of a recorded landscape.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tiletune {

/// How many points a domain has: exact where that was cheap to count, else an estimate with
/// its relative error (a 95 % interval: count * (1 +- relative_error)).
struct DomainSize {
  std::uint64_t count = 0;
  bool exact = true;
  double relative_error = 0;
};

/// What a SearchDomain knows of its points: which coordinate tuples are points, their ids, how
/// many there are, a uniform sample and an order to walk them in. A source never needs to hold
/// every point: a space's source (tiletune/replay.hpp, space_domain) checks the constraints of
/// the coordinates it is asked about and samples them group by group; the list source holds
/// an explicit list (tests, synthetic landscapes). Thread-safe for const use.
class DomainSource {
 public:
  virtual ~DomainSource() = default;
  [[nodiscard]] virtual DomainSize size() const = 0;
  /// The coordinates of a point (an id this source gave out). Throws Error for any other id.
  [[nodiscard]] virtual std::vector<std::uint16_t> coords(std::size_t point) const = 0;
  /// The point at these coordinates (one per param, each in range), if they are a point.
  [[nodiscard]] virtual std::optional<std::size_t> find(std::span<const std::uint16_t> coords) const = 0;
  /// A uniformly random point, drawn from the 64-bit random word (the source derives what it
  /// needs from it, so that a seed replays the same points everywhere); nullopt when the
  /// domain is empty or the source found no point in a bounded number of draws.
  [[nodiscard]] virtual std::optional<std::size_t> sample(std::uint64_t random) const = 0;
  /// The first point in the source's fixed order (after = nullopt) or the one after `after`;
  /// nullopt at the end. Walking the whole order costs what enumerating the space costs.
  [[nodiscard]] virtual std::optional<std::size_t> next(std::optional<std::size_t> after) const = 0;
};

/// The configs a strategy searches: the params' value lists and the valid configs as points
/// (a point is an id its source gives; coords(point)[p] is the index of its value in
/// param_values[p]). A strategy proposes only points (never an invalid config), and must not
/// assume the ids are dense or that it can walk the whole domain: a space's domain may hold
/// 10^7 configs or more. Copies share the source.
class SearchDomain {
 public:
  SearchDomain() = default;
  /// A domain of an explicit list: point i is points[i], ids 0..points.size()-1, in list
  /// order. Throws Error when a coordinate is out of range, a point has the wrong arity, a
  /// point repeats, or start is not a point.
  SearchDomain(std::vector<std::string> param_names, std::vector<std::vector<std::int64_t>> param_values,
               std::vector<std::vector<std::uint16_t>> points, std::optional<std::size_t> start = {});
  /// A domain over a source. Throws Error when names and values differ in length, a param has
  /// more than 65535 values, the params have more than 2^64 combinations, or start is no point.
  [[nodiscard]] static SearchDomain from_source(std::vector<std::string> param_names,
                                                std::vector<std::vector<std::int64_t>> param_values,
                                                std::shared_ptr<const DomainSource> source,
                                                std::optional<std::size_t> start = {});

  /// The number of points, exact or estimated (size_info() says which). An explicit list's
  /// ids are 0..size()-1; other sources' are not dense.
  [[nodiscard]] std::uint64_t size() const { return source_ ? source_->size().count : 0; }
  [[nodiscard]] DomainSize size_info() const { return source_ ? source_->size() : DomainSize{}; }
  [[nodiscard]] bool empty() const { return size() == 0; }
  [[nodiscard]] std::size_t dimensions() const noexcept { return names_.size(); }
  [[nodiscard]] const std::vector<std::string>& param_names() const noexcept { return names_; }
  [[nodiscard]] const std::vector<std::vector<std::int64_t>>& param_values() const noexcept { return values_; }
  /// The product of the value lists' sizes (the grid the points lie on).
  [[nodiscard]] std::uint64_t grid_size() const noexcept { return grid_size_; }
  [[nodiscard]] std::vector<std::uint16_t> coords(std::size_t point) const;
  /// The value of param p at a point (param_values[p][coords(point)[p]]).
  [[nodiscard]] std::int64_t value(std::size_t point, std::size_t param) const;
  /// The point at these coordinates, if it is a valid config (nullopt too for a wrong arity
  /// or a coordinate out of range).
  [[nodiscard]] std::optional<std::size_t> find(std::span<const std::uint16_t> coords) const;
  /// Valid points that differ from this one in exactly one param, by one step along its value
  /// list (grid neighbours), in a fixed order; generated on demand.
  [[nodiscard]] std::vector<std::size_t> neighbours(std::size_t point) const;
  /// A uniformly random point (DomainSource::sample).
  [[nodiscard]] std::optional<std::size_t> sample(std::uint64_t random) const;
  /// The domain's fixed order (DomainSource::next).
  [[nodiscard]] std::optional<std::size_t> next(std::optional<std::size_t> after = {}) const;
  /// The space's default config when it is valid: strategies that start somewhere start here.
  [[nodiscard]] std::optional<std::size_t> start() const noexcept { return start_; }

 private:
  std::vector<std::string> names_;
  std::vector<std::vector<std::int64_t>> values_;
  std::shared_ptr<const DomainSource> source_;
  std::uint64_t grid_size_ = 0;
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
  /// Whether its proposals depend on the outcomes it has observed. A strategy that learns gets
  /// fewer points in flight (in_flight_width, kSearchLag), so that each proposal knows more.
  [[nodiscard]] virtual bool learns() const = 0;
  [[nodiscard]] virtual std::vector<std::size_t> propose(std::size_t max_count) = 0;
  /// time: the measured time of a proposed point (lower is better, > 0); nullopt: it failed
  /// (did not compile, faulted, gave a wrong result...). Failed points are never the optimum.
  virtual void observe(std::size_t point, std::optional<double> time) = 0;
  /// A warm start (`tune --warm-start`): points to propose before any other, best first (what
  /// another device's ranking maps to in this domain); a strategy that learns takes their
  /// outcomes as its first observations. Called before the first propose; a point that repeats
  /// is taken once. The strategies of make_strategy all take it; this default, for a strategy
  /// written elsewhere, proposes nothing differently.
  virtual void prefer(std::vector<std::size_t> points) { (void)points; }
};

/// Names of the strategies make_strategy knows, in the order the docs list them:
/// exhaustive, random, local, genetic, forest.
[[nodiscard]] const std::vector<std::string>& strategy_names();

/// How many proposals behind a strategy of make_strategy that learns runs: its k-th proposal
/// is chosen from the outcomes of proposals 0..k-kSearchLag (more only when it has nothing to
/// propose without them), so that it makes the same proposals with 1 to kSearchLag points in
/// flight, on any host. A wider window gets no more: it waits for the outcomes it needs (a sweep
/// over several GPUs of one model, which keeps two configs in flight per GPU, makes its strategy
/// with a lag of that width instead).
inline constexpr std::size_t kSearchLag = 8;

/// A strategy over domain (which must outlive it), repeatable for a given seed. The strategies
/// that learn run lag proposals behind (kSearchLag unless a wider window needs more). name may also be the forest with other
/// settings than its defaults, for experiments (bench_strategies): "forest:local=0.3:kappa=0.5",
/// keys explore, local, kappa, bases, joint, alignment, poll (strategy/common.hpp, ForestSettings).
/// Throws Error naming the known strategies when name is not one, or the setting it cannot read.
[[nodiscard]] std::unique_ptr<SearchStrategy> make_strategy(std::string_view name, const SearchDomain& domain,
                                                            std::uint64_t seed, std::size_t lag = kSearchLag);

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
  bool recalled = false;       ///< answered by Evaluator::recall (known before): cost nothing
};

/// What a search evaluates, asynchronously. A GPU sweep's evaluator compiles ahead and
/// measures in a worker; a replay answers from a recording and simulates the clock; a fake
/// answers in tests.
class Evaluator {
 public:
  virtual ~Evaluator() = default;
  /// A point whose outcome is already known (a rerun answers from the cache): no cost, not
  /// counted against the budget. Default: none.
  [[nodiscard]] virtual std::optional<Evaluation> recall(std::size_t point);
  /// Starts evaluating a point (compile ahead, queue it for the GPU).
  virtual void submit(std::size_t point) = 0;
  /// Waits for the OLDEST submitted evaluation and returns it: observing in submission order
  /// keeps a search repeatable whatever finishes first (one worker or a pool).
  [[nodiscard]] virtual Evaluation next() = 0;
  /// Drops what was submitted and not yet returned (a time budget ran out).
  virtual void cancel() = 0;
  /// Seconds the search has cost so far: wall time on a GPU, simulated in a replay.
  [[nodiscard]] virtual double elapsed_seconds() const = 0;
};

/// An evaluator that answers each point with a function when it is due (a recording, a
/// synthetic landscape) and whose clock is the sum of the costs it has returned: the GPU
/// measures one point after another, so the recorded costs add up.
class SimulatedEvaluator final : public Evaluator {
 public:
  explicit SimulatedEvaluator(std::function<Evaluation(std::size_t)> evaluate) : evaluate_(std::move(evaluate)) {}
  void submit(std::size_t point) override;
  [[nodiscard]] Evaluation next() override;
  void cancel() override { submitted_.clear(); }
  [[nodiscard]] double elapsed_seconds() const override { return elapsed_; }

 private:
  std::function<Evaluation(std::size_t)> evaluate_;
  std::deque<std::size_t> submitted_;  ///< oldest first
  double elapsed_ = 0;
};

/// How a search runs: its budget, how many points are in flight at once (submitted and not
/// yet observed), and the point evaluated before anything else (the space's default config:
/// the baseline of the speedups, measured even when the budget stops the search early).
struct SearchRun {
  SearchBudget budget;
  std::size_t in_flight = 1;
  std::optional<std::size_t> first;
  /// Asked before each wait for an outcome: true stops the search as a spent time budget does
  /// (what is in flight is dropped; SearchTrace::interrupted). Empty: never.
  std::function<bool()> interrupted;
  /// A stop condition (`tune --good-enough`): the search ends as soon as an observed evaluation
  /// (measured or recalled) with a time satisfies it; what is in flight is cancelled. Empty: none.
  std::function<bool(const Evaluation&)> good_enough;
};

/// The in-flight width of a sweep, and of a replay that simulates it, for a strategy that
/// learns (or not) and a compile pool of compile_threads (0: one per core). A strategy that
/// learns gets kSearchLag, whatever the host: what it proposes does not depend on the width,
/// and the compiles of eight proposals keep any pool busy. One that does not keeps the pool busy
/// (max(32, 4 x threads)), without queueing minutes of compiles a budget may never use.
[[nodiscard]] std::size_t in_flight_width(bool learns, unsigned compile_threads);
/// The run a sweep makes of one problem, and a replay that simulates it: the budget, the
/// strategy's in_flight_width, the domain's start (the default config) first.
[[nodiscard]] SearchRun sweep_search_run(const SearchDomain& domain, const SearchStrategy& strategy,
                                         const SearchBudget& budget, unsigned compile_threads);

struct SearchTrace {
  /// Every observation in the order the strategy got it: recalled ones (flagged, free) and
  /// evaluated ones; the first point where it was evaluated, not again where it was proposed.
  std::vector<Evaluation> evaluations;
  std::uint64_t evaluated = 0;      ///< of evaluations, those not recalled (what the budget counts)
  std::uint64_t resumed = 0;        ///< of evaluations, those recalled
  std::optional<std::size_t> best;  ///< fastest ok point
  double best_time = 0;
  double cost_seconds = 0;        ///< sum of the evaluated points' costs
  bool budget_exhausted = false;  ///< stopped by the budget rather than by the strategy
  bool interrupted = false;       ///< stopped by SearchRun::interrupted
  bool good_enough = false;       ///< stopped by SearchRun::good_enough
};

/// THE search loop, for a GPU sweep, a replay and the tests. A sliding window: it keeps up to
/// run.in_flight points submitted, asking the strategy for as many as there is room for; a
/// proposed point that recall() answers is observed at once (resumed, not evaluated); it never
/// submits more than the count budget allows (evaluated + outstanding < limit); it checks the
/// time budget (evaluator.elapsed_seconds()) before each next() and cancels what is outstanding
/// when it is spent. run.first is evaluated (or recalled) before anything else, within the
/// budget, and its outcome answers the strategy when the strategy proposes it. Throws Error
/// when the strategy breaks its protocol (a point twice, outside the domain) or an evaluation
/// returns the wrong point or a time that is not positive and finite.
[[nodiscard]] SearchTrace run_search(const SearchDomain& domain, SearchStrategy& strategy, Evaluator& evaluator,
                                     const SearchRun& run);

/// run_search over a SimulatedEvaluator of evaluate (synthetic landscapes in tests).
[[nodiscard]] SearchTrace run_search(const SearchDomain& domain, SearchStrategy& strategy,
                                     const std::function<Evaluation(std::size_t)>& evaluate, const SearchBudget& budget,
                                     std::size_t in_flight = 1);

}  // namespace tiletune
