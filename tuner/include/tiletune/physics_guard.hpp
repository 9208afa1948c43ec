// The physics guard applied to a space's trials (the arithmetic is tiletune/physics.hpp): the
// ceilings of one config on a problem and a device, the detail of a suspect trial (why, and
// which check should have caught it), and the stop condition of `tune --good-enough`. A sweep
// (gpu_evaluator.cpp) and a replay (replay.cpp) hold their trials against the same rule.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "tiletune/enumerate.hpp"
#include "tiletune/landscape.hpp"
#include "tiletune/occupancy.hpp"
#include "tiletune/physics.hpp"
#include "tiletune/replay.hpp"
#include "tiletune/space.hpp"
#include "tiletune/strategy.hpp"

namespace tiletune {

/// A device's ceiling inputs from its limits and the copy its sweep measured.
[[nodiscard]] CeilingInputs ceiling_inputs(const DeviceLimits& device, std::optional<double> copy_gbps);
/// A recording's, from its header (compute_capability, sm_count, l2_bytes, copy_gbps and, where
/// recorded, sm_clock_khz): what is missing gives no ceiling.
[[nodiscard]] CeilingInputs ceiling_inputs(const Landscape& landscape);

/// The ceilings of a config on a problem: the bandwidth one by the space's bytes per run (L2 or
/// DRAM), the arithmetic one by its flop_type. Throws EvalError when a metric fails for it.
[[nodiscard]] Ceilings trial_ceilings(const Space& space, const Problem& problem, const Config& config,
                                      const CeilingInputs& device);

/// The check that should have caught a trial that is faster than physics, from the space's
/// `verify:` ("verification compares only the first `count` elements of out (...): compare the
/// whole buffer", "add a check: the outputs must match a reference").
[[nodiscard]] std::string suspect_hint(const Space& space);

/// The detail of a suspect trial ("suspect: <violation>; <hint>"), or nullopt when its rates are
/// within the ceilings' margins.
[[nodiscard]] std::optional<std::string> suspect_detail(const Space& space, const Ceilings& ceilings,
                                                        std::optional<double> gbps, std::optional<double> gflops);

/// SearchRun::good_enough for a problem (`--good-enough`): true once an evaluation's time (ms)
/// gives `share` (0, 1] of the config's ceiling, by ceiling_share, without being over the
/// guard's margin (a suspect is not good). `domain` maps a point to its config and must outlive
/// the function; `device` gives the ceiling inputs when asked (a sweep's copy is measured while
/// the first configs compile). Empty when the space declares no metrics.
[[nodiscard]] std::function<bool(const Evaluation&)> good_enough_check(const Space& space, const Problem& problem,
                                                                       const SpaceDomain& domain,
                                                                       std::function<CeilingInputs()> device,
                                                                       double share);

}  // namespace tiletune
