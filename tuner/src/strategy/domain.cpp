// SearchDomain: the valid configs of a space as coordinate tuples, indexed by a mixed-radix
// key (coordinate of param 0 + size0 * (coordinate of param 1 + ...)) so that find() and
// neighbours() are a hash lookup per candidate.
#include <fmt/format.h>

#include <limits>

#include "tiletune/error.hpp"
#include "tiletune/strategy.hpp"

namespace tiletune {

namespace {

std::string coords_text(std::span<const std::uint16_t> coords) {
  std::string text = "(";
  for (std::size_t i = 0; i < coords.size(); ++i) text += fmt::format("{}{}", i ? ", " : "", coords[i]);
  return text + ")";
}

}  // namespace

SearchDomain::SearchDomain(std::vector<std::string> param_names, std::vector<std::vector<std::int64_t>> param_values,
                           std::vector<std::vector<std::uint16_t>> points, std::optional<std::size_t> start)
    : names_(std::move(param_names)), values_(std::move(param_values)), points_(std::move(points)), start_(start) {
  if (names_.size() != values_.size())
    throw Error(fmt::format("search domain: {} param names but {} value lists", names_.size(), values_.size()));
  // Every key must fit in 64 bits; a real space is many orders of magnitude smaller.
  std::uint64_t combinations = 1;
  for (std::size_t p = 0; p < values_.size(); ++p) {
    const std::uint64_t n = std::max<std::uint64_t>(values_[p].size(), 1);
    if (combinations > std::numeric_limits<std::uint64_t>::max() / n)
      throw Error(fmt::format("search domain: the params' value lists have more than 2^64 combinations "
                              "(at param '{}')",
                              names_[p]));
    combinations *= n;
  }
  index_.reserve(points_.size());
  for (std::size_t i = 0; i < points_.size(); ++i) {
    const std::vector<std::uint16_t>& c = points_[i];
    if (c.size() != names_.size())
      throw Error(fmt::format("search domain: point {} {} has {} coordinates, expected {} (one per param)", i,
                              coords_text(c), c.size(), names_.size()));
    for (std::size_t p = 0; p < c.size(); ++p) {
      if (c[p] >= values_[p].size())
        throw Error(fmt::format("search domain: point {} {}: coordinate {} of param '{}' is out of range "
                                "(it has {} values)",
                                i, coords_text(c), c[p], names_[p], values_[p].size()));
    }
    const auto [it, inserted] = index_.emplace(key(c), i);
    if (!inserted)
      throw Error(fmt::format("search domain: point {} {} repeats point {}", i, coords_text(c), it->second));
  }
  if (start_ && *start_ >= points_.size())
    throw Error(fmt::format("search domain: start {} is not a point (the domain has {} points)", *start_,
                            points_.size()));
}

std::uint64_t SearchDomain::key(std::span<const std::uint16_t> coords) const {
  std::uint64_t k = 0;
  for (std::size_t p = coords.size(); p-- > 0;) k = k * std::max<std::uint64_t>(values_[p].size(), 1) + coords[p];
  return k;
}

std::int64_t SearchDomain::value(std::size_t point, std::size_t param) const {
  if (point >= points_.size() || param >= names_.size())
    throw Error(fmt::format("search domain: value({}, {}) is outside the domain ({} points, {} params)", point, param,
                            points_.size(), names_.size()));
  return values_[param][points_[point][param]];
}

std::optional<std::size_t> SearchDomain::find(std::span<const std::uint16_t> coords) const {
  if (coords.size() != names_.size()) return std::nullopt;
  for (std::size_t p = 0; p < coords.size(); ++p)
    if (coords[p] >= values_[p].size()) return std::nullopt;
  const auto it = index_.find(key(coords));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::size_t> SearchDomain::neighbours(std::size_t point) const {
  if (point >= points_.size())
    throw Error(fmt::format("search domain: neighbours({}) of a point outside the domain ({} points)", point,
                            points_.size()));
  std::vector<std::size_t> found;
  std::vector<std::uint16_t> c = points_[point];
  for (std::size_t p = 0; p < c.size(); ++p) {
    const std::uint16_t at = c[p];
    if (at > 0) {
      c[p] = static_cast<std::uint16_t>(at - 1);
      if (const auto n = find(c)) found.push_back(*n);
    }
    if (at + 1u < values_[p].size()) {
      c[p] = static_cast<std::uint16_t>(at + 1);
      if (const auto n = find(c)) found.push_back(*n);
    }
    c[p] = at;
  }
  return found;
}

}  // namespace tiletune
