// exhaustive: every point in domain order, the space's default config first, so that even a
// search cut short by its budget has measured the baseline.
#include "strategy/common.hpp"

namespace tiletune::strategy_detail {

namespace {

class Exhaustive final : public StrategyBase {
 public:
  explicit Exhaustive(const SearchDomain& domain) : StrategyBase("exhaustive", domain) {}

  // Its order does not depend on outcomes: it takes a wide window of points in flight.
  [[nodiscard]] bool learns() const override { return false; }

  std::vector<std::size_t> propose(std::size_t max_count) override {
    std::vector<std::size_t> batch;
    if (const auto start = domain().start(); start && !is_proposed(*start) && max_count > 0) claim(*start, batch);
    for (; next_ < domain().size() && batch.size() < max_count; ++next_)
      if (!is_proposed(next_)) claim(next_, batch);
    return batch;
  }

 private:
  void on_observed(std::size_t, double) override {}

  std::size_t next_ = 0;  ///< the lowest point that may not have been proposed yet
};

}  // namespace

std::unique_ptr<SearchStrategy> make_exhaustive(const SearchDomain& domain) {
  return std::make_unique<Exhaustive>(domain);
}

}  // namespace tiletune::strategy_detail
