// random: a seeded random permutation of the domain, drawn lazily (uniform samples of the
// domain, rejected while proposed). The baseline every other strategy has to beat; it does not
// start at the default config on purpose, but a warm start's preferred points go first.
#include "strategy/common.hpp"

namespace tiletune::strategy_detail {

namespace {

class RandomOrder final : public StrategyBase {
 public:
  RandomOrder(const SearchDomain& domain, std::uint64_t seed) : StrategyBase("random", domain), rng_(seed) {}

  // Its order does not depend on outcomes: it takes a wide window of points in flight.
  [[nodiscard]] bool learns() const override { return false; }

  std::vector<std::size_t> propose(std::size_t max_count) override {
    std::vector<std::size_t> batch;
    while (batch.size() < max_count && take_preferred(batch)) {}
    while (batch.size() < max_count) {
      const std::optional<std::size_t> p = pick_unproposed(rng_);
      if (!p) break;
      claim(*p, batch);
    }
    return batch;
  }

 private:
  void on_observed(std::size_t, double) override {}

  Rng rng_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_random(const SearchDomain& domain, std::uint64_t seed) {
  return std::make_unique<RandomOrder>(domain, seed);
}

}  // namespace tiletune::strategy_detail
