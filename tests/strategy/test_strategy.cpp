// Search strategies on synthetic tuning landscapes: the domain's indexing and neighbours, the
// protocol every strategy keeps (each point proposed once, nothing outside the domain, batches,
// failures, repeatability), run_search's budgets, and how fast the structured strategies get to
// within 5 % of a known optimum compared with random sampling.
//
// The landscapes imitate real sweeps: a few thousand configs, times spread 10-100x as a product
// of per-param penalties with interactions, a region that fails (too much shared memory, too
// many registers), holes where constraints prune configs, and a narrow optimum, often right
// next to the failing region.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <numeric>
#include <set>

#include "tiletune/error.hpp"
#include "tiletune/strategy.hpp"

namespace tiletune {
namespace {

using Values = std::vector<std::int64_t>;
using Coords = std::vector<std::uint16_t>;

/// A recorded sweep: every valid config's time, nullopt where it failed.
struct Landscape {
  std::string name;
  SearchDomain domain;
  std::vector<std::optional<double>> times;
  std::optional<std::size_t> optimum;
  double optimum_time = 0;

  /// Every evaluation costs one second, so a seconds budget counts evaluations.
  [[nodiscard]] Evaluation evaluate(std::size_t point) const { return {point, times.at(point), 1.0}; }
  [[nodiscard]] bool within(std::size_t point, double share) const {
    return times[point] && *times[point] * share <= optimum_time;
  }
};

struct Param {
  std::string name;
  Values values;
};

using TimeModel = std::function<std::optional<double>(const Values&, const Coords&)>;

/// Enumerates the grid (last param fastest), keeps the configs that allowed accepts (all when
/// it is empty) and times each one.
Landscape make_landscape(std::string name, const std::vector<Param>& params,
                         const std::function<bool(const Values&)>& allowed, const TimeModel& time,
                         const Values& start_values) {
  std::vector<std::string> names;
  std::vector<Values> lists;
  for (const Param& p : params) {
    names.push_back(p.name);
    lists.push_back(p.values);
  }
  std::vector<Coords> points;
  std::vector<std::optional<double>> times;
  std::optional<std::size_t> start;
  Coords c(params.size(), 0);
  Values v(params.size());
  for (bool more = !params.empty(); more;) {
    for (std::size_t p = 0; p < params.size(); ++p) v[p] = lists[p][c[p]];
    if (!allowed || allowed(v)) {
      if (v == start_values) start = points.size();
      points.push_back(c);
      times.push_back(time(v, c));
    }
    more = false;
    for (std::size_t p = params.size(); p-- > 0;) {
      if (++c[p] < lists[p].size()) {
        more = true;
        break;
      }
      c[p] = 0;
    }
  }
  Landscape l{std::move(name), SearchDomain(names, lists, points, start), std::move(times), {}, 0};
  for (std::size_t i = 0; i < l.times.size(); ++i) {
    if (l.times[i] && (!l.optimum || *l.times[i] < l.optimum_time)) {
      l.optimum = i;
      l.optimum_time = *l.times[i];
    }
  }
  return l;
}

/// A fixed pseudo-random number in [0, 1) per config: the small, unstructured differences
/// between neighbouring configs that make real landscapes rugged.
double jitter(const Coords& c, std::uint64_t salt) {
  std::uint64_t x = salt;
  for (const std::uint16_t v : c) x = x * 1000003u + v;
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

/// A penalty that grows with the distance (in steps) from a param's best value: a cone near
/// the optimum (one step off costs a + b), a bowl further out.
double bowl(int steps, double a, double b) { return 1 + a * std::abs(steps) + b * steps * steps; }

/// Three params, no holes, no failures: bowls with a diagonal valley between TILE and THREADS
/// (moving one of them alone costs more than moving both).
Landscape smooth3d() {
  const std::vector<Param> params = {{"TILE", {4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256}},
                                     {"THREADS", {32, 64, 96, 128, 160, 192, 224, 256, 320, 384, 448, 512}},
                                     {"UNROLL", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}};
  const int best[] = {7, 4, 6};
  const TimeModel time = [best](const Values&, const Coords& c) -> std::optional<double> {
    double t = 10e-6;
    for (int p = 0; p < 3; ++p) t *= bowl(c[p] - best[p], 0.06, 0.01);
    const int skew = (c[0] - best[0]) - (c[1] - best[1]);
    return t * (1 + 0.02 * skew * skew);
  };
  return make_landscape("smooth3d", params, nullptr, time, {16, 128, 1});
}

/// Four params with a pruned corner (too few or too many threads), a failing region (the
/// tile's shared memory) and the optimum one step from it, plus a rugged surface.
Landscape stencil4d(Values start = {8, 8, 1, 1}, std::int64_t shared_limit = 16384) {
  const std::vector<Param> params = {{"TILE_X", {1, 2, 4, 8, 16, 32, 64, 128}},
                                     {"TILE_Y", {1, 2, 4, 8, 16, 32, 64, 128}},
                                     {"ITEMS", {1, 2, 3, 4, 5, 6, 7, 8}},
                                     {"STAGES", {1, 2, 3, 4}}};
  const auto allowed = [](const Values& v) { return v[0] * v[1] >= 16 && v[0] * v[1] <= 4096; };
  const int best[] = {5, 4, 5, 2};
  const TimeModel time = [best, shared_limit](const Values& v, const Coords& c) -> std::optional<double> {
    if (v[0] * v[1] * v[2] * v[3] > shared_limit) return std::nullopt;
    double t = 25e-6;
    t *= bowl(c[0] - best[0], 0.1, 0.03) * bowl(c[1] - best[1], 0.1, 0.03);
    t *= bowl(c[2] - best[2], 0.08, 0.02) * bowl(c[3] - best[3], 0.12, 0.05);
    const int skew = (c[0] - best[0]) - (c[1] - best[1]);
    return t * (1 + 0.03 * skew * skew) * (1 + 0.04 * jitter(c, 17));
  };
  return make_landscape("stencil4d", params, allowed, time, start);
}

/// Five params of a tiled GEMM with a crude performance model: memory traffic falls with the
/// tile size, small BK pays for synchronisation, few stages expose latency, occupancy comes
/// from threads, registers and shared memory, and partial waves of blocks waste the GPU.
/// Too much shared memory fails to launch, and big register tiles with BK=64 fail to compile.
/// The optimum is the only config within 5 % of it; the next ones are 8-15 % slower.
Landscape gemm5d() {
  const std::vector<Param> params = {{"BM", {16, 32, 48, 64, 96, 128, 192, 256}},
                                     {"BN", {16, 32, 48, 64, 96, 128, 192, 256}},
                                     {"BK", {8, 16, 32, 64}},
                                     {"WARPS", {1, 2, 4, 8}},
                                     {"STAGES", {1, 2, 3, 4}}};
  const auto elements_per_thread = [](const Values& v) {
    return static_cast<double>(v[0] * v[1]) / static_cast<double>(32 * v[3]);
  };
  const auto allowed = [&](const Values& v) {
    const double e = elements_per_thread(v);
    return e >= 2 && e <= 128;
  };
  const TimeModel time = [&](const Values& v, const Coords& c) -> std::optional<double> {
    const double bm = static_cast<double>(v[0]), bn = static_cast<double>(v[1]), bk = static_cast<double>(v[2]);
    const double threads = 32.0 * static_cast<double>(v[3]), stages = static_cast<double>(v[4]);
    const double ept = elements_per_thread(v);
    const double smem = (bm + bn) * bk * stages * 4;
    if (smem > 96 * 1024 || (ept >= 64 && bk >= 64)) return std::nullopt;
    const double blocks = std::ceil(4096 / bm) * std::ceil(4096 / bn);
    const double per_sm =
        std::min({std::max(1.0, std::floor(228 * 1024 / smem)), std::max(1.0, std::floor(2048 / threads)),
                  std::max(1.0, std::floor(65536 / (threads * std::max(32.0, ept + 40))))});
    const double waves = blocks / (132 * per_sm);
    double t = 1e-3 * (1 + 1.5 * 64 * (1 / bm + 1 / bn)) * (1 + 0.6 / stages) * (1 + 6 / bk);
    t *= std::ceil(waves) / waves;
    t *= 1 + 0.8 * (1 - std::min(1.0, per_sm * threads / 512));
    t *= 1 + 0.015 * std::pow(std::abs(std::log2(ept) - 5), 2);
    return t * (1 + 0.06 * jitter(c, 5));
  };
  return make_landscape("gemm5d", params, allowed, time, {64, 64, 16, 4, 2});
}

/// A small 3-D domain with holes and failures, for the protocol tests that run to the end.
Landscape mixed3d() {
  const std::vector<Param> params = {
      {"A", {1, 2, 3, 4, 5, 6}}, {"B", {10, 20, 30, 40, 50, 60}}, {"C", {0, 1, 2, 3, 4, 5, 6, 7}}};
  const auto allowed = [](const Values& v) { return (v[0] + v[1] / 10 + v[2]) % 7 != 0; };
  const TimeModel time = [](const Values& v, const Coords& c) -> std::optional<double> {
    if (v[0] * v[1] > 200) return std::nullopt;
    return (1 + std::abs(v[0] - 3)) * (1 + std::abs(v[1] - 20) / 10.0) * (1 + 0.1 * std::abs(v[2] - 5)) *
           (1 + 0.1 * jitter(c, 3));
  };
  return make_landscape("mixed3d", params, allowed, time, {1, 10, 0});
}

/// Every config fails.
Landscape all_failed() {
  return make_landscape("all_failed", {{"A", {1, 2, 3, 4, 5}}, {"B", {1, 2, 3, 4}}}, nullptr,
                        [](const Values&, const Coords&) { return std::nullopt; }, {1, 1});
}

const std::vector<std::string>& randomized() {
  static const std::vector<std::string> names = {"random", "local", "genetic", "forest"};
  return names;
}
const std::vector<std::string>& structured() {
  static const std::vector<std::string> names = {"local", "genetic", "forest"};
  return names;
}

/// Drives a strategy to the end by hand (propose k, observe all), checking the protocol;
/// returns the points in the order they were proposed.
std::vector<std::size_t> drain(const std::string& name, const Landscape& l, std::uint64_t seed, std::size_t k) {
  const auto s = make_strategy(name, l.domain, seed);
  std::vector<std::size_t> order;
  std::vector<bool> seen(l.domain.size(), false);
  for (std::size_t round = 0; round <= l.domain.size() + 1; ++round) {
    const std::vector<std::size_t> batch = s->propose(k);
    EXPECT_LE(batch.size(), k) << name;
    if (batch.empty()) break;
    for (const std::size_t p : batch) {
      EXPECT_LT(p, l.domain.size()) << name << " proposed a point outside the domain";
      if (p >= l.domain.size()) return order;
      EXPECT_FALSE(seen[p]) << name << " proposed point " << p << " twice";
      seen[p] = true;
      order.push_back(p);
    }
    for (const std::size_t p : batch) s->observe(p, l.times[p]);
  }
  EXPECT_TRUE(s->propose(k).empty()) << name << " is done but still proposes";
  return order;
}

/// How many evaluations a search needs to measure a config within 5 % of the optimum; cap + 1
/// when it does not within cap evaluations. Stops at the target, which run_search cannot.
std::size_t evaluations_to_target(const std::string& name, const Landscape& l, std::uint64_t seed, std::size_t cap,
                                  std::size_t batch = 1) {
  const auto s = make_strategy(name, l.domain, seed);
  std::size_t evaluated = 0;
  while (evaluated < cap) {
    const std::vector<std::size_t> points = s->propose(batch);
    if (points.empty()) break;
    for (const std::size_t p : points) {
      if (evaluated == cap) break;
      ++evaluated;
      if (l.within(p, 0.95)) return evaluated;
      s->observe(p, l.times[p]);
    }
  }
  return cap + 1;
}

/// The outcome of one strategy over many seeds.
struct Runs {
  std::vector<std::size_t> evaluations;  ///< to reach 95 % of the optimum, per seed
  std::size_t cap = 0;

  [[nodiscard]] std::size_t median() const {
    std::vector<std::size_t> sorted = evaluations;
    std::sort(sorted.begin(), sorted.end());
    return sorted[sorted.size() / 2];
  }
  [[nodiscard]] std::size_t within(std::size_t limit) const {
    return static_cast<std::size_t>(
        std::count_if(evaluations.begin(), evaluations.end(), [&](std::size_t e) { return e <= limit; }));
  }
};

Runs over_seeds(const std::string& name, const Landscape& l, std::size_t cap, std::size_t batch = 1,
                std::size_t seeds = 20) {
  Runs r;
  r.cap = cap;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed)
    r.evaluations.push_back(evaluations_to_target(name, l, seed, cap, batch));
  return r;
}

std::size_t tenth(const Landscape& l) { return (l.domain.size() + 9) / 10; }

// --- SearchDomain -----------------------------------------------------------------------

/// A 3x4 grid with holes at (1,1) and (2,3):
///   B:  0  1  2  3
/// A=0   p0 p1 p2 p3
/// A=1   p4 -- p5 p6
/// A=2   p7 p8 p9 --
SearchDomain grid_with_holes() {
  return SearchDomain({"A", "B"}, {{10, 20, 30}, {1, 2, 4, 8}},
                      {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 0}, {1, 2}, {1, 3}, {2, 0}, {2, 1}, {2, 2}}, 5);
}

std::set<std::size_t> as_set(const std::vector<std::size_t>& v) { return {v.begin(), v.end()}; }

void expect_error(const std::function<void()>& f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "expected an Error mentioning '" << fragment << "'";
  } catch (const Error& e) { EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what(); }
}

TEST(SearchDomain, RejectsBadPoints) {
  const std::vector<std::string> names = {"A", "B"};
  const std::vector<Values> values = {{1, 2}, {5, 6, 7}};
  expect_error(
      [&] {
        (void)SearchDomain(names, values, {{0, 0}, {2, 1}});
      },
      "coordinate 2 of param 'A' is out of range");
  expect_error([&] { (void)SearchDomain(names, values, {{0, 0}, {1, 3}}); }, "param 'B' is out of range");
  expect_error([&] { (void)SearchDomain(names, values, {{0, 0}, {1}}); }, "has 1 coordinates, expected 2");
  expect_error([&] { (void)SearchDomain(names, values, {{0, 0, 0}}); }, "has 3 coordinates");
  expect_error([&] { (void)SearchDomain(names, values, {{0, 1}, {1, 1}, {0, 1}}); }, "point 2 (0, 1) repeats point 0");
  expect_error([&] { (void)SearchDomain(names, values, {{0, 1}, {1, 1}}, 2); }, "start 2 is not a point");
  expect_error([&] { (void)SearchDomain(names, {{1, 2}}, std::vector<Coords>{}); }, "2 param names but 1 value lists");
  expect_error([&] { (void)SearchDomain(names, values, std::vector<Coords>{}, 0); }, "start 0 is not a point");
  EXPECT_NO_THROW((void)SearchDomain(names, values, {{1, 2}, {0, 0}}, 1));
}

TEST(SearchDomain, FindsPointsAndValues) {
  const SearchDomain d = grid_with_holes();
  EXPECT_EQ(d.size(), 10u);
  EXPECT_EQ(d.dimensions(), 2u);
  EXPECT_EQ(d.start(), 5u);
  const Coords at_2_1 = {2, 1};
  EXPECT_EQ(d.find(at_2_1), 8u);
  for (std::size_t p = 0; p < d.size(); ++p) EXPECT_EQ(d.find(d.coords(p)), p);
  const Coords hole = {1, 1};
  const Coords out_of_range = {3, 0};
  const Coords short_tuple = {1};
  EXPECT_FALSE(d.find(hole));
  EXPECT_FALSE(d.find(out_of_range));
  EXPECT_FALSE(d.find(short_tuple));
  EXPECT_EQ(d.value(8, 0), 30);
  EXPECT_EQ(d.value(8, 1), 2);
  EXPECT_EQ(d.value(6, 1), 8);
  EXPECT_THROW((void)d.value(10, 0), Error);
  EXPECT_THROW((void)d.value(0, 2), Error);
}

TEST(SearchDomain, NeighboursStepAlongValueListsAndSkipHoles) {
  const SearchDomain d = grid_with_holes();
  EXPECT_EQ(as_set(d.neighbours(0)), (std::set<std::size_t>{1, 4}));
  EXPECT_EQ(as_set(d.neighbours(1)), (std::set<std::size_t>{0, 2}));     // (1,1) is a hole
  EXPECT_EQ(as_set(d.neighbours(5)), (std::set<std::size_t>{2, 6, 9}));  // (1,1) is a hole
  EXPECT_EQ(as_set(d.neighbours(6)), (std::set<std::size_t>{3, 5}));     // (2,3) is a hole
  EXPECT_EQ(as_set(d.neighbours(8)), (std::set<std::size_t>{7, 9}));
  EXPECT_EQ(as_set(d.neighbours(9)), (std::set<std::size_t>{5, 8}));
  EXPECT_EQ(d.neighbours(5), d.neighbours(5));  // a fixed order
  EXPECT_EQ(d.neighbours(5).size(), 3u);        // no duplicates
  EXPECT_THROW((void)d.neighbours(10), Error);

  // 2x2x3 with the middle of the C axis missing at (1,1,*): steps never jump over a hole.
  std::vector<Coords> points;
  for (std::uint16_t a = 0; a < 2; ++a)
    for (std::uint16_t b = 0; b < 2; ++b)
      for (std::uint16_t c = 0; c < 3; ++c)
        if (!(a == 1 && b == 1 && c == 1)) points.push_back({a, b, c});
  const SearchDomain cube({"A", "B", "C"}, {{1, 2}, {1, 2}, {1, 2, 3}}, points);
  const auto at = [&](std::uint16_t a, std::uint16_t b, std::uint16_t c) {
    const Coords k = {a, b, c};
    return *cube.find(k);
  };
  EXPECT_EQ(as_set(cube.neighbours(at(0, 0, 1))),
            (std::set<std::size_t>{at(1, 0, 1), at(0, 1, 1), at(0, 0, 0), at(0, 0, 2)}));
  EXPECT_EQ(as_set(cube.neighbours(at(1, 1, 0))), (std::set<std::size_t>{at(0, 1, 0), at(1, 0, 0)}));
  EXPECT_EQ(as_set(cube.neighbours(at(1, 1, 2))), (std::set<std::size_t>{at(0, 1, 2), at(1, 0, 2)}));
  EXPECT_EQ(as_set(cube.neighbours(at(1, 0, 1))), (std::set<std::size_t>{at(0, 0, 1), at(1, 0, 0), at(1, 0, 2)}));
}

TEST(SearchDomain, EmptyAndParamless) {
  const SearchDomain none;
  EXPECT_TRUE(none.empty());
  const SearchDomain no_points({"A"}, {{1, 2}}, std::vector<Coords>{});
  EXPECT_EQ(no_points.size(), 0u);
  const SearchDomain paramless({}, {}, std::vector<Coords>{{}}, 0);
  EXPECT_EQ(paramless.size(), 1u);
  EXPECT_TRUE(paramless.neighbours(0).empty());
  EXPECT_EQ(paramless.find(Coords{}), 0u);
  expect_error([] { (void)SearchDomain({}, {}, std::vector<Coords>{{}, {}}); }, "repeats point 0");
}

// --- the test landscapes -----------------------------------------------------------------

TEST(Landscapes, LookLikeRealSweeps) {
  for (const Landscape& l : {smooth3d(), stencil4d(), gemm5d()}) {
    std::size_t failed = 0;
    std::size_t near_optimum = 0;
    double slowest = 0;
    for (std::size_t p = 0; p < l.domain.size(); ++p) {
      if (!l.times[p])
        ++failed;
      else
        slowest = std::max(slowest, *l.times[p]);
      if (l.within(p, 0.95)) ++near_optimum;
    }
    const double failed_share = static_cast<double>(failed) / static_cast<double>(l.domain.size());
    std::cout << l.name << ": " << l.domain.size() << " configs, " << failed_share * 100 << " % failed, times spread "
              << slowest / l.optimum_time << "x, " << near_optimum << " within 5 % of the optimum\n";
    EXPECT_GE(l.domain.size(), 1000u) << l.name;
    EXPECT_LE(l.domain.size(), 3000u) << l.name;
    EXPECT_LE(failed_share, 0.2) << l.name;
    EXPECT_GE(slowest / l.optimum_time, 10.0) << l.name;
    EXPECT_LE(slowest / l.optimum_time, 100.0) << l.name;
    EXPECT_LE(near_optimum, 5u) << l.name << ": the optimum should be narrow";
    ASSERT_TRUE(l.domain.start()) << l.name;
  }
  const Landscape s = stencil4d();
  EXPECT_GE(std::count(s.times.begin(), s.times.end(), std::nullopt), 100) << "stencil4d needs a failing region";
}

// --- every strategy -------------------------------------------------------------------------

TEST(Strategies, NamesAndFactory) {
  EXPECT_EQ(strategy_names(), (std::vector<std::string>{"exhaustive", "random", "local", "genetic", "forest"}));
  const Landscape l = mixed3d();
  for (const std::string& name : strategy_names()) EXPECT_EQ(make_strategy(name, l.domain, 1)->name(), name);
  expect_error([&] { (void)make_strategy("annealing", l.domain, 1); },
               "unknown search strategy 'annealing' (known: exhaustive, random, local, genetic, forest)");
}

TEST(Strategies, ExhaustiveGoesInDomainOrderFromTheStart) {
  for (const Landscape& l : {mixed3d(), smooth3d(), stencil4d(), gemm5d()}) {
    const auto s = make_strategy("exhaustive", l.domain, 7);
    const SearchTrace t = run_search(l.domain, *s, [&](std::size_t p) { return l.evaluate(p); }, {});
    ASSERT_EQ(t.evaluations.size(), l.domain.size()) << l.name;
    EXPECT_EQ(t.evaluations[0].point, *l.domain.start()) << l.name;
    for (std::size_t i = 1, expected = 0; i < t.evaluations.size(); ++i, ++expected) {
      if (expected == *l.domain.start()) ++expected;
      ASSERT_EQ(t.evaluations[i].point, expected) << l.name;
    }
    EXPECT_EQ(t.best, l.optimum) << l.name;
    EXPECT_DOUBLE_EQ(t.best_time, l.optimum_time) << l.name;
    EXPECT_FALSE(t.budget_exhausted);
  }
}

TEST(Strategies, EveryStrategyProposesEveryPointOnce) {
  for (const Landscape& l : {mixed3d(), stencil4d({64, 64, 8, 4})}) {
    for (const std::string& name : strategy_names()) {
      for (const std::size_t k : {1u, 8u, 32u}) {
        const std::vector<std::size_t> order = drain(name, l, 3, k);
        EXPECT_EQ(order.size(), l.domain.size()) << name << " k=" << k << " on " << l.name;
      }
    }
  }
}

TEST(Strategies, TinyDomains) {
  const SearchDomain empty({"A"}, {{1, 2}}, std::vector<Coords>{});
  const SearchDomain one({"A", "B"}, {{1, 2}, {3}}, {{1, 0}});
  const SearchDomain one_started({"A"}, {{1, 2}}, {{1}}, 0);
  const SearchDomain paramless({}, {}, std::vector<Coords>{{}}, 0);
  const SearchDomain two({"A"}, {{1, 2}}, {{0}, {1}}, 1);
  for (const std::string& name : strategy_names()) {
    EXPECT_TRUE(make_strategy(name, empty, 1)->propose(8).empty()) << name;
    for (const SearchDomain* d : {&one, &one_started, &paramless}) {
      const auto s = make_strategy(name, *d, 1);
      EXPECT_EQ(s->propose(4), (std::vector<std::size_t>{0})) << name;
      EXPECT_TRUE(s->propose(4).empty()) << name << ": the point is outstanding";
      s->observe(0, 2.0);
      EXPECT_TRUE(s->propose(4).empty()) << name;
    }
    for (const std::optional<double> t : {std::optional<double>(1.0), std::optional<double>()}) {
      const auto s = make_strategy(name, two, 1);
      std::set<std::size_t> got;
      for (int round = 0; round < 4; ++round) {
        for (const std::size_t p : s->propose(1)) {
          EXPECT_TRUE(got.insert(p).second) << name;
          s->observe(p, t);
        }
      }
      EXPECT_EQ(got, (std::set<std::size_t>{0, 1})) << name;
    }
  }
}

TEST(Strategies, RepeatableForASeed) {
  const Landscape l = gemm5d();
  const auto sequence = [&](const std::string& name, std::uint64_t seed) {
    const auto s = make_strategy(name, l.domain, seed);
    SearchBudget b;
    b.evaluations = 200;
    const SearchTrace t = run_search(
        l.domain, *s, [&](std::size_t p) { return l.evaluate(p); }, b, 4);
    std::vector<std::size_t> points;
    for (const Evaluation& e : t.evaluations) points.push_back(e.point);
    return points;
  };
  for (const std::string& name : strategy_names()) { EXPECT_EQ(sequence(name, 11), sequence(name, 11)) << name; }
  for (const std::string& name : randomized()) EXPECT_NE(sequence(name, 11), sequence(name, 12)) << name;
  EXPECT_EQ(sequence("exhaustive", 11), sequence("exhaustive", 12));
}

TEST(Strategies, ProposalsAheadOfObservations) {
  // A driver may ask again before it has observed everything: still no repeats, and the
  // strategy carries on once the outcomes come in, in any order.
  const Landscape l = mixed3d();
  for (const std::string& name : strategy_names()) {
    const auto s = make_strategy(name, l.domain, 5);
    std::vector<bool> seen(l.domain.size(), false);
    std::vector<std::size_t> pending;
    std::size_t proposed = 0;
    for (int round = 0; round < 2000 && proposed < l.domain.size(); ++round) {
      for (const std::size_t p : s->propose(round % 3 == 0 ? 8 : 3)) {
        ASSERT_LT(p, l.domain.size()) << name;
        ASSERT_FALSE(seen[p]) << name << " proposed " << p << " twice";
        seen[p] = true;
        pending.push_back(p);
        ++proposed;
      }
      // Observe the older half, newest of them first; the rest stays outstanding.
      const std::size_t done = (pending.size() + 1) / 2;
      for (std::size_t i = done; i-- > 0;) s->observe(pending[i], l.times[pending[i]]);
      pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(done));
    }
    for (const std::size_t p : pending) s->observe(p, l.times[p]);
    EXPECT_EQ(proposed, l.domain.size()) << name;
    EXPECT_TRUE(s->propose(8).empty()) << name;
  }
}

TEST(Strategies, ObserveChecksTheProtocol) {
  const Landscape l = mixed3d();
  for (const std::string& name : strategy_names()) {
    const auto s = make_strategy(name, l.domain, 1);
    const std::vector<std::size_t> batch = s->propose(2);
    ASSERT_EQ(batch.size(), 2u) << name;
    std::size_t never = 0;
    while (never == batch[0] || never == batch[1]) ++never;
    expect_error([&] { s->observe(never, 1.0); }, "not outstanding");
    expect_error([&] { s->observe(l.domain.size(), 1.0); }, "not outstanding");
    expect_error([&] { s->observe(batch[0], 0.0); }, "must be positive and finite");
    expect_error([&] { s->observe(batch[0], std::nan("")); }, "must be positive and finite");
    s->observe(batch[0], 1.0);
    expect_error([&] { s->observe(batch[0], 1.0); }, "not outstanding");
  }
}

// --- lazy domains: ids that are not dense, nothing listed -----------------------------------

/// A product grid of dims params with values values each, where a cell is a point when its
/// coordinates' sum is not a multiple of 5; a point's id is 7 * its mixed-radix key + 3 (not
/// dense, not from 0). It counts what strategies ask of it, so a test can check that no
/// strategy walks a large domain. size_exact false: the count is reported as an estimate.
class SparseGridSource final : public DomainSource {
 public:
  SparseGridSource(std::size_t dims, std::uint16_t values, bool size_exact)
      : dims_(dims), values_(values), exact_(size_exact) {
    std::uint64_t grid = 1;
    for (std::size_t d = 0; d < dims; ++d) grid *= values;
    grid_ = grid;
    // Count by the coordinate sum's distribution (a convolution of the per-param ones).
    std::vector<std::uint64_t> sums(1, 1);
    for (std::size_t d = 0; d < dims; ++d) {
      std::vector<std::uint64_t> next(sums.size() + values - 1, 0);
      for (std::size_t s = 0; s < sums.size(); ++s)
        for (std::uint16_t v = 0; v < values; ++v) next[s + v] += sums[s];
      sums = std::move(next);
    }
    for (std::size_t s = 0; s < sums.size(); ++s)
      if (s % 5 != 0) count_ += sums[s];
  }
  DomainSize size() const override { return {count_, exact_, exact_ ? 0.0 : 0.01}; }
  std::vector<std::uint16_t> coords(std::size_t point) const override {
    if (point < 3 || (point - 3) % 7 != 0 || (point - 3) / 7 >= grid_) throw Error("sparse grid: not a point");
    Coords c(dims_);
    std::uint64_t k = (point - 3) / 7;
    for (std::size_t d = dims_; d-- > 0;) {
      c[d] = static_cast<std::uint16_t>(k % values_);
      k /= values_;
    }
    if (!valid(c)) throw Error("sparse grid: not a point");
    return c;
  }
  std::optional<std::size_t> find(std::span<const std::uint16_t> c) const override {
    if (!valid(c)) return std::nullopt;
    std::uint64_t k = 0;
    for (const std::uint16_t v : c) k = k * values_ + v;
    return 7 * k + 3;
  }
  std::optional<std::size_t> sample(std::uint64_t random) const override {
    ++samples_;
    for (int draw = 0; draw < 64; ++draw) {
      random = random * 6364136223846793005ULL + 1442695040888963407ULL;
      const std::uint64_t k = static_cast<std::uint64_t>((static_cast<unsigned __int128>(random) * grid_) >> 64);
      if (const auto p = find(decode(k))) return p;
    }
    return std::nullopt;
  }
  std::optional<std::size_t> next(std::optional<std::size_t> after) const override {
    ++walked_;
    for (std::uint64_t k = after ? (*after - 3) / 7 + 1 : 0; k < grid_; ++k)
      if (const auto p = find(decode(k))) return p;
    return std::nullopt;
  }
  [[nodiscard]] std::uint64_t walked() const { return walked_; }

 private:
  [[nodiscard]] bool valid(std::span<const std::uint16_t> c) const {
    std::size_t sum = 0;
    for (const std::uint16_t v : c) sum += v;
    return sum % 5 != 0;
  }
  [[nodiscard]] Coords decode(std::uint64_t k) const {
    Coords c(dims_);
    for (std::size_t d = dims_; d-- > 0;) {
      c[d] = static_cast<std::uint16_t>(k % values_);
      k /= values_;
    }
    return c;
  }
  std::size_t dims_;
  std::uint16_t values_;
  bool exact_;
  std::uint64_t grid_ = 0;
  std::uint64_t count_ = 0;
  mutable std::uint64_t samples_ = 0;
  mutable std::uint64_t walked_ = 0;
};

SearchDomain sparse_domain(const std::shared_ptr<SparseGridSource>& source, std::size_t dims, std::uint16_t values) {
  std::vector<std::string> names;
  std::vector<Values> lists;
  for (std::size_t d = 0; d < dims; ++d) {
    names.push_back("P" + std::to_string(d));
    Values v;
    for (std::uint16_t i = 0; i < values; ++i) v.push_back(1 << i);
    lists.push_back(v);
  }
  Coords start(dims, 1);
  if (dims % 5 == 0) start[0] = 2;  // a coordinate sum that is not a multiple of 5
  return SearchDomain::from_source(names, lists, source, source->find(start));
}

/// A smooth time over a sparse grid, its minimum at (values-2, 1, values-2, 1, ...).
Evaluation sparse_time(const SearchDomain& d, std::size_t point, std::uint16_t values) {
  const Coords c = d.coords(point);
  double t = 1;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const int target = i % 2 == 0 ? values - 2 : 1;
    t *= bowl(c[i] - target, 0.1, 0.02);
  }
  return {point, t * (1 + 0.01 * jitter(c, 9)), 1.0};
}

TEST(LazyDomains, EveryStrategyProposesEveryPointOfASmallSparseDomainOnceThenIsDone) {
  for (const bool exact : {true, false}) {
    const auto source = std::make_shared<SparseGridSource>(3, 6, exact);  // 216 cells, 172 points
    const SearchDomain d = sparse_domain(source, 3, 6);
    ASSERT_EQ(d.size(), 172u);
    for (const std::string& name : strategy_names()) {
      for (const std::size_t width : {1u, 8u}) {
        const auto s = make_strategy(name, d, 4);
        const SearchTrace t = run_search(
            d, *s, [&](std::size_t p) { return sparse_time(d, p, 6); }, SearchBudget{}, width);
        std::set<std::size_t> seen;
        for (const Evaluation& e : t.evaluations) {
          EXPECT_EQ((e.point - 3) % 7, 0u) << name;
          EXPECT_TRUE(seen.insert(e.point).second) << name;
        }
        EXPECT_EQ(seen.size(), 172u) << name << (exact ? " exact" : " estimated") << " width " << width;
        EXPECT_FALSE(t.budget_exhausted) << name;
      }
    }
  }
}

TEST(LazyDomains, AHundredMillionPointsCostWhatTheSearchDoes) {
  // 10 params of 7 values: 2.8e8 cells, 2.3e8 points. 300 evaluations per strategy must not
  // walk the domain (a walk of next() is what enumerating it costs) and must stay fast.
  const auto source = std::make_shared<SparseGridSource>(10, 7, false);
  const SearchDomain d = sparse_domain(source, 10, 7);
  ASSERT_GT(d.size(), 100'000'000u);
  for (const std::string& name : strategy_names()) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto s = make_strategy(name, d, 2);
    SearchBudget b;
    b.evaluations = 300;
    const SearchTrace t = run_search(
        d, *s, [&](std::size_t p) { return sparse_time(d, p, 7); }, b, in_flight_width(s->learns(), 16));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(t.evaluations.size(), 300u) << name;
    EXPECT_TRUE(t.budget_exhausted) << name;
    EXPECT_LE(source->walked(), 300u) << name << " walked the domain";
    EXPECT_LT(seconds, 20.0) << name << ": a bound against a walk or a scan of the domain, not a speed claim";
    if (name != "random" && name != "exhaustive") {
      const double start = *sparse_time(d, *d.start(), 7).time;
      EXPECT_LT(t.best_time, 0.8 * start) << name << " should improve on the start";
    }
  }
}

// --- warm starts (prefer) -----------------------------------------------------------------

TEST(Prefer, PreferredPointsAreProposedFirstInOrderAndOnce) {
  const Landscape l = gemm5d();
  const std::vector<std::size_t> preferred = {40, 7, 1000, 7, 2000, 40, 3};
  const std::vector<std::size_t> expected = {40, 7, 1000, 2000, 3};
  for (const std::string& name : strategy_names()) {
    for (const std::size_t k : {1u, 8u}) {
      const auto s = make_strategy(name, l.domain, 1);
      s->prefer(preferred);
      std::vector<std::size_t> first;
      while (first.size() < expected.size()) {
        const std::vector<std::size_t> batch = s->propose(k);
        ASSERT_FALSE(batch.empty()) << name << ": stalled with preferred points left";
        for (const std::size_t p : batch) {
          first.push_back(p);
          s->observe(p, l.times[p]);
        }
      }
      first.resize(expected.size());
      EXPECT_EQ(first, expected) << name << " k=" << k;
    }
  }
}

TEST(Prefer, RejectsPointsOutsideTheDomainAndCallsAfterTheStart) {
  const Landscape l = mixed3d();
  for (const std::string& name : strategy_names()) {
    expect_error([&] { make_strategy(name, l.domain, 1)->prefer({0, l.domain.size()}); }, "outside the domain");
    const auto s = make_strategy(name, l.domain, 1);
    (void)s->propose(1);
    expect_error([&] { s->prefer({0}); }, "after the search began");
  }
}

TEST(Prefer, AWarmStartNextToTheOptimumFindsItFast) {
  // Preferred: three poor configs and the fastest neighbour of the optimum. local climbs from
  // it, so its first step has the optimum; the others learn from it and beat a cold start.
  const Landscape l = gemm5d();
  std::optional<std::size_t> next_to;
  for (const std::size_t n : l.domain.neighbours(*l.optimum))
    if (l.times[n] && (!next_to || *l.times[n] < *l.times[*next_to])) next_to = n;
  ASSERT_TRUE(next_to);
  const std::vector<std::size_t> preferred = {0, 1, *next_to, 2};
  for (const std::string& name : structured()) {
    std::vector<std::size_t> warm;
    std::vector<std::size_t> cold;
    for (std::uint64_t seed = 1; seed <= 11; ++seed) {
      for (const bool with : {true, false}) {
        const auto s = make_strategy(name, l.domain, seed);
        if (with) s->prefer(preferred);
        SearchBudget b;
        b.evaluations = 400;
        const SearchTrace t = run_search(
            l.domain, *s, [&](std::size_t p) { return l.evaluate(p); }, b, 8);
        std::size_t n = 401;
        for (std::size_t i = 0; i < t.evaluations.size() && n > 400; ++i)
          if (l.within(t.evaluations[i].point, 0.95)) n = i + 1;
        (with ? warm : cold).push_back(n);
      }
    }
    std::sort(warm.begin(), warm.end());
    std::sort(cold.begin(), cold.end());
    std::cout << name << ": median evaluations to 95 %, warm " << warm[5] << ", cold " << cold[5] << "\n";
    if (name == "local") EXPECT_LE(warm[10], preferred.size() + 2 * l.domain.dimensions()) << name;
    EXPECT_LT(warm[5], cold[5]) << name;
  }
}

// --- run_search ---------------------------------------------------------------------------

TEST(RunSearch, StopsAtTheEvaluationBudget) {
  const Landscape l = mixed3d();
  for (const std::string& name : strategy_names()) {
    for (const std::size_t batch : {1u, 8u}) {
      const auto s = make_strategy(name, l.domain, 2);
      SearchBudget b;
      b.evaluations = 21;
      const SearchTrace t = run_search(
          l.domain, *s, [&](std::size_t p) { return l.evaluate(p); }, b, batch);
      EXPECT_EQ(t.evaluations.size(), 21u) << name;
      EXPECT_TRUE(t.budget_exhausted) << name;
      EXPECT_DOUBLE_EQ(t.cost_seconds, 21.0) << name;
    }
  }
}

TEST(RunSearch, StopsAtAShareOfTheDomain) {
  // 100 points, where 0.07 * 100 is 7.000000000000001 in floating point and must still be 7.
  const Values ten = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const Landscape hundred =
      make_landscape("hundred", {{"A", ten}, {"B", ten}}, nullptr,
                     [](const Values& v, const Coords&) { return 1.0 + static_cast<double>(v[0] + v[1]); }, {0, 0});
  const Landscape l = mixed3d();
  for (const Landscape* d : {&hundred, &l}) {
    const std::size_t n = d->domain.size();
    for (const auto& [fraction, expected] : std::vector<std::pair<double, std::size_t>>{
             {0.1, (n + 9) / 10}, {0.07, (7 * n + 99) / 100}, {1.0 / 3, (n + 2) / 3}, {1.0, n}}) {
      const auto s = make_strategy("random", d->domain, 2);
      SearchBudget b;
      b.fraction = fraction;
      const SearchTrace t = run_search(
          d->domain, *s, [&](std::size_t p) { return d->evaluate(p); }, b, 4);
      EXPECT_EQ(t.evaluations.size(), expected) << fraction << " of " << n;
      EXPECT_EQ(t.budget_exhausted, fraction < 1) << fraction << " of " << n;
    }
  }
  // The tighter of two limits wins.
  SearchBudget both;
  both.fraction = 0.5;
  both.evaluations = 7;
  const auto s = make_strategy("local", l.domain, 2);
  EXPECT_EQ(run_search(
                l.domain, *s, [&](std::size_t p) { return l.evaluate(p); }, both)
                .evaluations.size(),
            7u);
}

TEST(RunSearch, StopsAtTheTimeBudget) {
  const Landscape l = mixed3d();
  for (const std::string& name : strategy_names()) {
    const auto s = make_strategy(name, l.domain, 2);
    SearchBudget b;
    b.seconds = 10;
    // Each evaluation costs 0.75 s: the 14th starts at 9.75 s, the 15th would start at 10.5 s.
    const SearchTrace t = run_search(
        l.domain, *s,
        [&](std::size_t p) {
          return Evaluation{p, l.times[p], 0.75};
        },
        b, 4);
    EXPECT_EQ(t.evaluations.size(), 14u) << name;
    EXPECT_DOUBLE_EQ(t.cost_seconds, 10.5) << name;
    EXPECT_TRUE(t.budget_exhausted) << name;
  }
}

TEST(RunSearch, AGenerousBudgetIsNotExhausted) {
  const Landscape l = mixed3d();
  for (const std::string& name : strategy_names()) {
    const auto s = make_strategy(name, l.domain, 2);
    SearchBudget b;
    b.evaluations = l.domain.size();
    b.fraction = 1.0;
    b.seconds = 1e9;
    const SearchTrace t = run_search(
        l.domain, *s, [&](std::size_t p) { return l.evaluate(p); }, b, 8);
    EXPECT_EQ(t.evaluations.size(), l.domain.size()) << name;
    EXPECT_FALSE(t.budget_exhausted) << name;
    EXPECT_EQ(t.best, l.optimum) << name;
  }
}

TEST(RunSearch, TracesOutcomesInOrderAndKeepsTheBest) {
  const Landscape l = mixed3d();
  const auto s = make_strategy("genetic", l.domain, 4);
  SearchBudget b;
  b.evaluations = 60;
  const SearchTrace t = run_search(
      l.domain, *s, [&](std::size_t p) { return l.evaluate(p); }, b, 8);
  ASSERT_EQ(t.evaluations.size(), 60u);
  std::optional<std::size_t> best;
  for (const Evaluation& e : t.evaluations) {
    EXPECT_EQ(e.time, l.times[e.point]);
    if (e.time && (!best || *e.time < *l.times[*best])) best = e.point;
  }
  EXPECT_EQ(t.best, best);
  ASSERT_TRUE(best);
  EXPECT_DOUBLE_EQ(t.best_time, *l.times[*best]);
}

TEST(RunSearch, RejectsBadArgumentsAndBadStrategies) {
  const Landscape l = mixed3d();
  const auto evaluate = [&](std::size_t p) { return l.evaluate(p); };
  const auto s = make_strategy("random", l.domain, 1);
  expect_error([&] { (void)run_search(l.domain, *s, evaluate, {}, 0); }, "in-flight width must be at least 1");
  for (const double bad : {0.0, -0.5, 1.5, std::nan("")}) {
    SearchBudget b;
    b.fraction = bad;
    expect_error([&] { (void)run_search(l.domain, *s, evaluate, b); }, "budget fraction");
  }
  SearchBudget negative;
  negative.seconds = -1;
  expect_error([&] { (void)run_search(l.domain, *s, evaluate, negative); }, "seconds");

  // Proposes 0, 1, 2, then last: 2 again, or a point outside the domain.
  class Broken final : public SearchStrategy {
   public:
    explicit Broken(std::size_t last) : last_(last) {}
    std::string_view name() const override { return "broken"; }
    bool learns() const override { return false; }
    std::vector<std::size_t> propose(std::size_t) override { return {next_ < 3 ? next_++ : last_}; }
    void observe(std::size_t, std::optional<double>) override {}

   private:
    std::size_t next_ = 0;
    std::size_t last_;
  };
  Broken twice(2);
  expect_error([&] { (void)run_search(l.domain, twice, evaluate, {}); }, "strategy 'broken' proposed point 2 (A=");
  Broken outside(l.domain.size());
  expect_error([&] { (void)run_search(l.domain, outside, evaluate, {}); }, "outside the domain");
  const auto zero = [&](std::size_t p) { return Evaluation{p, 0.0, 1.0}; };
  const auto fresh = make_strategy("random", l.domain, 1);
  expect_error([&] { (void)run_search(l.domain, *fresh, zero, {}); }, "must be positive and finite");
}

// --- the window, recall and the first point -----------------------------------------------

/// An evaluator that logs what the loop does: submits, waits, cancels, and the widest window.
class LoggingEvaluator final : public Evaluator {
 public:
  explicit LoggingEvaluator(const Landscape& l, double cost = 1.0) : l_(l), cost_(cost) {}
  std::optional<Evaluation> recall(std::size_t point) override {
    if (!known.contains(point)) return std::nullopt;
    recalled.push_back(point);
    return Evaluation{point, l_.times[point], 99.0};  // a recalled cost must not count
  }
  void submit(std::size_t point) override {
    submitted.push_back(point);
    pending_.push_back(point);
    widest = std::max(widest, pending_.size());
  }
  Evaluation next() override {
    const std::size_t point = pending_.front();
    pending_.erase(pending_.begin());
    elapsed_ += cost_;
    return {point, l_.times[point], cost_};
  }
  void cancel() override {
    cancelled += pending_.size();
    pending_.clear();
  }
  double elapsed_seconds() const override { return elapsed_; }

  std::set<std::size_t> known;
  std::vector<std::size_t> submitted, recalled;
  std::size_t widest = 0, cancelled = 0;

 private:
  const Landscape& l_;
  double cost_;
  std::vector<std::size_t> pending_;
  double elapsed_ = 0;
};

TEST(SearchLoop, KeepsTheWindowFullAndObservesInSubmissionOrder) {
  const Landscape l = mixed3d();
  for (const std::string& name : strategy_names()) {
    for (const std::size_t width : {1u, 4u, 32u}) {
      const auto s = make_strategy(name, l.domain, 3);
      LoggingEvaluator e(l);
      const SearchTrace t = run_search(l.domain, *s, e, SearchRun{{}, width, std::nullopt});
      ASSERT_EQ(t.evaluations.size(), l.domain.size()) << name;
      // A strategy that learns may hold back until outcomes come in; the others fill the window.
      EXPECT_LE(e.widest, width) << name;
      if (!s->learns()) EXPECT_EQ(e.widest, std::min(width, l.domain.size())) << name << " width " << width;
      for (std::size_t i = 0; i < t.evaluations.size(); ++i)
        ASSERT_EQ(t.evaluations[i].point, e.submitted[i]) << name << ": observed out of submission order";
      EXPECT_EQ(t.evaluated, l.domain.size());
      EXPECT_EQ(t.resumed, 0u);
    }
  }
}

TEST(SearchLoop, RecalledPointsAreObservedAtOnceAndCostNothing) {
  const Landscape l = mixed3d();
  const auto plain = make_strategy("exhaustive", l.domain, 1);
  const SearchTrace reference = run_search(
      l.domain, *plain, [&](std::size_t p) { return l.evaluate(p); }, {}, 8);
  for (const std::string& name : strategy_names()) {
    const auto s = make_strategy(name, l.domain, 5);
    LoggingEvaluator e(l);
    for (std::size_t p = 0; p < l.domain.size(); p += 3) e.known.insert(p);
    SearchBudget b;
    b.evaluations = 10;
    const SearchTrace t = run_search(l.domain, *s, e, SearchRun{b, 4, std::nullopt});
    EXPECT_EQ(t.evaluated, 10u) << name << ": recalled points are not counted against the budget";
    EXPECT_EQ(e.submitted.size(), 10u) << name;
    EXPECT_EQ(t.resumed, e.recalled.size()) << name;
    EXPECT_GT(t.resumed, 0u) << name;
    EXPECT_EQ(t.evaluations.size(), t.evaluated + t.resumed) << name;
    EXPECT_DOUBLE_EQ(t.cost_seconds, 10.0) << name << ": a recalled point costs nothing";
    for (const Evaluation& ev : t.evaluations) {
      EXPECT_EQ(ev.recalled, e.known.contains(ev.point)) << name;
      EXPECT_FALSE(ev.recalled && std::find(e.submitted.begin(), e.submitted.end(), ev.point) != e.submitted.end())
          << name << ": a known point was submitted";
    }
    EXPECT_TRUE(t.budget_exhausted) << name;
  }
  // Everything known: nothing is submitted, every proposal is resumed, the best is the optimum.
  const auto s = make_strategy("random", l.domain, 1);
  LoggingEvaluator all(l);
  for (std::size_t p = 0; p < l.domain.size(); ++p) all.known.insert(p);
  const SearchTrace t = run_search(l.domain, *s, all, SearchRun{});
  EXPECT_TRUE(all.submitted.empty());
  EXPECT_EQ(t.resumed, l.domain.size());
  EXPECT_EQ(t.best, reference.best);
  EXPECT_FALSE(t.budget_exhausted);
}

TEST(SearchLoop, TheFirstPointGoesFirstEvenUnderABudgetAndAnswersTheStrategy) {
  const Landscape l = mixed3d();
  const std::size_t first = l.domain.size() - 1;  // a point no strategy starts with
  for (const std::string& name : strategy_names()) {
    const auto s = make_strategy(name, l.domain, 2);
    LoggingEvaluator e(l);
    SearchBudget b;
    b.evaluations = 3;
    const SearchTrace t = run_search(l.domain, *s, e, SearchRun{b, 8, first});
    ASSERT_FALSE(e.submitted.empty());
    EXPECT_EQ(e.submitted.front(), first) << name;
    EXPECT_EQ(t.evaluations.front().point, first) << name;
    EXPECT_EQ(e.submitted.size(), 3u) << name << ": the first point counts against the budget";
    EXPECT_EQ(std::count(e.submitted.begin(), e.submitted.end(), first), 1) << name;
  }
  // Exhaustive proposes the last point at the end: it is observed from the first evaluation,
  // not measured again, and the trace holds it once.
  const auto s = make_strategy("exhaustive", l.domain, 1);
  LoggingEvaluator e(l);
  const SearchTrace t = run_search(l.domain, *s, e, SearchRun{{}, 4, first});
  EXPECT_EQ(e.submitted.size(), l.domain.size());
  EXPECT_EQ(t.evaluations.size(), l.domain.size());
  EXPECT_FALSE(t.budget_exhausted);
  // A known first point is recalled, not measured.
  const auto r = make_strategy("random", l.domain, 1);
  LoggingEvaluator k(l);
  k.known.insert(first);
  SearchBudget two;
  two.evaluations = 2;
  const SearchTrace tk = run_search(l.domain, *r, k, SearchRun{two, 4, first});
  EXPECT_EQ(std::count(k.submitted.begin(), k.submitted.end(), first), 0);
  EXPECT_EQ(k.submitted.size(), 2u);
  EXPECT_TRUE(tk.evaluations.front().recalled);
}

TEST(SearchLoop, NeverSubmitsPastTheCountAndCancelsAtTheTime) {
  const Landscape l = mixed3d();
  for (const std::string& name : strategy_names()) {
    const auto s = make_strategy(name, l.domain, 2);
    LoggingEvaluator e(l);
    SearchBudget b;
    b.evaluations = 5;
    const SearchTrace t = run_search(l.domain, *s, e, SearchRun{b, 32, std::nullopt});
    EXPECT_EQ(e.submitted.size(), 5u) << name << ": a window wider than the budget submitted more";
    EXPECT_EQ(e.cancelled, 0u) << name;
    EXPECT_TRUE(t.budget_exhausted) << name;

    const auto st = make_strategy(name, l.domain, 2);
    LoggingEvaluator timed(l, 0.75);
    SearchBudget seconds;
    seconds.seconds = 10;
    const SearchTrace tt = run_search(l.domain, *st, timed, SearchRun{seconds, 8, std::nullopt});
    EXPECT_EQ(tt.evaluations.size(), 14u) << name;  // 14 x 0.75 = 10.5 s: spent before the 15th wait
    EXPECT_EQ(timed.cancelled, timed.submitted.size() - 14) << name << ": what was in flight is cancelled";
    EXPECT_GT(timed.cancelled, 0u) << name;
    EXPECT_TRUE(tt.budget_exhausted) << name;
  }
}

TEST(SearchLoop, InFlightWidthFollowsTheSweepRule) {
  // A strategy that learns gets kSearchLag whatever the host: its search does not depend on it.
  EXPECT_EQ(kSearchLag, 8u);
  EXPECT_EQ(in_flight_width(true, 1), kSearchLag);
  EXPECT_EQ(in_flight_width(true, 6), kSearchLag);
  EXPECT_EQ(in_flight_width(true, 16), kSearchLag);
  EXPECT_EQ(in_flight_width(true, 0), kSearchLag);
  EXPECT_EQ(in_flight_width(false, 2), 32u);
  EXPECT_EQ(in_flight_width(false, 16), 64u);
  EXPECT_GE(in_flight_width(false, 0), 32u);  // 0: one thread per core
  const Landscape l = mixed3d();
  for (const std::string& name : strategy_names()) {
    const auto s = make_strategy(name, l.domain, 1);
    EXPECT_EQ(s->learns(), name != "exhaustive" && name != "random") << name;
    const SearchRun run = sweep_search_run(l.domain, *s, {}, 16);
    EXPECT_EQ(run.in_flight, s->learns() ? 8u : 64u) << name;
    EXPECT_EQ(run.first, l.domain.start()) << name;
  }
}

TEST(SearchLoop, ALearningStrategySearchesTheSameAtAnyWidth) {
  // Issue 36: the forest's evaluations to 99 % differed by up to 2.1x between 1, 4 and 8 in
  // flight. Each proposal now sees the outcomes kSearchLag proposals old, so every width up to
  // the lag gives the same points in the same order; a wider window waits for them (same again).
  const Landscape l = gemm5d();
  for (const std::string& name : {"local", "genetic", "forest", "forest:kappa=0.5:joint=0"}) {
    const auto points = [&](std::size_t width) {
      const auto s = make_strategy(name, l.domain, 3);
      SearchBudget b;
      b.evaluations = 150;
      const SearchTrace t = run_search(
          l.domain, *s, [&](std::size_t p) { return l.evaluate(p); }, b, width);
      std::vector<std::size_t> order;
      for (const Evaluation& e : t.evaluations) order.push_back(e.point);
      return order;
    };
    const std::vector<std::size_t> one = points(1);
    ASSERT_EQ(one.size(), 150u) << name;
    for (const std::size_t width : {2u, 4u, 7u, 8u, 16u}) EXPECT_EQ(points(width), one) << name << " at " << width;
  }
}

TEST(SearchLoop, TheLagShowsOutcomesOnlyWhenTheyAreOldEnoughOrNeeded) {
  // Driven by hand: at most kSearchLag proposals come without any outcome (the forest's design,
  // 6 points here, then it needs outcomes); then the oldest outcome is the one it waits for,
  // whatever else has arrived; outcomes may arrive in any order.
  const Landscape l = gemm5d();
  const auto s = make_strategy("forest", l.domain, 1);
  const std::vector<std::size_t> first = s->propose(20);
  ASSERT_EQ(first.size(), 6u);
  EXPECT_TRUE(s->propose(1).empty()) << "the next proposal needs the first outcome";
  s->observe(first[1], l.times[first[1]]);
  EXPECT_TRUE(s->propose(1).empty()) << "the second outcome is not the first";
  s->observe(first[0], l.times[first[0]]);
  // Both outcomes shown, one at a time as needed: proposals 7 to 10 come (the tenth sees the
  // outcomes of the first two), the eleventh needs the third outcome.
  EXPECT_EQ(s->propose(20).size(), 4u);
  expect_error([&] { s->observe(first[0], 1.0); }, "not outstanding");
  expect_error([&] { s->observe(first[1], 1.0); }, "not outstanding");
  // A sweep over many GPUs makes its strategy with a wider lag: the genetic search's first
  // population (20 points, no outcome needed) comes 8 or 16 at a time.
  EXPECT_EQ(make_strategy("genetic", l.domain, 1)->propose(32).size(), kSearchLag);
  EXPECT_EQ(make_strategy("genetic", l.domain, 1, 16)->propose(32).size(), 16u);
  expect_error([&] { (void)make_strategy("forest", l.domain, 1, 0); }, "the lag must be at least 1");
}

TEST(Strategies, ForestSettingsAreReadAndRefusedByName) {
  const Landscape l = gemm5d();
  const auto sequence = [&](const std::string& name) {
    const auto s = make_strategy(name, l.domain, 4);
    SearchBudget b;
    b.evaluations = 120;
    std::vector<std::size_t> order;
    for (const Evaluation& e : run_search(l.domain, *s, [&](std::size_t p) { return l.evaluate(p); }, b, 1).evaluations)
      order.push_back(e.point);
    return order;
  };
  EXPECT_EQ(make_strategy("forest:local=0.3", l.domain, 1)->name(), "forest");
  // The defaults spelled out are the defaults; a setting changes the search.
  EXPECT_EQ(sequence("forest:explore=0.1:local=0.5:kappa=1:bases=5:joint=1:alignment=1:poll=1"), sequence("forest"));
  EXPECT_NE(sequence("forest:local=0.9"), sequence("forest"));
  EXPECT_NE(sequence("forest:alignment=0"), sequence("forest"));
  EXPECT_NE(sequence("forest:poll=0"), sequence("forest"));
  expect_error([&] { (void)make_strategy("forest:lokal=0.3", l.domain, 1); }, "unknown forest setting 'lokal'");
  expect_error([&] { (void)make_strategy("forest:local=1.5", l.domain, 1); }, "local='1.5': not a number in [0, 1]");
  expect_error([&] { (void)make_strategy("forest:kappa", l.domain, 1); }, "expected key=value");
  expect_error([&] { (void)make_strategy("forest:kappa=nan", l.domain, 1); }, "not a number");
  expect_error([&] { (void)make_strategy("forest:joint=0.5", l.domain, 1); }, "joint='0.5': not a whole number in [0, 1]");
  expect_error([&] { (void)make_strategy("forest:bases=2.5", l.domain, 1); }, "not a whole number");
  expect_error([&] { (void)make_strategy("forest:poll=2", l.domain, 1); }, "poll='2': not a number in [0, 1]");
  expect_error([&] { (void)make_strategy("genetic:local=0.3", l.domain, 1); }, "unknown search strategy");
}

TEST(SearchLoop, AnEvaluatorThatAnswersOutOfOrderIsAnError) {
  const Landscape l = mixed3d();
  class Newest final : public Evaluator {
   public:
    void submit(std::size_t point) override { pending_.push_back(point); }
    Evaluation next() override {
      const std::size_t p = pending_.back();
      pending_.pop_back();
      return {p, 1.0, 1.0};
    }
    void cancel() override { pending_.clear(); }
    double elapsed_seconds() const override { return 0; }

   private:
    std::vector<std::size_t> pending_;
  } newest;
  const auto s = make_strategy("exhaustive", l.domain, 1);
  expect_error(
      [&] {
        (void)run_search(l.domain, *s, newest, SearchRun{{}, 4, std::nullopt});
      },
      "where the oldest outstanding is");
}

// --- failures ---------------------------------------------------------------------------------

TEST(Failures, AreNeverTheBest) {
  for (const Landscape& l : {mixed3d(), stencil4d()}) {
    for (const std::string& name : strategy_names()) {
      const auto s = make_strategy(name, l.domain, 9);
      SearchBudget b;
      b.fraction = 0.3;
      const SearchTrace t = run_search(
          l.domain, *s, [&](std::size_t p) { return l.evaluate(p); }, b, 4);
      ASSERT_TRUE(t.best) << name;
      EXPECT_TRUE(l.times[*t.best]) << name << " reported a failed point as best";
      double fastest = INFINITY;
      for (const Evaluation& e : t.evaluations)
        if (e.time) fastest = std::min(fastest, *e.time);
      EXPECT_DOUBLE_EQ(t.best_time, fastest) << name;
    }
  }
}

TEST(Failures, AFailingStartIsNoObstacle) {
  const Landscape l = stencil4d({64, 64, 8, 4});
  ASSERT_FALSE(l.times[*l.domain.start()]);
  for (const std::string& name : structured()) {
    const Runs r = over_seeds(name, l, 3 * tenth(l), 1, 10);
    EXPECT_GE(r.within(3 * tenth(l)), 8u) << name << ": median " << r.median();
  }
}

TEST(Failures, AllFailedHasNoBest) {
  const Landscape l = all_failed();
  for (const std::string& name : strategy_names()) {
    for (const std::size_t batch : {1u, 8u}) {
      const auto s = make_strategy(name, l.domain, 1);
      const SearchTrace t = run_search(
          l.domain, *s, [&](std::size_t p) { return l.evaluate(p); }, {}, batch);
      EXPECT_EQ(t.evaluations.size(), l.domain.size()) << name;
      EXPECT_FALSE(t.best) << name;
      EXPECT_FALSE(t.budget_exhausted) << name;
    }
  }
}

TEST(Failures, TheModelLearnsWhereConfigsFail) {
  // Half of this domain fails. Once the forest has a model, it should propose far fewer
  // failing configs than random sampling does.
  const Landscape l = stencil4d({8, 8, 1, 1}, 2048);
  const double failing_share = static_cast<double>(std::count(l.times.begin(), l.times.end(), std::nullopt)) /
                               static_cast<double>(l.domain.size());
  ASSERT_GE(failing_share, 0.4);
  std::size_t failed = 0;
  std::size_t proposed = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const auto s = make_strategy("forest", l.domain, seed);
    SearchBudget b;
    b.evaluations = 200;
    const SearchTrace t = run_search(
        l.domain, *s, [&](std::size_t p) { return l.evaluate(p); }, b);
    for (std::size_t i = 50; i < t.evaluations.size(); ++i, ++proposed) failed += !t.evaluations[i].time;
  }
  const double model_share = static_cast<double>(failed) / static_cast<double>(proposed);
  std::cout << "failing configs: " << failing_share * 100 << " % of the domain, " << model_share * 100
            << " % of the forest's proposals 50-200\n";
  EXPECT_LE(model_share, failing_share / 2);
}

// --- quality --------------------------------------------------------------------------------

/// Most seeds of every structured strategy reach 95 % of the optimum within a tenth of the
/// domain, and their median beats random sampling's.
void expect_structured_beat_random(const Landscape& l, std::size_t batch) {
  const Runs random = over_seeds("random", l, l.domain.size(), batch);
  for (const std::string& name : structured()) {
    const Runs r = over_seeds(name, l, 3 * tenth(l), batch);
    std::cout << l.name << " batch " << batch << ": " << name << " median " << r.median() << " (" << r.within(tenth(l))
              << "/20 within " << tenth(l) << "), random median " << random.median() << "\n";
    EXPECT_GE(r.within(tenth(l)), 14u) << name << " on " << l.name;
    EXPECT_LT(r.median(), random.median()) << name << " on " << l.name;
  }
}

TEST(Quality, Smooth3d) { expect_structured_beat_random(smooth3d(), 1); }
TEST(Quality, Stencil4d) { expect_structured_beat_random(stencil4d(), 1); }
TEST(Quality, Stencil4dInBatchesOf8) { expect_structured_beat_random(stencil4d(), 8); }

TEST(Quality, Gemm5dMediansOver20Seeds) {
  // The hardest landscape: only the optimum itself is within 5 %.
  const Landscape l = gemm5d();
  const Runs random = over_seeds("random", l, l.domain.size());
  std::cout << "gemm5d (" << l.domain.size() << " configs): median evaluations to 95 % of the optimum over 20 seeds\n"
            << "  random      " << random.median() << " (" << random.within(tenth(l)) << "/20 within " << tenth(l)
            << ")\n";
  const std::size_t in_order = evaluations_to_target("exhaustive", l, 1, l.domain.size());
  std::cout << "  exhaustive  " << in_order << "\n";
  std::size_t best_median = l.domain.size();
  for (const std::string& name : structured()) {
    for (const std::size_t batch : {1u, 8u}) {
      const Runs r = over_seeds(name, l, 3 * tenth(l), batch);
      std::cout << "  " << name << " batch " << batch << "  " << r.median() << (r.median() > r.cap ? "+" : "") << " ("
                << r.within(tenth(l)) << "/20 within " << tenth(l) << ")\n";
      if (batch == 1) best_median = std::min(best_median, r.median());
      EXPECT_LT(r.median(), random.median()) << name << " batch " << batch;
    }
  }
  EXPECT_LE(best_median, tenth(l)) << "the best strategy should need under a tenth of the domain";
  EXPECT_LE(3 * best_median, random.median()) << "the best strategy should need 3x fewer evaluations than random";
}

/// A switch that is slow everywhere but at the optimum: Y=1 costs 2.5x except at X=9, Z=3, W=5,
/// where it is 0.6 against Y=0's 1.0 (as on the published A6000 convolution, whose optimum is a
/// flip of a param its neighbourhood dislikes). Only the optimum is within 5 %.
Landscape lone_switch() {
  Values wide(16);
  std::iota(wide.begin(), wide.end(), 0);
  const std::vector<Param> params = {
      {"X", wide}, {"Z", {0, 1, 2, 3, 4, 5, 6, 7}}, {"W", {0, 1, 2, 3, 4, 5, 6, 7}}, {"Y", {0, 1}}};
  const TimeModel time = [](const Values& v, const Coords& c) -> std::optional<double> {
    const double base = (1 + 0.15 * std::abs(v[0] - 9)) * (1 + 0.15 * std::abs(v[1] - 3)) *
                        (1 + 0.1 * std::abs(v[2] - 5)) * (1 + 0.02 * jitter(c, 7));
    if (v[3] == 0) return base;
    return v[0] == 9 && v[1] == 3 && v[2] == 5 ? 0.6 : 2.5 * base;
  };
  return make_landscape("lone_switch", params, nullptr, time, {0, 0, 0, 0});
}

TEST(Forest, PollsEachParamOfTheFastestConfig) {
  // The local steps vary each param of the fastest config once before they choose among all the
  // neighbours of the fastest few: the model would otherwise not try a value it saw slow elsewhere.
  const Landscape l = lone_switch();
  const std::size_t cap = l.domain.size() / 4;
  const Runs polled = over_seeds("forest", l, cap);
  const Runs unpolled = over_seeds("forest:poll=0", l, cap);
  std::cout << "lone_switch (" << l.domain.size() << " configs), to the optimum over 20 seeds: forest median "
            << polled.median() << " (" << polled.within(cap) << "/20 within " << cap << "), without the poll "
            << unpolled.median() << " (" << unpolled.within(cap) << "/20)\n";
  EXPECT_EQ(polled.within(cap), 20u);
  EXPECT_LT(2 * polled.median(), unpolled.median());
}

TEST(Forest, RefitAtThreeHundredObservationsIsCheap) {
  // Observe 300 points, then time the next proposal: a fit and a score of the candidate pool
  // (bounded: about 1000 random points and the neighbourhood of the fastest ones). The fastest
  // of a few seeds, since a proposal may be one of the random ones that need no model, and the
  // machine may be busy.
  const Landscape l = gemm5d();
  ASSERT_GE(l.domain.size(), 2000u + 300u);
  using Clock = std::chrono::steady_clock;
  double fastest = INFINITY;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const auto s = make_strategy("forest", l.domain, seed);
    std::size_t observed = 0;
    while (observed < 300) {
      for (const std::size_t p : s->propose(300 - observed)) {
        s->observe(p, l.times[p]);
        ++observed;
      }
    }
    const auto t0 = Clock::now();
    (void)s->propose(1);
    fastest = std::min(fastest, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::cout << "forest fit + score of its pool, 300 observations, " << l.domain.size() << " configs: " << fastest
            << " ms\n";
  // A bound against a complexity regression, loose enough for a loaded 2-core CI machine (it took
  // 117 ms there under load against a 50 ms bound): not a speed claim; bench_strategies measures.
  EXPECT_LT(fastest, 1000.0);
}

}  // namespace
}  // namespace tiletune
