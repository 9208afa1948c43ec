// Replays: a search strategy run against a recorded landscape instead of the GPU. Each point
// the strategy proposes is answered with its recorded outcome (failures stay failures) and
// costs its recorded compile and measure time, so a replay says how many evaluations and how
// much sweep time a strategy would have needed, in milliseconds of CPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tiletune/enumerate.hpp"
#include "tiletune/landscape.hpp"
#include "tiletune/shard.hpp"
#include "tiletune/space.hpp"
#include "tiletune/strategy.hpp"

namespace tiletune {

/// A space's valid configs for one problem as a search domain: a point's config is the values
/// at its coordinates.
struct SpaceDomain {
  SearchDomain domain;
  [[nodiscard]] Config config(std::size_t point) const;
  /// The point of a config, if it is one of the domain's (nullopt for a value no param has,
  /// or a config the constraints or the shard leave out).
  [[nodiscard]] std::optional<std::size_t> point_of(const Config& config) const;
  /// point_of a canonical params text ("TILE=32;PAD=1").
  [[nodiscard]] std::optional<std::size_t> point_of(const Space& space, const std::string& canonical_params) const;
};
/// The most configs (after constraints) of one problem that a search takes: each is held in memory.
inline constexpr std::size_t max_search_configs = 1'000'000;
/// Throws Error when a param has more than 65535 values or more than max_search_configs pass.
/// With a shard, only the configs of that shard (tiletune/shard.hpp) are points; the default
/// config is the start only in the shard that holds it.
[[nodiscard]] SpaceDomain space_domain(const Space& space, const Problem& problem, const Shard& shard = {});

/// One problem of a space joined with its recording.
struct ReplayProblem {
  Problem problem;
  std::string canonical;                    ///< "N=8192"
  SpaceDomain space;                        ///< only the configs the recording has
  std::vector<LandscapeTrial> outcomes;     ///< per point of space.domain
  std::uint64_t unrecorded = 0;             ///< valid configs the recording lacks (left out)
  std::optional<std::size_t> optimum;       ///< fastest ok point
  double optimum_ms = 0;
  double exhaustive_cost_seconds = 0;       ///< what measuring every point cost the recording
};

/// Joins a problem of a space with a landscape. Throws Error when the landscape is of another
/// kernel, has no trials for the problem, or none of them is a config of the space (of the
/// shard, with one).
[[nodiscard]] ReplayProblem replay_problem(const Space& space, const Landscape& landscape,
                                           const Problem& problem, const Shard& shard = {});

/// A point's recorded outcome: its time when it ran ok (failures stay failures), costing the
/// recorded compile + measure time.
[[nodiscard]] Evaluation recorded_evaluation(const ReplayProblem& problem, std::size_t point);

/// Runs a strategy against the recording through run_search, on a SimulatedEvaluator of
/// recorded_evaluation. With sweep_search_run(...) as run, it is the search a sweep makes.
[[nodiscard]] SearchTrace replay(const ReplayProblem& problem, SearchStrategy& strategy, const SearchRun& run);

/// The number of evaluations after which the trace's best reached fraction (0.95: 95 %) of the
/// optimum's speed (optimum_ms / best_ms >= fraction); nullopt when it never did.
[[nodiscard]] std::optional<std::size_t> evaluations_to_reach(const SearchTrace& trace, double optimum_ms,
                                                              double fraction);

}  // namespace tiletune
