// The driver layer without a GPU: loading fails cleanly with a reason (no crash, no link
// against libcuda), every driver symbol resolves against the toolkit's stub, errors name
// the call, and the device helpers format like nvidia-smi. Also passes with a driver.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <regex>
#include <string>

#include "device/driver.hpp"
#include "test_support.hpp"
#include "tiletune/device.hpp"

namespace tiletune {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST(Driver, LoadsOrExplainsWhyNot) {
  const cu::Api* a = cu::api();
  EXPECT_EQ(a, cu::api()) << "loaded once";
  if (a == nullptr) {
    const std::string reason = cu::driver_unavailable_reason();
    EXPECT_FALSE(reason.empty());
    // Either libcuda.so.1 is missing (this build machine) or cuInit refused.
    EXPECT_TRUE(reason.find("libcuda.so.1") != std::string::npos || starts_with(reason, "cuInit(0) failed: "))
        << reason;
    EXPECT_EQ(cu::device_count(), 0);
    EXPECT_TRUE(list_devices().empty());
  } else {
    EXPECT_EQ(cu::driver_unavailable_reason(), "");
    EXPECT_GE(cu::device_count(), 0);
    EXPECT_NE(a->cuMemAlloc, nullptr);
    EXPECT_NE(a->cuOccupancyMaxActiveBlocksPerMultiprocessor, nullptr);
  }
}

TEST(Driver, CallsWithoutDriverThrowInsteadOfCrashing) {
  if (cu::api() != nullptr) GTEST_SKIP() << "a driver is loaded here";
  try {
    int n = 0;
    TILETUNE_CU(cuDeviceGetCount(&n));
    FAIL() << "expected an Error";
  } catch (const cu::DriverError&) { FAIL() << "no driver call was made, so no DriverError"; } catch (const Error& e) {
    EXPECT_TRUE(starts_with(e.what(), "CUDA driver not available: ")) << e.what();
  }
  EXPECT_THROW(cu::detail::require(), Error);
  EXPECT_THROW(cu::DeviceBuffer(16), Error);
  EXPECT_THROW(cu::PrimaryContext(0), Error);
  EXPECT_THROW(cu::Stream(), Error);
  EXPECT_THROW(cu::Event(), Error);
  EXPECT_THROW(cu::Module("not a cubin"), Error);
}

TEST(Driver, EmptyOwnersNeedNoDriver) {
  // Owners that hold nothing are created, moved and destroyed without a driver call.
  cu::DeviceBuffer empty;
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.ptr(), 0u);
  cu::DeviceBuffer zero(0);
  cu::DeviceBuffer moved(std::move(zero));
  EXPECT_EQ(moved.size(), 0u);
  moved = cu::DeviceBuffer();
  EXPECT_EQ(moved.ptr(), 0u);
  char byte = 0;
  EXPECT_THROW(moved.upload(&byte, 1), Error);  // more than the buffer holds
}

#ifdef TILETUNE_CUDA_STUB
TEST(Driver, EverySymbolResolvesAgainstTheStub) {
  // The stub exports the real ABI names (cuMemAlloc_v2, cuDeviceGetUuid_v2, ...); if a name
  // in driver_functions.inc were wrong, loading would stop at "lacks driver functions".
  // The path is the build machine's; a machine that runs the binary may lack it.
  if (!std::filesystem::exists(TILETUNE_CUDA_STUB)) GTEST_SKIP() << TILETUNE_CUDA_STUB << " not here";
  std::string reason;
  const auto loaded = cu::detail::load_api(TILETUNE_CUDA_STUB, reason);
  EXPECT_FALSE(loaded.has_value()) << "the stub's cuInit is expected to fail";
  EXPECT_TRUE(starts_with(reason, "cuInit(0) failed: ")) << reason;
  EXPECT_EQ(reason.find("lacks"), std::string::npos) << reason;
}
#endif

TEST(Driver, MissingLibraryGivesAReason) {
  std::string reason;
  const auto loaded = cu::detail::load_api("libtiletune-no-such-driver.so.1", reason);
  EXPECT_FALSE(loaded.has_value());
  EXPECT_TRUE(starts_with(reason, "cannot load libtiletune-no-such-driver.so.1: ")) << reason;
}

TEST(DriverError, NamesCallResultFileLineAndContext) {
  try {
    cu::check(CUDA_ERROR_INVALID_IMAGE, "cuModuleLoadData(&module_, image.data())", "module.cpp", 42,
              "transpose TILE=32 BLOCK_ROWS=8 PAD=1");
    FAIL() << "expected a DriverError";
  } catch (const cu::DriverError& e) {
    EXPECT_EQ(e.result(), CUDA_ERROR_INVALID_IMAGE);
    const std::string description = cu::result_description(CUDA_ERROR_INVALID_IMAGE);
    // With a driver: "... CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid) at ...".
    const std::string expected = "cuModuleLoadData(&module_, image.data()) failed: CUDA_ERROR_INVALID_IMAGE" +
                                 (description.empty() ? std::string() : " (" + description + ")") +
                                 " at module.cpp:42 [transpose TILE=32 BLOCK_ROWS=8 PAD=1]";
    EXPECT_EQ(std::string(e.what()), expected);
  }
  // No context: no brackets.
  try {
    cu::check(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(&p, n)", "buffer.cpp", 7);
    FAIL() << "expected a DriverError";
  } catch (const cu::DriverError& e) {
    const std::string what = e.what();
    EXPECT_TRUE(starts_with(what, "cuMemAlloc(&p, n) failed: CUDA_ERROR_OUT_OF_MEMORY")) << what;
    EXPECT_EQ(what.substr(what.size() - std::string(" at buffer.cpp:7").size()), " at buffer.cpp:7");
  }
  EXPECT_NO_THROW(cu::check(CUDA_SUCCESS, "cuInit(0)", "x.cpp", 1));
}

TEST(DriverError, IsATiletuneError) {
  try {
    cu::check(CUDA_ERROR_ILLEGAL_ADDRESS, "cuCtxSynchronize()", "worker.cpp", 3);
  } catch (const Error& e) { EXPECT_NE(std::string(e.what()).find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos); }
}

TEST(DriverError, ResultNames) {
  EXPECT_EQ(cu::result_name(CUDA_SUCCESS), "CUDA_SUCCESS");
  EXPECT_EQ(cu::result_name(CUDA_ERROR_ILLEGAL_ADDRESS), "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_EQ(cu::result_name(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES), "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
  EXPECT_EQ(cu::result_name(CUDA_ERROR_NO_DEVICE), "CUDA_ERROR_NO_DEVICE");
  // A code nobody knows is shown as its number.
  EXPECT_EQ(cu::result_name(static_cast<CUresult>(12345)), "CUresult 12345");
}

TEST(DriverError, NoThrowVariantIsQuiet) {
  // Destructors use this: a failure is reported, never thrown.
  EXPECT_NO_THROW(cu::detail::check_nothrow(CUDA_ERROR_INVALID_VALUE, "cuMemFree(p)", "x.cpp", 1));
  EXPECT_NO_THROW(cu::detail::check_nothrow(CUDA_SUCCESS, "cuMemFree(p)", "x.cpp", 1));
}

TEST(Device, DriverVersion) {
  EXPECT_EQ(format_driver_version(13000), "13.0");
  EXPECT_EQ(format_driver_version(12040), "12.4");
  EXPECT_EQ(format_driver_version(12080), "12.8");
  EXPECT_EQ(format_driver_version(11070), "11.7");
}

TEST(Device, UuidLikeNvidiaSmi) {
  const std::array<unsigned char, 16> bytes = {0x3f, 0x1a, 0x00, 0xc2, 0x9b, 0x44, 0x7d, 0x10,
                                               0xaa, 0x05, 0xde, 0xad, 0xbe, 0xef, 0x01, 0xff};
  EXPECT_EQ(format_gpu_uuid(bytes), "GPU-3f1a00c2-9b44-7d10-aa05-deadbeef01ff");
  EXPECT_TRUE(std::regex_match(format_gpu_uuid({}),
                               std::regex("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")));
}

TEST(Device, LimitsFromInfo) {
  const DeviceInfo info = testing::h200_device_info();
  const DeviceLimits l = device_limits(info);
  EXPECT_EQ(l.name, "NVIDIA H200");
  EXPECT_EQ(l.arch(), 90);
  EXPECT_EQ(l.max_block_dim[2], 64);
  EXPECT_EQ(l.max_grid_dim[1], 65535);
  // The live limits of an H200 give the same answers as the built-in sm_90 row.
  const auto builtin = *builtin_device_limits(90);
  KernelFootprint k;
  k.block_x = 32;
  k.block_y = 8;
  k.registers_per_thread = 24;
  k.static_shared_bytes = 32 * 33 * 4;
  const Occupancy live = compute_occupancy(l, k);
  const Occupancy table = compute_occupancy(builtin, k);
  EXPECT_TRUE(live.launchable) << live.pruned_reason;
  EXPECT_EQ(live.blocks_per_sm, table.blocks_per_sm);
  EXPECT_EQ(live.limiter, table.limiter);
}

}  // namespace
}  // namespace tiletune
