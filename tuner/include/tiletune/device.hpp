// The CUDA devices of this machine as plain values: identity (name, UUID, compute
// capability, driver) for the cache key, and the limits the occupancy model needs.
// Needs no GPU: without a driver the list is empty.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "tiletune/occupancy.hpp"

namespace tiletune {

/// One device, read from the driver's attributes.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;  ///< "NVIDIA H200"
  std::string uuid;  ///< "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::size_t total_memory = 0;  ///< bytes
  std::size_t l2_bytes = 0;
  std::size_t shared_per_block = 0;        ///< without opt-in (48 KiB)
  std::size_t shared_per_block_optin = 0;  ///< the most one block can ask for
  std::size_t shared_per_sm = 0;
  std::size_t reserved_shared_per_block = 0;  ///< taken by the driver for each block
  int regs_per_block = 0;
  int regs_per_sm = 0;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int warp_size = 0;
  std::array<int, 3> max_block_dim = {0, 0, 0};
  std::array<long long, 3> max_grid_dim = {0, 0, 0};
  int sm_clock_khz = 0;  ///< 0 where the driver no longer reports it
  int memory_clock_khz = 0;
  int memory_bus_width = 0;  ///< bits
  int pci_domain = 0;
  int pci_bus = 0;
  int pci_device = 0;
  int driver_version = 0;  ///< cuDriverGetVersion: 13000 for CUDA 13.0

  /// 90 for compute capability 9.0.
  [[nodiscard]] int arch() const noexcept { return cc_major * 10 + cc_minor; }
};

/// Every device the driver sees, by ordinal. Empty when there is no driver (or no device);
/// throws Error (a cu::DriverError naming the call) only when a present driver fails.
[[nodiscard]] std::vector<DeviceInfo> list_devices();

/// The live limits of a device, for compute_occupancy().
[[nodiscard]] DeviceLimits device_limits(const DeviceInfo& device);

/// 13000 -> "13.0", 12040 -> "12.4".
[[nodiscard]] std::string format_driver_version(int version);

/// The 16 bytes of a CUuuid -> "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (lowercase hex).
[[nodiscard]] std::string format_gpu_uuid(const std::array<unsigned char, 16>& bytes);

}  // namespace tiletune
