// Built-in device limits per architecture, for planning without a GPU (`tiletune plan
// --arch sm_90`). The per-SM and per-block figures are architectural (the CUDA C++
// Programming Guide's "Technical Specifications per Compute Capability" table, and the
// driver's attributes of real parts); the SM count is a product fact, so each row names
// the part it was taken from.
#include <algorithm>
#include <array>

#include "tiletune/occupancy.hpp"

namespace tiletune {
namespace {

constexpr std::size_t KiB = 1024;

struct Row {
  int arch;
  const char* name;
  int sm_count;
  int max_threads_per_sm;
  int max_blocks_per_sm;
  std::size_t shared_per_sm;
  std::size_t shared_per_block_optin;
  std::size_t reserved_shared_per_block;
};

// Shared memory per SM is the largest carveout; the opt-in per block is that minus the
// 1 KiB the driver reserves for each block from Ampere on (Turing reserves none).
constexpr std::array<Row, 7> rows = {{
    // Turing: Tesla T4 (TU104), 40 SMs.
    {75, "sm_75 (T4 class, 40 SMs)", 40, 1024, 16, 64 * KiB, 64 * KiB, 0},
    // Ampere datacenter: A100 (GA100), 108 SMs.
    {80, "sm_80 (A100 class, 108 SMs)", 108, 2048, 32, 164 * KiB, 163 * KiB, 1 * KiB},
    // Ampere GA10x: A10 (GA102), 72 SMs (an RTX 3090 has 82).
    {86, "sm_86 (A10 class, 72 SMs)", 72, 1536, 16, 100 * KiB, 99 * KiB, 1 * KiB},
    // Ada: L4 (AD104), 58 SMs.
    {89, "sm_89 (L4 class, 58 SMs)", 58, 1536, 24, 100 * KiB, 99 * KiB, 1 * KiB},
    // Hopper: H100 SXM / H200 (GH100), 132 SMs.
    {90, "sm_90 (H100/H200 class, 132 SMs)", 132, 2048, 32, 228 * KiB, 227 * KiB, 1 * KiB},
    // Blackwell datacenter: B200 (GB100), 148 SMs.
    {100, "sm_100 (B200 class, 148 SMs)", 148, 2048, 32, 228 * KiB, 227 * KiB, 1 * KiB},
    // Blackwell GeForce: RTX 5090 (GB202), 170 SMs. The programming guide lists 32
    // resident blocks per SM; the occupancy calculator of CUDA 13.0 (cuda_occupancy.h)
    // caps compute capability 12.x at 24, and compute_occupancy() takes the smaller.
    {120, "sm_120 (RTX 5090 class, 170 SMs)", 170, 1536, 32, 100 * KiB, 99 * KiB, 1 * KiB},
}};

}  // namespace

std::optional<DeviceLimits> builtin_device_limits(int arch) {
  const auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.arch == arch; });
  if (it == rows.end()) return std::nullopt;
  DeviceLimits l;
  l.name = it->name;
  l.cc_major = arch / 10;
  l.cc_minor = arch % 10;
  l.sm_count = it->sm_count;
  l.max_threads_per_block = 1024;
  l.max_threads_per_sm = it->max_threads_per_sm;
  l.max_blocks_per_sm = it->max_blocks_per_sm;
  l.regs_per_block = 65536;
  l.regs_per_sm = 65536;
  l.warp_size = 32;
  l.shared_per_block = 48 * KiB;
  l.shared_per_block_optin = it->shared_per_block_optin;
  l.shared_per_sm = it->shared_per_sm;
  l.reserved_shared_per_block = it->reserved_shared_per_block;
  return l;
}

std::vector<int> builtin_archs() {
  std::vector<int> archs;
  archs.reserve(rows.size());
  for (const Row& r : rows) archs.push_back(r.arch);
  return archs;
}

}  // namespace tiletune
