// lagged: the same search at any number of configs in flight. A strategy that learns chooses
// its k-th proposal from the outcomes of proposals 0..k-kSearchLag only (and from more of them,
// one at a time in proposal order, only when it has nothing to propose without them). What it
// sees is then a function of the seed and the outcomes, not of when they arrived: with up to
// kSearchLag points in flight every outcome it is shown has already been observed, so one
// config in flight, four or eight give the same proposals. Without it, the forest's evaluations
// to 99 % of the optimum differed by up to 2.1x between 1, 4 and 8 in flight on the published
// landscapes, and the width was the host's core count (bench/results/2026-12-07-devvm-strategies-score.md).
#include <deque>
#include <optional>
#include <unordered_map>
#include <utility>

#include "strategy/common.hpp"
#include "tiletune/error.hpp"

namespace tiletune::strategy_detail {

namespace {

class Lagged final : public SearchStrategy {
 public:
  Lagged(std::unique_ptr<SearchStrategy> inner, const SearchDomain& domain, std::size_t lag)
      : inner_(std::move(inner)), domain_(domain), lag_(lag) {}

  [[nodiscard]] std::string_view name() const override { return inner_->name(); }
  [[nodiscard]] bool learns() const override { return true; }
  void prefer(std::vector<std::size_t> points) override { inner_->prefer(std::move(points)); }

  std::vector<std::size_t> propose(std::size_t max_count) override {
    std::vector<std::size_t> batch;
    while (batch.size() < max_count) {
      // The outcomes this proposal may see are due; one not yet observed makes it wait.
      while (delivered_ + lag_ <= proposals_.size())
        if (!deliver_next()) return batch;
      // An inner strategy that had nothing to propose gets one more outcome before it is asked
      // again: asking twice on the same knowledge could draw its random numbers differently.
      if (starved_) {
        if (delivered_ == proposals_.size()) break;  // it knows everything and has nothing: done
        if (!deliver_next()) return batch;
        starved_ = false;
      }
      const std::vector<std::size_t> one = inner_->propose(1);
      if (one.empty()) {
        starved_ = true;
        continue;
      }
      index_.emplace(one.front(), proposals_.size());
      proposals_.push_back(one.front());
      outcomes_.emplace_back();
      batch.push_back(one.front());
    }
    return batch;
  }

  void observe(std::size_t point, std::optional<double> time) override {
    const auto at = index_.find(point);
    if (at == index_.end() || outcomes_[at->second - delivered_]) throw not_outstanding(name(), point);
    check_observed_time(name(), domain_, point, time);
    outcomes_[at->second - delivered_] = Outcome{time};
  }

 private:
  struct Outcome {
    std::optional<double> time;
  };

  /// Shows the inner strategy the oldest outcome it has not seen, when that has been observed.
  bool deliver_next() {
    if (outcomes_.empty() || !outcomes_.front()) return false;
    const std::size_t point = proposals_[delivered_];
    const std::optional<double> time = outcomes_.front()->time;
    outcomes_.pop_front();
    index_.erase(point);
    ++delivered_;
    inner_->observe(point, time);
    return true;
  }

  std::unique_ptr<SearchStrategy> inner_;
  const SearchDomain& domain_;
  std::size_t lag_;
  std::vector<std::size_t> proposals_;                  ///< every point proposed, in order
  std::deque<std::optional<Outcome>> outcomes_;         ///< of proposals delivered_.., as observed
  std::unordered_map<std::size_t, std::size_t> index_;  ///< undelivered points' proposal index
  std::size_t delivered_ = 0;                           ///< outcomes shown to the inner strategy
  bool starved_ = false;                                ///< the inner strategy's last answer was empty
};

}  // namespace

std::unique_ptr<SearchStrategy> make_lagged(std::unique_ptr<SearchStrategy> inner, const SearchDomain& domain,
                                            std::size_t lag) {
  if (lag == 0) throw Error("make_lagged: the lag must be at least 1");
  return std::make_unique<Lagged>(std::move(inner), domain, lag);
}

}  // namespace tiletune::strategy_detail
