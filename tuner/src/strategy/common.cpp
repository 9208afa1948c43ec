// The protocol bookkeeping shared by every strategy (see common.hpp).
#include "strategy/common.hpp"

#include <fmt/format.h>

#include <cmath>
#include <unordered_set>

#include "tiletune/error.hpp"

namespace tiletune::strategy_detail {

namespace {

/// Samples in a row that may hit proposed points before pick_unproposed lists the rest: at a
/// proposed share f this happens with probability f^32 per pick, so only once nearly all of
/// the domain is proposed, when listing it costs about what the search has already done.
constexpr int kRejections = 32;
/// How many times longer pick_unproposed draws before it walks a domain that is mostly unproposed.
constexpr int kPatience = 32;

}  // namespace

void PointPool::insert(std::size_t point) {
  if (!slots_.emplace(point, items_.size()).second) return;
  items_.push_back(point);
}

void PointPool::erase(std::size_t point) {
  const auto it = slots_.find(point);
  if (it == slots_.end()) return;
  const std::size_t slot = it->second;
  const std::size_t last = items_.back();
  items_[slot] = last;
  slots_[last] = slot;
  items_.pop_back();
  slots_.erase(point);
}

StrategyBase::StrategyBase(std::string_view name, const SearchDomain& domain) : name_(name), domain_(domain) {}

void StrategyBase::claim(std::size_t point, std::vector<std::size_t>& batch) {
  if (!proposed_.emplace(point, std::nan("")).second)
    throw Error(fmt::format("search strategy '{}': internal error: point {} proposed twice", name_, point));
  if (rest_) rest_->erase(point);
  ++outstanding_;
  batch.push_back(point);
}

bool StrategyBase::is_observed(std::size_t point) const {
  const auto it = proposed_.find(point);
  return it != proposed_.end() && !std::isnan(it->second);
}

Error not_outstanding(std::string_view strategy, std::size_t point) {
  return Error(
      fmt::format("search strategy '{}': observe({}) for a point that is not outstanding "
                  "(never proposed, already observed, or outside the domain)",
                  strategy, point));
}

void check_observed_time(std::string_view strategy, const SearchDomain& domain, std::size_t point,
                         std::optional<double> time) {
  if (time && !(std::isfinite(*time) && *time > 0))
    throw Error(
        fmt::format("search strategy '{}': point {} ({}) observed with time {}; a time must be positive "
                    "and finite (pass nullopt for a failed point)",
                    strategy, point, describe_point(domain, point), *time));
}

void StrategyBase::observe(std::size_t point, std::optional<double> time) {
  const auto it = proposed_.find(point);
  if (it == proposed_.end() || !std::isnan(it->second)) throw not_outstanding(name_, point);
  check_observed_time(name_, domain_, point, time);
  --outstanding_;
  ++observed_count_;
  const double s = time ? *time : kFailed;
  it->second = s;
  if (time && (!best_ || s < score(*best_))) best_ = point;
  on_observed(point, s);
}

void StrategyBase::prefer(std::vector<std::size_t> points) {
  if (!proposed_.empty())
    throw Error(
        fmt::format("search strategy '{}': prefer() after the search began (call it before the first "
                    "propose)",
                    name_));
  std::unordered_set<std::size_t> seen;
  for (const std::size_t p : points) {
    (void)domain_.coords(p);  // throws Error naming the point when it is not the domain's
    if (seen.insert(p).second) preferred_.push_back(p);
  }
}

bool StrategyBase::take_preferred(std::vector<std::size_t>& batch) {
  for (; preferred_next_ < preferred_.size(); ++preferred_next_) {
    if (!is_proposed(preferred_[preferred_next_])) {
      claim(preferred_[preferred_next_++], batch);
      return true;
    }
  }
  return false;
}

bool StrategyBase::exhausted() const {
  if (rest_) return rest_->empty();
  const DomainSize size = domain_.size_info();
  return size.exact && proposed_.size() >= size.count;
}

std::optional<std::size_t> StrategyBase::pick_unproposed(Rng& rng) {
  if (exhausted()) return std::nullopt;
  if (!rest_) {
    // While less than half of the domain is proposed, misses mean a source that is hard to
    // sample rather than a domain used up: draw longer before walking it.
    const bool mostly_left = proposed_.size() < domain_.size() / 2;
    const int attempts = mostly_left ? kRejections * kPatience : kRejections;
    for (int attempt = 0; attempt < attempts; ++attempt) {
      const std::optional<std::size_t> p = domain_.sample(rng.word());
      if (p && !is_proposed(*p)) return p;
    }
    list_the_rest();
    if (rest_->empty()) return std::nullopt;
  }
  return rest_->pick(rng);
}

void StrategyBase::list_the_rest() {
  rest_.emplace();
  for (std::optional<std::size_t> p = domain_.next(); p; p = domain_.next(p))
    if (!is_proposed(*p)) rest_->insert(*p);
}

std::string describe_point(const SearchDomain& domain, std::size_t point) {
  std::string text;
  for (std::size_t p = 0; p < domain.dimensions(); ++p)
    text += fmt::format("{}{}={}", p ? " " : "", domain.param_names()[p], domain.value(point, p));
  return text.empty() ? "no params" : text;
}

}  // namespace tiletune::strategy_detail
