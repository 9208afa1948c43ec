// SearchDomain: a param grid and a DomainSource that says which of its cells are points. The
// list source holds an explicit list indexed by a mixed-radix key of the coordinates (the
// last param varies fastest), so that find() and neighbours() are a hash lookup per candidate.
#include <fmt/format.h>

#include <limits>
#include <unordered_map>

#include "common/random_words.hpp"
#include "tiletune/error.hpp"
#include "tiletune/strategy.hpp"

namespace tiletune {

namespace {

std::string coords_text(std::span<const std::uint16_t> coords) {
  std::string text = "(";
  for (std::size_t i = 0; i < coords.size(); ++i) text += fmt::format("{}{}", i ? ", " : "", coords[i]);
  return text + ")";
}

/// The product of the value lists' sizes; throws Error past 2^64 (every key must fit).
std::uint64_t grid_size_of(const std::vector<std::string>& names,
                           const std::vector<std::vector<std::int64_t>>& values) {
  if (names.size() != values.size())
    throw Error(fmt::format("search domain: {} param names but {} value lists", names.size(), values.size()));
  std::uint64_t combinations = 1;
  for (std::size_t p = 0; p < values.size(); ++p) {
    if (values[p].size() > std::numeric_limits<std::uint16_t>::max())
      throw Error(fmt::format("search domain: param '{}' has {} values; a search handles at most 65535", names[p],
                              values[p].size()));
    const std::uint64_t n = std::max<std::uint64_t>(values[p].size(), 1);
    if (combinations > std::numeric_limits<std::uint64_t>::max() / n)
      throw Error(
          fmt::format("search domain: the params' value lists have more than 2^64 combinations "
                      "(at param '{}')",
                      names[p]));
    combinations *= n;
  }
  return combinations;
}

/// An explicit list of points: ids are list positions.
class ListSource final : public DomainSource {
 public:
  ListSource(const std::vector<std::string>& names, const std::vector<std::vector<std::int64_t>>& values,
             std::vector<std::vector<std::uint16_t>> points)
      : values_(values), points_(std::move(points)) {
    index_.reserve(points_.size());
    for (std::size_t i = 0; i < points_.size(); ++i) {
      const std::vector<std::uint16_t>& c = points_[i];
      if (c.size() != names.size())
        throw Error(fmt::format("search domain: point {} {} has {} coordinates, expected {} (one per param)", i,
                                coords_text(c), c.size(), names.size()));
      for (std::size_t p = 0; p < c.size(); ++p) {
        if (c[p] >= values_[p].size())
          throw Error(
              fmt::format("search domain: point {} {}: coordinate {} of param '{}' is out of range "
                          "(it has {} values)",
                          i, coords_text(c), c[p], names[p], values_[p].size()));
      }
      const auto [it, inserted] = index_.emplace(key(c), i);
      if (!inserted)
        throw Error(fmt::format("search domain: point {} {} repeats point {}", i, coords_text(c), it->second));
    }
  }

  DomainSize size() const override { return {points_.size(), true, 0}; }

  std::vector<std::uint16_t> coords(std::size_t point) const override {
    if (point >= points_.size())
      throw Error(fmt::format("search domain: point {} is outside the domain ({} points)", point, points_.size()));
    return points_[point];
  }

  std::optional<std::size_t> find(std::span<const std::uint16_t> coords) const override {
    const auto it = index_.find(key(coords));
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }

  std::optional<std::size_t> sample(std::uint64_t random) const override {
    if (points_.empty()) return std::nullopt;
    return random_words::below(random, points_.size());
  }

  std::optional<std::size_t> next(std::optional<std::size_t> after) const override {
    const std::size_t i = after ? *after + 1 : 0;
    if (i >= points_.size()) return std::nullopt;
    return i;
  }

 private:
  [[nodiscard]] std::uint64_t key(std::span<const std::uint16_t> coords) const {
    std::uint64_t k = 0;
    for (std::size_t p = 0; p < coords.size(); ++p) k = k * std::max<std::uint64_t>(values_[p].size(), 1) + coords[p];
    return k;
  }

  std::vector<std::vector<std::int64_t>> values_;
  std::vector<std::vector<std::uint16_t>> points_;
  std::unordered_map<std::uint64_t, std::size_t> index_;
};

}  // namespace

SearchDomain SearchDomain::from_source(std::vector<std::string> param_names,
                                       std::vector<std::vector<std::int64_t>> param_values,
                                       std::shared_ptr<const DomainSource> source, std::optional<std::size_t> start) {
  if (!source) throw Error("search domain: no source of points");
  SearchDomain d;
  d.grid_size_ = grid_size_of(param_names, param_values);
  d.names_ = std::move(param_names);
  d.values_ = std::move(param_values);
  d.source_ = std::move(source);
  if (start) (void)d.coords(*start);  // throws when start is not a point
  d.start_ = start;
  return d;
}

SearchDomain::SearchDomain(std::vector<std::string> param_names, std::vector<std::vector<std::int64_t>> param_values,
                           std::vector<std::vector<std::uint16_t>> points, std::optional<std::size_t> start)
    : names_(std::move(param_names)), values_(std::move(param_values)), grid_size_(grid_size_of(names_, values_)) {
  const std::size_t count = points.size();
  source_ = std::make_shared<ListSource>(names_, values_, std::move(points));
  if (start && *start >= count)
    throw Error(fmt::format("search domain: start {} is not a point (the domain has {} points)", *start, count));
  start_ = start;
}

std::vector<std::uint16_t> SearchDomain::coords(std::size_t point) const {
  if (!source_) throw Error(fmt::format("search domain: point {} of an empty domain", point));
  return source_->coords(point);
}

std::int64_t SearchDomain::value(std::size_t point, std::size_t param) const {
  if (param >= names_.size())
    throw Error(fmt::format("search domain: value({}, {}): the domain has {} params", point, param, names_.size()));
  return values_[param][coords(point)[param]];
}

std::optional<std::size_t> SearchDomain::find(std::span<const std::uint16_t> coords) const {
  if (!source_ || coords.size() != names_.size()) return std::nullopt;
  for (std::size_t p = 0; p < coords.size(); ++p)
    if (coords[p] >= values_[p].size()) return std::nullopt;
  return source_->find(coords);
}

std::vector<std::size_t> SearchDomain::neighbours(std::size_t point) const {
  std::vector<std::size_t> found;
  std::vector<std::uint16_t> c = coords(point);
  for (std::size_t p = 0; p < c.size(); ++p) {
    const std::uint16_t at = c[p];
    if (at > 0) {
      c[p] = static_cast<std::uint16_t>(at - 1);
      if (const auto n = source_->find(c)) found.push_back(*n);
    }
    if (at + 1u < values_[p].size()) {
      c[p] = static_cast<std::uint16_t>(at + 1);
      if (const auto n = source_->find(c)) found.push_back(*n);
    }
    c[p] = at;
  }
  return found;
}

std::optional<std::size_t> SearchDomain::sample(std::uint64_t random) const {
  return source_ ? source_->sample(random) : std::nullopt;
}

std::optional<std::size_t> SearchDomain::next(std::optional<std::size_t> after) const {
  return source_ ? source_->next(after) : std::nullopt;
}

}  // namespace tiletune
