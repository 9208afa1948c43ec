// A space's valid configs for one problem as a lazy search domain: nothing of the space's size
// is held. A point's id is the mixed-radix key of its coordinates with the last param least
// significant, so that key order is the Enumerator's order. The params are split into groups
// that the constraints connect (ATF's chain of trees): a group small enough is enumerated
// depth-first with each constraint checked as soon as its params are bound, which gives an
// exact count and uniform sampling by a pick from its list; a larger group is sampled by
// rejection (with the same early checks) and its count estimated from the acceptance rate.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "common/random_words.hpp"
#include "tiletune/error.hpp"
#include "tiletune/plan.hpp"
#include "tiletune/replay.hpp"
#include "tiletune/trial.hpp"

namespace tiletune {

namespace {

/// DFS nodes (params bound and checked) a group's enumeration may visit: at ~50-100 ns a node
/// about 0.2-0.4 s, and at most 2^22 sub-configs of 2 bytes a param held (a few tens of MiB at
/// worst). Past it the group is sampled by rejection instead.
constexpr std::uint64_t enumeration_node_budget = std::uint64_t{1} << 22;
/// Rejection draws an estimate of a group's count takes at most, and the accepted draws after
/// which it stops (16384: a 95 % relative error of at most 1.96/128, about 1.5 %).
constexpr std::uint64_t estimate_draw_budget = std::uint64_t{1} << 22;
constexpr std::uint64_t estimate_target_accepts = 16384;
/// The fixed seed of the estimate's draws: a space's counts are the same in every run.
constexpr std::uint64_t estimate_seed = 0x7417e7u;
/// The most valid configs counted one by one for a shard (each costs a shard key and a hash,
/// about 0.5 us); above it the shard's count is estimated as count / N.
constexpr std::uint64_t shard_walk_budget = std::uint64_t{1} << 20;
/// Rejection draws one sample may take in a group at most, and whole-config draws for a shard (times N).
constexpr std::uint64_t group_draw_limit = std::uint64_t{1} << 22;
constexpr std::uint64_t shard_draws_per_shard = 64;

using random_words::below;
using random_words::splitmix64;

/// One group of params that the constraints connect, in increasing param order.
struct Group {
  std::vector<std::size_t> params;
  std::vector<std::vector<std::size_t>> checks_at;  ///< per position: constraints bound there
  std::uint64_t product = 1;
  bool listed = false;               ///< enumerated: valid holds every valid sub-config
  std::vector<std::uint16_t> valid;  ///< listed: coords, params.size() each, in key order
  DomainSize size;
  double acceptance = 1;  ///< not listed: the estimated share of valid sub-configs
};

class SpaceSource final : public DomainSource {
 public:
  SpaceSource(const Space& space, const Problem& problem, const Shard& shard)
      : space_(space), problem_(problem), shard_(shard), base_(problem.sizes.size()) {
    radix_.reserve(space_.params.size());
    for (const Axis& a : space_.params) radix_.push_back(a.values.size());
    compute_weights();
    classify_constraints();
    if (space_.allowed) {
      list_allowed();
    } else if (!constant_false_ && !empty_grid_) {
      make_groups();
      for (Group& g : groups_) fill_group(g);
    }
    whole_ = combined_size();
    size_ = shard_.whole() ? whole_ : shard_size();
  }

  [[nodiscard]] DomainSize whole_size() const { return whole_; }
  DomainSize size() const override { return size_; }

  std::vector<std::uint16_t> coords(std::size_t point) const override {
    const auto c = decode(point);
    if (!c || !find(*c)) throw not_a_point(point);
    return *c;
  }

  std::optional<std::size_t> find(std::span<const std::uint16_t> c) const override {
    if (c.size() != radix_.size() || constant_false_ || empty_grid_) return std::nullopt;
    for (std::size_t p = 0; p < c.size(); ++p)
      if (c[p] >= radix_[p]) return std::nullopt;
    const std::uint64_t k = key(c);
    if (space_.allowed) {
      if (!std::binary_search(allowed_keys_.begin(), allowed_keys_.end(), k)) return std::nullopt;
    } else {
      std::vector<std::int64_t> slots = slots_of(c);
      for (std::size_t i : param_checks_)
        if (!passes(i, slots)) return std::nullopt;
    }
    if (!in_this_shard(c)) return std::nullopt;
    return static_cast<std::size_t>(k);
  }

  std::optional<std::size_t> sample(std::uint64_t random) const override {
    if (size_.count == 0 && size_.exact) return std::nullopt;
    std::uint64_t state = random;
    const std::uint64_t attempts = shard_.whole() ? 1 : shard_draws_per_shard * shard_.count;
    std::vector<std::uint16_t> c(radix_.size());
    std::vector<std::int64_t> slots = slots_of(c);
    for (std::uint64_t a = 0; a < attempts; ++a) {
      if (space_.allowed) {
        if (allowed_keys_.empty()) return std::nullopt;
        c = *decode(allowed_keys_[below(splitmix64(state), allowed_keys_.size())]);
      } else {
        for (const Group& g : groups_)
          if (!draw(g, state, c, slots)) return std::nullopt;
      }
      if (in_this_shard(c)) return static_cast<std::size_t>(key(c));
    }
    return std::nullopt;
  }

  std::optional<std::size_t> next(std::optional<std::size_t> after) const override {
    if (constant_false_ || empty_grid_) return std::nullopt;
    if (space_.allowed) return next_allowed(after);
    const std::size_t n = radix_.size();
    if (n == 0) return after ? std::nullopt : std::optional<std::size_t>(0);
    // Depth-first in key order from `after`, each constraint checked at its last param.
    std::vector<std::int64_t> at(n, 0);
    std::vector<std::uint16_t> c(n, 0);
    std::size_t p = 0;
    if (after) {
      const auto from = decode(*after);
      if (!from) return std::nullopt;
      c = *from;
      for (std::size_t q = 0; q < n; ++q) at[q] = c[q];
    } else {
      at[0] = -1;
    }
    std::vector<std::int64_t> slots = slots_of(c);
    // From `after`: advance at the first param whose checks its prefix fails (after need not be
    // a point), else at the last.
    if (after) {
      p = n - 1;
      for (std::size_t q = 0; q + 1 < n; ++q)
        if (!passes_all(checks_at_param_[q], slots)) {
          p = q;
          break;
        }
    }
    while (true) {
      ++at[p];
      if (at[p] >= static_cast<std::int64_t>(radix_[p])) {
        if (p == 0) return std::nullopt;
        --p;
        continue;
      }
      c[p] = static_cast<std::uint16_t>(at[p]);
      slots[base_ + p] = space_.params[p].values[c[p]];
      if (!passes_all(checks_at_param_[p], slots)) continue;
      if (p + 1 < n) {
        ++p;
        at[p] = -1;
        continue;
      }
      if (in_this_shard(c)) return static_cast<std::size_t>(key(c));
    }
  }

 private:
  Error not_a_point(std::size_t point) const {
    return Error(
        fmt::format("space domain of {} ({}): id {} is not a point (a config that is not valid, or "
                    "outside the grid of {} cells)",
                    space_.yaml_path.string(), format_problem(space_, problem_), point, grid_));
  }

  void compute_weights() {
    const std::size_t n = radix_.size();
    weight_.assign(n, 1);
    grid_ = 1;
    for (std::size_t p = n; p-- > 0;) {
      const std::uint64_t r = radix_[p];
      if (r > std::numeric_limits<std::uint16_t>::max())
        throw Error(fmt::format("{}: param {} has {} values; a search handles at most 65535", space_.yaml_path.string(),
                                space_.params[p].name, r));
      if (r == 0) empty_grid_ = true;
      weight_[p] = grid_;
      if (r > 0 && grid_ > std::numeric_limits<std::uint64_t>::max() / r)
        throw Error(
            fmt::format("{}: the params have more than 2^64 combinations (at param {}); a search handles at "
                        "most that many",
                        space_.yaml_path.string(), space_.params[p].name));
      grid_ *= std::max<std::uint64_t>(r, 1);
    }
  }

  /// Which params each constraint reads; a constraint of problem sizes only is decided now.
  void classify_constraints() {
    const std::size_t n = radix_.size();
    checks_at_param_.assign(n, {});
    params_of_.resize(space_.constraints.size());
    std::vector<std::int64_t> slots = slots_of(std::vector<std::uint16_t>(n, 0));
    for (std::size_t i = 0; i < space_.constraints.size(); ++i) {
      std::vector<std::size_t>& params = params_of_[i];
      bool known = true;
      for (const std::string& name : space_.constraints[i].condition.expr.variables()) {
        const int p = space_.param_index(name);
        if (p >= 0)
          params.push_back(static_cast<std::size_t>(p));
        else if (space_.problem_index(name) < 0)
          known = false;
      }
      if (!known) {  // cannot say what it reads: it joins every param, checked last
        params.resize(n);
        std::iota(params.begin(), params.end(), std::size_t{0});
      }
      std::sort(params.begin(), params.end());
      params.erase(std::unique(params.begin(), params.end()), params.end());
      if (params.empty()) {
        if (!empty_grid_ && !passes(i, slots)) constant_false_ = true;
        continue;
      }
      param_checks_.push_back(i);
      checks_at_param_[params.back()].push_back(i);
    }
  }

  /// Connected components of the params through the constraints (union-find).
  void make_groups() {
    const std::size_t n = radix_.size();
    std::vector<std::size_t> parent(n);
    std::iota(parent.begin(), parent.end(), std::size_t{0});
    auto root = [&](std::size_t p) {
      while (parent[p] != p) p = parent[p] = parent[parent[p]];
      return p;
    };
    for (std::size_t i : param_checks_)
      for (std::size_t p : params_of_[i]) parent[root(p)] = root(params_of_[i].front());
    std::unordered_map<std::size_t, std::size_t> group_of_root;
    for (std::size_t p = 0; p < n; ++p) {
      const auto [it, added] = group_of_root.emplace(root(p), groups_.size());
      if (added) groups_.emplace_back();
      groups_[it->second].params.push_back(p);
    }
    for (Group& g : groups_) {
      g.checks_at.assign(g.params.size(), {});
      for (std::size_t k = 0; k < g.params.size(); ++k) {
        g.checks_at[k] = checks_at_param_[g.params[k]];
        const std::uint64_t r = radix_[g.params[k]];
        g.product = g.product > std::numeric_limits<std::uint64_t>::max() / r
                        ? std::numeric_limits<std::uint64_t>::max()
                        : g.product * r;
      }
    }
  }

  void fill_group(Group& g) {
    std::vector<std::int64_t> slots = slots_of(std::vector<std::uint16_t>(radix_.size(), 0));
    if (g.checks_at.size() == 1 && g.checks_at[0].empty()) {  // a free param: every value, no list
      g.size = {g.product, true, 0};
      return;
    }
    if (enumerate(g, slots)) {
      g.listed = true;
      g.size = {g.valid.size() / g.params.size(), true, 0};
      return;
    }
    estimate(g, slots);
  }

  /// Depth-first over the group's params with early checks; false past the node budget.
  bool enumerate(Group& g, std::vector<std::int64_t>& slots) const {
    const std::size_t m = g.params.size();
    std::vector<std::int64_t> at(m, -1);
    std::uint64_t nodes = 0;
    std::size_t k = 0;
    while (true) {
      const std::size_t p = g.params[k];
      if (++at[k] >= static_cast<std::int64_t>(radix_[p])) {
        if (k == 0) return true;
        --k;
        continue;
      }
      if (++nodes > enumeration_node_budget) {
        g.valid.clear();
        g.valid.shrink_to_fit();
        return false;
      }
      slots[base_ + p] = space_.params[p].values[static_cast<std::size_t>(at[k])];
      if (!passes_all(g.checks_at[k], slots)) continue;
      if (k + 1 < m) {
        at[++k] = -1;
        continue;
      }
      for (std::int64_t a : at) g.valid.push_back(static_cast<std::uint16_t>(a));
    }
  }

  /// One rejection draw of a group: its params drawn uniformly one by one, each constraint
  /// checked as soon as its params are drawn. True when the sub-config is valid.
  bool draw_once(const Group& g, std::uint64_t& state, std::vector<std::uint16_t>& c,
                 std::vector<std::int64_t>& slots) const {
    for (std::size_t k = 0; k < g.params.size(); ++k) {
      const std::size_t p = g.params[k];
      c[p] = static_cast<std::uint16_t>(below(splitmix64(state), radix_[p]));
      slots[base_ + p] = space_.params[p].values[c[p]];
      if (!passes_all(g.checks_at[k], slots)) return false;
    }
    return true;
  }

  /// A uniform valid sub-config of a group into c (and slots); false when none was found.
  bool draw(const Group& g, std::uint64_t& state, std::vector<std::uint16_t>& c,
            std::vector<std::int64_t>& slots) const {
    if (g.listed) {
      const std::size_t m = g.params.size();
      const std::size_t pick = below(splitmix64(state), g.valid.size() / m);
      for (std::size_t k = 0; k < m; ++k) {
        c[g.params[k]] = g.valid[pick * m + k];
        slots[base_ + g.params[k]] = space_.params[g.params[k]].values[c[g.params[k]]];
      }
      return true;
    }
    // Enough draws that a group of the estimated acceptance fails with odds of e^-64.
    const double enough = g.acceptance > 0 ? 64 / g.acceptance : double(group_draw_limit);
    const auto limit = static_cast<std::uint64_t>(std::min(enough, double(group_draw_limit)));
    for (std::uint64_t d = 0; d < limit; ++d)
      if (draw_once(g, state, c, slots)) return true;
    return false;
  }

  /// The group's count from the acceptance rate of rejection draws: p = a/d, count = p x product,
  /// 95 % relative error 1.96 sqrt((1 - p) / a) (the binomial's normal approximation).
  void estimate(Group& g, std::vector<std::int64_t>& slots) const {
    std::uint64_t state = estimate_seed;
    std::vector<std::uint16_t> c(radix_.size(), 0);
    std::uint64_t draws = 0;
    std::uint64_t accepted = 0;
    while (draws < estimate_draw_budget && accepted < estimate_target_accepts) {
      ++draws;
      if (draw_once(g, state, c, slots)) ++accepted;
    }
    const double p = double(accepted) / double(draws);
    g.acceptance = p;
    g.size.exact = false;
    g.size.count = static_cast<std::uint64_t>(std::llround(p * double(g.product)));
    // None in 2^22 draws: 0, with the whole (unknown) count as the error.
    g.size.relative_error = accepted ? 1.96 * std::sqrt((1 - p) / double(accepted)) : 1.0;
  }

  void list_allowed() {
    const AllowedConfigs& allowed = *space_.allowed;
    std::vector<std::unordered_map<std::int64_t, std::uint16_t>> index_of(radix_.size());
    for (std::size_t p = 0; p < radix_.size(); ++p)
      for (std::size_t i = 0; i < radix_[p]; ++i)
        index_of[p].emplace(space_.params[p].values[i], static_cast<std::uint16_t>(i));
    std::vector<std::uint16_t> c(radix_.size());
    for (std::size_t i = 0; i < allowed.size() && !constant_false_; ++i) {
      const auto values = allowed.config(i);
      bool on_grid = values.size() == c.size();
      for (std::size_t p = 0; on_grid && p < c.size(); ++p) {
        const auto it = index_of[p].find(values[p]);
        on_grid = it != index_of[p].end();
        if (on_grid) c[p] = it->second;
      }
      if (!on_grid) continue;
      const std::vector<std::int64_t> slots = slots_of(c);
      if (std::all_of(param_checks_.begin(), param_checks_.end(), [&](std::size_t k) { return passes(k, slots); }))
        allowed_keys_.push_back(key(c));
    }
    std::sort(allowed_keys_.begin(), allowed_keys_.end());
    allowed_keys_.erase(std::unique(allowed_keys_.begin(), allowed_keys_.end()), allowed_keys_.end());
  }

  std::optional<std::size_t> next_allowed(std::optional<std::size_t> after) const {
    auto it = after ? std::upper_bound(allowed_keys_.begin(), allowed_keys_.end(), *after) : allowed_keys_.begin();
    for (; it != allowed_keys_.end(); ++it)
      if (in_this_shard(*decode(*it))) return static_cast<std::size_t>(*it);
    return std::nullopt;
  }

  /// Product of the groups' counts; the relative errors of estimates add in quadrature.
  [[nodiscard]] DomainSize combined_size() const {
    if (constant_false_ || empty_grid_) return {0, true, 0};
    if (space_.allowed) return {allowed_keys_.size(), true, 0};
    DomainSize s{1, true, 0};
    double count = 1;
    double variance = 0;
    for (const Group& g : groups_) {
      count *= double(g.size.count);
      s.count = s.count > std::numeric_limits<std::uint64_t>::max() / std::max<std::uint64_t>(g.size.count, 1)
                    ? std::numeric_limits<std::uint64_t>::max()
                    : s.count * g.size.count;
      s.exact = s.exact && g.size.exact;
      variance += g.size.relative_error * g.size.relative_error;
    }
    if (!s.exact && count < 1.8e19) s.count = static_cast<std::uint64_t>(std::llround(count));
    s.relative_error = std::sqrt(variance);
    return s;
  }

  /// The shard's count: counted when every group is listed and the space small enough, else
  /// count / N, whose 95 % relative error adds 1.96 sqrt((N - 1) / count) (a config's shard
  /// is a hash: as if each fell in one of N at random) to the count's own.
  [[nodiscard]] DomainSize shard_size() const {
    if (whole_.count == 0) return whole_;
    const bool all_listed = space_.allowed || std::all_of(groups_.begin(), groups_.end(), [](const Group& g) {
                              return g.listed || (g.size.exact && g.checks_at.size() == 1);
                            });
    if (whole_.exact && all_listed && whole_.count <= shard_walk_budget) {
      std::uint64_t counted = 0;
      for (auto p = next(std::nullopt); p; p = next(p)) ++counted;
      return {counted, true, 0};
    }
    const double n = shard_.count;
    const double share = 1.96 * std::sqrt((n - 1) / double(whole_.count));
    return {static_cast<std::uint64_t>(std::llround(double(whole_.count) / n)), false,
            std::sqrt(whole_.relative_error * whole_.relative_error + share * share)};
  }

  [[nodiscard]] bool in_this_shard(std::span<const std::uint16_t> c) const {
    if (shard_.whole()) return true;
    Config config;
    config.values.reserve(c.size());
    for (std::size_t p = 0; p < c.size(); ++p) config.values.push_back(space_.params[p].values[c[p]]);
    return in_shard(space_, config, shard_);
  }

  [[nodiscard]] bool passes(std::size_t constraint, std::span<const std::int64_t> slots) const {
    try {
      return space_.constraints[constraint].condition.expr.eval(slots) != 0;
    } catch (const EvalError&) {
      return false;  // as the Enumerator: a constraint that cannot be evaluated drops the config
    }
  }
  [[nodiscard]] bool passes_all(const std::vector<std::size_t>& checks, std::span<const std::int64_t> slots) const {
    for (std::size_t i : checks)
      if (!passes(i, slots)) return false;
    return true;
  }

  [[nodiscard]] std::vector<std::int64_t> slots_of(std::span<const std::uint16_t> c) const {
    std::vector<std::int64_t> slots = problem_.sizes;
    slots.resize(base_ + radix_.size(), 0);
    for (std::size_t p = 0; p < c.size() && p < radix_.size(); ++p)
      if (radix_[p] > 0) slots[base_ + p] = space_.params[p].values[c[p]];
    return slots;
  }

  [[nodiscard]] std::uint64_t key(std::span<const std::uint16_t> c) const {
    std::uint64_t k = 0;
    for (std::size_t p = 0; p < c.size(); ++p) k += c[p] * weight_[p];
    return k;
  }

  /// The coordinates of a key; nullopt when it is outside the grid.
  [[nodiscard]] std::optional<std::vector<std::uint16_t>> decode(std::uint64_t k) const {
    if (k >= grid_ || empty_grid_) return std::nullopt;
    std::vector<std::uint16_t> c(radix_.size());
    for (std::size_t p = 0; p < c.size(); ++p) {
      c[p] = static_cast<std::uint16_t>(k / weight_[p]);
      k %= weight_[p];
    }
    return c;
  }

  Space space_;  // a copy: the domain's copies share this source and may outlive the caller's
  Problem problem_;
  Shard shard_;
  std::size_t base_ = 0;  // slots: problem sizes first, then params
  std::vector<std::uint64_t> radix_;
  std::vector<std::uint64_t> weight_;
  std::uint64_t grid_ = 1;
  bool empty_grid_ = false;
  bool constant_false_ = false;                            // a constraint of problem sizes only fails for this problem
  std::vector<std::vector<std::size_t>> params_of_;        // per constraint: the params it reads
  std::vector<std::size_t> param_checks_;                  // constraints that read a param
  std::vector<std::vector<std::size_t>> checks_at_param_;  // per param: constraints whose last param it is
  std::vector<Group> groups_;
  std::vector<std::uint64_t> allowed_keys_;  // `allowed:` lists: the valid listed configs' keys, sorted
  DomainSize whole_;
  DomainSize size_;
};

/// The coordinates of a config's values on the params' value lists; nullopt for a wrong arity
/// or a value a param does not have.
std::optional<std::vector<std::uint16_t>> coords_of(const std::vector<std::vector<std::int64_t>>& param_values,
                                                    std::span<const std::int64_t> values) {
  if (values.size() != param_values.size()) return std::nullopt;
  std::vector<std::uint16_t> coords(values.size());
  for (std::size_t p = 0; p < values.size(); ++p) {
    const auto at = std::find(param_values[p].begin(), param_values[p].end(), values[p]);
    if (at == param_values[p].end()) return std::nullopt;
    coords[p] = static_cast<std::uint16_t>(at - param_values[p].begin());
  }
  return coords;
}

}  // namespace

Config SpaceDomain::config(std::size_t point) const {
  const std::vector<std::uint16_t> coords = domain.coords(point);
  Config c;
  c.values.reserve(coords.size());
  for (std::size_t p = 0; p < coords.size(); ++p) c.values.push_back(domain.param_values()[p][coords[p]]);
  return c;
}

std::optional<std::size_t> SpaceDomain::point_of(const Config& config) const {
  const std::optional<std::vector<std::uint16_t>> coords = coords_of(domain.param_values(), config.values);
  return coords ? domain.find(*coords) : std::nullopt;
}

std::optional<std::size_t> SpaceDomain::point_of(const Space& space, const std::string& canonical_params) const {
  const std::optional<Config> config = parse_canonical_config(space, canonical_params);
  return config ? point_of(*config) : std::nullopt;
}

SpaceDomain space_domain(const Space& space, const Problem& problem, const Shard& shard) {
  auto source = std::make_shared<SpaceSource>(space, problem, shard);
  std::vector<std::string> names;
  std::vector<std::vector<std::int64_t>> values;
  for (const Axis& axis : space.params) {
    names.push_back(axis.name);
    values.push_back(axis.values);
  }
  // The default config is the start when it is a point (valid, and of this shard).
  std::optional<std::size_t> start;
  if (space.default_config)
    if (const auto coords = coords_of(values, *space.default_config)) start = source->find(*coords);
  SpaceDomain out;
  out.valid = source->whole_size();
  out.domain = SearchDomain::from_source(std::move(names), std::move(values), std::move(source), start);
  return out;
}

}  // namespace tiletune
