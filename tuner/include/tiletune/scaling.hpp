// A model of a sweep's wall time on many GPUs and hosts, for scaling figures past what any test
// machine has: each config's compile and measure time (from a recording, or from `plan` and a
// model) replayed through the sweep's own schedule. Each GPU tunes its shard of the configs in
// order, keeping at most `in_flight` of them compiled or compiling ahead of its measurement
// (the sweep's window); the compiles of all the GPUs of a host share its cores, first submitted
// first served; a GPU measures one config at a time, in order, once it is compiled. Not
// modelled: worker start, buffer setup and the bandwidth-ceiling copy (once per GPU and
// problem), and the merge after the shards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tiletune {

/// One config of a sweep: what compiling it and measuring it cost.
struct SimulatedTrial {
  double compile_seconds = 0;  ///< NVRTC on one core (0: a cubin cache hit)
  double measure_seconds = 0;  ///< the worker's time on the GPU: load, verify, timing
};

/// The machines a sweep runs on: `hosts` hosts of `gpus_per_host` GPUs and `cores_per_host`
/// compile cores each.
struct ClusterShape {
  unsigned hosts = 1;
  unsigned gpus_per_host = 1;
  unsigned cores_per_host = 1;
  std::size_t in_flight = 32;  ///< configs per GPU compiled or compiling ahead of its measurement (>= 1)
  [[nodiscard]] unsigned gpus() const noexcept { return hosts * gpus_per_host; }
};

struct SimulatedSweep {
  double wall_seconds = 0;         ///< when the last GPU finished
  double compile_seconds = 0;      ///< sum over the configs
  double measure_seconds = 0;      ///< sum over the configs
  double lower_bound_seconds = 0;  ///< max(compile work / all cores, the busiest GPU's measure work)
  double busiest_gpu_seconds = 0;  ///< the largest measure work of one GPU
};

/// Simulates a sweep of `trials` in which trial i runs on GPU `gpu_of[i]` (0 .. shape.gpus()-1;
/// GPU g is on host g / gpus_per_host), each GPU taking its trials in the order given.
/// Throws std::invalid_argument when the spans differ in size, a GPU index is out of range,
/// or the shape has a zero.
[[nodiscard]] SimulatedSweep simulate_sweep(std::span<const SimulatedTrial> trials,
                                            std::span<const std::uint32_t> gpu_of, const ClusterShape& shape);

}  // namespace tiletune
