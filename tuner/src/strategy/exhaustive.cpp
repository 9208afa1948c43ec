// exhaustive: every point in domain order (a walk of SearchDomain::next), a warm start's
// preferred points and the space's default config first, so that even a search cut short by
// its budget has measured them.
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
    while (batch.size() < max_count && take_preferred(batch)) {}
    if (const auto start = domain().start(); start && !is_proposed(*start) && batch.size() < max_count)
      claim(*start, batch);
    while (batch.size() < max_count && !walked_all_) {
      walked_ = domain().next(walked_);
      if (!walked_)
        walked_all_ = true;
      else if (!is_proposed(*walked_))
        claim(*walked_, batch);
    }
    return batch;
  }

 private:
  void on_observed(std::size_t, double) override {}

  std::optional<std::size_t> walked_;  ///< the last point of the domain's order looked at
  bool walked_all_ = false;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_exhaustive(const SearchDomain& domain) {
  return std::make_unique<Exhaustive>(domain);
}

}  // namespace tiletune::strategy_detail
