// local: iterated local search over grid neighbours. A climb evaluates the unvisited
// neighbours of the incumbent and moves to the best of them while that improves (best
// improvement); at a local optimum it jumps a few random steps away from the best optimum
// found so far (or, now and then, to a random point) and climbs again. Tuning landscapes are
// mostly smooth along each param's value list but have several basins, which is what this is for.
// A warm start's preferred points are measured first and the climb starts at the best of them.
#include <algorithm>

#include "strategy/common.hpp"

namespace tiletune::strategy_detail {

namespace {

/// Share of jumps that restart at a random point instead of near the best optimum.
constexpr double kRestartShare = 0.1;
/// Random-walk attempts around the best optimum before a jump falls back to a random point.
constexpr int kWalkAttempts = 8;

class LocalSearch final : public StrategyBase {
 public:
  LocalSearch(const SearchDomain& domain, std::uint64_t seed) : StrategyBase("local", domain), rng_(seed) {}

  // Its proposals depend on what it has observed: it gets a narrow window in flight.
  [[nodiscard]] bool learns() const override { return true; }

  std::vector<std::size_t> propose(std::size_t max_count) override {
    std::vector<std::size_t> batch;
    while (batch.size() < max_count) {
      if (take_preferred(batch)) continue;
      if (take(frontier_, frontier_next_, batch)) continue;
      if (outstanding() > 0) {
        // The step's neighbours are all out. A batch that has room is filled with points two
        // steps away (where the climb would go next); a lone call waits for the outcomes.
        if (batch.empty() || !incumbent_) break;
        if (!extras_built_) build_extras();
        if (take(extras_, extras_next_, batch)) continue;
        break;
      }
      if (!incumbent_) {
        if (!begin_climb(batch)) break;
      } else if (!advance(batch)) {
        break;
      }
    }
    return batch;
  }

 private:
  void on_observed(std::size_t, double) override {}

  /// The first climb: from the best preferred point once they are all measured (or from the
  /// first of them when none ran ok), else from the start config or a random point. False
  /// when there is nowhere to start.
  bool begin_climb(std::vector<std::size_t>& batch) {
    if (!preferred().empty()) {
      begin_step(best() ? *best() : preferred().front());
      return true;
    }
    const auto start = domain().start();
    const std::optional<std::size_t> from = start && !is_proposed(*start) ? start : pick_unproposed(rng_);
    if (!from) return false;
    jump(*from, batch);
    return true;
  }

  /// Claims the next unproposed point of list, if any.
  bool take(const std::vector<std::size_t>& list, std::size_t& next, std::vector<std::size_t>& batch) {
    for (; next < list.size(); ++next) {
      if (!is_proposed(list[next])) {
        claim(list[next++], batch);
        return true;
      }
    }
    return false;
  }

  void begin_step(std::size_t incumbent) {
    incumbent_ = incumbent;
    step_.clear();
    frontier_.clear();
    frontier_next_ = 0;
    extras_.clear();
    extras_next_ = 0;
    extras_built_ = false;
    for (const std::size_t n : domain().neighbours(incumbent))
      if (!is_proposed(n)) frontier_.push_back(n);
  }

  void jump(std::size_t point, std::vector<std::size_t>& batch) {
    claim(point, batch);
    begin_step(point);
    step_.push_back(point);
  }

  /// The step is over (everything observed): move to its best point, or jump. False when done.
  bool advance(std::vector<std::size_t>& batch) {
    const std::size_t incumbent = *incumbent_;
    std::size_t next = incumbent;
    const auto consider = [&](std::size_t p) {
      if (is_observed(p) && score(p) < score(next)) next = p;
    };
    for (const std::size_t n : domain().neighbours(incumbent)) consider(n);
    for (const std::size_t p : step_) consider(p);
    for (const std::size_t p : extras_) consider(p);
    if (next != incumbent) {
      begin_step(next);
      return true;
    }
    // A local optimum: perturbations start from the best one (ILS's "better" acceptance).
    if (score(incumbent) < kFailed && (!base_ || score(incumbent) < score(*base_))) base_ = incumbent;
    const std::optional<std::size_t> to = perturbation();
    if (!to) return false;
    jump(*to, batch);
    return true;
  }

  /// An unproposed point a few random steps from the best optimum, else a random one; nullopt
  /// when every point has been proposed.
  std::optional<std::size_t> perturbation() {
    if (!base_ || rng_.chance(kRestartShare)) return pick_unproposed(rng_);
    std::vector<std::size_t> walk;
    for (int attempt = 0; attempt < kWalkAttempts; ++attempt) {
      // Longer walks once the region near the optimum has been used up.
      const std::size_t steps = rng_.between(2, 4) + static_cast<std::size_t>(attempt / 2);
      walk.assign(1, *base_);
      for (std::size_t s = 0; s < steps; ++s) {
        // A walk does not come back on itself, so that its length is its reach.
        std::vector<std::size_t> options = domain().neighbours(walk.back());
        std::erase_if(options, [&](std::size_t p) { return std::find(walk.begin(), walk.end(), p) != walk.end(); });
        if (options.empty()) break;
        walk.push_back(options[rng_.below(options.size())]);
      }
      if (!is_proposed(walk.back())) return walk.back();
    }
    return pick_unproposed(rng_);
  }

  /// Unproposed points two steps from the incumbent, through its best-known neighbours first.
  void build_extras() {
    extras_built_ = true;
    std::vector<std::size_t> via = domain().neighbours(*incumbent_);
    std::stable_sort(via.begin(), via.end(), [&](std::size_t a, std::size_t b) {
      const double sa = is_observed(a) ? score(a) : kFailed;
      const double sb = is_observed(b) ? score(b) : kFailed;
      return sa < sb;
    });
    for (const std::size_t v : via)
      for (const std::size_t n : domain().neighbours(v))
        if (!is_proposed(n) && std::find(extras_.begin(), extras_.end(), n) == extras_.end()) extras_.push_back(n);
  }

  Rng rng_;
  std::optional<std::size_t> incumbent_;  ///< centre of the current climb step
  std::optional<std::size_t> base_;       ///< best local optimum found: where jumps start
  std::vector<std::size_t> step_;         ///< jump point of this step, if it began with a jump
  std::vector<std::size_t> frontier_;     ///< the incumbent's neighbours to evaluate in this step
  std::size_t frontier_next_ = 0;
  std::vector<std::size_t> extras_;  ///< two-step points that fill a batch
  std::size_t extras_next_ = 0;
  bool extras_built_ = false;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_local(const SearchDomain& domain, std::uint64_t seed) {
  return std::make_unique<LocalSearch>(domain, seed);
}

}  // namespace tiletune::strategy_detail
