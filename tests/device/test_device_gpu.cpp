// On a real device: what list_devices() reads, that the built-in table agrees with the
// live attributes of this architecture, and the RAII owners doing real work (alloc,
// memset, copies, streams, events, errors from a bad module).
#include <gtest/gtest.h>

#include <cstdio>
#include <numeric>
#include <regex>
#include <vector>

#include "device/driver.hpp"
#include "tiletune/device.hpp"

namespace tiletune {
namespace {

TEST(DeviceGpu, ListDevices) {
  const auto devices = list_devices();
  ASSERT_FALSE(devices.empty());
  ASSERT_EQ(static_cast<int>(devices.size()), cu::device_count());
  for (const DeviceInfo& d : devices) {
    std::printf(
        "device %d: %s %s sm_%d, %d SMs, %zu MiB, L2 %zu KiB, shared %zu/%zu/%zu "
        "(+%zu reserved), regs %d/%d, threads %d/%d, blocks %d, clock %d kHz, "
        "driver %s\n",
        d.ordinal, d.name.c_str(), d.uuid.c_str(), d.arch(), d.sm_count, d.total_memory >> 20, d.l2_bytes >> 10,
        d.shared_per_block, d.shared_per_block_optin, d.shared_per_sm, d.reserved_shared_per_block, d.regs_per_block,
        d.regs_per_sm, d.max_threads_per_block, d.max_threads_per_sm, d.max_blocks_per_sm, d.sm_clock_khz,
        format_driver_version(d.driver_version).c_str());
    EXPECT_FALSE(d.name.empty());
    EXPECT_TRUE(
        std::regex_match(d.uuid, std::regex("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")))
        << d.uuid;
    EXPECT_GE(d.cc_major, 7);
    EXPECT_GT(d.sm_count, 0);
    EXPECT_GT(d.total_memory, 1ull << 30);
    EXPECT_GT(d.l2_bytes, 0u);
    EXPECT_EQ(d.shared_per_block, 49152u);
    EXPECT_GE(d.shared_per_block_optin, d.shared_per_block);
    EXPECT_GE(d.shared_per_sm, d.shared_per_block_optin);
    EXPECT_EQ(d.warp_size, 32);
    EXPECT_EQ(d.max_threads_per_block, 1024);
    EXPECT_EQ(d.max_block_dim[0], 1024);
    EXPECT_EQ(d.max_block_dim[1], 1024);
    EXPECT_EQ(d.max_block_dim[2], 64);
    EXPECT_EQ(d.max_grid_dim[0], 2147483647LL);
    EXPECT_GE(d.driver_version, 12000);
  }
}

TEST(DeviceGpu, BuiltinTableMatchesLiveArchitecture) {
  for (const DeviceInfo& d : list_devices()) {
    const auto builtin = builtin_device_limits(d.arch());
    if (!builtin) {
      std::printf("sm_%d has no built-in row\n", d.arch());
      continue;
    }
    SCOPED_TRACE(d.name);
    const DeviceLimits live = device_limits(d);
    EXPECT_EQ(live.max_threads_per_sm, builtin->max_threads_per_sm);
    EXPECT_EQ(live.max_blocks_per_sm, builtin->max_blocks_per_sm);
    EXPECT_EQ(live.regs_per_sm, builtin->regs_per_sm);
    EXPECT_EQ(live.regs_per_block, builtin->regs_per_block);
    EXPECT_EQ(live.shared_per_block, builtin->shared_per_block);
    EXPECT_EQ(live.shared_per_block_optin, builtin->shared_per_block_optin);
    EXPECT_EQ(live.shared_per_sm, builtin->shared_per_sm);
    EXPECT_EQ(live.reserved_shared_per_block, builtin->reserved_shared_per_block);
  }
}

TEST(DeviceGpu, BufferMemsetAndCopies) {
  cu::PrimaryContext context(0);
  constexpr std::size_t n = 1 << 20;
  cu::DeviceBuffer buffer(n);
  EXPECT_EQ(buffer.size(), n);
  EXPECT_NE(buffer.ptr(), 0u);

  buffer.fill_async(0xab);
  context.synchronize();
  std::vector<unsigned char> host(n, 0);
  buffer.download(host.data(), n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(host[i], 0xab) << "byte " << i;

  std::vector<int> values(n / sizeof(int));
  std::iota(values.begin(), values.end(), 7);
  buffer.upload(values.data(), n);
  std::vector<int> back(values.size(), 0);
  buffer.download(back.data(), n);
  EXPECT_EQ(back, values);

  // Moving hands the allocation over; the source owns nothing afterwards.
  const CUdeviceptr p = buffer.ptr();
  cu::DeviceBuffer other(std::move(buffer));
  EXPECT_EQ(other.ptr(), p);
  EXPECT_EQ(buffer.ptr(), 0u);  // NOLINT(bugprone-use-after-move): checking the moved-from state
  EXPECT_EQ(buffer.size(), 0u);
  other = cu::DeviceBuffer(64);
  EXPECT_EQ(other.size(), 64u);
  EXPECT_THROW(other.download(host.data(), 65), Error);
}

TEST(DeviceGpu, StreamAndEvents) {
  cu::PrimaryContext context(0);
  cu::Stream stream;
  cu::Event start;
  cu::Event end;
  cu::DeviceBuffer buffer(64 << 20);
  start.record(stream.get());
  buffer.fill_async(0, stream.get());
  end.record(stream.get());
  end.synchronize();
  const float ms = cu::Event::elapsed_ms(start, end);
  EXPECT_GE(ms, 0.0f);
  std::printf("memset of 64 MiB: %.3f ms\n", ms);
  stream.synchronize();

  cu::Stream moved(std::move(stream));
  EXPECT_NE(moved.get(), nullptr);
  EXPECT_EQ(stream.get(), nullptr);  // NOLINT(bugprone-use-after-move)
}

TEST(DeviceGpu, BadModuleNamesTheCall) {
  cu::PrimaryContext context(0);
  try {
    cu::Module module(std::string(256, 'x'), "garbage image");
    FAIL() << "expected a DriverError";
  } catch (const cu::DriverError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("cuModuleLoadData(", 0), 0u) << what;
    EXPECT_NE(what.find("[garbage image]"), std::string::npos) << what;
    EXPECT_NE(e.result(), CUDA_SUCCESS);
  }
}

TEST(DeviceGpu, ContextMoves) {
  cu::PrimaryContext a(0);
  EXPECT_EQ(a.ordinal(), 0);
  cu::PrimaryContext b(std::move(a));
  EXPECT_NE(b.get(), nullptr);
  EXPECT_EQ(a.get(), nullptr);  // NOLINT(bugprone-use-after-move)
  b.make_current();
  b.synchronize();
  EXPECT_THROW(cu::PrimaryContext(cu::device_count()), cu::DriverError);  // no such ordinal
}

}  // namespace
}  // namespace tiletune
