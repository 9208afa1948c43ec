// The offline occupancy model against values computed by hand from the architectural
// limits, every reason a config is pruned, waves, and the built-in device table.
//
// How cuda_occupancy.h counts (what the hand computations below follow):
//   warps limit     = (max threads per SM / 32) / ceil(threads / 32)
//   registers limit = regs/warp = round_up(regs * 32, 256); an SM has 4 sub-partitions of
//                     regs_per_sm / 4 = 16384 registers each; warps per sub-partition =
//                     16384 / (regs/warp); blocks = 4 * that / warps per block
//   shared limit    = shared per SM / round_up(static + dynamic + reserved, 128)
//   blocks limit    = the architecture's resident block limit
//   barriers        = (sm_90: 2 * block limit) / barriers per block
#include <gtest/gtest.h>

#include <algorithm>

#include "tiletune/occupancy.hpp"

namespace tiletune {
namespace {

DeviceLimits arch(int a) {
  auto d = builtin_device_limits(a);
  if (!d) throw std::runtime_error("no built-in limits for sm_" + std::to_string(a));
  return *d;
}

KernelFootprint footprint(int bx, int by, int regs, std::size_t static_smem = 0, std::size_t dynamic_smem = 0) {
  KernelFootprint k;
  k.block_x = bx;
  k.block_y = by;
  k.registers_per_thread = regs;
  k.static_shared_bytes = static_smem;
  k.dynamic_shared_bytes = dynamic_smem;
  return k;
}

void expect_occupancy(const Occupancy& o, int blocks, int warps, double occupancy, Limiter limiter) {
  EXPECT_TRUE(o.launchable) << o.pruned_reason;
  EXPECT_EQ(o.pruned_reason, "");
  EXPECT_EQ(o.blocks_per_sm, blocks);
  EXPECT_EQ(o.warps_per_sm, warps);
  EXPECT_DOUBLE_EQ(o.occupancy, occupancy);
  EXPECT_EQ(o.limiter, limiter) << "got " << limiter_name(o.limiter);
}

void expect_pruned(const Occupancy& o, const std::string& reason) {
  EXPECT_FALSE(o.launchable);
  EXPECT_EQ(o.blocks_per_sm, 0);
  EXPECT_EQ(o.pruned_reason, reason);
}

// --- sm_90 (H100/H200): 64 warps, 32 blocks, 65536 regs, 228 KiB shared, 1 KiB reserved ---

TEST(Occupancy, Sm90FullOccupancyIsWarpLimited) {
  // 256 threads = 8 warps -> warps: 64 / 8 = 8 blocks.
  // 32 regs -> 1024 regs/warp -> 16384 / 1024 = 16 warps per sub-partition -> 64 warps
  // -> 64 / 8 = 8 blocks as well (a tie: named warps). Blocks 32; shared: 0 + 1024
  // reserved -> 233472 / 1024 = 228. -> 8 blocks, 64 warps, 100 %.
  const auto o = compute_occupancy(arch(90), footprint(256, 1, 32));
  expect_occupancy(o, 8, 64, 1.0, Limiter::warps);
  EXPECT_EQ(o.threads_per_block, 256);
}

TEST(Occupancy, Sm90RegisterLimited) {
  // 1024 threads = 32 warps; 64 regs -> 2048 regs/warp -> 16384 / 2048 = 8 warps per
  // sub-partition -> 32 warps per SM -> 1 block (warps alone would allow 64 / 32 = 2).
  // 32 warps of 64 = 50 %.
  expect_occupancy(compute_occupancy(arch(90), footprint(1024, 1, 64)), 1, 32, 0.5, Limiter::registers);
}

TEST(Occupancy, Sm90SharedMemoryLimited) {
  // 128 threads = 4 warps (warps: 16 blocks; 32 regs: 64 / 4 = 16 blocks).
  // Static 48 KiB + 1 KiB reserved = 50176 B (a multiple of 128) -> 233472 / 50176 = 4.65
  // -> 4 blocks, 16 warps = 25 %.
  expect_occupancy(compute_occupancy(arch(90), footprint(128, 1, 32, 48 * 1024)), 4, 16, 0.25, Limiter::shared_memory);
}

TEST(Occupancy, Sm90BlockLimited) {
  // 32 threads = 1 warp: warps would allow 64 blocks; 16 regs -> 512/warp -> 32 warps per
  // sub-partition -> 128 blocks; the SM holds 32 blocks -> 32 warps = 50 %.
  expect_occupancy(compute_occupancy(arch(90), footprint(32, 1, 16)), 32, 32, 0.5, Limiter::blocks);
}

TEST(Occupancy, Sm90RegisterGranularity) {
  // 255 regs x 32 = 8160 -> rounded to 8192 per warp. 256 threads = 8 warps = 65536 regs:
  // exactly the per-block limit. 16384 / 8192 = 2 warps per sub-partition -> 8 warps per
  // SM -> 1 block, 8 / 64 = 12.5 %.
  expect_occupancy(compute_occupancy(arch(90), footprint(256, 1, 255)), 1, 8, 0.125, Limiter::registers);
  // 33 regs x 32 = 1056 -> 1280 per warp -> 16384 / 1280 = 12 warps per sub-partition
  // -> 48 warps -> 128 threads (4 warps) fit 12 times, not the 65536 / (33 * 128) = 15 a
  // plain division would suggest. 48 / 64 = 75 %.
  expect_occupancy(compute_occupancy(arch(90), footprint(128, 1, 33)), 12, 48, 0.75, Limiter::registers);
  // 32 regs: 1024 per warp, no rounding -> 16 blocks, tied with warps (64 / 4 = 16).
  expect_occupancy(compute_occupancy(arch(90), footprint(128, 1, 32)), 16, 64, 1.0, Limiter::warps);
}

TEST(Occupancy, Sm90DynamicSharedMemoryAndOptIn) {
  // Exactly 48 KiB dynamic: no opt-in needed; 49152 + 1024 = 50176 -> 4 blocks.
  expect_occupancy(compute_occupancy(arch(90), footprint(128, 1, 32, 0, 49152)), 4, 16, 0.25, Limiter::shared_memory);
  // One byte more needs the opt-in: 49153 + 1024 = 50177 -> 50304 (128-byte units)
  // -> 233472 / 50304 = 4.6 -> 4 blocks.
  expect_occupancy(compute_occupancy(arch(90), footprint(128, 1, 32, 0, 49153)), 4, 16, 0.25, Limiter::shared_memory);
  // 100 KiB: 102400 + 1024 = 103424 -> 233472 / 103424 = 2.26 -> 2 blocks.
  expect_occupancy(compute_occupancy(arch(90), footprint(128, 1, 32, 0, 100 * 1024)), 2, 8, 0.125,
                   Limiter::shared_memory);
  // The whole opt-in: 232448 + 1024 = 233472 = the SM's shared memory -> 1 block.
  expect_occupancy(compute_occupancy(arch(90), footprint(128, 1, 32, 0, 232448)), 1, 4, 4.0 / 64,
                   Limiter::shared_memory);
  // Static and dynamic add up: 16 KiB + 100 KiB + 1 KiB = 119808 -> 1 block.
  expect_occupancy(compute_occupancy(arch(90), footprint(128, 1, 32, 16 * 1024, 100 * 1024)), 1, 4, 4.0 / 64,
                   Limiter::shared_memory);
}

TEST(Occupancy, TwoDimensionalBlocksCountAllThreads) {
  // A 32 x 8 transpose block is 256 threads: same as the 256 x 1 case above.
  const auto o = compute_occupancy(arch(90), footprint(32, 8, 32));
  expect_occupancy(o, 8, 64, 1.0, Limiter::warps);
  EXPECT_EQ(o.threads_per_block, 256);
  // 48 threads round up to 2 warps: 64 / 2 = 32 blocks, tied with the block limit
  // (warps named first), 64 warps.
  expect_occupancy(compute_occupancy(arch(90), footprint(16, 3, 16)), 32, 64, 1.0, Limiter::warps);
}

// --- sm_86 (A10 class): 1536 threads = 48 warps per SM, 16 blocks, 100 KiB shared ---

TEST(Occupancy, Sm86ThreadsPerSm) {
  // 512 threads = 16 warps -> 48 / 16 = 3 blocks (regs: 64 / 16 = 4) -> 48 warps, 100 %.
  expect_occupancy(compute_occupancy(arch(86), footprint(512, 1, 32)), 3, 48, 1.0, Limiter::warps);
  // 1024 threads = 32 warps -> 48 / 32 = 1 block: a third of the SM's threads stay idle,
  // 32 / 48 = 66.7 %.
  expect_occupancy(compute_occupancy(arch(86), footprint(1024, 1, 32)), 1, 32, 32.0 / 48, Limiter::warps);
  // 64 threads = 2 warps -> warps allow 24 blocks but sm_86 holds 16 -> 32 / 48 warps.
  expect_occupancy(compute_occupancy(arch(86), footprint(64, 1, 32)), 16, 32, 32.0 / 48, Limiter::blocks);
  // 60000 B dynamic (opt-in) + 1024 reserved = 61024 -> 61056 -> 102400 / 61056 = 1 block.
  expect_occupancy(compute_occupancy(arch(86), footprint(256, 1, 32, 0, 60000)), 1, 8, 8.0 / 48,
                   Limiter::shared_memory);
}

TEST(Occupancy, OtherArchitectures) {
  // sm_75: 32 warps, 16 blocks, 64 KiB shared, nothing reserved.
  // 1024 threads: 32 / 32 = 1 block at 100 %.
  expect_occupancy(compute_occupancy(arch(75), footprint(1024, 1, 32)), 1, 32, 1.0, Limiter::warps);
  // 32 threads: 16 blocks = 16 warps = 50 %.
  expect_occupancy(compute_occupancy(arch(75), footprint(32, 1, 16)), 16, 16, 0.5, Limiter::blocks);
  // 32 KiB static, no reservation on Turing: 65536 / 32768 = 2 blocks.
  expect_occupancy(compute_occupancy(arch(75), footprint(128, 1, 32, 32 * 1024)), 2, 8, 0.25, Limiter::shared_memory);
  // sm_80: 64 warps, 164 KiB: 48 KiB + 1 KiB = 50176 -> 167936 / 50176 = 3 blocks.
  expect_occupancy(compute_occupancy(arch(80), footprint(128, 1, 32, 48 * 1024)), 3, 12, 12.0 / 64,
                   Limiter::shared_memory);
  // sm_89: 48 warps, 24 blocks: 32 threads -> 24 blocks, 24 / 48 = 50 %.
  expect_occupancy(compute_occupancy(arch(89), footprint(32, 1, 16)), 24, 24, 0.5, Limiter::blocks);
  // sm_100: like sm_90 for this kernel.
  expect_occupancy(compute_occupancy(arch(100), footprint(256, 1, 32)), 8, 64, 1.0, Limiter::warps);
  // sm_120: the table says 32 blocks (programming guide) but CUDA 13.0's calculator caps
  // compute capability 12.x at 24, which binds: 24 warps of 48 = 50 %.
  expect_occupancy(compute_occupancy(arch(120), footprint(32, 1, 16)), 24, 24, 0.5, Limiter::blocks);
}

TEST(Occupancy, DeviceBlockLimitStricterThanCalculator) {
  // A live device reporting fewer resident blocks than the calculator's table wins.
  auto d = arch(90);
  d.max_blocks_per_sm = 16;
  expect_occupancy(compute_occupancy(d, footprint(32, 1, 16)), 16, 16, 0.25, Limiter::blocks);
}

// --- waves ---

TEST(Occupancy, GridBlocksAndWaves) {
  // 8 blocks per SM x 132 SMs = 1056 blocks per wave.
  auto k = footprint(256, 1, 32);
  k.grid_x = 1024;
  auto o = compute_occupancy(arch(90), k);
  EXPECT_EQ(o.grid_blocks, 1024);
  EXPECT_DOUBLE_EQ(o.waves, 1024.0 / 1056.0);
  // A transpose of 8192^2 with 32 x 32 tiles: 256 x 256 = 65536 blocks -> 62.06 waves.
  k = footprint(32, 8, 32);
  k.grid_x = 256;
  k.grid_y = 256;
  o = compute_occupancy(arch(90), k);
  EXPECT_EQ(o.grid_blocks, 65536);
  EXPECT_DOUBLE_EQ(o.waves, 65536.0 / 1056.0);
  // A 3-D grid multiplies out.
  k.grid_x = 10;
  k.grid_y = 20;
  k.grid_z = 30;
  EXPECT_EQ(compute_occupancy(arch(90), k).grid_blocks, 6000);
}

// --- every prune reason ---

TEST(OccupancyPrune, DimensionsBelowOne) {
  expect_pruned(compute_occupancy(arch(90), footprint(32, 0, 32)),
                "block dimension y is 0: every block and grid dimension must be at least 1");
  auto k = footprint(32, 1, 32);
  k.grid_x = 0;
  expect_pruned(compute_occupancy(arch(90), k),
                "grid dimension x is 0: every block and grid dimension must be at least 1");
  k = footprint(32, 1, 32);
  k.grid_z = -3;
  expect_pruned(compute_occupancy(arch(90), k),
                "grid dimension z is -3: every block and grid dimension must be at least 1");
}

TEST(OccupancyPrune, BlockDimensionOverLimit) {
  auto k = footprint(1, 1, 32);
  k.block_z = 65;
  expect_pruned(compute_occupancy(arch(90), k), "block dimension z is 65, more than the device's limit of 64");
  expect_pruned(compute_occupancy(arch(90), footprint(2048, 1, 32)),
                "block dimension x is 2048, more than the device's limit of 1024");
}

TEST(OccupancyPrune, TooManyThreadsPerBlock) {
  // The transpose's TILE=64, BLOCK_ROWS=32.
  const auto o = compute_occupancy(arch(90), footprint(64, 32, 32));
  expect_pruned(o, "2048 threads per block (64 x 32 x 1), more than the 1024 a block may have");
  EXPECT_EQ(o.threads_per_block, 2048);
}

TEST(OccupancyPrune, GridDimensionOverLimit) {
  auto k = footprint(32, 1, 32);
  k.grid_y = 70000;
  expect_pruned(compute_occupancy(arch(90), k), "grid dimension y is 70000, more than the device's limit of 65535");
}

TEST(OccupancyPrune, RegistersPerThread) {
  expect_pruned(compute_occupancy(arch(90), footprint(32, 1, 256)),
                "256 registers per thread: a thread can have 0 to 255");
}

TEST(OccupancyPrune, SharedMemory) {
  expect_pruned(compute_occupancy(arch(90), footprint(128, 1, 32, 50000)),
                "declares 50000 B of static shared memory, more than the 49152 B a kernel may "
                "declare statically (use dynamic shared memory beyond that)");
  expect_pruned(compute_occupancy(arch(90), footprint(128, 1, 32, 0, 240000)),
                "needs 240000 B of shared memory per block (static 0 B + dynamic 240000 B), more "
                "than the opt-in limit of 232448 B");
  // One byte over the opt-in limit.
  expect_pruned(compute_occupancy(arch(90), footprint(128, 1, 32, 1000, 231449)),
                "needs 232449 B of shared memory per block (static 1000 B + dynamic 231449 B), "
                "more than the opt-in limit of 232448 B");
  // sm_86's opt-in is 99 KiB.
  expect_pruned(compute_occupancy(arch(86), footprint(128, 1, 32, 0, 110000)),
                "needs 110000 B of shared memory per block (static 0 B + dynamic 110000 B), more "
                "than the opt-in limit of 101376 B");
  // A device without an opt-in above 48 KiB.
  auto d = arch(90);
  d.shared_per_block_optin = d.shared_per_block;
  expect_pruned(compute_occupancy(d, footprint(128, 1, 32, 0, 70000)),
                "needs 70000 B of shared memory per block (static 0 B + dynamic 70000 B), more "
                "than the limit of 49152 B");
}

TEST(OccupancyPrune, RegistersPerBlock) {
  // 128 x 1024 = 131072 > 65536.
  expect_pruned(compute_occupancy(arch(90), footprint(1024, 1, 128)),
                "needs 131072 registers per block (128 per thread x 1024 threads), more than the "
                "65536 a block may use");
}

TEST(OccupancyPrune, NoBlockFitsAfterRounding) {
  // 65 x 1000 = 65000 registers passes the plain check, but 1000 threads are 32 warps and
  // 65 x 32 = 2080 rounds to 2304 per warp: 32 x 2304 = 73728 > 65536.
  const auto o = compute_occupancy(arch(90), footprint(1000, 1, 65));
  expect_pruned(o,
                "no block fits on an SM: 65 registers x 1000 threads are allocated as 73728 "
                "registers per block (per warp, in units of 256), more than the 65536 per block");
  EXPECT_EQ(o.limiter, Limiter::registers);
}

TEST(OccupancyPrune, InconsistentDeviceLimits) {
  // An opt-in larger than any shared-memory carveout of sm_86 (100 KiB): the calculator
  // cannot place the block and says so instead of inventing a number.
  auto d = arch(86);
  d.shared_per_block_optin = 200000;
  const auto o = compute_occupancy(d, footprint(128, 1, 32, 0, 150000));
  expect_pruned(o,
                "the occupancy calculator cannot model sm_86 (A10 class, 72 SMs) (compute "
                "capability 8.6): inconsistent device limits");
}

TEST(OccupancyPrune, UnknownArchitecture) {
  auto d = arch(90);
  d.name = "sm_130 (future)";
  d.cc_major = 13;
  const auto o = compute_occupancy(d, footprint(128, 1, 32));
  expect_pruned(o,
                "the occupancy calculator cannot model sm_130 (future) (compute capability "
                "13.0): unknown architecture");
}

TEST(OccupancyPrune, EmptyDeviceLimits) {
  // Never throws, even on limits that were never filled in.
  const auto o = compute_occupancy(DeviceLimits{}, footprint(128, 1, 32));
  EXPECT_FALSE(o.launchable);
  EXPECT_FALSE(o.pruned_reason.empty());
}

// --- the built-in table ---

TEST(BuiltinDevices, EveryArchPresent) {
  EXPECT_EQ(builtin_archs(), (std::vector<int>{75, 80, 86, 89, 90, 100, 120}));
  EXPECT_FALSE(builtin_device_limits(70).has_value());
  EXPECT_FALSE(builtin_device_limits(0).has_value());
}

TEST(BuiltinDevices, ArchitecturalLimits) {
  struct Expected {
    int arch, sm_count, threads_per_sm, blocks_per_sm;
    std::size_t shared_per_sm, optin, reserved;
  };
  const Expected table[] = {
      {75, 40, 1024, 16, 65536, 65536, 0},         // T4
      {80, 108, 2048, 32, 167936, 166912, 1024},   // A100
      {86, 72, 1536, 16, 102400, 101376, 1024},    // A10
      {89, 58, 1536, 24, 102400, 101376, 1024},    // L4
      {90, 132, 2048, 32, 233472, 232448, 1024},   // H100 / H200 (H200.md: 232448 / 233472)
      {100, 148, 2048, 32, 233472, 232448, 1024},  // B200
      {120, 170, 1536, 32, 102400, 101376, 1024},  // RTX 5090
  };
  for (const Expected& e : table) {
    SCOPED_TRACE("sm_" + std::to_string(e.arch));
    const DeviceLimits d = arch(e.arch);
    EXPECT_EQ(d.arch(), e.arch);
    EXPECT_EQ(d.cc_major, e.arch / 10);
    EXPECT_EQ(d.cc_minor, e.arch % 10);
    EXPECT_EQ(d.sm_count, e.sm_count);
    EXPECT_NE(d.name.find("sm_" + std::to_string(e.arch) + " ("), std::string::npos) << d.name;
    EXPECT_NE(d.name.find(std::to_string(e.sm_count) + " SMs"), std::string::npos) << d.name;
    EXPECT_EQ(d.max_threads_per_sm, e.threads_per_sm);
    EXPECT_EQ(d.max_blocks_per_sm, e.blocks_per_sm);
    EXPECT_EQ(d.shared_per_sm, e.shared_per_sm);
    EXPECT_EQ(d.shared_per_block_optin, e.optin);
    EXPECT_EQ(d.reserved_shared_per_block, e.reserved);
    EXPECT_EQ(d.shared_per_block, 49152u);
    EXPECT_EQ(d.regs_per_sm, 65536);
    EXPECT_EQ(d.regs_per_block, 65536);
    EXPECT_EQ(d.max_threads_per_block, 1024);
    EXPECT_EQ(d.warp_size, 32);
    EXPECT_EQ(d.max_block_dim[0], 1024);
    EXPECT_EQ(d.max_block_dim[2], 64);
    EXPECT_EQ(d.max_grid_dim[0], 2147483647LL);
    // Opt-in plus the reservation is the whole SM's shared memory.
    EXPECT_EQ(d.shared_per_block_optin + d.reserved_shared_per_block, d.shared_per_sm);

    // The calculator knows every row: a full SM of 256-thread blocks at 32 registers.
    const auto o = compute_occupancy(d, footprint(256, 1, 32));
    EXPECT_TRUE(o.launchable) << o.pruned_reason;
    EXPECT_EQ(o.blocks_per_sm, e.threads_per_sm / 256);
    EXPECT_DOUBLE_EQ(o.occupancy, 1.0);
  }
}

TEST(Limiter, Names) {
  EXPECT_STREQ(limiter_name(Limiter::none), "none");
  EXPECT_STREQ(limiter_name(Limiter::warps), "warps");
  EXPECT_STREQ(limiter_name(Limiter::registers), "registers");
  EXPECT_STREQ(limiter_name(Limiter::shared_memory), "shared_memory");
  EXPECT_STREQ(limiter_name(Limiter::blocks), "blocks");
  EXPECT_STREQ(limiter_name(Limiter::barriers), "barriers");
}

}  // namespace
}  // namespace tiletune
