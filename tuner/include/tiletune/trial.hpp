// From a planned config to what a worker runs: buffers and arguments evaluated for one
// problem, the metrics (bytes, flops) that turn a time into GB/s and GFLOP/s.
#pragma once

#include <optional>
#include <string>

#include "tiletune/measure.hpp"
#include "tiletune/plan.hpp"

namespace tiletune {

/// A canonical text of a problem or config for cache keys: "N=8192;R=3", "TILE=32;PAD=1".
[[nodiscard]] std::string canonical_problem(const Space& space, const Problem& problem);
[[nodiscard]] std::string canonical_config(const Space& space, const Config& config);
/// Parses canonical_config's text back; nullopt when it names other params.
[[nodiscard]] std::optional<Config> parse_canonical_config(const Space& space, const std::string& text);

/// Builds the request for one compiled config. Throws EvalError naming the buffer or
/// argument whose expression failed for this config.
[[nodiscard]] TrialRequest make_trial_request(const Space& space, const Problem& problem, const Config& config,
                                              const LaunchGeometry& launch, const CompiledKernel& kernel);

/// Bytes and flops per run from the space's metrics (nullopt where none is given).
struct RunMetrics {
  std::optional<double> bytes;
  std::optional<double> flops;
};
[[nodiscard]] RunMetrics evaluate_metrics(const Space& space, const Problem& problem, const Config& config);

}  // namespace tiletune
