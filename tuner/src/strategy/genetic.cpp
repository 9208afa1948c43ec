// genetic: a steady-state genetic algorithm. A small population (the start config and random
// points at first) breeds children by tournament selection, uniform crossover of coordinates
// and ±1-step mutations; a measured child replaces the population's worst member when it is
// faster, so the best members are never lost (elitism). Children that are not valid configs or
// were proposed before are repaired to the nearest unproposed config on the grid. Breeding
// from the current population lets any batch size work, one child or thirty-two at a time.
// A warm start's preferred points are proposed first and seed the population.
#include <algorithm>
#include <deque>
#include <unordered_set>

#include "strategy/common.hpp"

namespace tiletune::strategy_detail {

namespace {

constexpr std::size_t kPopulation = 20;
constexpr std::size_t kTournament = 3;
/// Share of children replaced by a random point, to keep some diversity.
constexpr double kImmigrantShare = 0.05;
/// Grid cells a repair searches (breadth-first) before it settles for a random point.
constexpr std::size_t kRepairReach = 512;

class Genetic final : public StrategyBase {
 public:
  Genetic(const SearchDomain& domain, std::uint64_t seed)
      : StrategyBase("genetic", domain),
        rng_(seed),
        capacity_(static_cast<std::size_t>(std::min<std::uint64_t>(kPopulation, domain.size()))) {}

  // Its proposals depend on what it has observed: it gets a narrow window in flight.
  [[nodiscard]] bool learns() const override { return true; }

  std::vector<std::size_t> propose(std::size_t max_count) override {
    std::vector<std::size_t> batch;
    while (batch.size() < max_count) {
      // Preferred points first: the first ones are members, the rest compete as children.
      if (take_preferred(batch)) {
        if (seeded_ < capacity_) {
          population_.push_back(batch.back());
          ++seeded_;
        }
        continue;
      }
      if (seeded_ < capacity_) {
        const auto start = domain().start();
        const std::optional<std::size_t> p = start && !is_proposed(*start) ? start : pick_unproposed(rng_);
        if (!p) break;
        claim(*p, batch);
        population_.push_back(*p);
        ++seeded_;
        continue;
      }
      if (observed_members() < 2) break;  // nothing to breed from until the first outcomes
      const std::optional<std::size_t> p = child();
      if (!p) break;
      claim(*p, batch);
    }
    return batch;
  }

 private:
  void on_observed(std::size_t point, double s) override {
    if (std::find(population_.begin(), population_.end(), point) != population_.end()) return;
    // A child: it replaces the worst measured member when it is faster.
    std::optional<std::size_t> worst;
    for (std::size_t i = 0; i < population_.size(); ++i) {
      if (!is_observed(population_[i])) continue;
      if (!worst || score(population_[i]) > score(population_[*worst])) worst = i;
    }
    if (worst && s < score(population_[*worst])) population_[*worst] = point;
  }

  std::size_t observed_members() const {
    return static_cast<std::size_t>(
        std::count_if(population_.begin(), population_.end(), [&](std::size_t p) { return is_observed(p); }));
  }

  /// The fastest of a few random measured members (failed members lose every comparison).
  std::size_t tournament() {
    std::optional<std::size_t> winner;
    for (std::size_t round = 0; round < kTournament;) {
      const std::size_t p = population_[rng_.below(population_.size())];
      if (!is_observed(p)) continue;
      if (!winner || score(p) < score(*winner)) winner = p;
      ++round;
    }
    return *winner;
  }

  /// nullopt when every point has been proposed.
  std::optional<std::size_t> child() {
    if (rng_.chance(kImmigrantShare)) return pick_unproposed(rng_);
    const std::size_t a = tournament();
    const std::size_t b = tournament();
    const std::size_t dims = domain().dimensions();
    const std::vector<std::uint16_t> ca = domain().coords(a);
    const std::vector<std::uint16_t> cb = domain().coords(b);
    std::vector<std::uint16_t> c(dims);
    for (std::size_t d = 0; d < dims; ++d) c[d] = rng_.chance(0.5) ? ca[d] : cb[d];
    for (std::size_t d = 0; d < dims; ++d) {
      if (!rng_.chance(1.0 / static_cast<double>(dims))) continue;
      const std::size_t values = domain().param_values()[d].size();
      if (c[d] == 0 || (c[d] + 1u < values && rng_.chance(0.5))) {
        if (c[d] + 1u < values) ++c[d];
      } else {
        --c[d];
      }
    }
    if (const auto p = domain().find(c); p && !is_proposed(*p)) return *p;
    return repair(std::move(c));
  }

  /// The nearest unproposed config to c on the grid (breadth-first over ±1 steps, through
  /// invalid cells too, in random order, at most kRepairReach cells), else a random
  /// unproposed point.
  std::optional<std::size_t> repair(std::vector<std::uint16_t> c) {
    const std::size_t dims = domain().dimensions();
    std::deque<std::vector<std::uint16_t>> queue{c};
    std::unordered_set<std::uint64_t> seen{cell_key(c)};
    std::vector<std::size_t> moves(2 * dims);
    for (std::size_t i = 0; i < moves.size(); ++i) moves[i] = i;
    while (!queue.empty() && seen.size() < kRepairReach) {
      const std::vector<std::uint16_t> at = std::move(queue.front());
      queue.pop_front();
      rng_.shuffle(moves);
      for (const std::size_t m : moves) {
        std::vector<std::uint16_t> next = at;
        const std::size_t d = m / 2;
        if (m % 2 == 0) {
          if (next[d] == 0) continue;
          --next[d];
        } else {
          if (next[d] + 1u >= domain().param_values()[d].size()) continue;
          ++next[d];
        }
        if (!seen.insert(cell_key(next)).second) continue;
        if (const auto p = domain().find(next); p && !is_proposed(*p)) return *p;
        queue.push_back(std::move(next));
      }
    }
    return pick_unproposed(rng_);
  }

  std::uint64_t cell_key(const std::vector<std::uint16_t>& c) const {
    std::uint64_t k = 0;
    for (std::size_t d = c.size(); d-- > 0;) k = k * domain().param_values()[d].size() + c[d];
    return k;
  }

  Rng rng_;
  std::size_t capacity_;
  std::size_t seeded_ = 0;  ///< initial members proposed so far
  std::vector<std::size_t> population_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_genetic(const SearchDomain& domain, std::uint64_t seed) {
  return std::make_unique<Genetic>(domain, seed);
}

}  // namespace tiletune::strategy_detail
