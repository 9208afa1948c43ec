// forest: model-based search. After a spread-out initial design, it fits a random forest of
// regression trees to log(time) of the measured points and scores every unproposed point.
// Half of its proposals take the lowest confidence bound (mean - kappa * spread across trees):
// low where the model expects a fast config, or where the trees disagree. The other half are
// local steps, the neighbour of one of the fastest measured points that the model likes best,
// and a tenth of all proposals are random. Failed points get a penalty target worse than
// anything measured, so the model learns to avoid regions that do not compile or launch.
//
// Features are the ranks of the param values (trees only compare, so ranks split exactly like
// raw values); with a handful of values per param, a split is found from a per-rank histogram
// in one pass over the node's samples. A refit and a score of 2500 candidates at 300
// observations take about 3 ms.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "strategy/common.hpp"

namespace tiletune::strategy_detail {

namespace {

constexpr std::size_t kTrees = 32;
constexpr std::size_t kMinLeaf = 2;
/// Features each split chooses from (at least one that can split the node).
constexpr double kFeatureShare = 0.5;
/// Lower confidence bound: mean - kKappa * (spread across trees), in log time.
constexpr double kKappa = 1.0;
/// Share of proposals that are random points, so that the model's blind spots get sampled.
constexpr double kExploreShare = 0.1;
/// Share of the model's proposals that are local steps: the neighbour of a fast measured
/// point that the model likes best. A forest predicts in coarse blocks, so a narrow optimum
/// next to a good point is often found faster this way than by the global bound.
constexpr double kLocalShare = 0.5;
/// Fastest measured points whose neighbours a local step considers, best first.
constexpr std::size_t kLocalBases = 3;
/// Random candidates each point of the initial design is picked from (the farthest one wins).
constexpr std::size_t kDesignCandidates = 16;

/// The initial design's size: enough points for a first model, few enough to leave the budget
/// to the model.
std::size_t design_size(const SearchDomain& domain) {
  return std::min(domain.size(), std::clamp<std::size_t>(domain.dimensions(), 6, 12));
}

std::uint64_t mix(std::uint64_t x) {
  // splitmix64's finaliser: a cheap, well-spread tie-break key.
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// A forest of regression trees over small integer features (value ranks).
class Forest {
 public:
  Forest(std::size_t features, std::vector<std::size_t> bins) : features_(features), bins_(std::move(bins)) {}

  /// x: row-major samples × features; y: targets.
  void fit(const std::vector<std::uint16_t>& x, const std::vector<double>& y, Rng& rng) {
    const std::size_t n = y.size();
    // Centred targets keep the sums of squares of a split free of cancellation.
    offset_ = n ? std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(n) : 0.0;
    centred_.resize(n);
    for (std::size_t i = 0; i < n; ++i) centred_[i] = y[i] - offset_;
    trees_.assign(kTrees, {});
    sample_.resize(n);
    for (std::vector<Node>& tree : trees_) {
      for (std::size_t i = 0; i < n; ++i) sample_[i] = static_cast<std::uint32_t>(rng.below(n));
      if (n) build(tree, x, 0, n, rng);
    }
  }

  /// Mean and standard deviation of the trees' predictions at each of count feature rows.
  void predict(const std::uint16_t* rows, std::size_t count, std::vector<double>& mean,
               std::vector<double>& spread) const {
    mean.assign(count, 0.0);
    spread.assign(count, 0.0);
    // Tree by tree, so that one tree's nodes stay in cache while every row goes down it.
    for (const std::vector<Node>& tree : trees_) {
      const Node* nodes = tree.data();
      for (std::size_t r = 0; r < count; ++r) {
        const std::uint16_t* row = rows + r * features_;
        std::uint32_t i = 0;
        while (nodes[i].feature >= 0) i = row[nodes[i].feature] <= nodes[i].threshold ? i + 1 : nodes[i].right;
        const double v = nodes[i].value;
        mean[r] += v;
        spread[r] += v * v;
      }
    }
    const double k = static_cast<double>(trees_.size());
    for (std::size_t r = 0; r < count; ++r) {
      mean[r] /= k;
      spread[r] = std::sqrt(std::max(spread[r] / k - mean[r] * mean[r], 0.0));
      mean[r] += offset_;
    }
  }

 private:
  /// Depth-first layout: a split's left child is the next node.
  struct Node {
    std::int16_t feature = -1;    ///< -1: a leaf
    std::uint16_t threshold = 0;  ///< rank <= threshold goes left
    std::uint32_t right = 0;
    float value = 0;
  };

  void build(std::vector<Node>& tree, const std::vector<std::uint16_t>& x, std::size_t begin, std::size_t end,
             Rng& rng) {
    const std::vector<double>& y = centred_;
    const std::size_t node = tree.size();
    tree.emplace_back();
    const std::size_t count = end - begin;
    double sum = 0;
    double sum_sq = 0;
    for (std::size_t i = begin; i < end; ++i) {
      sum += y[sample_[i]];
      sum_sq += y[sample_[i]] * y[sample_[i]];
    }
    tree[node].value = static_cast<float>(sum / static_cast<double>(count));
    if (count < 2 * kMinLeaf || sum_sq - sum * sum / static_cast<double>(count) < 1e-9) return;

    // Random feature subsets decorrelate the trees; features constant in this node do not
    // count towards the subset, so a node splits whenever any feature can split it.
    order_.resize(features_);
    for (std::size_t f = 0; f < features_; ++f) order_[f] = f;
    const auto tries =
        std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(kFeatureShare * static_cast<double>(features_))));
    std::size_t tried = 0;
    int best_feature = -1;
    std::uint16_t best_threshold = 0;
    double best_gain = 1e-9;
    const double parent = sum * sum / static_cast<double>(count);
    for (std::size_t k = 0; k < features_ && (tried < tries || best_feature < 0); ++k) {
      std::swap(order_[k], order_[k + rng.below(features_ - k)]);
      const std::size_t f = order_[k];
      counts_.assign(bins_[f], 0);
      sums_.assign(bins_[f], 0.0);
      for (std::size_t i = begin; i < end; ++i) {
        const std::uint16_t r = x[sample_[i] * features_ + f];
        ++counts_[r];
        sums_[r] += y[sample_[i]];
      }
      std::size_t left_count = 0;
      double left_sum = 0;
      int previous = -1;  // the last rank with samples, left of the candidate split
      bool splittable = false;
      for (std::size_t b = 0; b < bins_[f]; ++b) {
        if (counts_[b] == 0) continue;
        if (previous >= 0) {
          splittable = true;
          const std::size_t right_count = count - left_count;
          if (left_count >= kMinLeaf && right_count >= kMinLeaf) {
            const double right_sum = sum - left_sum;
            const double gain = left_sum * left_sum / static_cast<double>(left_count) +
                                right_sum * right_sum / static_cast<double>(right_count) - parent;
            if (gain > best_gain) {
              best_gain = gain;
              best_feature = static_cast<int>(f);
              // Midway between the two ranks seen, so unseen ranks go to the nearer side.
              best_threshold = static_cast<std::uint16_t>((previous + static_cast<int>(b) - 1) / 2);
            }
          }
        }
        left_count += counts_[b];
        left_sum += sums_[b];
        previous = static_cast<int>(b);
      }
      if (splittable) ++tried;
    }
    if (best_feature < 0) return;

    const auto f = static_cast<std::size_t>(best_feature);
    const auto middle = std::partition(sample_.begin() + static_cast<std::ptrdiff_t>(begin),
                                       sample_.begin() + static_cast<std::ptrdiff_t>(end),
                                       [&](std::uint32_t s) { return x[s * features_ + f] <= best_threshold; });
    const auto split = static_cast<std::size_t>(middle - sample_.begin());
    tree[node].feature = static_cast<std::int16_t>(best_feature);
    tree[node].threshold = best_threshold;
    build(tree, x, begin, split, rng);
    tree[node].right = static_cast<std::uint32_t>(tree.size());
    build(tree, x, split, end, rng);
  }

  std::size_t features_;
  std::vector<std::size_t> bins_;
  std::vector<std::vector<Node>> trees_;
  double offset_ = 0;  ///< the mean target, added back to predictions
  // Scratch space reused by every fit.
  std::vector<double> centred_;
  std::vector<std::uint32_t> sample_;
  std::vector<std::size_t> order_;
  std::vector<std::uint32_t> counts_;
  std::vector<double> sums_;
};

/// Each point's features: the rank of each param's value among that param's distinct values.
struct RankFeatures {
  std::vector<std::uint16_t> ranks;  ///< point-major
  std::vector<std::size_t> bins;     ///< distinct values of each param
  std::vector<double> spans;         ///< the largest rank of each param (at least 1), to normalise distances
};

RankFeatures rank_features(const SearchDomain& domain) {
  const std::size_t dims = domain.dimensions();
  RankFeatures f;
  std::vector<std::vector<std::uint16_t>> rank_of(dims);
  for (std::size_t d = 0; d < dims; ++d) {
    std::vector<std::int64_t> sorted = domain.param_values()[d];
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    f.bins.push_back(std::max<std::size_t>(sorted.size(), 1));
    f.spans.push_back(std::max<double>(static_cast<double>(sorted.size()) - 1, 1));
    for (const std::int64_t v : domain.param_values()[d])
      rank_of[d].push_back(
          static_cast<std::uint16_t>(std::lower_bound(sorted.begin(), sorted.end(), v) - sorted.begin()));
  }
  f.ranks.resize(domain.size() * dims);
  for (std::size_t p = 0; p < domain.size(); ++p)
    for (std::size_t d = 0; d < dims; ++d) f.ranks[p * dims + d] = rank_of[d][domain.coords(p)[d]];
  return f;
}

class ForestSearch final : public StrategyBase {
 public:
  ForestSearch(const SearchDomain& domain, std::uint64_t seed)
      : StrategyBase("forest", domain),
        rng_(seed),
        design_size_(design_size(domain)),
        features_(rank_features(domain)),
        forest_(domain.dimensions(), features_.bins),
        mean_(domain.size(), 0.0) {}

  // Its proposals depend on what it has observed: it gets a narrow window in flight.
  [[nodiscard]] bool learns() const override { return true; }

  std::vector<std::size_t> propose(std::size_t max_count) override {
    std::vector<std::size_t> batch;
    if (design_.size() >= design_size_ && observed_count() > fitted_at_ &&
        observed_count() - fitted_at_ >= refit_interval())
      refit();
    while (batch.size() < max_count && !unproposed().empty()) {
      if (design_.size() < design_size_) {
        claim(design_point(), batch);
        continue;
      }
      if (fitted_at_ == 0) break;  // no model until some of the design has been measured
      if (rng_.chance(kExploreShare)) {
        claim(unproposed().pick(rng_), batch);
        continue;
      }
      const auto near = rng_.chance(kLocalShare) ? near_best() : std::nullopt;
      claim(near ? *near : lowest_bound(), batch);
    }
    return batch;
  }

 private:
  void on_observed(std::size_t point, double) override { measured_.push_back(point); }

  /// Observations between refits: each one while the model is cheap, a few as it grows.
  std::size_t refit_interval() const { return 1 + observed_count() / 200; }

  /// The start config first, then the farthest (in normalised ranks) of a few random points.
  std::size_t design_point() {
    const std::size_t dims = domain().dimensions();
    const auto start = domain().start();
    std::size_t chosen = design_.empty() && start ? *start : unproposed().pick(rng_);
    if (!design_.empty()) {
      double chosen_distance = -1;
      for (std::size_t c = 0; c < kDesignCandidates; ++c) {
        const std::size_t p = c == 0 ? chosen : unproposed().pick(rng_);
        double nearest = std::numeric_limits<double>::infinity();
        for (const std::size_t q : design_) {
          double d2 = 0;
          for (std::size_t d = 0; d < dims; ++d) {
            const double diff = (static_cast<double>(features_.ranks[p * dims + d]) - features_.ranks[q * dims + d]) /
                                features_.spans[d];
            d2 += diff * diff;
          }
          nearest = std::min(nearest, d2);
        }
        if (nearest > chosen_distance) {
          chosen_distance = nearest;
          chosen = p;
        }
      }
    }
    design_.push_back(chosen);
    return chosen;
  }

  void refit() {
    const std::size_t dims = domain().dimensions();
    const std::size_t n = measured_.size();
    double worst = -std::numeric_limits<double>::infinity();
    for (const std::size_t p : measured_)
      if (score(p) < kFailed) worst = std::max(worst, std::log(score(p)));
    // Failed points: worse than the worst measured, so the model steers away from them.
    const double penalty = std::isfinite(worst) ? worst + std::log(2.0) : 0.0;
    x_.resize(n * dims);
    y_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t p = measured_[i];
      std::copy_n(&features_.ranks[p * dims], dims, &x_[i * dims]);
      y_[i] = score(p) < kFailed ? std::log(score(p)) : penalty;
    }
    forest_.fit(x_, y_, rng_);
    fitted_at_ = observed_count();

    const std::vector<std::size_t>& candidates = unproposed().items();
    const std::size_t count = candidates.size();
    x_.resize(count * dims);
    for (std::size_t i = 0; i < count; ++i) std::copy_n(&features_.ranks[candidates[i] * dims], dims, &x_[i * dims]);
    forest_.predict(x_.data(), count, predicted_mean_, predicted_spread_);
    scored_.resize(count);
    const std::uint64_t salt = rng_.below(std::numeric_limits<std::uint64_t>::max());
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t p = candidates[i];
      mean_[p] = predicted_mean_[i];
      scored_[i] = {predicted_mean_[i] - kKappa * predicted_spread_[i], mix(p ^ salt), p};
    }
  }

  /// The unproposed grid neighbour with the lowest predicted time of the fastest measured
  /// point, else of the next fastest (up to a few): the model's pick for a local step.
  std::optional<std::size_t> near_best() {
    std::vector<std::size_t> fastest;
    for (const std::size_t p : measured_)
      if (score(p) < kFailed) fastest.push_back(p);
    const std::size_t count = std::min<std::size_t>(fastest.size(), kLocalBases);
    std::partial_sort(fastest.begin(), fastest.begin() + static_cast<std::ptrdiff_t>(count), fastest.end(),
                      [&](std::size_t a, std::size_t b) { return score(a) < score(b); });
    for (std::size_t i = 0; i < count; ++i) {
      std::optional<std::size_t> pick;
      for (const std::size_t n : domain().neighbours(fastest[i]))
        if (!is_proposed(n) && (!pick || mean_[n] < mean_[*pick])) pick = n;
      if (pick) return pick;
    }
    return std::nullopt;
  }

  /// The unproposed point with the lowest bound in the last fit (ties broken at random).
  std::size_t lowest_bound() {
    const Scored* best = nullptr;
    for (const Scored& s : scored_) {
      if (is_proposed(s.point)) continue;
      if (!best || s.bound < best->bound || (s.bound == best->bound && s.tie < best->tie)) best = &s;
    }
    return best ? best->point : unproposed().pick(rng_);
  }

  struct Scored {
    double bound = 0;
    std::uint64_t tie = 0;
    std::size_t point = 0;
  };

  Rng rng_;
  std::size_t design_size_;
  std::vector<std::size_t> design_;  ///< the initial design so far
  RankFeatures features_;
  Forest forest_;
  std::vector<std::size_t> measured_;  ///< observed points, in order
  std::size_t fitted_at_ = 0;          ///< observations in the last fit
  std::vector<Scored> scored_;         ///< the unproposed points at the last fit
  std::vector<double> mean_;           ///< by point: the predicted log time at the last fit
  // Scratch space reused by every fit.
  std::vector<std::uint16_t> x_;
  std::vector<double> y_;
  std::vector<double> predicted_mean_;
  std::vector<double> predicted_spread_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_forest(const SearchDomain& domain, std::uint64_t seed) {
  return std::make_unique<ForestSearch>(domain, seed);
}

}  // namespace tiletune::strategy_detail
