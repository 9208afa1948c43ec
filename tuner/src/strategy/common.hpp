// What the strategies share: a seeded random source that gives the same numbers with every
// standard library, and a base class that does the bookkeeping of the propose/observe
// protocol (so that no strategy can propose a point twice or miss an observation), picks
// unproposed points and holds a warm start's preferred points. Everything here costs what the
// search has done, not the domain's size: a domain may hold 10^7 points or more, with ids that
// are not dense.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tiletune/error.hpp"
#include "tiletune/strategy.hpp"

namespace tiletune::strategy_detail {

/// mt19937_64 with our own uniform helpers: the std distributions differ across standard
/// libraries, and a seed must replay the same search everywhere.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}

  /// Uniform in [0, n); n > 0.
  [[nodiscard]] std::uint64_t below(std::uint64_t n) {
    // Reject the top partial block of 2^64 so that every residue is equally likely.
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    const std::uint64_t limit = kMax - kMax % n;
    std::uint64_t x = engine_();
    while (x >= limit) x = engine_();
    return x % n;
  }
  /// Uniform in [0, 1), from the top 53 bits.
  [[nodiscard]] double unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  [[nodiscard]] bool chance(double p) { return unit() < p; }
  /// A raw 64-bit word (what DomainSource::sample draws from).
  [[nodiscard]] std::uint64_t word() { return engine_(); }
  /// A uniform integer in [lo, hi].
  [[nodiscard]] std::size_t between(std::size_t lo, std::size_t hi) { return lo + below(hi - lo + 1); }

  template <class T>
  void shuffle(std::vector<T>& items) {
    for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[below(i)]);
  }

 private:
  std::mt19937_64 engine_;
};

/// A set of points with O(1) membership, removal and uniform pick.
class PointPool {
 public:
  void insert(std::size_t point);
  [[nodiscard]] bool contains(std::size_t point) const { return slots_.contains(point); }
  [[nodiscard]] std::size_t size() const noexcept { return items_.size(); }
  [[nodiscard]] bool empty() const noexcept { return items_.empty(); }
  [[nodiscard]] std::size_t pick(Rng& rng) const { return items_[rng.below(items_.size())]; }
  /// Removes point when it is in the pool.
  void erase(std::size_t point);

 private:
  std::vector<std::size_t> items_;
  std::unordered_map<std::size_t, std::size_t> slots_;  ///< position of each point in items_
};

/// The score of a failed point: worse than anything measured.
inline constexpr double kFailed = std::numeric_limits<double>::infinity();

/// Protocol bookkeeping for every strategy. Subclasses implement propose() with claim() and
/// learn outcomes through on_observed(), where a failed point scores kFailed. A warm start's
/// points (prefer) wait in preferred order for take_preferred().
class StrategyBase : public SearchStrategy {
 public:
  [[nodiscard]] std::string_view name() const final { return name_; }
  void observe(std::size_t point, std::optional<double> time) final;
  /// Keeps the points (each once, in order) for take_preferred. Throws Error for a point that
  /// is not the domain's, or when the search has begun.
  void prefer(std::vector<std::size_t> points) final;

 protected:
  StrategyBase(std::string_view name, const SearchDomain& domain);

  /// Marks point proposed and appends it to batch; throws Error if it was proposed before.
  void claim(std::size_t point, std::vector<std::size_t>& batch);
  /// Claims the next preferred point not proposed yet; false when none is left.
  bool take_preferred(std::vector<std::size_t>& batch);
  /// The preferred points, best first (what prefer kept).
  [[nodiscard]] const std::vector<std::size_t>& preferred() const noexcept { return preferred_; }
  /// A uniformly random unproposed point: domain samples rejected while proposed; once
  /// rejections pile up (most of the domain is proposed), the rest of the domain is listed by
  /// walking its order once. nullopt when every point has been proposed.
  [[nodiscard]] std::optional<std::size_t> pick_unproposed(Rng& rng);
  /// Every point of the domain has been proposed (known for an exact domain, or once the rest
  /// has been listed).
  [[nodiscard]] bool exhausted() const;
  [[nodiscard]] const SearchDomain& domain() const noexcept { return domain_; }
  [[nodiscard]] bool is_proposed(std::size_t point) const { return proposed_.contains(point); }
  [[nodiscard]] bool is_observed(std::size_t point) const;
  /// The observed score of a point: its time, kFailed when it failed. Only for observed points.
  [[nodiscard]] double score(std::size_t point) const { return proposed_.at(point); }
  [[nodiscard]] std::size_t proposed_count() const noexcept { return proposed_.size(); }
  [[nodiscard]] std::size_t outstanding() const noexcept { return outstanding_; }
  [[nodiscard]] std::size_t observed_count() const noexcept { return observed_count_; }
  /// The fastest point measured ok so far.
  [[nodiscard]] std::optional<std::size_t> best() const noexcept { return best_; }

  virtual void on_observed(std::size_t point, double score) = 0;

 private:
  void list_the_rest();

  std::string_view name_;
  const SearchDomain& domain_;
  /// Every proposed point: its score once observed, NaN while outstanding.
  std::unordered_map<std::size_t, double> proposed_;
  std::vector<std::size_t> preferred_;
  std::size_t preferred_next_ = 0;
  /// The unproposed points, once listed by list_the_rest (nullopt before).
  std::optional<PointPool> rest_;
  std::size_t outstanding_ = 0;
  std::size_t observed_count_ = 0;
  std::optional<std::size_t> best_;
};

/// The error of an observe() for a point that is not outstanding.
[[nodiscard]] Error not_outstanding(std::string_view strategy, std::size_t point);
/// Throws Error when time is set and not positive and finite.
void check_observed_time(std::string_view strategy, const SearchDomain& domain, std::size_t point,
                         std::optional<double> time);

/// "TILE=32 BLOCK=8" for error messages.
[[nodiscard]] std::string describe_point(const SearchDomain& domain, std::size_t point);

[[nodiscard]] std::unique_ptr<SearchStrategy> make_exhaustive(const SearchDomain& domain);
[[nodiscard]] std::unique_ptr<SearchStrategy> make_random(const SearchDomain& domain, std::uint64_t seed);
[[nodiscard]] std::unique_ptr<SearchStrategy> make_local(const SearchDomain& domain, std::uint64_t seed);
[[nodiscard]] std::unique_ptr<SearchStrategy> make_genetic(const SearchDomain& domain, std::uint64_t seed);
/// The forest's own settings: the defaults are the strategy's; bench_strategies tries others
/// ("forest:local=0.3:kappa=0.5", parse_forest_settings) to choose them on some landscapes and
/// report them on the rest.
struct ForestSettings {
  /// Share of proposals that are random points, so that the model's blind spots get sampled.
  double explore = 0.1;
  /// Share of the model's proposals that are local steps: of the points one param away from the
  /// fastest measured ones, the one the model likes best. A forest predicts in coarse blocks, so a
  /// narrow optimum next to a good point is found faster this way than by the global bound.
  double local = 0.5;
  /// Lower confidence bound of the global proposals: mean - kappa * (spread across trees), in log time.
  double kappa = 1.0;
  /// Fastest measured points whose neighbours the local steps and the pool consider.
  std::size_t bases = 5;
  /// A local step picks among the neighbours of all those points (true), or of the fastest one
  /// whose neighbours are not all proposed (false).
  bool joint = true;
  /// Besides each param's value rank, the largest power of two dividing its value as a feature
  /// (for params of positive integers with three or more such powers): block and tile sizes
  /// that are multiples of the warp or of a cache line are often fast out of their rank order.
  bool alignment = true;
  /// Local steps first vary each param of the fastest point once (the model choosing the value),
  /// as a pattern search polls its incumbent, before choosing among all the bases' neighbours.
  bool poll = true;
};
/// Settings from "key=value:key=value..." (keys: explore, local, kappa, bases, joint, alignment, poll), over the
/// defaults. Throws Error naming a key or value it does not take.
[[nodiscard]] ForestSettings parse_forest_settings(std::string_view text);
[[nodiscard]] std::unique_ptr<SearchStrategy> make_forest(const SearchDomain& domain, std::uint64_t seed,
                                                          const ForestSettings& settings = {});
/// inner, shown each outcome only once it is at least lag proposals old (or when it has nothing
/// to propose without it): the same proposals at any number in flight up to lag (lagged.cpp).
[[nodiscard]] std::unique_ptr<SearchStrategy> make_lagged(std::unique_ptr<SearchStrategy> inner,
                                                          const SearchDomain& domain, std::size_t lag);

}  // namespace tiletune::strategy_detail
