// The physics guard: the most a GPU can move and compute per second (its ceilings), and whether a
// trial claims more than that. A trial's GB/s and GFLOP/s come from the space's declared bytes
// and flops per run (`metrics:`); the bandwidth ceiling is the device-to-device copy each sweep
// measures (the device's copy_gbps), the arithmetic one the device's SM count x SM clock x the
// per-SM throughput of its compute capability (flops_per_sm_per_clock). A trial over a ceiling
// by more than its margin did not do the work it declares: it is `suspect` and never a winner.
// docs/reference/physics-guard.md gives the margins and the measurements behind them.
//
// Needs only the C++ standard library.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tiletune {

/// The arithmetic a space's `metrics.flops` counts (`metrics: {flop_type: fp32}`): which of the
/// device's peak rates bounds it. `any` (a space that does not say) takes the fastest unit the
/// device has: its tensor cores where it has them.
enum class FlopType { any, fp64, fp32, fp16, tensor };

[[nodiscard]] std::string_view flop_type_name(FlopType type) noexcept;
/// "fp32" -> FlopType::fp32; nullopt for a name that is not one.
[[nodiscard]] std::optional<FlopType> parse_flop_type(std::string_view name) noexcept;
/// "any, fp64, fp32, fp16, tensor", for messages.
[[nodiscard]] std::string flop_type_names();

/// Flops per clock per SM of compute capability cc_major.cc_minor for `type`, an FMA counted as 2
/// (`any`: the largest of the arch's). nullopt where the table lacks the arch or the arch lacks
/// the unit (tensor cores before 7.0). FP64, FP32 and FP16 (non-tensor): 2 x the CUDA C++
/// Programming Guide's "throughput of native arithmetic instructions" per SM; tensor: the
/// datasheet's dense peak of the fastest type (FP8/INT8/FP4 where the arch has it) over
/// SMs x boost clock, rounded up to a power of two.
[[nodiscard]] std::optional<double> flops_per_sm_per_clock(int cc_major, int cc_minor, FlopType type) noexcept;

/// Bandwidth ceilings: measured DRAM-sized copies of the H200 reach at most 1.09x the sweep's copy
/// (reduction, read-only) and its datasheet peak is 1.18x it, so 1.25x is past anything DRAM
/// delivers. A working set that fits in L2 may be served from there: its ceiling is
/// l2_bandwidth_factor x the copy (published H100 L2 microbenchmarks: about 3x DRAM).
inline constexpr double bandwidth_margin = 1.25;
inline constexpr double l2_bandwidth_factor = 3.0;
/// The arithmetic ceiling is already the peak at the device's top clock; the margin covers a
/// clock the driver reports a little low.
inline constexpr double compute_margin = 1.10;

/// What a device's ceilings are computed from.
struct CeilingInputs {
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int sm_clock_khz = 0;             ///< 0: unknown (no arithmetic ceiling)
  std::int64_t l2_bytes = 0;        ///< 0: unknown (every working set taken as larger than L2)
  std::optional<double> copy_gbps;  ///< the copy the sweep measured; nullopt: no bandwidth ceiling
};

/// The ceilings one trial is held against (nullopt: none known, nothing held).
struct Ceilings {
  std::optional<double> gbps;
  std::optional<double> gflops;
  bool l2_resident = false;  ///< the declared bytes fit in L2: gbps is the L2 ceiling
};

/// The ceilings of a problem whose run moves `bytes` (nullopt: undeclared) of arithmetic `type`.
[[nodiscard]] Ceilings ceilings_for(const CeilingInputs& device, std::optional<double> bytes, FlopType type);

/// Why a trial is faster than physics allows: "12000 GB/s is 2.96x the bandwidth ceiling of
/// 4058 GB/s (the sweep's copy)"; nullopt when neither rate is over
/// its ceiling x margin (or no ceiling is known).
[[nodiscard]] std::optional<std::string> physics_violation(const Ceilings& ceilings, std::optional<double> gbps,
                                                           std::optional<double> gflops);

/// How close a trial came to its ceiling: the larger share of gbps/ceiling_gbps and
/// gflops/ceiling_gflops (1 = at the ceiling; a little over 1 happens: a read-only kernel beats
/// the copy), and which bound it is.
struct CeilingShare {
  double fraction = 0;
  bool compute_bound = false;  ///< the share is of the arithmetic ceiling
  /// "3.7 %" of headroom as people read it: 100 x (1 - fraction), never below 0.
  [[nodiscard]] double headroom_percent() const noexcept { return fraction >= 1 ? 0 : 100 * (1 - fraction); }
};
/// Inline: the query library reports the headroom of an answer without the engine.
[[nodiscard]] inline std::optional<CeilingShare> ceiling_share(std::optional<double> gbps, std::optional<double> gflops,
                                                               std::optional<double> ceiling_gbps,
                                                               std::optional<double> ceiling_gflops) {
  std::optional<CeilingShare> share;
  if (gbps && ceiling_gbps && *ceiling_gbps > 0) share = CeilingShare{*gbps / *ceiling_gbps, false};
  if (gflops && ceiling_gflops && *ceiling_gflops > 0) {
    const double f = *gflops / *ceiling_gflops;
    if (!share || f > share->fraction) share = CeilingShare{f, true};
  }
  return share;
}

}  // namespace tiletune
