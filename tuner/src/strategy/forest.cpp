// forest: model-based search. After a spread-out initial design (a warm start's preferred
// points first), it fits a random forest of regression trees to log(time) of the measured
// points and scores a bounded pool of candidates: random points of the domain, refreshed as it
// goes, and the points one param away from the fastest measured ones (any value of it, and two
// grid steps). Half of its proposals take the pool's lowest confidence bound (mean - kappa *
// spread across trees): low where the model expects a fast config, or where the trees disagree.
// The other half are local steps: first a poll of the fastest point, as a pattern search does,
// one param at a time with the model choosing the value; once every param has been varied
// there, of the points one param away from the fastest few measured, the one the model likes
// best (tuning params are often categorical or irregular along their value lists, so one grid
// step is too near: on the published convolution landscapes the optimum was a block size 8
// steps from the runner-up); a tenth of all proposals are random.
// Failed points get a penalty target worse than anything measured, so the model learns to
// avoid regions that do not compile or launch. Its settings (ForestSettings) were chosen on
// published landscapes, leaving each kernel out in turn (bench/choose_settings.py).
//
// A proposal costs the same whatever the domain's size: the pool is bounded, and once fits
// grow dearer only the oldest trees are refitted per observation. Features are the ranks of
// the param values (trees only compare, so ranks split exactly like raw values), and for
// integer params the largest power of two dividing the value; with a handful of values per
// feature, a split is found from per-rank histograms, one pass over the node's samples
// filling those of several features at once. The proposals of a seed are a contract of sorts
// (bench_strategies prints their digest): a change for speed keeps the random draws, the split
// choices and the order of every floating-point sum.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <utility>

#include "strategy/common.hpp"

namespace tiletune::strategy_detail {

namespace {

constexpr std::size_t kTrees = 32;
constexpr std::size_t kMinLeaf = 2;
/// Features each split chooses from (at least one that can split the node).
constexpr double kFeatureShare = 0.5;
/// Random candidates each point of the initial design is picked from (the farthest one wins).
constexpr std::size_t kDesignCandidates = 16;
/// Spread-out design points after a warm start's preferred ones.
constexpr std::size_t kSpreadAfterPreferred = 2;
/// The candidate pool a fit scores: random points (kPoolFresh new ones per fit, the oldest
/// dropped beyond kPoolRandom), plus the points one grid step and one param (any value) from the
/// fastest measured points (ForestSettings::bases), and two grid steps from the kTwoStepBases
/// fastest. Bounded, so a proposal costs the same on a space of 10^4 or 10^7 configs.
constexpr std::size_t kPoolRandom = 1000;
constexpr std::size_t kPoolFresh = 100;
constexpr std::size_t kTwoStepBases = 3;
/// Fits: every kRefitEvery observations, plus one more per kRefitGrowth observed.
constexpr std::size_t kRefitEvery = 1;
constexpr std::size_t kRefitGrowth = 200;
/// From kWholeFitsBelow observations on, a fit refits only the kTreesPerRefit oldest trees
/// and rescores the pool with them (per-tree predictions are kept), and a new pool is drawn
/// every kPoolRefreshFits fits or when the fastest point changes (its neighbourhood is where
/// the next local steps go). Below it every fit is whole: fits are cheap then, and the first
/// ones matter most (a partial fit from the start lost 10-30 evaluations to 95 % on the
/// published convolution landscapes; bench/results/2026-12-02-devvm-strategies-any-size.md).
constexpr std::size_t kTreesPerRefit = 8;
constexpr std::size_t kPoolRefreshFits = 4;
constexpr std::size_t kWholeFitsBelow = 64;

/// The initial design's size: enough points for a first model, few enough to leave the budget
/// to the model.
std::size_t design_size(const SearchDomain& domain) {
  return static_cast<std::size_t>(
      std::min<std::uint64_t>(domain.size(), std::clamp<std::size_t>(domain.dimensions(), 6, 12)));
}

std::uint64_t mix(std::uint64_t x) {
  // splitmix64's finaliser: a cheap, well-spread tie-break key.
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Values of a param on each side of a point's that a local step considers: every value of the
/// params tuning spaces have (a few to a few dozen), a bounded number of a param of thousands.
constexpr std::size_t kLocalReach = 16;

/// Appends the valid points that differ from the point at coords c in param d only, by any
/// value within kLocalReach steps of its own; c is as it was on return.
void append_neighbours_along(const SearchDomain& domain, std::vector<std::uint16_t>& c, std::size_t d,
                             std::vector<std::size_t>& out) {
  const std::uint16_t own = c[d];
  const std::size_t first = own > kLocalReach ? own - kLocalReach : 0;
  const std::size_t last = std::min(domain.param_values()[d].size(), own + kLocalReach + 1);
  for (std::size_t v = first; v < last; ++v) {
    if (v == own) continue;
    c[d] = static_cast<std::uint16_t>(v);
    if (const std::optional<std::size_t> q = domain.find(c)) out.push_back(*q);
  }
  c[d] = own;
}

/// Valid points that differ from point in exactly one param, by any value of it within
/// kLocalReach steps of its own: tuning params are often categorical or irregular along their
/// value list (a block size of 128 fast, 112 and 144 slow), so a grid step is too near.
std::vector<std::size_t> hamming_neighbours(const SearchDomain& domain, std::size_t point) {
  std::vector<std::uint16_t> c = domain.coords(point);
  std::vector<std::size_t> out;
  for (std::size_t d = 0; d < c.size(); ++d) append_neighbours_along(domain, c, d, out);
  return out;
}

/// A forest of regression trees over small integer features (value ranks).
class Forest {
 public:
  Forest(std::size_t features, std::vector<std::size_t> bins)
      : features_(features),
        tries_(std::max<std::size_t>(
            1, static_cast<std::size_t>(std::ceil(kFeatureShare * static_cast<double>(features))))),
        bins_(std::move(bins)) {}

  /// Fits every tree. x: row-major samples × features; y: targets.
  void fit(const std::vector<std::uint16_t>& x, const std::vector<double>& y, Rng& rng) {
    trees_.resize(kTrees);
    for (std::vector<Node>& tree : trees_) tree.clear();
    offsets_.assign(kTrees, 0.0);
    depths_.assign(kTrees, 0);
    next_tree_ = 0;
    refit_some(x, y, rng, kTrees);
  }

  /// Refits count trees, the ones fitted longest ago, to these samples: a forest whose trees
  /// saw the data of the last few refits, at a fraction of the cost of refitting all of them.
  /// Returns the trees refitted.
  std::vector<std::size_t> refit_some(const std::vector<std::uint16_t>& x, const std::vector<double>& y, Rng& rng,
                                      std::size_t count) {
    const std::size_t n = y.size();
    // Centred targets keep the sums of squares of a split free of cancellation.
    const double offset = n ? std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(n) : 0.0;
    centred_.resize(n);
    for (std::size_t i = 0; i < n; ++i) centred_[i] = y[i] - offset;
    sample_.resize(n);
    std::vector<std::size_t> refitted;
    for (std::size_t k = 0; k < std::min(count, trees_.size()); ++k) {
      const std::size_t t = next_tree_;
      next_tree_ = (next_tree_ + 1) % trees_.size();
      trees_[t].clear();
      offsets_[t] = offset;
      for (std::size_t i = 0; i < n; ++i) sample_[i] = static_cast<std::uint32_t>(rng.below(n));
      depths_[t] = 0;
      if (n) build(trees_[t], depths_[t], x, 0, n, 0, rng);
      refitted.push_back(t);
    }
    return refitted;
  }

  [[nodiscard]] std::size_t trees() const noexcept { return trees_.size(); }

  /// Tree t's prediction at each of count feature rows, into out[0..count).
  void predict_tree(std::size_t t, const std::uint16_t* rows, std::size_t count, float* out) const {
    const Node* nodes = trees_[t].data();
    const std::size_t depth = depths_[t];
    const auto offset = static_cast<float>(offsets_[t]);
    // A group of rows goes down the tree together, each step without a branch (a leaf leads to
    // itself): the steps of different rows overlap instead of waiting on each other's loads.
    constexpr std::size_t kGroup = 8;
    std::size_t r = 0;
    for (; r + kGroup <= count; r += kGroup) descend<kGroup>(nodes, depth, rows + r * features_, offset, out + r);
    for (; r < count; ++r) descend<1>(nodes, depth, rows + r * features_, offset, out + r);
  }

  /// Mean and standard deviation of the trees' predictions at each of count feature rows.
  void predict(const std::uint16_t* rows, std::size_t count, std::vector<double>& mean,
               std::vector<double>& spread) const {
    per_tree_.resize(trees_.size() * count);
    // Tree by tree, so that one tree's nodes stay in cache while every row goes down it.
    for (std::size_t t = 0; t < trees_.size(); ++t) predict_tree(t, rows, count, &per_tree_[t * count]);
    summarize(per_tree_, count, mean, spread);
  }

  /// Mean and standard deviation over the trees of per-tree predictions (tree-major: tree t's
  /// prediction of row r at per_tree[t * count + r]).
  void summarize(const std::vector<float>& per_tree, std::size_t count, std::vector<double>& mean,
                 std::vector<double>& spread) const {
    mean.assign(count, 0.0);
    spread.assign(count, 0.0);
    for (std::size_t t = 0; t < trees_.size(); ++t) {
      const float* column = &per_tree[t * count];
      for (std::size_t r = 0; r < count; ++r) {
        mean[r] += column[r];
        spread[r] += static_cast<double>(column[r]) * column[r];
      }
    }
    const double k = static_cast<double>(trees_.size());
    for (std::size_t r = 0; r < count; ++r) {
      mean[r] /= k;
      spread[r] = std::sqrt(std::max(spread[r] / k - mean[r] * mean[r], 0.0));
    }
  }

 private:
  /// Depth-first layout. A leaf leads to itself whatever the row (its threshold is the
  /// largest rank), so a row can take a tree's depth in steps without testing for leaves.
  struct Node {
    std::uint16_t feature = 0;
    std::uint16_t threshold = std::numeric_limits<std::uint16_t>::max();  ///< rank <= threshold goes left
    std::uint32_t left = 0;
    std::uint32_t right = 0;
    float value = 0;
  };

  /// The predictions of tree nodes (depth levels below its root) at group consecutive rows.
  template <std::size_t group>
  void descend(const Node* nodes, std::size_t depth, const std::uint16_t* rows, float offset, float* out) const {
    std::array<std::uint32_t, group> at{};
    const auto step = [&](std::size_t g) {
      const Node& n = nodes[at[g]];
      at[g] = rows[g * features_ + n.feature] <= n.threshold ? n.left : n.right;
    };
    // Unrolled, so that the group's node indices live in registers.
    [&]<std::size_t... g>(std::index_sequence<g...>) {
      for (std::size_t level = 0; level < depth; ++level) (step(g), ...);
    }
    (std::make_index_sequence<group>{});
    for (std::size_t g = 0; g < group; ++g) out[g] = nodes[at[g]].value + offset;
  }

  /// A split of a node's samples: rank <= threshold goes left.
  struct Split {
    int feature = -1;  ///< -1: none found
    std::uint16_t threshold = 0;
  };

  /// Grows the subtree of the samples sample_[begin, end), its root level levels below the
  /// tree's root.
  void build(std::vector<Node>& tree, std::size_t& depth, const std::vector<std::uint16_t>& x, std::size_t begin,
             std::size_t end, std::size_t level, Rng& rng) {
    const std::vector<double>& y = centred_;
    const auto node = static_cast<std::uint32_t>(tree.size());
    tree.emplace_back();
    tree[node].left = tree[node].right = node;
    depth = std::max(depth, level);
    const std::size_t count = end - begin;
    double sum = 0;
    double sum_sq = 0;
    for (std::size_t i = begin; i < end; ++i) {
      sum += y[sample_[i]];
      sum_sq += y[sample_[i]] * y[sample_[i]];
    }
    tree[node].value = static_cast<float>(sum / static_cast<double>(count));
    if (count < 2 * kMinLeaf || sum_sq - sum * sum / static_cast<double>(count) < 1e-9) return;
    const Split best = best_split(x, begin, end, sum, rng);
    if (best.feature < 0) return;

    const std::size_t split = partition(x, begin, end, best);
    tree[node].feature = static_cast<std::uint16_t>(best.feature);
    tree[node].threshold = best.threshold;
    tree[node].left = node + 1;
    build(tree, depth, x, begin, split, level + 1, rng);
    tree[node].right = static_cast<std::uint32_t>(tree.size());
    build(tree, depth, x, split, end, level + 1, rng);
  }

  /// Moves the samples of sample_[begin, end) that go left at split first; returns where the
  /// others start. The order is a two-ended partition's (std::partition's, in libstdc++ and
  /// libc++): the k-th sample from the front that goes right swaps with the k-th from the back
  /// that goes left. Done without a branch per sample, whose outcome a CPU cannot guess.
  std::size_t partition(const std::vector<std::uint16_t>& x, std::size_t begin, std::size_t end, Split split) {
    const std::size_t count = end - begin;
    goes_left_.resize(count);
    std::size_t lefts = 0;
    for (std::size_t i = 0; i < count; ++i) {
      goes_left_[i] = x[sample_[begin + i] * features_ + static_cast<std::size_t>(split.feature)] <= split.threshold;
      lefts += goes_left_[i];
    }
    // The misplaced ones: going right in the front [0, lefts), going left in the back, from its end.
    misplaced_front_.resize(count);
    misplaced_back_.resize(count);
    std::size_t front = 0;
    for (std::size_t i = 0; i < lefts; ++i) {
      misplaced_front_[front] = i;
      front += !goes_left_[i];
    }
    std::size_t back = 0;
    for (std::size_t i = count; i > lefts; --i) {
      misplaced_back_[back] = i - 1;
      back += goes_left_[i - 1];
    }
    for (std::size_t k = 0; k < front; ++k)
      std::swap(sample_[begin + misplaced_front_[k]], sample_[begin + misplaced_back_[k]]);
    return begin + lefts;
  }

  /// The best split of the samples sample_[begin, end) (their centred targets sum to sum) on a
  /// random subset of the features.
  Split best_split(const std::vector<std::uint16_t>& x, std::size_t begin, std::size_t end, double sum, Rng& rng) {
    // Random feature subsets decorrelate the trees; features constant in this node do not
    // count towards the subset, so a node splits whenever any feature can split it.
    order_.resize(features_);
    for (std::size_t f = 0; f < features_; ++f) order_[f] = f;
    const std::size_t tries = tries_;
    std::size_t tried = 0;
    Split best;
    double best_gain = 1e-9;
    std::size_t k = 0;
    while (k < features_ && (tried < tries || best.feature < 0)) {
      // Every feature of a batch is examined whatever the ones before it give (tried grows by
      // at most one per feature), so drawing the batch first draws what one at a time would,
      // and one pass over the samples fills the batch's histograms.
      const std::size_t batch_end = std::min(features_, k + (tried < tries ? tries - tried : 1));
      for (std::size_t j = k; j < batch_end; ++j) std::swap(order_[j], order_[j + rng.below(features_ - j)]);
      fill_histograms(x, begin, end, k, batch_end);
      for (; k < batch_end; ++k)
        if (consider_splits(order_[k], hist_at_[k], words_at_[k], end - begin, sum, best, best_gain)) ++tried;
    }
    return best;
  }

  /// Per-rank counts and target sums of the samples sample_[begin, end) for the features
  /// order_[first, last) that can split, at hist_at_[k] in counts_ and sums_, and a bit per
  /// rank seen at words_at_[k] in seen_. Each bin sums its samples in their order, as one
  /// feature at a time did. consider_splits reads a histogram and zeroes it again.
  void fill_histograms(const std::vector<std::uint16_t>& x, std::size_t begin, std::size_t end, std::size_t first,
                       std::size_t last) {
    hist_at_.resize(features_);
    words_at_.resize(features_);
    std::size_t bins = 0;
    std::size_t words = 0;
    batch_.clear();
    for (std::size_t k = first; k < last; ++k) {
      const std::size_t f = order_[k];
      hist_at_[k] = bins;
      words_at_[k] = words;
      // A param with one value cannot split: it gets no histogram.
      if (bins_[f] < 2) continue;
      batch_.push_back({f, bins, words});
      bins += bins_[f];
      words += (bins_[f] + 63) / 64;
    }
    // Zero beyond what is in use (consider_splits zeroes what it reads).
    if (counts_.size() < bins) {
      counts_.resize(bins, 0);
      sums_.resize(bins, 0.0);
    }
    if (seen_.size() < words) seen_.resize(words, 0);
    for (std::size_t i = begin; i < end; ++i) {
      const std::uint16_t* row = &x[sample_[i] * features_];
      const double target = centred_[sample_[i]];
      for (const Binned& b : batch_) {
        const std::size_t rank = row[b.feature];
        ++counts_[b.at + rank];
        sums_[b.at + rank] += target;
        seen_[b.words_at + rank / 64] |= std::uint64_t{1} << (rank % 64);
      }
    }
  }

  /// Updates best and best_gain with feature f's splits, from its histogram at counts_[at...]
  /// and sums_[at...], with the ranks seen at seen_[words_at...] (count samples, summing to
  /// sum), and zeroes them. Returns whether f splits the node at all.
  bool consider_splits(std::size_t f, std::size_t at, std::size_t words_at, std::size_t count, double sum, Split& best,
                       double& best_gain) {
    if (bins_[f] < 2) return false;
    const double parent = sum * sum / static_cast<double>(count);
    std::size_t left_count = 0;
    double left_sum = 0;
    int previous = -1;  // the last rank with samples, left of the candidate split
    bool splittable = false;
    // Only the ranks seen, in order: a small node's samples leave most of a wide param's empty.
    for (std::size_t w = 0; w < (bins_[f] + 63) / 64; ++w) {
      for (std::uint64_t bits = std::exchange(seen_[words_at + w], 0); bits != 0; bits &= bits - 1) {
        const std::size_t b = 64 * w + static_cast<std::size_t>(std::countr_zero(bits));
        if (previous >= 0) {
          splittable = true;
          const std::size_t right_count = count - left_count;
          if (left_count >= kMinLeaf && right_count >= kMinLeaf) {
            const double right_sum = sum - left_sum;
            const double gain = left_sum * left_sum / static_cast<double>(left_count) +
                                right_sum * right_sum / static_cast<double>(right_count) - parent;
            if (gain > best_gain) {
              best_gain = gain;
              best.feature = static_cast<int>(f);
              // Midway between the two ranks seen, so unseen ranks go to the nearer side.
              best.threshold = static_cast<std::uint16_t>((previous + static_cast<int>(b) - 1) / 2);
            }
          }
        }
        left_count += std::exchange(counts_[at + b], 0);
        left_sum += std::exchange(sums_[at + b], 0.0);
        previous = static_cast<int>(b);
      }
    }
    return splittable;
  }

  std::size_t features_;
  std::size_t tries_;  ///< features each split chooses from (at least, see best_split)
  std::vector<std::size_t> bins_;
  std::vector<std::vector<Node>> trees_;
  std::vector<double> offsets_;      ///< per tree: the mean target of its fit, added back to predictions
  std::vector<std::size_t> depths_;  ///< per tree: the most levels below its root
  std::size_t next_tree_ = 0;        ///< the tree refit_some refits next
  mutable std::vector<float> per_tree_;
  // Scratch space reused by every fit.
  std::vector<double> centred_;
  std::vector<std::uint32_t> sample_;
  std::vector<std::size_t> order_;
  std::vector<std::uint32_t> counts_;
  std::vector<double> sums_;
  std::vector<std::uint64_t> seen_;    ///< a bit per rank of each histogram: samples have it
  std::vector<std::size_t> hist_at_;   ///< [k]: where feature order_[k]'s histogram starts
  std::vector<std::size_t> words_at_;  ///< [k]: where its bits in seen_ start
  struct Binned {
    std::size_t feature;
    std::size_t at;
    std::size_t words_at;
  };
  std::vector<Binned> batch_;  ///< the features of a batch that can split, with their histograms
  std::vector<std::uint8_t> goes_left_;
  std::vector<std::size_t> misplaced_front_;
  std::vector<std::size_t> misplaced_back_;
};

/// Points, each with an index (where it was added), in an open-addressing table that keeps
/// its memory between uses: a pool's thousand-odd points are looked up without a node each.
class PointIndex {
 public:
  /// Empties it, sized for about count points (it grows beyond).
  void reset(std::size_t count) {
    std::size_t slots = 16;
    while (slots < 2 * count) slots *= 2;
    keys_.assign(slots, kEmpty);
    indices_.resize(slots);
    size_ = 0;
  }
  /// Adds point with index unless it is there; returns whether it was added.
  bool insert(std::size_t point, std::size_t index) {
    if (2 * (size_ + 1) > keys_.size()) grow();
    std::size_t slot = slot_of(point);
    if (keys_[slot] == point) return false;
    keys_[slot] = point;
    indices_[slot] = index;
    ++size_;
    return true;
  }
  /// The index point was added with, if it is there.
  [[nodiscard]] std::optional<std::size_t> find(std::size_t point) const {
    if (keys_.empty()) return std::nullopt;
    const std::size_t slot = slot_of(point);
    return keys_[slot] == point ? std::optional<std::size_t>(indices_[slot]) : std::nullopt;
  }

 private:
  static constexpr std::size_t kEmpty = std::numeric_limits<std::size_t>::max();

  /// The slot holding point, else the empty one where it would go.
  [[nodiscard]] std::size_t slot_of(std::size_t point) const {
    const std::size_t mask = keys_.size() - 1;
    std::size_t slot = mix(point) & mask;
    while (keys_[slot] != kEmpty && keys_[slot] != point) slot = (slot + 1) & mask;
    return slot;
  }
  void grow() {
    std::vector<std::size_t> keys = std::move(keys_);
    std::vector<std::size_t> indices = std::move(indices_);
    reset(std::max<std::size_t>(keys.size(), 8));
    for (std::size_t s = 0; s < keys.size(); ++s)
      if (keys[s] != kEmpty) insert(keys[s], indices[s]);
  }

  std::vector<std::size_t> keys_;
  std::vector<std::size_t> indices_;
  std::size_t size_ = 0;
};

/// Each item's rank among the distinct items, and how many distinct items there are.
template <class T>
std::pair<std::vector<std::uint16_t>, std::size_t> distinct_ranks(const std::vector<T>& items) {
  std::vector<T> sorted = items;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<std::uint16_t> ranks;
  for (const T& item : items)
    ranks.push_back(static_cast<std::uint16_t>(std::lower_bound(sorted.begin(), sorted.end(), item) - sorted.begin()));
  return {std::move(ranks), sorted.size()};
}

/// The features of a point: the rank of each param's value among that param's distinct values.
class RankFeatures {
 public:
  RankFeatures(const SearchDomain& domain, bool alignment) : domain_(domain) {
    for (const std::vector<std::int64_t>& values : domain.param_values()) {
      auto [ranks, distinct] = distinct_ranks(values);
      bins_.push_back(std::max<std::size_t>(distinct, 1));
      spans_.push_back(std::max<double>(static_cast<double>(distinct) - 1, 1));
      rank_of_.push_back(std::move(ranks));
    }
    if (alignment) add_alignment_features();
  }

  /// Per param of positive integers whose values have 3 or more powers of two dividing them:
  /// the largest power of two dividing the value, as a feature of its own.
  void add_alignment_features() {
    const auto& params = domain_.param_values();
    for (std::size_t d = 0; d < params.size(); ++d) {
      const std::vector<std::int64_t>& values = params[d];
      if (values.empty() || std::any_of(values.begin(), values.end(), [](std::int64_t v) { return v <= 0; })) continue;
      std::vector<int> levels;
      for (const std::int64_t v : values) levels.push_back(std::countr_zero(static_cast<std::uint64_t>(v)));
      auto [ranks, distinct] = distinct_ranks(levels);
      if (distinct < 3) continue;
      extra_param_.push_back(d);
      extra_rank_.push_back(std::move(ranks));
      bins_.push_back(distinct);
      spans_.push_back(static_cast<double>(distinct) - 1);
    }
  }
  /// Features per point: one per param, then the alignment ones.
  [[nodiscard]] std::size_t width() const noexcept { return bins_.size(); }

  /// Appends the point's features to rows.
  void append(std::size_t point, std::vector<std::uint16_t>& rows) const {
    const std::vector<std::uint16_t> c = domain_.coords(point);
    for (std::size_t d = 0; d < c.size(); ++d) rows.push_back(rank_of_[d][c[d]]);
    for (std::size_t e = 0; e < extra_param_.size(); ++e) rows.push_back(extra_rank_[e][c[extra_param_[e]]]);
  }
  [[nodiscard]] const std::vector<std::size_t>& bins() const noexcept { return bins_; }
  /// The largest rank of param d (at least 1), to normalise distances.
  [[nodiscard]] double span(std::size_t d) const { return spans_[d]; }

 private:
  const SearchDomain& domain_;
  std::vector<std::vector<std::uint16_t>> rank_of_;  ///< [param][value index]
  std::vector<std::size_t> bins_;                    ///< distinct values of each param
  std::vector<double> spans_;
  std::vector<std::size_t> extra_param_;                ///< the param of each alignment feature
  std::vector<std::vector<std::uint16_t>> extra_rank_;  ///< [alignment feature][value index]
};

class ForestSearch final : public StrategyBase {
 public:
  ForestSearch(const SearchDomain& domain, std::uint64_t seed, const ForestSettings& settings)
      : StrategyBase("forest", domain),
        settings_(settings),
        rng_(seed),
        design_size_(design_size(domain)),
        features_(domain, settings.alignment),
        forest_(features_.width(), features_.bins()) {}

  // Its proposals depend on what it has observed: it gets a narrow window in flight.
  [[nodiscard]] bool learns() const override { return true; }

  std::vector<std::size_t> propose(std::size_t max_count) override {
    std::vector<std::size_t> batch;
    if (!design_sized_) size_design();
    if (design_.size() >= design_size_ && observed_count() > fitted_at_ &&
        observed_count() - fitted_at_ >= refit_interval())
      refit();
    while (batch.size() < max_count && !exhausted()) {
      if (design_.size() < design_size_) {
        if (take_preferred(batch)) {
          add_to_design(batch.back());
          continue;
        }
        const std::optional<std::size_t> p = design_point();
        if (!p) break;
        claim(*p, batch);
        continue;
      }
      if (fitted_at_ == 0) break;  // no model until some of the design has been measured
      std::optional<std::size_t> p;
      if (rng_.chance(settings_.explore))
        p = pick_unproposed(rng_);
      else if (rng_.chance(settings_.local))
        p = near_best();
      if (!p) p = lowest_bound();
      if (!p) break;
      claim(*p, batch);
    }
    return batch;
  }

 private:
  void on_observed(std::size_t point, double s) override {
    measured_.push_back(point);
    features_.append(point, measured_x_);
    measured_log_.push_back(s < kFailed ? std::log(s) : kFailed);
    if (s < kFailed) {
      worst_log_ = std::max(worst_log_, measured_log_.back());
      const auto at =
          std::upper_bound(fastest_.begin(), fastest_.end(), s, [&](double v, std::size_t p) { return v < score(p); });
      fastest_.insert(at, point);
      if (fastest_.size() > settings_.bases) fastest_.pop_back();
    }
  }

  /// Observations between fits: each one at first, a few as the model grows.
  std::size_t refit_interval() const { return kRefitEvery + observed_count() / kRefitGrowth; }

  /// A warm start's preferred points are the design's first points; a few spread-out ones
  /// follow so that the first model does not see only one region.
  void size_design() {
    design_sized_ = true;
    if (!preferred().empty())
      design_size_ = static_cast<std::size_t>(
          std::min<std::uint64_t>(domain().size(), std::max(design_size_, preferred().size() + kSpreadAfterPreferred)));
  }

  /// After the preferred points: the start config, then the farthest (in normalised ranks
  /// from the design so far) of a few random points.
  std::optional<std::size_t> design_point() {
    const auto start = domain().start();
    if (start && !is_proposed(*start)) return add_to_design(*start);
    std::optional<std::size_t> chosen;
    double chosen_distance = -1;
    for (std::size_t c = 0; c < kDesignCandidates; ++c) {
      const std::optional<std::size_t> p = pick_unproposed(rng_);
      if (!p) break;
      const double distance = design_distance(*p);
      if (distance > chosen_distance) {
        chosen_distance = distance;
        chosen = p;
      }
    }
    if (!chosen) return std::nullopt;
    return add_to_design(*chosen);
  }

  std::size_t add_to_design(std::size_t point) {
    design_.push_back(point);
    features_.append(point, design_x_);
    return point;
  }

  /// Squared normalised distance from p to the nearest design point.
  double design_distance(std::size_t p) {
    const std::size_t dims = domain().dimensions();
    const std::size_t width = features_.width();
    row_.clear();
    features_.append(p, row_);
    double nearest = std::numeric_limits<double>::infinity();
    for (std::size_t q = 0; q < design_.size(); ++q) {
      double d2 = 0;
      for (std::size_t d = 0; d < dims; ++d) {
        const double diff = (static_cast<double>(row_[d]) - design_x_[q * width + d]) / features_.span(d);
        d2 += diff * diff;
      }
      nearest = std::min(nearest, d2);
    }
    return nearest;
  }

  void refit() {
    const std::size_t n = measured_.size();
    // Failed points: worse than the worst measured, so the model steers away from them.
    const double penalty = std::isfinite(worst_log_) ? worst_log_ + std::log(2.0) : 0.0;
    y_.resize(n);
    for (std::size_t i = 0; i < n; ++i) y_[i] = measured_log_[i] < kFailed ? measured_log_[i] : penalty;
    // While fits are cheap (few observations), every fit is whole and draws a new pool.
    const bool whole = fitted_at_ == 0 || observed_count() < kWholeFitsBelow;
    const std::vector<std::size_t> refitted = whole ? (forest_.fit(measured_x_, y_, rng_), all_trees())
                                                    : forest_.refit_some(measured_x_, y_, rng_, kTreesPerRefit);
    fitted_at_ = observed_count();
    if (whole || pool_.empty() || fits_since_pool_ + 1 >= kPoolRefreshFits ||
        (!fastest_.empty() && fastest_.front() != pool_base_)) {
      previous_pool_.swap(pool_);
      previous_x_.swap(pool_x_);
      previous_predictions_.swap(tree_predictions_);
      std::swap(previous_index_, pool_index_);
      refresh_pool();
      predict_new_pool(refitted);
      fits_since_pool_ = 0;
    } else {
      for (const std::size_t t : refitted)
        forest_.predict_tree(t, pool_x_.data(), pool_.size(), &tree_predictions_[t * pool_.size()]);
      ++fits_since_pool_;
    }
    forest_.summarize(tree_predictions_, pool_.size(), pool_mean_, pool_spread_);
    scored_.resize(pool_.size());
    const std::uint64_t salt = rng_.word();
    for (std::size_t i = 0; i < pool_.size(); ++i)
      scored_[i] = {pool_mean_[i] - settings_.kappa * pool_spread_[i], mix(pool_[i] ^ salt), pool_[i]};
  }

  std::vector<std::size_t> all_trees() const {
    std::vector<std::size_t> all(forest_.trees());
    std::iota(all.begin(), all.end(), 0);
    return all;
  }

  /// The candidates a fit scores: the random part of the last pool that is still unproposed
  /// plus kPoolFresh new random points (the oldest go beyond kPoolRandom), and the points one
  /// and two steps from the fastest measured ones. Its size is bounded whatever the domain's.
  void refresh_pool() {
    std::erase_if(random_part_, [&](std::size_t p) { return is_proposed(p); });
    const std::size_t fresh = random_part_.empty() ? kPoolRandom : kPoolFresh;
    drawn_.reset(random_part_.size() + fresh);
    for (const std::size_t p : random_part_) drawn_.insert(p, 0);
    for (std::size_t drawn = 0, added = 0; added < fresh && drawn < 4 * fresh; ++drawn) {
      const std::optional<std::size_t> p = domain().sample(rng_.word());
      if (!p || is_proposed(*p) || !drawn_.insert(*p, 0)) continue;
      random_part_.push_back(*p);
      ++added;
    }
    if (random_part_.size() > kPoolRandom)
      random_part_.erase(random_part_.begin(), random_part_.end() - static_cast<std::ptrdiff_t>(kPoolRandom));
    pool_ = random_part_;
    pool_index_.reset(2 * pool_.size());
    for (std::size_t i = 0; i < pool_.size(); ++i) pool_index_.insert(pool_[i], i);
    const auto add = [&](std::size_t p) {
      if (!is_proposed(p) && pool_index_.insert(p, pool_.size())) pool_.push_back(p);
    };
    for (std::size_t i = 0; i < fastest_.size(); ++i) {
      for (const std::size_t one : domain().neighbours(fastest_[i])) {
        add(one);
        if (i < kTwoStepBases)
          for (const std::size_t two : domain().neighbours(one)) add(two);
      }
      for (const std::size_t one : hamming_neighbours(domain(), fastest_[i])) add(one);
    }
    pool_base_ = fastest_.empty() ? std::nullopt : std::optional<std::size_t>(fastest_.front());
  }

  /// Each tree's predictions of the new pool, and its features (pool_x_). A candidate of both
  /// pools keeps its features, and a tree not refitted since the previous pool was scored
  /// predicts what it did then, so only the refitted trees and the new candidates are predicted.
  void predict_new_pool(const std::vector<std::size_t>& refitted) {
    const std::size_t count = pool_.size();
    const std::size_t dims = features_.width();
    const std::size_t trees = forest_.trees();
    kept_.clear();
    fresh_.clear();
    fresh_x_.clear();
    pool_x_.clear();
    for (std::size_t i = 0; i < count; ++i) {
      const std::optional<std::size_t> j = previous_index_.find(pool_[i]);
      if (j) {
        kept_.push_back({i, *j});
        pool_x_.insert(pool_x_.end(), previous_x_.begin() + static_cast<std::ptrdiff_t>(*j * dims),
                       previous_x_.begin() + static_cast<std::ptrdiff_t>((*j + 1) * dims));
      } else {
        fresh_.push_back(i);
        features_.append(pool_[i], pool_x_);
        fresh_x_.insert(fresh_x_.end(), pool_x_.end() - static_cast<std::ptrdiff_t>(dims), pool_x_.end());
      }
    }
    stale_.assign(trees, kept_.empty());
    for (const std::size_t t : refitted) stale_[t] = true;
    tree_predictions_.resize(trees * count);
    fresh_predictions_.resize(fresh_.size());
    for (std::size_t t = 0; t < trees; ++t) {
      float* column = &tree_predictions_[t * count];
      if (stale_[t]) {
        forest_.predict_tree(t, pool_x_.data(), count, column);
        continue;
      }
      const float* previous = &previous_predictions_[t * previous_pool_.size()];
      for (const auto& [i, j] : kept_) column[i] = previous[j];
      forest_.predict_tree(t, fresh_x_.data(), fresh_.size(), fresh_predictions_.data());
      for (std::size_t k = 0; k < fresh_.size(); ++k) column[fresh_[k]] = fresh_predictions_[k];
    }
  }

  /// The model's pick for a local step: of the unproposed points one param away from the
  /// fastest measured ones (all of them, or with `joint` off the first that has any), the one
  /// with the lowest predicted time; none when that is predicted slower than anything measured ok.
  std::optional<std::size_t> near_best() {
    if (settings_.poll)
      if (const std::optional<std::size_t> p = poll_fastest()) return p;
    options_.clear();
    options_index_.reset(options_.capacity());
    for (const std::size_t base : fastest_) {
      for (const std::size_t p : hamming_neighbours(domain(), base))
        if (!is_proposed(p) && options_index_.insert(p, options_.size())) options_.push_back(p);
      if (!settings_.joint && !options_.empty()) break;
    }
    if (options_.empty()) return std::nullopt;
    const auto [point, mean] = lowest_predicted(options_);
    // A step the model expects to be slower than anything measured ok (where configs failed) is
    // left to the global bound, which weighs that against what the model does not know.
    if (mean > worst_log_) return std::nullopt;
    return point;
  }

  /// A pattern search's poll of the fastest point, with the model choosing the values: of the
  /// params along which no neighbour of that point has been proposed yet, the one whose
  /// best-predicted neighbour is predicted fastest, and that neighbour. None once every param has
  /// been varied there. A model that saw a param's other value slow elsewhere would otherwise
  /// never try it next to the best (the published A6000 convolution's optimum is one such flip).
  std::optional<std::size_t> poll_fastest() {
    // Proposals only accumulate: once a point's poll is over, it stays over.
    if (fastest_.empty() || fastest_.front() == polled_) return std::nullopt;
    std::vector<std::uint16_t> c = domain().coords(fastest_.front());
    std::optional<std::size_t> chosen;
    double chosen_mean = std::numeric_limits<double>::infinity();
    for (std::size_t d = 0; d < c.size(); ++d) {
      along_.clear();
      append_neighbours_along(domain(), c, d, along_);
      if (along_.empty() || std::any_of(along_.begin(), along_.end(), [&](std::size_t p) { return is_proposed(p); }))
        continue;
      const auto [point, mean] = lowest_predicted(along_);
      if (mean < chosen_mean) {
        chosen_mean = mean;
        chosen = point;
      }
    }
    if (!chosen) polled_ = fastest_.front();
    return chosen;
  }

  /// The option with the lowest mean prediction (the first of equals), and that prediction.
  std::pair<std::size_t, double> lowest_predicted(const std::vector<std::size_t>& options) {
    // A candidate of the pool has its mean from the last fit, after which the forest did not
    // change: the same number predicting it again would give. The others are predicted.
    option_mean_.resize(options.size());
    unpooled_.clear();
    row_.clear();
    for (std::size_t k = 0; k < options.size(); ++k) {
      if (const std::optional<std::size_t> i = pool_index_.find(options[k])) {
        option_mean_[k] = pool_mean_[*i];
        continue;
      }
      unpooled_.push_back(k);
      features_.append(options[k], row_);
    }
    if (!unpooled_.empty()) {
      forest_.predict(row_.data(), unpooled_.size(), predicted_mean_, predicted_spread_);
      for (std::size_t u = 0; u < unpooled_.size(); ++u) option_mean_[unpooled_[u]] = predicted_mean_[u];
    }
    const auto lowest = std::min_element(option_mean_.begin(), option_mean_.end());
    return {options[static_cast<std::size_t>(lowest - option_mean_.begin())], *lowest};
  }

  /// The unproposed candidate with the lowest bound in the last fit (ties broken at random),
  /// else a random unproposed point.
  std::optional<std::size_t> lowest_bound() {
    const Scored* best = nullptr;
    for (const Scored& s : scored_) {
      if (is_proposed(s.point)) continue;
      if (!best || s.bound < best->bound || (s.bound == best->bound && s.tie < best->tie)) best = &s;
    }
    return best ? std::optional<std::size_t>(best->point) : pick_unproposed(rng_);
  }

  struct Scored {
    double bound = 0;
    std::uint64_t tie = 0;
    std::size_t point = 0;
  };

  const ForestSettings settings_;
  Rng rng_;
  std::size_t design_size_;
  bool design_sized_ = false;
  std::vector<std::size_t> design_;      ///< the initial design so far
  std::vector<std::uint16_t> design_x_;  ///< its features, point-major
  RankFeatures features_;
  Forest forest_;
  std::vector<std::size_t> measured_;                            ///< observed points, in order
  std::vector<std::uint16_t> measured_x_;                        ///< their features, point-major
  std::vector<double> measured_log_;                             ///< their log times, kFailed where they failed
  double worst_log_ = -std::numeric_limits<double>::infinity();  ///< the largest finite one
  std::vector<std::size_t> fastest_;                             ///< the fastest measured ok points, best first
  std::size_t fitted_at_ = 0;                                    ///< observations in the last fit
  std::vector<std::size_t> random_part_;                         ///< the pool's random candidates, oldest first
  std::vector<std::size_t> pool_;                                ///< the candidates of the last fit
  std::vector<std::uint16_t> pool_x_;                            ///< their features
  PointIndex pool_index_;                                        ///< their indices in pool_
  std::vector<Scored> scored_;                                   ///< their bounds at the last fit
  std::vector<double> pool_mean_;                                ///< their mean predictions at the last fit
  std::vector<double> pool_spread_;                              ///< their spread across trees then
  std::vector<float> tree_predictions_;   ///< [tree][candidate]: each tree's prediction of the pool
  std::size_t fits_since_pool_ = 0;       ///< fits since the pool was drawn
  std::optional<std::size_t> pool_base_;  ///< the fastest point when the pool was drawn
  // The pool before the last refresh, whose predictions a new pool reuses.
  std::vector<std::size_t> previous_pool_;
  std::vector<std::uint16_t> previous_x_;
  std::vector<float> previous_predictions_;
  PointIndex previous_index_;  ///< its points, with their indices there
  struct Kept {
    std::size_t index;     ///< in the pool
    std::size_t previous;  ///< in the previous pool
  };
  std::vector<Kept> kept_;                ///< candidates of both pools
  std::vector<std::size_t> fresh_;        ///< the pool's other candidates
  std::vector<std::uint16_t> fresh_x_;    ///< their features
  std::vector<float> fresh_predictions_;  ///< one tree's predictions of them
  std::vector<bool> stale_;               ///< per tree: refitted since the previous pool
  // Scratch space reused by every fit.
  std::vector<double> y_;
  std::vector<std::uint16_t> row_;
  PointIndex drawn_;  ///< the pool's random candidates while they are drawn
  std::vector<double> predicted_mean_;
  std::vector<double> predicted_spread_;
  std::vector<std::size_t> options_;   ///< near_best's: the unproposed neighbours of the bases
  PointIndex options_index_;           ///< near_best's: options_, each once
  std::vector<double> option_mean_;    ///< near_best's: the mean prediction of each option
  std::vector<std::size_t> unpooled_;  ///< near_best's: the options not in the pool
  std::vector<std::size_t> along_;     ///< poll_fastest's: the neighbours along one param
  std::optional<std::size_t> polled_;  ///< poll_fastest's: the last point whose poll it found over
};

}  // namespace

std::unique_ptr<SearchStrategy> make_forest(const SearchDomain& domain, std::uint64_t seed,
                                            const ForestSettings& settings) {
  return std::make_unique<ForestSearch>(domain, seed, settings);
}

}  // namespace tiletune::strategy_detail
