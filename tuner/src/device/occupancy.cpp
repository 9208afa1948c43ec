// Offline occupancy: first the checks that decide whether a config can launch at all (each
// with a reason a user can act on), then NVIDIA's own calculator from cuda_occupancy.h,
// which is header-only and needs neither the runtime nor a GPU. The driver's
// cuOccupancyMaxActiveBlocksPerMultiprocessor agrees with it (tests/device checks that).
#include "tiletune/occupancy.hpp"

#include <algorithm>
#include <climits>

#include <fmt/format.h>

// The header is C-compatible code written for nvcc; keep its style out of our warnings.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#include <cuda_occupancy.h>
#pragma GCC diagnostic pop

namespace tiletune {
namespace {

// The most registers a thread can have on every supported arch (ptxas' limit).
constexpr int max_registers_per_thread = 255;

const char* dim_name(int i) { return i == 0 ? "x" : i == 1 ? "y" : "z"; }

// Saturating product of the grid dimensions (all already known to be >= 1).
long long grid_product(const long long (&g)[3]) {
  long long p = 1;
  for (long long v : g) {
    if (__builtin_mul_overflow(p, v, &p)) return LLONG_MAX;
  }
  return p;
}

// Why a launch is impossible before any occupancy is computed, or "" when it may launch.
std::string launch_problem(const DeviceLimits& d, const KernelFootprint& k, long long threads) {
  const long long block[3] = {k.block_x, k.block_y, k.block_z};
  const long long grid[3] = {k.grid_x, k.grid_y, k.grid_z};
  for (int i = 0; i < 3; ++i) {
    if (block[i] < 1) {
      return fmt::format("block dimension {} is {}: every block and grid dimension must be at least 1", dim_name(i),
                         block[i]);
    }
  }
  for (int i = 0; i < 3; ++i) {
    if (grid[i] < 1) {
      return fmt::format("grid dimension {} is {}: every block and grid dimension must be at least 1", dim_name(i),
                         grid[i]);
    }
  }
  for (int i = 0; i < 3; ++i) {
    if (block[i] > d.max_block_dim[i]) {
      return fmt::format("block dimension {} is {}, more than the device's limit of {}", dim_name(i), block[i],
                         d.max_block_dim[i]);
    }
  }
  if (threads > d.max_threads_per_block) {
    return fmt::format("{} threads per block ({} x {} x {}), more than the {} a block may have", threads, block[0],
                       block[1], block[2], d.max_threads_per_block);
  }
  for (int i = 0; i < 3; ++i) {
    if (grid[i] > d.max_grid_dim[i]) {
      return fmt::format("grid dimension {} is {}, more than the device's limit of {}", dim_name(i), grid[i],
                         d.max_grid_dim[i]);
    }
  }
  if (k.registers_per_thread < 0 || k.registers_per_thread > max_registers_per_thread) {
    return fmt::format("{} registers per thread: a thread can have 0 to {}", k.registers_per_thread,
                       max_registers_per_thread);
  }
  // ptxas refuses more than 48 KiB of __shared__ arrays; beyond that it must be dynamic.
  if (k.static_shared_bytes > d.shared_per_block) {
    return fmt::format(
        "declares {} B of static shared memory, more than the {} B a kernel may declare "
        "statically (use dynamic shared memory beyond that)",
        k.static_shared_bytes, d.shared_per_block);
  }
  const std::size_t shared = k.static_shared_bytes + k.dynamic_shared_bytes;
  const bool has_optin = d.shared_per_block_optin > d.shared_per_block;
  const std::size_t shared_limit = has_optin ? d.shared_per_block_optin : d.shared_per_block;
  if (shared > shared_limit) {
    return fmt::format("needs {} B of shared memory per block (static {} B + dynamic {} B), more than the {} {} B",
                       shared, k.static_shared_bytes, k.dynamic_shared_bytes,
                       has_optin ? "opt-in limit of" : "limit of", shared_limit);
  }
  const long long regs = static_cast<long long>(k.registers_per_thread) * threads;
  if (regs > d.regs_per_block) {
    return fmt::format(
        "needs {} registers per block ({} per thread x {} threads), more than the {} "
        "a block may use",
        regs, k.registers_per_thread, threads, d.regs_per_block);
  }
  return {};
}

// Which resource leaves no room for even one block (called when blocks per SM is 0).
std::string no_block_fits(const DeviceLimits& d, const KernelFootprint& k, int threads, const cudaOccResult& r) {
  std::string why;
  if (r.blockLimitRegs == 0) {
    why = fmt::format(
        "{} registers x {} threads are allocated as {} registers per block (per warp, in units "
        "of 256), more than the {} per block",
        k.registers_per_thread, threads, r.allocatedRegistersPerBlock, d.regs_per_block);
  } else if (r.blockLimitSharedMem == 0) {
    why = fmt::format(
        "{} B of shared memory per block (with {} B reserved by the driver), more "
        "than a block may have ({} B per SM)",
        r.allocatedSharedMemPerBlock, d.reserved_shared_per_block, d.shared_per_sm);
  } else if (r.blockLimitWarps == 0) {
    why = fmt::format("{} threads per block, more than the {} an SM holds", threads, d.max_threads_per_sm);
  } else if (r.blockLimitBarriers == 0) {
    why = fmt::format("{} barriers per block, more than an SM provides", k.barriers);
  } else {
    why = fmt::format("the device allows {} resident blocks per SM", d.max_blocks_per_sm);
  }
  return "no block fits on an SM: " + why;
}

}  // namespace

const char* limiter_name(Limiter l) {
  switch (l) {
    case Limiter::none: return "none";
    case Limiter::warps: return "warps";
    case Limiter::registers: return "registers";
    case Limiter::shared_memory: return "shared_memory";
    case Limiter::blocks: return "blocks";
    case Limiter::barriers: return "barriers";
  }
  return "unknown";
}

Occupancy compute_occupancy(const DeviceLimits& device, const KernelFootprint& kernel) {
  Occupancy o;
  const long long threads = static_cast<long long>(kernel.block_x) * kernel.block_y * kernel.block_z;
  o.threads_per_block = threads > INT_MAX || threads < INT_MIN ? 0 : static_cast<int>(threads);
  if (std::string problem = launch_problem(device, kernel, threads); !problem.empty()) {
    o.pruned_reason = std::move(problem);
    return o;
  }
  const long long grid[3] = {kernel.grid_x, kernel.grid_y, kernel.grid_z};
  o.grid_blocks = grid_product(grid);

  cudaOccDeviceProp prop;
  prop.computeMajor = device.cc_major;
  prop.computeMinor = device.cc_minor;
  prop.maxThreadsPerBlock = device.max_threads_per_block;
  prop.maxThreadsPerMultiprocessor = device.max_threads_per_sm;
  prop.regsPerBlock = device.regs_per_block;
  prop.regsPerMultiprocessor = device.regs_per_sm;
  prop.warpSize = device.warp_size;
  prop.sharedMemPerBlock = device.shared_per_block;
  prop.sharedMemPerMultiprocessor = device.shared_per_sm;
  prop.numSms = std::max(device.sm_count, 1);  // not used per SM; the check wants it positive
  prop.sharedMemPerBlockOptin = device.shared_per_block_optin;
  prop.reservedSharedMemPerBlock = device.reserved_shared_per_block;

  const std::size_t shared = kernel.static_shared_bytes + kernel.dynamic_shared_bytes;
  cudaOccFuncAttributes attr;
  attr.maxThreadsPerBlock = device.max_threads_per_block;
  attr.numRegs = kernel.registers_per_thread;
  attr.sharedSizeBytes = kernel.static_shared_bytes;
  attr.partitionedGCConfig = PARTITIONED_GC_OFF;
  // tiletune raises CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES whenever a block needs
  // more than the default 48 KiB, so the function's limit is all the opt-in room left.
  attr.shmemLimitConfig = shared > device.shared_per_block ? FUNC_SHMEM_LIMIT_OPTIN : FUNC_SHMEM_LIMIT_DEFAULT;
  attr.maxDynamicSharedSizeBytes = device.shared_per_block_optin > kernel.static_shared_bytes
                                       ? device.shared_per_block_optin - kernel.static_shared_bytes
                                       : 0;
  // ptxas may not report barriers (0); every kernel holds barrier 0, as the runtime assumes.
  attr.numBlockBarriers = std::max(kernel.barriers, 1);
  attr.virtualResourceCount = 0;

  cudaOccDeviceState state;  // default carveout: the driver picks the largest shared split

  cudaOccResult r{};
  const cudaOccError err = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &prop, &attr, &state, static_cast<int>(threads),
                                                                   kernel.dynamic_shared_bytes);
  if (err != CUDA_OCC_SUCCESS) {
    o.pruned_reason =
        fmt::format("the occupancy calculator cannot model {} (compute capability {}.{}): {}",
                    device.name.empty() ? "this device" : device.name, device.cc_major, device.cc_minor,
                    err == CUDA_OCC_ERROR_UNKNOWN_DEVICE ? "unknown architecture" : "inconsistent device limits");
    return o;
  }

  // The smallest limit binds; ties are named in a fixed order (warps first, as that is the
  // hardware's own ceiling). The device's block limit also applies where it is stricter
  // than the calculator's table.
  const int device_blocks = device.max_blocks_per_sm > 0 ? device.max_blocks_per_sm : INT_MAX;
  const std::pair<Limiter, int> limits[] = {
      {Limiter::warps, r.blockLimitWarps},
      {Limiter::registers, r.blockLimitRegs},
      {Limiter::shared_memory, r.blockLimitSharedMem},
      {Limiter::blocks, std::min(r.blockLimitBlocks, device_blocks)},
      {Limiter::barriers, r.blockLimitBarriers},
  };
  o.blocks_per_sm = std::min(r.activeBlocksPerMultiprocessor, device_blocks);
  for (const auto& [limiter, blocks] : limits) {
    if (blocks == o.blocks_per_sm) {
      o.limiter = limiter;
      break;
    }
  }
  if (o.blocks_per_sm <= 0) {
    o.blocks_per_sm = 0;
    o.pruned_reason = no_block_fits(device, kernel, o.threads_per_block, r);
    return o;
  }

  const int warps_per_block = (o.threads_per_block + device.warp_size - 1) / device.warp_size;
  const int max_warps = device.max_threads_per_sm / device.warp_size;
  o.warps_per_sm = o.blocks_per_sm * warps_per_block;
  o.occupancy = max_warps > 0 ? static_cast<double>(o.warps_per_sm) / max_warps : 0.0;
  if (device.sm_count > 0) {
    o.waves = static_cast<double>(o.grid_blocks) /
              (static_cast<double>(o.blocks_per_sm) * static_cast<double>(device.sm_count));
  }
  o.launchable = true;
  return o;
}

}  // namespace tiletune
