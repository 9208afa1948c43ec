// GpuRunner on a real device: the shipped transpose verified and timed, kernels that leave
// elements unwritten or compute wrong values, launch failures that leave the context
// usable, a reference config, the copy ceiling, and last an illegal address that poisons
// the context. The fault suite is defined last on purpose: GoogleTest runs suites in the
// order they are defined, and nothing on the device works after it.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

#include <unistd.h>

#include "test_support.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/error.hpp"
#include "tiletune/runner.hpp"

namespace tiletune {
namespace {

// Small kernels with planted faults, all over an n x n float matrix like transpose.
constexpr const char* kTestKernels = R"(
extern "C" __global__ void naive_transpose(const float* in, float* out, int n, long long skip) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < n && y < n) {
    const long long o = (long long)x * n + y;
    if (o != skip) out[o] = in[(long long)y * n + x];
  }
}
extern "C" __global__ void copy_not_transpose(const float* in, float* out, int n, long long) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < n && y < n) out[(long long)y * n + x] = in[(long long)y * n + x];
}
extern "C" __global__ void nudged_transpose(const float* in, float* out, int n, long long nudge_at) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < n && y < n) {
    const long long o = (long long)x * n + y;
    out[o] = in[(long long)y * n + x] + (o == nudge_at ? 1e-3f : 0.0f);
  }
}
// Stages each element through dynamic shared memory: launched with more than 48 KiB.
extern "C" __global__ void shared_transpose(const float* in, float* out, int n, long long) {
  extern __shared__ float staging[];
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int t = threadIdx.y * blockDim.x + threadIdx.x;
  if (x < n && y < n) staging[t] = in[(long long)y * n + x];
  __syncthreads();
  if (x < n && y < n) out[(long long)x * n + y] = staging[t];
}
// Writes 4 TB past the output: an illegal address.
extern "C" __global__ void illegal_address(const float* in, float* out, int n, long long) {
  if (threadIdx.x == 0) out[(long long)n * n * 1000000] = in[0];
}
)";

std::unique_ptr<GpuRunner>& shared_runner() {
  static std::unique_ptr<GpuRunner> runner;
  return runner;
}

CompiledKernel compile(const KernelSource& source, const std::string& entry, int arch,
                       std::vector<std::string> options = {}) {
  // NVRTC 12.9+ serves a repeated compile (same PTX) from the driver's disk cache, without
  // the ptxas report compile_nvrtc parses; a uniquely named device variable makes every
  // compile here new.
  static int compiles = 0;
  KernelSource unique = source;
  unique.main.text = "__device__ unsigned long long test_compile_nonce_" +
                     std::to_string(::getpid()) + "_" + std::to_string(++compiles) + "_" +
                     std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) +
                     ";\n" + source.main.text;
  CompileRequest request;
  request.source = &unique;
  request.entry = entry;
  request.arch = std::to_string(arch);
  request.options = std::move(options);
  CompileResult result = compile_nvrtc(request);
  if (!result.ok())
    throw Error("test kernel '" + entry + "' does not compile: " + result.error + "\n" +
                result.log);
  return std::move(*result.kernel);
}

KernelSource test_kernels() {
  KernelSource source;
  source.main = {"runner_test_kernels.cu", kTestKernels};
  return source;
}

CompiledKernel shipped_transpose(int arch, int tile, int block_rows, int pad) {
  const KernelSource source =
      load_kernel_source(testing::source_dir() / "kernels" / "transpose.cu");
  return compile(source, "transpose", arch,
                 {"-DTILE=" + std::to_string(tile), "-DBLOCK_ROWS=" + std::to_string(block_rows),
                  "-DPAD=" + std::to_string(pad)});
}

// A transpose problem of size n: buffers in (random) and out (output), args (in, out, n).
TrialRequest transpose_request(const CompiledKernel& kernel, int n, long long block_x,
                               long long block_y, long long tile) {
  TrialRequest r;
  r.id = 1;
  r.kernel = "transpose";
  r.config_text = "test";
  r.problem_key = "N=" + std::to_string(n);
  r.sizes = {{"N", n}};
  r.cubin = kernel.cubin;
  r.function = kernel.lowered_name;
  r.grid[0] = (n + tile - 1) / tile;
  r.grid[1] = (n + tile - 1) / tile;
  r.block[0] = block_x;
  r.block[1] = block_y;
  BufferPlan in;
  in.name = "in";
  in.type = ElementType::f32;
  in.count = static_cast<std::uint64_t>(n) * n;
  in.init.kind = BufferInit::random;
  BufferPlan out = in;
  out.name = "out";
  out.init.kind = BufferInit::none;
  out.output = true;
  r.buffers = {in, out};
  ArgPlan a0, a1, a2;
  a0.is_buffer = true;
  a0.buffer = 0;
  a1.is_buffer = true;
  a1.buffer = 1;
  a2.type = ElementType::i32;
  a2.int_value = n;
  r.args = {a0, a1, a2};
  r.verify.mode = VerifySettings::Mode::cpu;
  r.verify.cpu_reference = "transpose";
  r.seed = 12345;
  return r;
}

// A test kernel over the matrix, one thread per element in 32 x 8 blocks; `extra` is its
// fourth argument (the index to skip or nudge).
TrialRequest test_kernel_request(const CompiledKernel& kernel, int n, long long extra = -1) {
  TrialRequest r = transpose_request(kernel, n, 32, 8, 32);
  r.grid[1] = (n + 7) / 8;
  ArgPlan index;
  index.type = ElementType::i64;
  index.int_value = extra;
  r.args.push_back(index);
  return r;
}

class Runner : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_runner() = std::make_unique<GpuRunner>(0); }
  static void TearDownTestSuite() { shared_runner().reset(); }
  GpuRunner& runner() { return *shared_runner(); }
  int arch() { return shared_runner()->arch(); }
};

TEST_F(Runner, GoodTransposeIsVerifiedAndTimed) {
  const CompiledKernel kernel = shipped_transpose(arch(), 32, 8, 1);
  const int n = 1000;  // not a multiple of the tile: the edge tiles are checked too
  const TrialResult r = runner().run_trial(transpose_request(kernel, n, 32, 8, 32));
  ASSERT_EQ(r.status, TrialStatus::ok) << r.detail;
  EXPECT_GE(r.samples, 10);
  EXPECT_GT(r.median_ms, 0);
  EXPECT_LE(r.min_ms, r.median_ms);
  EXPECT_GT(r.mean_ms, 0);
  EXPECT_GE(r.stddev_ms, 0);
  EXPECT_GT(r.driver_blocks_per_sm, 0);
  EXPECT_EQ(r.max_error, 0);
  EXPECT_EQ(r.first_bad_index, -1);
  EXPECT_GT(r.load_ms, 0);
  EXPECT_GT(r.verify_ms, 0);
  EXPECT_GT(r.measure_ms, 0);
  std::printf(
      "transpose N=%d TILE=32 BLOCK_ROWS=8 PAD=1 (cold): median %.4f ms (%.0f GB/s), %d samples, "
      "%d blocks/SM, load %.2f ms, verify %.2f ms, measure %.1f ms\n",
      n, r.median_ms, 2.0 * n * n * 4 / (r.median_ms * 1e-3) / 1e9, r.samples,
      r.driver_blocks_per_sm, r.load_ms, r.verify_ms, r.measure_ms);

  // Hot timing, and another problem size (the cache switches problems).
  TrialRequest hot = transpose_request(kernel, 4096, 32, 8, 32);
  hot.timing.cold = false;
  const TrialResult h = runner().run_trial(hot);
  ASSERT_EQ(h.status, TrialStatus::ok) << h.detail;
  std::printf("transpose N=4096 (hot): median %.4f ms (%.0f GB/s), %d samples\n", h.median_ms,
              2.0 * 4096.0 * 4096 * 4 / (h.median_ms * 1e-3) / 1e9, h.samples);
  const TrialResult small = runner().run_trial(transpose_request(kernel, 37, 32, 8, 32));
  EXPECT_EQ(small.status, TrialStatus::ok) << small.detail;
}

TEST_F(Runner, UnwrittenElementIsWrongResultWithItsIndex) {
  const KernelSource source = test_kernels();
  const CompiledKernel kernel = compile(source, "naive_transpose", arch());
  const TrialResult r = runner().run_trial(test_kernel_request(kernel, 1000, 1234));
  ASSERT_EQ(r.status, TrialStatus::wrong_result) << r.detail;
  EXPECT_EQ(r.first_bad_index, 1234);
  EXPECT_EQ(r.detail.rfind("out[1234]: got nan, want ", 0), 0u) << r.detail;
  EXPECT_NE(r.detail.find("1 of 1000000 elements wrong"), std::string::npos) << r.detail;
  EXPECT_TRUE(std::isinf(r.max_error));
  EXPECT_EQ(r.samples, 0);  // not timed

  // The same kernel skipping nothing passes: the poison is reset before every run.
  const TrialResult good = runner().run_trial(test_kernel_request(kernel, 1000, -1));
  EXPECT_EQ(good.status, TrialStatus::ok) << good.detail;
}

TEST_F(Runner, WrongValuesAreWrongResult) {
  const KernelSource source = test_kernels();
  const CompiledKernel kernel = compile(source, "copy_not_transpose", arch());
  const TrialResult r = runner().run_trial(test_kernel_request(kernel, 1000));
  ASSERT_EQ(r.status, TrialStatus::wrong_result) << r.detail;
  EXPECT_EQ(r.first_bad_index, 1);  // out[0] is on the diagonal
  EXPECT_EQ(r.detail.rfind("out[1]: got ", 0), 0u) << r.detail;
  EXPECT_GT(r.max_error, 0);
  EXPECT_LT(r.max_error, 2.0001);  // inputs are in [-1, 1)
  std::printf("%s\n", r.detail.c_str());
}

TEST_F(Runner, TolerancesDecide) {
  const KernelSource source = test_kernels();
  const CompiledKernel kernel = compile(source, "nudged_transpose", arch());
  TrialRequest exact = test_kernel_request(kernel, 1000, 5000);
  const TrialResult r = runner().run_trial(exact);
  ASSERT_EQ(r.status, TrialStatus::wrong_result) << r.detail;
  EXPECT_EQ(r.first_bad_index, 5000);
  EXPECT_NEAR(r.max_error, 1e-3, 1e-4);

  TrialRequest tolerant = exact;
  tolerant.verify.atol = 1e-2;
  const TrialResult t = runner().run_trial(tolerant);
  EXPECT_EQ(t.status, TrialStatus::ok) << t.detail;
  EXPECT_NEAR(t.max_error, 1e-3, 1e-4);
}

TEST_F(Runner, ReferenceConfig) {
  const KernelSource source = test_kernels();
  const CompiledKernel reference = compile(source, "naive_transpose", arch());
  const CompiledKernel good = shipped_transpose(arch(), 32, 8, 0);
  const CompiledKernel wrong = compile(source, "copy_not_transpose", arch());

  TrialRequest first = test_kernel_request(reference, 777);
  first.verify.mode = VerifySettings::Mode::reference_run;
  first.is_reference = true;
  const TrialResult ref = runner().run_trial(first);
  ASSERT_EQ(ref.status, TrialStatus::ok) << ref.detail;
  EXPECT_GE(ref.samples, 10);

  TrialRequest candidate = transpose_request(good, 777, 32, 8, 32);
  candidate.verify.mode = VerifySettings::Mode::reference_run;
  EXPECT_EQ(runner().run_trial(candidate).status, TrialStatus::ok);

  TrialRequest bad = test_kernel_request(wrong, 777);
  bad.verify.mode = VerifySettings::Mode::reference_run;
  EXPECT_EQ(runner().run_trial(bad).status, TrialStatus::wrong_result);

  // A reference config that leaves an element unwritten is caught before it is kept.
  TrialRequest holey = test_kernel_request(reference, 778, 42);
  holey.verify.mode = VerifySettings::Mode::reference_run;
  holey.is_reference = true;
  const TrialResult h = runner().run_trial(holey);
  EXPECT_EQ(h.status, TrialStatus::wrong_result);
  EXPECT_EQ(h.first_bad_index, 42);

  // A new problem with no reference run yet: the request is wrong, not the candidate.
  TrialRequest orphan = transpose_request(good, 779, 32, 8, 32);
  orphan.verify.mode = VerifySettings::Mode::reference_run;
  EXPECT_THROW((void)runner().run_trial(orphan), Error);
}

TEST_F(Runner, MoreThan48KiBOfDynamicSharedMemory) {
  const KernelSource source = test_kernels();
  const CompiledKernel kernel = compile(source, "shared_transpose", arch());
  TrialRequest r = test_kernel_request(kernel, 1000);
  r.shared_bytes = 64 * 1024;  // the kernel uses 1 KiB of it; the launch needs the opt-in
  const TrialResult result = runner().run_trial(r);
  EXPECT_EQ(result.status, TrialStatus::ok) << result.detail;
  EXPECT_GT(result.driver_blocks_per_sm, 0);
}

TEST_F(Runner, LaunchFailuresLeaveTheContextUsable) {
  const CompiledKernel kernel = shipped_transpose(arch(), 32, 8, 1);
  TrialRequest garbage = transpose_request(kernel, 100, 32, 8, 32);
  garbage.cubin = std::string(4096, 'x');
  const TrialResult g = runner().run_trial(garbage);
  EXPECT_EQ(g.status, TrialStatus::launch_failed);
  EXPECT_EQ(g.detail.rfind("CUDA_ERROR_", 0), 0u) << g.detail;
  std::printf("bad image: %s\n", g.detail.c_str());

  TrialRequest no_function = transpose_request(kernel, 100, 32, 8, 32);
  no_function.function = "no_such_kernel";
  const TrialResult f = runner().run_trial(no_function);
  EXPECT_EQ(f.status, TrialStatus::launch_failed);
  EXPECT_EQ(f.detail.rfind("CUDA_ERROR_NOT_FOUND", 0), 0u) << f.detail;

  TrialRequest too_big = transpose_request(kernel, 100, 64, 32, 32);  // 2048 threads
  const TrialResult b = runner().run_trial(too_big);
  EXPECT_EQ(b.status, TrialStatus::launch_failed);
  EXPECT_EQ(b.detail.rfind("CUDA_ERROR_INVALID_VALUE", 0), 0u) << b.detail;

  TrialRequest too_much_shared = transpose_request(kernel, 100, 32, 8, 32);
  too_much_shared.shared_bytes = 1 << 20;
  EXPECT_EQ(runner().run_trial(too_much_shared).status, TrialStatus::launch_failed);

  EXPECT_FALSE(runner().context_lost());
  EXPECT_EQ(runner().run_trial(transpose_request(kernel, 100, 32, 8, 32)).status, TrialStatus::ok);
}

TEST_F(Runner, RequestErrorsThrow) {
  const CompiledKernel kernel = shipped_transpose(arch(), 32, 8, 1);
  TrialRequest unknown = transpose_request(kernel, 64, 32, 8, 32);
  unknown.verify.cpu_reference = "no_such_reference";
  EXPECT_THROW((void)runner().run_trial(unknown), Error);
  TrialRequest bad_arg = transpose_request(kernel, 64, 32, 8, 32);
  bad_arg.args[1].buffer = 7;
  EXPECT_THROW((void)runner().run_trial(bad_arg), Error);
  EXPECT_EQ(runner().run_trial(transpose_request(kernel, 64, 32, 8, 32)).status, TrialStatus::ok);
}

TEST_F(Runner, CopyCeiling) {
  const std::uint64_t bytes = 256ull << 20;
  const CopyCeiling c = runner().measure_copy(bytes);
  EXPECT_EQ(c.bytes, bytes);
  EXPECT_GT(c.median_ms, 0);
  EXPECT_GT(c.gbps, 1000);
  std::printf("device-to-device copy of 256 MiB: %.4f ms, %.0f GB/s (read + write)\n", c.median_ms,
              c.gbps);
}

// Last: nothing on this device works in this process afterwards.
TEST(RunnerFault, IllegalAddressIsRuntimeFaultAndLosesTheContext) {
  GpuRunner runner(0);
  const KernelSource source = test_kernels();
  const CompiledKernel kernel = compile(source, "illegal_address", runner.arch());
  const TrialResult r = runner.run_trial(test_kernel_request(kernel, 1000));
  EXPECT_EQ(r.status, TrialStatus::runtime_fault) << r.detail;
  EXPECT_EQ(r.detail.rfind("CUDA_ERROR_", 0), 0u) << r.detail;
  EXPECT_TRUE(runner.context_lost());
  std::printf("fault: %s\n", r.detail.c_str());

  const TrialResult after = runner.run_trial(test_kernel_request(kernel, 1000));
  EXPECT_EQ(after.status, TrialStatus::runtime_fault);
  EXPECT_NE(after.detail.find("lost"), std::string::npos) << after.detail;
  EXPECT_THROW((void)runner.measure_copy(1 << 20), Error);
}

}  // namespace
}  // namespace tiletune
