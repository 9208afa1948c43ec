// The offline occupancy model against the driver, on the live device: every config of
// configs/transpose.yaml is compiled with NVRTC for the device's arch and loaded, and
// compute_occupancy(device_limits(live)) must give exactly the blocks per SM that
// cuOccupancyMaxActiveBlocksPerMultiprocessor gives. Prints the table it checked.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "device/driver.hpp"
#include "test_support.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/device.hpp"
#include "tiletune/occupancy.hpp"
#include "tiletune/space.hpp"

namespace tiletune {
namespace {

struct TransposeConfig {
  std::int64_t tile, block_rows, pad;
  [[nodiscard]] std::string str() const {
    return "TILE=" + std::to_string(tile) + " BLOCK_ROWS=" + std::to_string(block_rows) + " PAD=" + std::to_string(pad);
  }
};

const Axis& param(const Space& space, const std::string& name) {
  const int i = space.param_index(name);
  if (i < 0) throw std::runtime_error("transpose.yaml has no param " + name);
  return space.params[static_cast<std::size_t>(i)];
}

// The product of the params with the space's two constraints applied by hand:
// BLOCK_ROWS <= TILE and TILE % BLOCK_ROWS == 0.
std::vector<TransposeConfig> transpose_configs(const Space& space) {
  std::vector<TransposeConfig> configs;
  for (std::int64_t tile : param(space, "TILE").values) {
    for (std::int64_t rows : param(space, "BLOCK_ROWS").values) {
      for (std::int64_t pad : param(space, "PAD").values) {
        if (rows <= tile && tile % rows == 0) configs.push_back({tile, rows, pad});
      }
    }
  }
  return configs;
}

class OccupancyDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    devices_ = list_devices();
    ASSERT_FALSE(devices_.empty());
    context_.emplace(0);
    space_ = load_space(testing::source_dir() / "configs" / "transpose.yaml");
    source_ = load_kernel_source(space_.source);
  }

  [[nodiscard]] CompileResult compile(const TransposeConfig& c) const {
    CompileRequest request;
    request.source = &source_;
    request.options = {"-DTILE=" + std::to_string(c.tile), "-DBLOCK_ROWS=" + std::to_string(c.block_rows),
                       "-DPAD=" + std::to_string(c.pad)};
    request.arch = "sm_" + std::to_string(devices_[0].arch());
    request.entry = space_.entry;
    return compile_nvrtc(request);
  }

  std::vector<DeviceInfo> devices_;
  std::optional<cu::PrimaryContext> context_;
  Space space_;
  KernelSource source_;
};

TEST_F(OccupancyDevice, OfflineEqualsDriverForEveryTransposeConfig) {
  const DeviceInfo& device = devices_[0];
  const DeviceLimits limits = device_limits(device);
  const auto configs = transpose_configs(space_);
  ASSERT_FALSE(configs.empty());

  std::printf("%s (sm_%d, %d SMs), transpose N=8192\n", device.name.c_str(), device.arch(), device.sm_count);
  std::printf("%-30s %5s %7s %8s %7s %-14s %6s %s\n", "config", "regs", "smem", "offline", "driver", "limiter", "occ",
              "");
  int checked = 0;
  for (const TransposeConfig& c : configs) {
    SCOPED_TRACE(c.str());
    constexpr long long n = 8192;
    KernelFootprint k;
    k.block_x = static_cast<int>(c.tile);
    k.block_y = static_cast<int>(c.block_rows);
    k.grid_x = (n + c.tile - 1) / c.tile;
    k.grid_y = (n + c.tile - 1) / c.tile;

    const CompileResult compiled = compile(c);
    if (!compiled.ok()) {
      // Only a config that cannot launch anyway (e.g. 64 x 32 = 2048 threads, over the
      // __launch_bounds__ limit) may fail to compile.
      const Occupancy o = compute_occupancy(limits, k);
      EXPECT_FALSE(o.launchable) << "compile failed: " << compiled.error << "\n" << compiled.log;
      std::printf("%-30s %5s %7s %8s %7s %-14s %6s compile failed; pruned: %s\n", c.str().c_str(), "-", "-", "-", "-",
                  "-", "-", o.pruned_reason.c_str());
      continue;
    }
    const Resources& res = compiled.kernel->resources;
    k.registers_per_thread = res.registers;
    k.static_shared_bytes = static_cast<std::size_t>(res.static_shared_bytes);
    k.barriers = res.barriers;
    const Occupancy o = compute_occupancy(limits, k);
    if (!o.launchable) {
      std::printf("%-30s %5d %7d %8s %7s %-14s %6s pruned: %s\n", c.str().c_str(), res.registers,
                  res.static_shared_bytes, "-", "-", "-", "-", o.pruned_reason.c_str());
      EXPECT_GT(o.threads_per_block, limits.max_threads_per_block) << o.pruned_reason;
      continue;
    }

    cu::Module module(compiled.kernel->cubin, c.str());
    const CUfunction f = module.get_function(compiled.kernel->lowered_name);
    // What ptxas reported is what the driver sees.
    EXPECT_EQ(cu::function_attribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS), res.registers);
    EXPECT_EQ(cu::function_attribute(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES), res.static_shared_bytes);
    const int driver = cu::max_active_blocks_per_sm(f, o.threads_per_block, 0);
    std::printf("%-30s %5d %7d %8d %7d %-14s %5.0f%% %s\n", c.str().c_str(), res.registers, res.static_shared_bytes,
                o.blocks_per_sm, driver, limiter_name(o.limiter), o.occupancy * 100.0,
                o.blocks_per_sm == driver ? "" : "MISMATCH");
    EXPECT_EQ(o.blocks_per_sm, driver);
    ++checked;
  }
  std::printf("%d launchable configs checked\n", checked);
  EXPECT_GT(checked, 0);
}

TEST_F(OccupancyDevice, DynamicSharedMemorySweep) {
  // One kernel, many dynamic shared sizes up to the opt-in limit (raised on the function as
  // tiletune does): exercises the shared-memory limiter and the opt-in path.
  const DeviceInfo& device = devices_[0];
  const DeviceLimits limits = device_limits(device);
  const CompileResult compiled = compile({32, 8, 1});
  ASSERT_TRUE(compiled.ok()) << compiled.error << "\n" << compiled.log;
  const Resources& res = compiled.kernel->resources;
  cu::Module module(compiled.kernel->cubin, "transpose TILE=32 BLOCK_ROWS=8 PAD=1");
  const CUfunction f = module.get_function(compiled.kernel->lowered_name);
  const std::size_t room = device.shared_per_block_optin - static_cast<std::size_t>(res.static_shared_bytes);
  cu::set_max_dynamic_shared_bytes(f, static_cast<int>(room));

  std::vector<std::size_t> sizes = {0, 1, 1024, 8192, 16384, 30000, 45000, 60000, 100000, 150000};
  sizes.push_back(49152 - static_cast<std::size_t>(res.static_shared_bytes));
  sizes.push_back(49153 - static_cast<std::size_t>(res.static_shared_bytes));
  sizes.push_back(room);
  for (std::size_t dynamic : sizes) {
    if (dynamic > room) continue;
    KernelFootprint k;
    k.block_x = 32;
    k.block_y = 8;
    k.registers_per_thread = res.registers;
    k.static_shared_bytes = static_cast<std::size_t>(res.static_shared_bytes);
    k.dynamic_shared_bytes = dynamic;
    k.barriers = res.barriers;
    const Occupancy o = compute_occupancy(limits, k);
    ASSERT_TRUE(o.launchable) << o.pruned_reason;
    const int driver = cu::max_active_blocks_per_sm(f, 256, dynamic);
    std::printf("dynamic %7zu B: offline %2d, driver %2d, limiter %s\n", dynamic, o.blocks_per_sm, driver,
                limiter_name(o.limiter));
    EXPECT_EQ(o.blocks_per_sm, driver) << "dynamic shared " << dynamic;
  }
}

TEST_F(OccupancyDevice, MissingFunctionIsNamed) {
  const CompileResult compiled = compile({32, 8, 0});
  ASSERT_TRUE(compiled.ok()) << compiled.error << "\n" << compiled.log;
  cu::Module module(compiled.kernel->cubin, "transpose TILE=32 BLOCK_ROWS=8 PAD=0");
  try {
    (void)module.get_function("no_such_kernel");
    FAIL() << "expected a DriverError";
  } catch (const cu::DriverError& e) {
    EXPECT_EQ(e.result(), CUDA_ERROR_NOT_FOUND);
    EXPECT_NE(std::string(e.what()).find("function 'no_such_kernel'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tiletune
