// What the strategies share: a seeded random source that gives the same numbers with every
// standard library, the set of points not proposed yet, and a base class that does the
// bookkeeping of the propose/observe protocol, so that no strategy can propose a point twice
// or miss an observation.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

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
  /// All points 0..size-1.
  explicit PointPool(std::size_t size);
  [[nodiscard]] bool contains(std::size_t point) const { return slots_[point] != kAbsent; }
  [[nodiscard]] std::size_t size() const noexcept { return items_.size(); }
  [[nodiscard]] bool empty() const noexcept { return items_.empty(); }
  /// In no particular order (removal swaps the last item into the hole).
  [[nodiscard]] const std::vector<std::size_t>& items() const noexcept { return items_; }
  [[nodiscard]] std::size_t pick(Rng& rng) const { return items_[rng.below(items_.size())]; }
  void erase(std::size_t point);

 private:
  static constexpr std::size_t kAbsent = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> items_;
  std::vector<std::size_t> slots_;  ///< position of each point in items_, or kAbsent
};

/// The score of a failed point: worse than anything measured.
inline constexpr double kFailed = std::numeric_limits<double>::infinity();

/// Protocol bookkeeping for every strategy. Subclasses implement propose() with claim() and
/// learn outcomes through on_observed(), where a failed point scores kFailed.
class StrategyBase : public SearchStrategy {
 public:
  [[nodiscard]] std::string_view name() const final { return name_; }
  void observe(std::size_t point, std::optional<double> time) final;

 protected:
  StrategyBase(std::string_view name, const SearchDomain& domain);

  /// Marks point proposed and appends it to batch; throws Error if it was proposed before.
  void claim(std::size_t point, std::vector<std::size_t>& batch);
  [[nodiscard]] const SearchDomain& domain() const noexcept { return domain_; }
  [[nodiscard]] const PointPool& unproposed() const noexcept { return unproposed_; }
  [[nodiscard]] bool is_proposed(std::size_t point) const { return !unproposed_.contains(point); }
  [[nodiscard]] bool is_observed(std::size_t point) const { return observed_[point] != 0; }
  /// The observed score of a point: its time, kFailed when it failed. Only for observed points.
  [[nodiscard]] double score(std::size_t point) const { return scores_[point]; }
  [[nodiscard]] std::size_t outstanding() const noexcept { return outstanding_; }
  [[nodiscard]] std::size_t observed_count() const noexcept { return observed_count_; }
  /// The fastest point measured ok so far.
  [[nodiscard]] std::optional<std::size_t> best() const noexcept { return best_; }

  virtual void on_observed(std::size_t point, double score) = 0;

 private:
  std::string_view name_;
  const SearchDomain& domain_;
  PointPool unproposed_;
  std::vector<std::uint8_t> observed_;
  std::vector<double> scores_;
  std::size_t outstanding_ = 0;
  std::size_t observed_count_ = 0;
  std::optional<std::size_t> best_;
};

/// "TILE=32 BLOCK=8" for error messages.
[[nodiscard]] std::string describe_point(const SearchDomain& domain, std::size_t point);

[[nodiscard]] std::unique_ptr<SearchStrategy> make_exhaustive(const SearchDomain& domain);
[[nodiscard]] std::unique_ptr<SearchStrategy> make_random(const SearchDomain& domain, std::uint64_t seed);
[[nodiscard]] std::unique_ptr<SearchStrategy> make_local(const SearchDomain& domain, std::uint64_t seed);
[[nodiscard]] std::unique_ptr<SearchStrategy> make_genetic(const SearchDomain& domain, std::uint64_t seed);
[[nodiscard]] std::unique_ptr<SearchStrategy> make_forest(const SearchDomain& domain, std::uint64_t seed);

}  // namespace tiletune::strategy_detail
