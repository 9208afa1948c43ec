// The compile pool: many configs across threads give the same results as compiling them one
// by one; exceptions come back through the future; destruction drains the queue.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "test_support.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/error.hpp"

namespace tiletune {
namespace {

using tiletune::testing::TempDir;

std::vector<CompileRequest> transpose_requests(const KernelSource& source) {
  std::vector<CompileRequest> requests;
  for (int tile : {16, 32}) {
    for (int rows : {4, 8}) {
      for (int pad : {0, 1}) {
        requests.push_back(
            {&source,
             {"-DTILE=" + std::to_string(tile), "-DBLOCK_ROWS=" + std::to_string(rows), "-DPAD=" + std::to_string(pad)},
             "sm_90",
             "transpose"});
      }
    }
  }
  return requests;
}

TEST(CompilePool, EightConfigsOnTwoThreadsMatchSerialCompiles) {
  const KernelSource source = load_kernel_source(tiletune::testing::source_dir() / "kernels" / "transpose.cu");
  const auto requests = transpose_requests(source);
  ASSERT_EQ(requests.size(), 8u);
  TempDir dir;
  const CubinCache cache(dir.path() / "cubin");

  std::vector<CompileResult> pooled;
  const auto start = std::chrono::steady_clock::now();
  {
    CompilePool pool(2, cache);
    EXPECT_EQ(pool.threads(), 2u);
    std::vector<std::future<CompileResult>> futures;
    for (const auto& request : requests) futures.push_back(pool.submit(request));
    for (auto& future : futures) pooled.push_back(future.get());
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  double serial_sum = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    ASSERT_TRUE(pooled[i].ok()) << pooled[i].error;
    EXPECT_FALSE(pooled[i].cache_hit);
    serial_sum += pooled[i].seconds;
    const CompileResult serial = compile_nvrtc(requests[i]);
    ASSERT_TRUE(serial.ok());
    EXPECT_EQ(pooled[i].kernel->cubin, serial.kernel->cubin) << i;
    EXPECT_EQ(pooled[i].kernel->resources, serial.kernel->resources) << i;
    const int tile = i < 4 ? 16 : 32;
    const int pad = static_cast<int>(i % 2);
    EXPECT_EQ(pooled[i].kernel->resources.static_shared_bytes, tile * (tile + pad) * 4) << i;
  }
  std::printf("[ info ] pool of 2: 8 configs in %.0f ms wall, %.0f ms of compile time\n", wall * 1e3, serial_sum * 1e3);

  // A second pool over the same cache hits every entry.
  CompilePool again(2, cache);
  std::vector<std::future<CompileResult>> futures;
  for (const auto& request : requests) futures.push_back(again.submit(request));
  for (std::size_t i = 0; i < futures.size(); ++i) {
    const CompileResult r = futures[i].get();
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r.cache_hit);
    EXPECT_EQ(r.kernel->cubin, pooled[i].kernel->cubin);
  }
}

TEST(CompilePool, ExceptionsComeThroughTheFuture) {
  CompilePool pool(1, CubinCache{std::filesystem::path{}});
  auto future = pool.submit({nullptr, {}, "sm_90", "k"});
  EXPECT_THROW((void)future.get(), Error);
  const KernelSource source = load_kernel_source(tiletune::testing::source_dir() / "kernels" / "transpose.cu");
  auto bad_arch = pool.submit({&source, {}, "not-an-arch", "transpose"});
  EXPECT_THROW((void)bad_arch.get(), Error);
}

TEST(CompilePool, DestructorDrainsQueuedWork) {
  const KernelSource source = load_kernel_source(tiletune::testing::source_dir() / "kernels" / "transpose.cu");
  std::vector<std::future<CompileResult>> futures;
  {
    CompilePool pool(1, CubinCache{std::filesystem::path{}});
    for (const auto& request : transpose_requests(source)) futures.push_back(pool.submit(request));
  }  // destroyed with work still queued
  for (auto& future : futures) {
    ASSERT_EQ(future.wait_for(std::chrono::seconds(0)), std::future_status::ready);
    EXPECT_TRUE(future.get().ok());
  }
}

TEST(CompilePool, ZeroThreadsMeansHardwareConcurrency) {
  CompilePool pool(0, CubinCache{std::filesystem::path{}});
  EXPECT_GE(pool.threads(), 1u);
}

}  // namespace
}  // namespace tiletune
