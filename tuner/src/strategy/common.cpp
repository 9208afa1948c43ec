// The protocol bookkeeping shared by every strategy (see common.hpp).
#include "strategy/common.hpp"

#include <fmt/format.h>

#include <cmath>

#include "tiletune/error.hpp"

namespace tiletune::strategy_detail {

PointPool::PointPool(std::size_t size) : items_(size), slots_(size) {
  for (std::size_t i = 0; i < size; ++i) items_[i] = slots_[i] = i;
}

void PointPool::erase(std::size_t point) {
  const std::size_t slot = slots_[point];
  const std::size_t last = items_.back();
  items_[slot] = last;
  slots_[last] = slot;
  items_.pop_back();
  slots_[point] = kAbsent;
}

StrategyBase::StrategyBase(std::string_view name, const SearchDomain& domain)
    : name_(name),
      domain_(domain),
      unproposed_(domain.size()),
      observed_(domain.size(), 0),
      scores_(domain.size(), kFailed) {}

void StrategyBase::claim(std::size_t point, std::vector<std::size_t>& batch) {
  if (point >= domain_.size() || !unproposed_.contains(point))
    throw Error(fmt::format("search strategy '{}': internal error: point {} proposed twice or out of range", name_,
                            point));
  unproposed_.erase(point);
  ++outstanding_;
  batch.push_back(point);
}

void StrategyBase::observe(std::size_t point, std::optional<double> time) {
  if (point >= domain_.size() || unproposed_.contains(point) || observed_[point])
    throw Error(fmt::format("search strategy '{}': observe({}) for a point that is not outstanding "
                            "(never proposed, already observed, or outside the domain of {} points)",
                            name_, point, domain_.size()));
  if (time && !(std::isfinite(*time) && *time > 0))
    throw Error(fmt::format("search strategy '{}': point {} ({}) observed with time {}; a time must be positive "
                            "and finite (pass nullopt for a failed point)",
                            name_, point, describe_point(domain_, point), *time));
  observed_[point] = 1;
  --outstanding_;
  ++observed_count_;
  const double s = time ? *time : kFailed;
  scores_[point] = s;
  if (time && (!best_ || s < scores_[*best_])) best_ = point;
  on_observed(point, s);
}

std::string describe_point(const SearchDomain& domain, std::size_t point) {
  std::string text;
  for (std::size_t p = 0; p < domain.dimensions(); ++p)
    text += fmt::format("{}{}={}", p ? " " : "", domain.param_names()[p], domain.value(point, p));
  return text.empty() ? "no params" : text;
}

}  // namespace tiletune::strategy_detail
