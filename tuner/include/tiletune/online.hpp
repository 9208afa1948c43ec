// Tuning in the running program (issue 25, part 3), opt-in: the Launcher tries one untried config
// of a problem on a real call at a time, beside the call's own launch, and keeps it only when its
// outputs match those of the config in use on the same inputs and it is faster. OnlineSchedule is
// the decision part (which candidate, when, what to keep), free of the GPU so that CPU tests drive
// it; the Launcher runs the trials on the device (launcher.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "tiletune/enumerate.hpp"
#include "tiletune/space.hpp"

namespace tiletune {

/// What online tuning may spend.
struct OnlineOptions {
  /// Kernel names (the space's `kernel:`) or globs, as for capture; empty: off.
  std::vector<std::string> patterns;
  /// Candidates tried per problem at most (the config in use is not one of them).
  std::uint64_t budget = 32;
  /// Trials start only while the time spent in trials stays at most this share of the wall time
  /// since the Launcher opened: the bound on what online tuning adds to a call on average.
  double share = 0.05;
  /// Timed runs of each of the two configs in a trial (their medians are compared).
  std::uint64_t samples = 3;

  /// From TILETUNE_ONLINE (names or globs), TILETUNE_ONLINE_BUDGET (a count),
  /// TILETUNE_ONLINE_SHARE (0 < share <= 1) and TILETUNE_ONLINE_SAMPLES (1 to 100). A malformed
  /// value is said in one line on `diagnostics` and online tuning is off.
  [[nodiscard]] static OnlineOptions from_environment(std::ostream& diagnostics);
  [[nodiscard]] bool matches(std::string_view kernel) const;
  [[nodiscard]] bool enabled() const noexcept { return !patterns.empty(); }
};

/// How a trial ended.
enum class OnlineVerdict {
  faster,  ///< outputs matched and the candidate was faster: it is used from now on
  slower,  ///< outputs matched, not faster
  wrong,   ///< outputs differ from the config in use: never used
  failed,  ///< did not compile or launch: never used
};
[[nodiscard]] const char* online_verdict_name(OnlineVerdict verdict) noexcept;

/// Which candidate to try on which call, and which config a problem uses. Not thread-safe (the
/// Launcher serializes it).
class OnlineSchedule {
 public:
  /// `opened_s` is the clock's time when the Launcher opened (seconds, any origin).
  OnlineSchedule(const Space& space, OnlineOptions options, double opened_s);

  /// Before a call of `problem` at time `now_s`, whose plan uses `current`: the candidate to try
  /// on it, or nullopt (budget spent, no untried config left, or the share of time reached).
  [[nodiscard]] std::optional<Config> next(const Problem& problem, const Config& current, double now_s);
  /// The trial of `candidate` ended: its verdict, and the seconds it cost the call.
  void record(const Problem& problem, const Config& candidate, OnlineVerdict verdict, double cost_s);
  /// Configs never to try for a problem: those the cache already has trials of (an earlier run).
  void skip(const Problem& problem, const std::vector<Config>& configs);
  /// The config a problem uses after its trials (nullopt: none was faster than the plan's).
  [[nodiscard]] std::optional<Config> best(const Problem& problem) const;
  /// Candidates tried for a problem so far.
  [[nodiscard]] std::uint64_t tried(const Problem& problem) const;
  /// Seconds spent in trials, all problems.
  [[nodiscard]] double spent_s() const noexcept { return spent_s_; }
  [[nodiscard]] const OnlineOptions& options() const noexcept { return options_; }

 private:
  struct PerProblem {
    std::optional<Enumerator> candidates;  ///< walked in enumeration order
    std::vector<Config> tried;
    std::vector<Config> known;  ///< in use on a call, or tried before: never candidates
    std::optional<Config> best;
    bool exhausted = false;
  };
  const Space& space_;
  OnlineOptions options_;
  double opened_s_;
  double spent_s_ = 0;
  std::map<std::vector<std::int64_t>, PerProblem> problems_;
};

}  // namespace tiletune
