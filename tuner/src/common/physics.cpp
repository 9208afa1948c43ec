// The physics guard's arithmetic (tiletune/physics.hpp): the per-SM throughput table, the
// ceilings of a problem on a device, and the verdict on a trial's rates.
#include "tiletune/physics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace tiletune {

namespace {

constexpr std::array kFlopTypes = {FlopType::any, FlopType::fp64, FlopType::fp32, FlopType::fp16, FlopType::tensor};

/// Per SM per clock, an FMA counted as 2; 0: the arch has no such unit. Non-tensor rows: 2 x the
/// CUDA C++ Programming Guide's arithmetic-instruction throughput table (results per clock per SM).
/// Tensor: dense datasheet peak of the fastest type / (SMs x boost clock), rounded up to a power
/// of two, e.g. H100 SXM FP8 1979 TFLOP/s / (132 x 1.83 GHz) = 8192; A100 INT8 624 TOP/s /
/// (108 x 1.41 GHz) = 4096; B200 FP4 9 PFLOP/s / (148 x 1.965 GHz) -> 32768. Where a source was
/// unsure the larger value is kept: a ceiling too high only lets a suspect through, one too low
/// would flag an honest kernel.
struct ArchRates {
  int cc;  // 10 x major + minor
  double fp64, fp32, fp16, tensor;
};
constexpr ArchRates kRates[] = {
    {50, 8, 256, 0, 0},      {52, 8, 256, 0, 0},        {53, 8, 256, 512, 0},        {60, 64, 128, 256, 0},
    {61, 8, 256, 4, 0},      {62, 8, 256, 512, 0},      {70, 64, 128, 256, 1024},    {72, 64, 128, 256, 1024},
    {75, 4, 128, 256, 2048}, {80, 64, 128, 512, 4096},  {86, 4, 256, 512, 2048},     {87, 4, 256, 512, 2048},
    {89, 4, 256, 512, 4096}, {90, 128, 256, 512, 8192}, {100, 128, 256, 512, 32768}, {120, 4, 256, 512, 8192},
};

double rate_of(const ArchRates& r, FlopType type) {
  switch (type) {
    case FlopType::fp64: return r.fp64;
    case FlopType::fp32: return r.fp32;
    case FlopType::fp16: return r.fp16;
    case FlopType::tensor: return r.tensor;
    case FlopType::any: return std::max({r.fp64, r.fp32, r.fp16, r.tensor});
  }
  return 0;
}

}  // namespace

std::string_view flop_type_name(FlopType type) noexcept {
  switch (type) {
    case FlopType::any: return "any";
    case FlopType::fp64: return "fp64";
    case FlopType::fp32: return "fp32";
    case FlopType::fp16: return "fp16";
    case FlopType::tensor: return "tensor";
  }
  return "any";
}

std::optional<FlopType> parse_flop_type(std::string_view name) noexcept {
  for (const FlopType t : kFlopTypes)
    if (flop_type_name(t) == name) return t;
  return std::nullopt;
}

std::string flop_type_names() {
  std::string out;
  for (const FlopType t : kFlopTypes) out += (out.empty() ? "" : ", ") + std::string(flop_type_name(t));
  return out;
}

std::optional<double> flops_per_sm_per_clock(int cc_major, int cc_minor, FlopType type) noexcept {
  const int cc = cc_major * 10 + cc_minor;
  for (const ArchRates& r : kRates)
    if (r.cc == cc) {
      const double rate = rate_of(r, type);
      return rate > 0 ? std::optional(rate) : std::nullopt;
    }
  return std::nullopt;
}

Ceilings ceilings_for(const CeilingInputs& device, std::optional<double> bytes, FlopType type) {
  Ceilings c;
  if (device.copy_gbps && *device.copy_gbps > 0) {
    c.l2_resident = bytes && device.l2_bytes > 0 && *bytes <= double(device.l2_bytes);
    c.gbps = *device.copy_gbps * (c.l2_resident ? l2_bandwidth_factor : 1.0);
  }
  if (device.sm_count > 0 && device.sm_clock_khz > 0)
    if (const auto per_clock = flops_per_sm_per_clock(device.cc_major, device.cc_minor, type))
      c.gflops = *per_clock * device.sm_count * (device.sm_clock_khz * 1e3) / 1e9;
  return c;
}

std::optional<std::string> physics_violation(const Ceilings& ceilings, std::optional<double> gbps,
                                             std::optional<double> gflops) {
  if (gbps && ceilings.gbps && *gbps > *ceilings.gbps * bandwidth_margin)
    return fmt::format("{:.0f} GB/s is {:.2f}x the bandwidth ceiling of {:.0f} GB/s ({})", *gbps,
                       *gbps / *ceilings.gbps, *ceilings.gbps,
                       ceilings.l2_resident
                           ? fmt::format("{}x the sweep's copy: the working set fits in L2", l2_bandwidth_factor)
                           : std::string("the sweep's copy"));
  if (gflops && ceilings.gflops && *gflops > *ceilings.gflops * compute_margin)
    return fmt::format("{:.0f} GFLOP/s is {:.2f}x the device's peak of {:.0f} GFLOP/s", *gflops,
                       *gflops / *ceilings.gflops, *ceilings.gflops);
  return std::nullopt;
}

}  // namespace tiletune
