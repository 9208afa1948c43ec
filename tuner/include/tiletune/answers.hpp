// What a cache answers for a device, kernel and problem when several configs are equally fast:
// the tie test, the tie set and the rule that picks one config from it, declared once. The
// engine (CacheDb::answers, `best`, `report`, `diff`) and the query library (every lookup) both
// go through these functions, so two readers of one cache never disagree.
//
// The tie test. Two configs are tied when the difference of their median times is within the
// noise of the two medians, or below a floor:
//     |t_a - t_b| <= min(cap * t_fast, max(floor * t_fast, z * sqrt(se_a^2 + se_b^2)))
// se is the standard error of a median, sqrt(pi/2) * stddev / sqrt(samples) (the large-sample
// rule, exact for normal noise and conservative for the heavier right tail of GPU timings, whose
// stddev grows with it). It needs only columns every cache has (time_ms, stddev_ms, samples), so
// a lookup decides it without parsing samples. z = 1.96: a 95 % two-sided test. floor = 1.5 %:
// one config's median moves between two sweeps of the H200 by up to 0.9 % (reduction) and 1.1 %
// (transpose) (p99 0.8 and 1.1 %; the median over configs 0.1-0.3 %), and a tie compares two
// such medians. At 0.5 % two sweeps of the reduction gave other answers (their tie sets' edges
// moved); three sweeps agree at 1.5 % on every shipped problem measured
// (bench/results/2026-12-02-h200-answers-guard-capture.md). The price: an answer may be up to
// 1.5 % slower than the fastest measurement, which is within that noise. cap = 5 %: a larger difference is
// never called a tie, however noisy (noise that large means a broken measurement, not equal
// configs). A trial without samples or stddev has se = 0: only the floor applies.
//
// The tie set of a (device, kernel version, problem) is every ok trial tied with the fastest one
// (the fastest included). The pick rule, applied within it: the highest occupancy (the driver's,
// else the offline model's; a config that keeps more warps resident hides latency better when
// the GPU is shared), then the fewest registers per thread, then the canonical config order
// (params compared name by name, values as integers). So two sweeps, two GPUs of a model and a
// merge whose tie sets hold the same configs give the same answer, whichever was fastest.
//
// The standing answer. A tie set's edge moves with the noise: a config 1.4 % from the fastest in
// one sweep is 1.6 % in the next, and the pick rule may then land on another member (measured on
// the H200: a 7 us reduction, bench/results/2026-12-02-h200-answers-guard-capture.md). So an
// answer, once given, stands: the answer of a key is the latest answer its cache recorded
// (answer_history, schema 9) while that config is held with the fastest, and the pick rule's
// choice only when it is not (or there is none). Held is the tie test with a wider floor, the
// hold floor (hysteresis: a config enters the answer at the tie window and leaves it only beyond
// the hold window). hold floor = 3 %: the difference of two configs' medians moves between two
// sweeps of the H200 by up to twice one median's drift (2 x 1.1 %), and a standing answer that
// was tied at 1.5 % was measured more than 1.5 % from the fastest in 2 of 5 reruns of that
// reduction (bench/results/2026-12-02-h200-standing-answer-split.md); since then 30 of 30 reruns
// kept their answer, lying up to 1.72 % from the fastest (2026-12-03-h200-hysteresis-tie-pass.md).
// A held answer is a member of its tie set (its size and spread count it). A rerun or a merge
// therefore changes an answer only when the measurements say the old one is slower by more than
// the noise of two sweeps.
//
// Needs only the C++ standard library (the query library includes it).
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tiletune {

/// Below this relative difference of medians two configs are always tied.
inline constexpr double tie_relative_floor = 0.015;
/// Above this relative difference two configs are never tied.
inline constexpr double tie_relative_cap = 0.05;
/// A standing answer stays the answer while it is within this relative difference of the fastest
/// (or the noise test's window, whichever is wider; never beyond the cap): the hold floor.
inline constexpr double tie_hold_floor = 0.03;
/// The normal quantile of the test: 1.96, two-sided 95 %.
inline constexpr double tie_z = 1.96;

/// What the tie test and the pick rule read of one ok trial.
struct TieTrial {
  std::string params;    ///< canonical, "TILE=32;BLOCK_ROWS=8"
  double time_ms = 0.0;  ///< median
  std::optional<double> stddev_ms;
  std::optional<std::int64_t> samples;
  std::optional<double> occupancy;  ///< occupancy_driver, else occupancy_offline
  std::optional<std::int64_t> registers;
};

/// The standard error of a trial's median, ms; 0 when its samples or stddev are unknown.
[[nodiscard]] inline double median_standard_error(const TieTrial& t) noexcept {
  if (!t.stddev_ms || !t.samples || *t.samples < 2 || !(*t.stddev_ms > 0.0)) return 0.0;
  constexpr double sqrt_half_pi = 1.2533141373155003;
  return sqrt_half_pi * *t.stddev_ms / std::sqrt(static_cast<double>(*t.samples));
}

/// The window of the tie test at `floor`: the largest |other - fastest| that is a tie, ms.
[[nodiscard]] inline double tie_window_ms(const TieTrial& fastest, const TieTrial& other, double floor) noexcept {
  const double a = median_standard_error(fastest);
  const double b = median_standard_error(other);
  const double noise = tie_z * std::sqrt(a * a + b * b);
  return std::min(tie_relative_cap * fastest.time_ms, std::max(floor * fastest.time_ms, noise));
}

/// True when `other` is statistically tied with `fastest` (fastest.time_ms <= other.time_ms).
[[nodiscard]] inline bool tied_with(const TieTrial& fastest, const TieTrial& other) noexcept {
  return std::fabs(other.time_ms - fastest.time_ms) <= tie_window_ms(fastest, other, tie_relative_floor);
}

/// True when `standing`, the key's standing answer, is still held with `fastest`: the tie test at
/// the hold floor.
[[nodiscard]] inline bool held_with(const TieTrial& fastest, const TieTrial& standing) noexcept {
  return std::fabs(standing.time_ms - fastest.time_ms) <= tie_window_ms(fastest, standing, tie_hold_floor);
}

/// The slowest time a trial tied with a fastest time of `fastest_ms` can have (the cap).
[[nodiscard]] inline double tie_time_bound(double fastest_ms) noexcept { return fastest_ms * (1.0 + tie_relative_cap); }

/// The canonical order of two params texts: item by item, names as text, values as integers
/// (so TILE=8 comes before TILE=16); a value that is not an integer compares as text. <0, 0, >0.
[[nodiscard]] inline int compare_params(std::string_view a, std::string_view b) noexcept {
  auto next = [](std::string_view& s) {
    const auto end = s.find(';');
    std::string_view item = s.substr(0, end);
    s = end == std::string_view::npos ? std::string_view() : s.substr(end + 1);
    return item;
  };
  while (!a.empty() || !b.empty()) {
    if (a.empty()) return -1;
    if (b.empty()) return 1;
    const std::string_view x = next(a);
    const std::string_view y = next(b);
    const auto xe = x.find('=');
    const auto ye = y.find('=');
    const std::string_view xn = x.substr(0, xe);
    const std::string_view yn = y.substr(0, ye);
    if (xn != yn) return xn < yn ? -1 : 1;
    const std::string_view xv = xe == std::string_view::npos ? std::string_view() : x.substr(xe + 1);
    const std::string_view yv = ye == std::string_view::npos ? std::string_view() : y.substr(ye + 1);
    std::int64_t xi = 0, yi = 0;
    const auto [xp, xc] = std::from_chars(xv.data(), xv.data() + xv.size(), xi);
    const auto [yp, yc] = std::from_chars(yv.data(), yv.data() + yv.size(), yi);
    const bool numbers =
        xc == std::errc() && yc == std::errc() && xp == xv.data() + xv.size() && yp == yv.data() + yv.size();
    if (numbers) {
      if (xi != yi) return xi < yi ? -1 : 1;
    } else if (xv != yv) {
      return xv < yv ? -1 : 1;
    }
  }
  return 0;
}

/// "N=8192;M=64" with its items sorted by name ("M=64;N=8192"), spaces and empty items dropped:
/// how pins store a problem, and how a problem in a space's order is compared with one.
[[nodiscard]] inline std::string sorted_assignments(std::string_view text) {
  std::vector<std::string> items;
  while (!text.empty()) {
    const auto end = text.find_first_of(";,");
    std::string item;
    for (const char c : text.substr(0, end))
      if (c != ' ' && c != '\t') item += c;
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (!item.empty()) items.push_back(std::move(item));
  }
  std::sort(items.begin(), items.end(), [](const std::string& a, const std::string& b) {
    return std::string_view(a).substr(0, a.find('=')) < std::string_view(b).substr(0, b.find('='));
  });
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += ';';
    out += item;
  }
  return out;
}

/// The pick rule: true when `a` is chosen before `b` among tied configs.
[[nodiscard]] inline bool picked_before(const TieTrial& a, const TieTrial& b) noexcept {
  const double oa = a.occupancy.value_or(-1.0);
  const double ob = b.occupancy.value_or(-1.0);
  if (std::fabs(oa - ob) > 1e-9) return oa > ob;
  const std::int64_t ra = a.registers.value_or(INT64_MAX);
  const std::int64_t rb = b.registers.value_or(INT64_MAX);
  if (ra != rb) return ra < rb;
  return compare_params(a.params, b.params) < 0;
}

/// The tie set of a group of ok trials, as indexes into it.
struct TieSet {
  std::size_t fastest = 0;  ///< the lowest median (the best table's row)
  std::size_t pick = 0;     ///< the answer: the standing answer while it is held, else the pick rule's choice
  std::vector<std::size_t> members;  ///< the tied trials and a held standing answer, fastest first
  /// Every trial that would stand as the answer were it the standing one (held_with the
  /// fastest), fastest first: what `diff` asks of an old answer a new cache never recorded.
  std::vector<std::size_t> holdable;
  double spread = 0.0;               ///< (slowest member - fastest) / fastest, >= 0
};

/// The standing answer of a key: the params of its latest answer_history row before run ?4
/// (?1 device id, ?2 kernel id, ?3 problem; ?4 the running version's used_seq for the engine's
/// own run, the largest integer for a reader, which takes the latest row of all).
inline constexpr const char* standing_answer_sql =
    "SELECT params FROM answer_history WHERE device_id = ?1 AND kernel_id = ?2 AND problem = ?3 AND run_seq < ?4 "
    "ORDER BY run_seq DESC LIMIT 1";

/// The tie set of `trials` (ok trials of one device, kernel version and problem; not empty).
/// `standing`: the key's standing answer (params; empty: none), which stays the pick, and a
/// member, while it is held with the fastest.
[[nodiscard]] inline TieSet tie_set(const std::vector<TieTrial>& trials, std::string_view standing = {}) {
  TieSet set;
  for (std::size_t i = 1; i < trials.size(); ++i) {
    const TieTrial& t = trials[i];
    const TieTrial& f = trials[set.fastest];
    if (t.time_ms < f.time_ms || (t.time_ms == f.time_ms && compare_params(t.params, f.params) < 0)) set.fastest = i;
  }
  const TieTrial& fastest = trials[set.fastest];
  std::optional<std::size_t> held;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    if (trials[i].time_ms < fastest.time_ms || !held_with(fastest, trials[i])) continue;
    set.holdable.push_back(i);
    const bool is_standing = !standing.empty() && trials[i].params == standing;
    if (is_standing) held = i;
    if (is_standing || tied_with(fastest, trials[i])) set.members.push_back(i);
  }
  const auto fastest_first = [&](std::size_t x, std::size_t y) {
    if (trials[x].time_ms != trials[y].time_ms) return trials[x].time_ms < trials[y].time_ms;
    return compare_params(trials[x].params, trials[y].params) < 0;
  };
  // The fastest ties with itself; it is a member even where its time is not a finite number
  // (a cache edited by hand), whose window no test can compute.
  if (std::find(set.members.begin(), set.members.end(), set.fastest) == set.members.end())
    set.members.push_back(set.fastest);
  std::sort(set.members.begin(), set.members.end(), fastest_first);
  std::sort(set.holdable.begin(), set.holdable.end(), fastest_first);
  set.pick = set.members.front();
  double slowest = fastest.time_ms;
  for (const std::size_t i : set.members) {
    if (picked_before(trials[i], trials[set.pick])) set.pick = i;
    slowest = std::max(slowest, trials[i].time_ms);
  }
  if (held) set.pick = *held;
  const double spread = fastest.time_ms > 0.0 ? (slowest - fastest.time_ms) / fastest.time_ms : 0.0;
  set.spread = std::isfinite(spread) ? spread : 0.0;
  return set;
}

}  // namespace tiletune
