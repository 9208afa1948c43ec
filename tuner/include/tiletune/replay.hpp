// Replays: a search strategy run against a recorded landscape instead of the GPU. Each point
// the strategy proposes is answered with its recorded outcome (failures stay failures) and
// costs its recorded compile and measure time, so a replay says how many evaluations and how
// much sweep time a strategy would have needed, in milliseconds of CPU.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tiletune/enumerate.hpp"
#include "tiletune/landscape.hpp"
#include "tiletune/shard.hpp"
#include "tiletune/space.hpp"
#include "tiletune/strategy.hpp"

namespace tiletune {

/// A space's valid configs for one problem as a search domain: a point's config is the values
/// at its coordinates. Nothing of the space's size is held: a point's id is the mixed-radix key
/// of its coordinates (the last param least significant, so that id order is the Enumerator's
/// order), find() checks the constraints (the `allowed:` list, the shard) of the coordinates
/// it is asked about, and the count is exact where it was cheap, else estimated with a stated
/// error (space_domain says which).
struct SpaceDomain {
  SearchDomain domain;
  /// The configs of the whole space that pass the constraints (before the shard; with no
  /// shard, domain.size_info()).
  DomainSize valid;
  [[nodiscard]] Config config(std::size_t point) const;
  /// The point of a config, if it is one of the domain's (nullopt for a value no param has,
  /// or a config the constraints or the shard leave out).
  [[nodiscard]] std::optional<std::size_t> point_of(const Config& config) const;
  /// point_of a canonical params text ("TILE=32;PAD=1").
  [[nodiscard]] std::optional<std::size_t> point_of(const Space& space, const std::string& canonical_params) const;
};
/// The lazy domain of a space for one problem. The params are split into groups that the
/// constraints connect (a constraint joins the params it reads; one that reads none is decided
/// for the problem at once). A group is enumerated depth-first, each constraint checked as soon
/// as its params are bound, when that visits at most 2^22 nodes: its count is exact and it is
/// sampled by a pick from its list. A larger group is sampled by rejection (with the same early
/// checks) and its count is estimated from the acceptance rate of up to 2^22 draws (stopping at
/// 16384 accepted): a 95 % relative error of 1.96 sqrt((1 - p) / accepted), about 1.5 % or
/// less unless the group's valid share is below 1/256. The space's count is the product of the
/// groups' (exact when every group's is; the errors add in quadrature). An `allowed:` list is
/// one group of every param, exact. A sample is uniform over the valid configs (a product of
/// uniform picks of independent groups) and a function of its random word (splitmix64 of it).
/// With a shard, only the configs of that shard (tiletune/shard.hpp) are points: its count is
/// exact when the space's is and has at most 2^20 configs (they are counted), else the space's
/// count / N with the binomial 95 % error 1.96 sqrt((N - 1) / count) added; the default config
/// is the start only in the shard that holds it. Building costs the groups' enumeration and
/// estimate only: well under a second unless a group's constraints prune late. Throws Error when
/// a param has more than 65535 values or the params more than 2^64 combinations.
[[nodiscard]] SpaceDomain space_domain(const Space& space, const Problem& problem, const Shard& shard = {});

/// One problem of a space joined with its recording. Its domain is the points of the domain a
/// sweep of it searches (space_domain) that the recording has, under the same ids: a config the
/// recording lacks cannot be answered (it is counted in `unrecorded`). A sample is the sweep
/// domain's sample of the same random word whenever that one is recorded, so that a replay of a
/// complete recording draws what the sweep drew; the optimum and the exhaustive cost come from
/// the recorded trials.
struct ReplayProblem {
  Problem problem;
  std::string canonical;  ///< "N=8192"
  SpaceDomain space;      ///< the recorded valid configs (of the shard, with one)
  /// The size of the sweep's domain (every valid config, of the shard with one): what a sweep's
  /// schedule (auto, a share of the configs) is decided on.
  DomainSize sweep_size;
  /// The recorded outcome of each point the recording has (a trial that is no point of the
  /// domain is left out; of two trials of one config, the first).
  std::unordered_map<std::size_t, LandscapeTrial> outcomes;
  /// Valid configs the recording lacks (left out). Exact when the sweep domain's count is, else
  /// estimated as that count less outcomes.size().
  std::uint64_t unrecorded = 0;
  std::optional<std::size_t> optimum;  ///< fastest ok point
  double optimum_ms = 0;
  double exhaustive_cost_seconds = 0;  ///< what measuring every recorded point cost the recording
  /// Recorded ok trials that are faster than the GPU can (the physics guard, against the
  /// recording's device: tiletune/physics_guard.hpp): answered as `suspect`, never the optimum.
  std::vector<std::size_t> suspects;
};

/// Joins a problem of a space with a landscape. Throws Error when the landscape is of another
/// kernel, has no trials for the problem, or none of them is a config of the space (of the
/// shard, with one).
[[nodiscard]] ReplayProblem replay_problem(const Space& space, const Landscape& landscape, const Problem& problem,
                                           const Shard& shard = {});

/// A point's recorded outcome: its time when it ran ok (failures stay failures), costing the
/// recorded compile + measure time (a point the recording lacks, which its domain never
/// proposes: a failure costing nothing).
[[nodiscard]] Evaluation recorded_evaluation(const ReplayProblem& problem, std::size_t point);

/// The recorded trial of a point; for a point the recording lacks, a `pruned` trial that
/// costs nothing, its detail "not in the recording".
[[nodiscard]] const LandscapeTrial& recorded_trial(const ReplayProblem& problem, std::size_t point);

/// The recorded points in id order (the Enumerator's order).
[[nodiscard]] std::vector<std::size_t> recorded_points(const ReplayProblem& problem);

/// The evaluator of a replay (what replay() runs the search on): recorded outcomes on a
/// simulated clock (recorded_evaluation).
[[nodiscard]] std::unique_ptr<Evaluator> replay_evaluator(const ReplayProblem& problem);

/// Runs a strategy against the recording through run_search, on a simulated clock of
/// recorded_evaluation. With sweep_search_run(...) as run, it is the search a sweep makes.
[[nodiscard]] SearchTrace replay(const ReplayProblem& problem, SearchStrategy& strategy, const SearchRun& run);

/// The number of evaluations (recalled ones, which cost nothing, not counted) after which the
/// trace's best reached fraction (0.95: 95 %) of the optimum's speed (optimum_ms / best_ms >= fraction); nullopt when
/// it never did.
[[nodiscard]] std::optional<std::size_t> evaluations_to_reach(const SearchTrace& trace, double optimum_ms,
                                                              double fraction);

}  // namespace tiletune
