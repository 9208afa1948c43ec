// Occupancy without a GPU: the calculator of cuda_occupancy.h fed by a table of device
// limits per architecture (or by the live device's attributes), plus the checks that
// decide whether a config can launch at all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tiletune {

/// What the occupancy calculation needs to know about a device.
struct DeviceLimits {
  std::string name;  ///< "NVIDIA H200" or "sm_90 (H100/H200 class)"
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int max_threads_per_block = 1024;
  int max_block_dim[3] = {1024, 1024, 64};
  long long max_grid_dim[3] = {2147483647LL, 65535, 65535};
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int regs_per_block = 65536;
  int regs_per_sm = 65536;
  int warp_size = 32;
  std::size_t shared_per_block = 49152;    ///< without opt-in
  std::size_t shared_per_block_optin = 0;  ///< the most a kernel can ask for
  std::size_t shared_per_sm = 0;
  std::size_t reserved_shared_per_block = 0;  ///< taken by the driver for each block
  /// For the physics guard's ceilings (tiletune/physics.hpp); 0 where unknown (the built-in table).
  int sm_clock_khz = 0;
  std::size_t l2_bytes = 0;
  [[nodiscard]] int arch() const noexcept { return cc_major * 10 + cc_minor; }
};

/// Built-in limits for sm_75, 80, 86, 89, 90, 100 and 120 (a representative SM count for
/// each: T4, A100, A10... see the source). nullopt for another arch.
[[nodiscard]] std::optional<DeviceLimits> builtin_device_limits(int arch);
/// Every arch of the built-in table.
[[nodiscard]] std::vector<int> builtin_archs();

/// What the kernel asks of an SM, from the compiler's report and the launch geometry.
struct KernelFootprint {
  int block_x = 1, block_y = 1, block_z = 1;
  long long grid_x = 1, grid_y = 1, grid_z = 1;
  int registers_per_thread = 0;
  std::size_t static_shared_bytes = 0;
  std::size_t dynamic_shared_bytes = 0;
  int barriers = 1;
};

enum class Limiter { none, warps, registers, shared_memory, blocks, barriers };
[[nodiscard]] const char* limiter_name(Limiter l);

struct Occupancy {
  bool launchable = false;
  std::string pruned_reason;  ///< why it cannot launch (empty when launchable)
  int threads_per_block = 0;
  int blocks_per_sm = 0;
  int warps_per_sm = 0;
  double occupancy = 0.0;  ///< active warps / max warps per SM, 0..1
  Limiter limiter = Limiter::none;
  long long grid_blocks = 0;
  double waves = 0.0;  ///< grid blocks / (blocks per SM * SMs)
};

/// The offline calculation. Never throws: a config that cannot launch comes back with
/// launchable = false and a reason (too many threads, shared memory over the opt-in limit,
/// a block dimension or grid dimension over its limit, no block fits).
[[nodiscard]] Occupancy compute_occupancy(const DeviceLimits& device, const KernelFootprint& kernel);

}  // namespace tiletune
