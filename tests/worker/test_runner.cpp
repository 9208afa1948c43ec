// GpuRunner on a real device: the shipped transpose verified and timed, kernels that leave
// elements unwritten or compute wrong values, launch failures that leave the context
// usable, a reference config, the copy ceiling; kernels written elsewhere (module globals,
// a reference kernel, partial sums checked by their sum, in/out buffers restored, half and
// float scalars, scalars and outputs of every type, expected files, a library reference, a
// check of the first elements); the samples of a trial; a host check (verify.command) that
// passes, rejects, is never asked about a candidate the GPU comparison failed or a reference run,
// and one that exits; and last an illegal address that poisons the context. The fault suite is
// defined last on purpose: GoogleTest runs suites in the
// order they are defined, and nothing on the device works after it.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <span>

#include <unistd.h>

#include "test_support.hpp"
#include "worker/generators.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/data_file.hpp"
#include "tiletune/error.hpp"
#include "tiletune/reference.hpp"
#include "tiletune/runner.hpp"
#include "tiletune/trial_record.hpp"

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
  unique.main.text = "__device__ unsigned long long test_compile_nonce_" + std::to_string(::getpid()) + "_" +
                     std::to_string(++compiles) + "_" +
                     std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + ";\n" +
                     source.main.text;
  CompileRequest request;
  request.source = &unique;
  request.entry = entry;
  request.arch = std::to_string(arch);
  request.options = std::move(options);
  CompileResult result = compile_nvrtc(request);
  if (!result.ok()) throw Error("test kernel '" + entry + "' does not compile: " + result.error + "\n" + result.log);
  return std::move(*result.kernel);
}

KernelSource test_kernels() {
  KernelSource source;
  source.main = {"runner_test_kernels.cu", kTestKernels};
  return source;
}

CompiledKernel shipped_transpose(int arch, int tile, int block_rows, int pad) {
  const KernelSource source = load_kernel_source(testing::source_dir() / "kernels" / "transpose.cu");
  return compile(
      source, "transpose", arch,
      {"-DTILE=" + std::to_string(tile), "-DBLOCK_ROWS=" + std::to_string(block_rows), "-DPAD=" + std::to_string(pad)});
}

// A transpose problem of size n: buffers in (random) and out (output), args (in, out, n).
TrialRequest transpose_request(const CompiledKernel& kernel, int n, long long block_x, long long block_y,
                               long long tile) {
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
  CheckPlan check_out;
  check_out.buffer = 1;
  check_out.count = out.count;
  r.verify.checks = {check_out};
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
  // The host wall time of a sample holds its launch and synchronize: never less than the kernel.
  EXPECT_GE(r.cpu_mean_ms, 0.9 * r.mean_ms);
  EXPECT_GE(r.throttled_samples, 0);
  if (r.throttled_samples > 0) std::printf("note: %d samples discarded (throttled)\n", r.throttled_samples);
  std::printf(
      "transpose N=%d TILE=32 BLOCK_ROWS=8 PAD=1 (cold): median %.4f ms (%.0f GB/s), %d samples, "
      "%d throttled, SM clock %.0f MHz, CPU %.4f ms/sample, %d blocks/SM, load %.2f ms, verify %.2f ms, "
      "measure %.1f ms\n",
      n, r.median_ms, 2.0 * n * n * 4 / (r.median_ms * 1e-3) / 1e9, r.samples, r.throttled_samples, r.sm_clock_mhz,
      r.cpu_mean_ms, r.driver_blocks_per_sm, r.load_ms, r.verify_ms, r.measure_ms);

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

// The energy of one run over the board's power is the time one run took in the energy loop: it
// must be the kernel's own time (hot, back to back), not the kernel plus the GPU idling while
// NVML is polled between batches (which once made transpose's energy 2.7x too high).
TEST_F(Runner, EnergyPerRunIsTheKernelsTimeAtTheBoardsPower) {
  const CompiledKernel kernel = shipped_transpose(arch(), 32, 8, 1);
  TrialRequest r = transpose_request(kernel, 8192, 32, 8, 32);
  r.energy.enabled = true;
  const TrialResult t = runner().run_trial(r);
  ASSERT_EQ(t.status, TrialStatus::ok) << t.detail;
  if (t.energy_mj <= 0) GTEST_SKIP() << "no NVML energy here: " << t.energy_note;
  const double ms_per_run = t.energy_mj / t.power_w;  // mJ / W = ms
  std::printf("transpose N=8192 energy: %.2f mJ per run at %.0f W = %.4f ms per run; cold median %.4f ms\n",
              t.energy_mj, t.power_w, ms_per_run, t.median_ms);
  EXPECT_LT(ms_per_run, 1.15 * t.median_ms);
  EXPECT_GT(ms_per_run, 0.5 * t.median_ms);
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
  tolerant.verify.checks[0].atol = 1e-2;
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

// A reference that cannot be computed fails every config of its problem: a shared failure (the
// sweep stops on it); a malformed request throws.
TEST_F(Runner, RequestErrorsThrow) {
  const CompiledKernel kernel = shipped_transpose(arch(), 32, 8, 1);
  TrialRequest unknown = transpose_request(kernel, 64, 32, 8, 32);
  unknown.verify.cpu_reference = "no_such_reference";
  const TrialResult u = runner().run_trial(unknown);
  EXPECT_EQ(u.status, TrialStatus::runtime_fault);
  EXPECT_TRUE(u.shared_failure);
  EXPECT_NE(u.detail.find("no built-in reference named 'no_such_reference'"), std::string::npos) << u.detail;
  TrialRequest bad_arg = transpose_request(kernel, 64, 32, 8, 32);
  bad_arg.args[1].buffer = 7;
  EXPECT_THROW((void)runner().run_trial(bad_arg), Error);
  EXPECT_EQ(runner().run_trial(transpose_request(kernel, 64, 32, 8, 32)).status, TrialStatus::ok);
}

TEST_F(Runner, CopyCeiling) {
  // 1 GiB, the size a sweep measures: 256 MiB stays under the peak (4.04 against 4.25 TB/s on
  // the H200, issue 13).
  const std::uint64_t bytes = 1ull << 30;
  const CopyCeiling c = runner().measure_copy(bytes);
  EXPECT_EQ(c.bytes, bytes);
  EXPECT_GT(c.median_ms, 0);
  EXPECT_GT(c.gbps, 1000);
  EXPECT_GT(c.samples, 20);  // more than the copy's min_samples, as nvbench counts
  std::printf("device-to-device copy of 1 GiB: %.4f ms, %.0f GB/s (read + write), %d samples, %d throttled\n",
              c.median_ms, c.gbps, c.samples, c.throttled_samples);
}

// --- kernels written elsewhere: inputs, globals, checks, references ----------------------

constexpr const char* kForeignKernels = R"(
#include <cuda_fp16.h>
namespace filters {
__constant__ float taps[4];
}
__device__ unsigned int launches;
// out[i] = sum_k taps[k] * in[i + k] (zero past the end); C++ linkage, a namespaced constant.
__global__ void fir(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) atomicAdd(&launches, 1u);
  if (i >= n) return;
  float s = 0;
  for (int k = 0; k < 4; ++k) s += filters::taps[k] * (i + k < n ? in[i + k] : 0.0f);
  out[i] = s;
}
// The same, one thread doing everything: the reference kernel.
__global__ void fir_naive(const float* in, float* out, int n) {
  for (int i = 0; i < n; ++i) {
    float s = 0;
    for (int k = 0; k < 4; ++k) s += filters::taps[k] * (i + k < n ? in[i + k] : 0.0f);
    out[i] = s;
  }
}
// One partial sum per block; `drop_last` leaves the last block's partial unwritten.
__global__ void partial_sums(const float* in, float* partials, int n, int drop_last) {
  __shared__ float share[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  share[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) share[threadIdx.x] += share[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0 && !(drop_last && blockIdx.x == gridDim.x - 1)) partials[blockIdx.x] = share[0];
}
// In place: x[i] = x[i] * scale (a float scalar); y = a half scalar times x, in half.
__global__ void scale_in_place(float* x, float scale, __half* y, __half h, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    x[i] = x[i] * scale;
    y[i] = __float2half(__half2float(h) * 2.0f);
  }
}
// y = 0.5 x + y (in place), what the test library's saxpy_reference computes.
__global__ void saxpy(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5f * x[i] + y[i];
}
// Each scalar type into an output of its type: the argument slots have the kernel's sizes.
__global__ void every_scalar(signed char a, short b, unsigned short c, unsigned long long d, unsigned char e, __half h,
                             signed char* oa, short* ob, unsigned short* oc, unsigned long long* od, unsigned char* oe,
                             __half* oh, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    oa[i] = a;
    ob[i] = b;
    oc[i] = c;
    od[i] = d + (unsigned long long)i;
    oe[i] = e;
    oh[i] = h;
  }
}
// Writes n good elements, then garbage: a check of the first n passes.
__global__ void first_n(const float* in, float* out, int n, int total) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + in[i];
  else if (i < total) out[i] = -1.0f;
}
)";

KernelSource foreign_kernels() {
  KernelSource source;
  source.main = {"runner_foreign_kernels.cu", kForeignKernels};
  source.search = include_search({});  // the toolkit's headers, for cuda_fp16.h
  return source;
}

CompiledKernel compile_foreign(const std::string& entry, int arch) {
  return compile(foreign_kernels(), entry, arch, {});
}

BufferPlan buffer(std::string name, ElementType type, std::uint64_t count, BufferInit kind, bool output = false) {
  BufferPlan b;
  b.name = std::move(name);
  b.type = type;
  b.count = count;
  b.init.kind = kind;
  b.output = output;
  return b;
}
ArgPlan buffer_arg(int index) {
  ArgPlan a;
  a.is_buffer = true;
  a.buffer = index;
  return a;
}
ArgPlan scalar(ElementType type, double value) {
  ArgPlan a;
  a.type = type;
  a.float_value = value;
  a.int_value = static_cast<std::int64_t>(value);
  return a;
}
CheckPlan check(int buffer, std::uint64_t count, OutputCheck::Compare compare = OutputCheck::Compare::elements) {
  CheckPlan c;
  c.buffer = buffer;
  c.count = count;
  c.compare = compare;
  return c;
}

// A request for `kernel` (named `name` in messages) over n elements, one thread each in blocks
// of `block`; problem size N = n.
TrialRequest one_dimensional_request(const CompiledKernel& kernel, const std::string& name, int n, int block) {
  TrialRequest r;
  r.kernel = name;
  r.config_text = "test";
  r.problem_key = name + "|N=" + std::to_string(n);
  r.sizes = {{"N", n}};
  r.cubin = kernel.cubin;
  r.function = kernel.lowered_name;
  r.grid[0] = (n + block - 1) / block;
  r.block[0] = block;
  return r;
}

// A FIR filter of n floats with its taps in __constant__ memory, checked against fir_naive.
TrialRequest fir_request(const CompiledKernel& kernel, int n, bool reference) {
  TrialRequest r = one_dimensional_request(kernel, "fir", n, 256);
  r.id = 1;
  r.config_text = reference ? "reference" : "candidate";
  if (reference) r.grid[0] = r.block[0] = 1;
  BufferPlan in = buffer("in", ElementType::f32, static_cast<std::uint64_t>(n), BufferInit::normal);
  in.init.a = 1;
  in.init.b = 0.25;
  r.buffers = {in, buffer("out", ElementType::f32, static_cast<std::uint64_t>(n), BufferInit::none, true)};
  GlobalPlan taps;
  taps.name = "filters::taps";
  taps.symbol = "_ZN7filters4tapsE";
  taps.type = ElementType::f32;
  taps.count = 4;
  taps.init.kind = BufferInit::uniform;
  taps.init.a = -1;
  taps.init.b = 1;
  GlobalPlan counter;
  counter.name = "launches";
  counter.symbol = "launches";
  counter.type = ElementType::u32;
  counter.count = 1;
  r.globals = {taps, counter};
  r.args = {buffer_arg(0), buffer_arg(1), scalar(ElementType::i32, n)};
  r.verify.mode = VerifySettings::Mode::reference_run;
  r.verify.checks = {check(1, static_cast<std::uint64_t>(n))};
  r.verify.checks[0].rtol = 1e-6;
  r.is_reference = reference;
  r.seed = 3;
  return r;
}

TEST_F(Runner, ModuleGlobalsAreFilledAndAReferenceKernelChecksTheCandidate) {
  const CompiledKernel naive = compile_foreign("fir_naive", arch());
  const CompiledKernel fir = compile_foreign("fir", arch());
  EXPECT_NE(fir.lowered_name, "fir") << "C++ linkage: the entry is found by its name expression";
  const TrialResult ref = runner().run_trial(fir_request(naive, 5000, true));
  ASSERT_EQ(ref.status, TrialStatus::ok) << ref.detail;
  EXPECT_GT(ref.setup_ms, 0);
  const TrialResult good = runner().run_trial(fir_request(fir, 5000, false));
  EXPECT_EQ(good.status, TrialStatus::ok) << good.detail;
  EXPECT_EQ(good.setup_ms, 0) << "the inputs and the reference of the problem are reused";
  EXPECT_LE(good.max_error, 1e-5);  // fir and fir_naive sum in the same order: often exactly 0
  // (That the taps reach the module non-zero is shown by the corpus: conv2d_constant's planted
  // bug, a flipped filter, is wrong_result only because its __constant__ filter is filled.)

  // Data smaller than the symbol fills its start (Kernel Tuner's cmem_args: a 15x15 filter in a
  // 33x33 array); the reference and the candidate see the same two taps and zeros after them.
  TrialRequest two_taps = fir_request(naive, 5000, true);
  two_taps.globals[0].count = 2;
  two_taps.problem_key += "|two taps";
  const TrialResult two_ref = runner().run_trial(two_taps);
  ASSERT_EQ(two_ref.status, TrialStatus::ok) << two_ref.detail;
  TrialRequest two_candidate = fir_request(fir, 5000, false);
  two_candidate.globals[0].count = 2;
  two_candidate.problem_key = two_taps.problem_key;
  const TrialResult two = runner().run_trial(two_candidate);
  EXPECT_EQ(two.status, TrialStatus::ok) << two.detail;
  EXPECT_FALSE(two.shared_failure);

  // The candidate's module lacks the symbol, or holds less than the data: a failure every config
  // shares (the sweep stops on it), launch_failed.
  TrialRequest missing = fir_request(fir, 5000, false);
  missing.globals[0].symbol = "_ZN7filters5gainsE";
  missing.globals[0].name = "filters::gains";
  missing.verify.mode = VerifySettings::Mode::none;  // another problem: no reference for it
  const TrialResult m = runner().run_trial(missing);
  EXPECT_EQ(m.status, TrialStatus::launch_failed);
  EXPECT_TRUE(m.shared_failure);
  EXPECT_NE(m.detail.find("module global 'filters::gains' (symbol _ZN7filters5gainsE) is not in the module"),
            std::string::npos)
      << m.detail;
  TrialRequest wrong_size = fir_request(fir, 5000, false);
  wrong_size.globals[0].count = 5;
  wrong_size.problem_key += "|other";  // a new problem (the reference runs first)
  wrong_size.is_reference = true;
  const TrialResult w = runner().run_trial(wrong_size);
  EXPECT_EQ(w.status, TrialStatus::launch_failed);
  EXPECT_TRUE(w.shared_failure);
  EXPECT_NE(w.detail.find("'filters::taps' is 16 bytes in the module"), std::string::npos) << w.detail;
  EXPECT_NE(w.detail.find("smaller than the 5 x float = 20 bytes"), std::string::npos) << w.detail;
  EXPECT_FALSE(runner().context_lost());
}

TrialRequest partial_sums_request(const CompiledKernel& kernel, int n, int drop_last) {
  TrialRequest r = one_dimensional_request(kernel, "partial_sums", n, 256);
  r.id = 2;
  r.config_text = "drop_last=" + std::to_string(drop_last);
  BufferPlan in = buffer("in", ElementType::f32, static_cast<std::uint64_t>(n), BufferInit::uniform);
  in.init.a = 0;
  in.init.b = 1;
  const auto blocks = static_cast<std::uint64_t>(r.grid[0]);
  r.buffers = {in, buffer("out", ElementType::f32, blocks, BufferInit::none, true)};
  r.args = {buffer_arg(0), buffer_arg(1), scalar(ElementType::i32, n), scalar(ElementType::i32, drop_last)};
  r.verify.mode = VerifySettings::Mode::cpu;
  r.verify.cpu_reference = "reduction";  // out[0] = the sum; a partial-sum kernel is checked by its sum
  r.verify.checks = {check(1, blocks, OutputCheck::Compare::sum)};
  r.verify.checks[0].rtol = 1e-5;
  return r;
}

TEST_F(Runner, PartialSumsAreCheckedByTheirSum) {
  const CompiledKernel kernel = compile_foreign("partial_sums", arch());
  const TrialResult good = runner().run_trial(partial_sums_request(kernel, 100000, 0));
  ASSERT_EQ(good.status, TrialStatus::ok) << good.detail;
  const TrialResult bad = runner().run_trial(partial_sums_request(kernel, 100000, 1));
  ASSERT_EQ(bad.status, TrialStatus::wrong_result);
  EXPECT_EQ(bad.detail.rfind("sum of out[0, 391): got ", 0), 0u) << bad.detail;
  EXPECT_NE(bad.detail.find("nan, want "), std::string::npos) << bad.detail;  // nan or -nan: the sign of a NaN varies
  std::printf("%s\n", bad.detail.c_str());
  // Elements would not do: the partials are not the reference's layout.
  TrialRequest elements = partial_sums_request(kernel, 100000, 0);
  elements.verify.checks[0].compare = OutputCheck::Compare::elements;
  EXPECT_EQ(runner().run_trial(elements).status, TrialStatus::wrong_result);
}

TEST_F(Runner, InOutBuffersAreRestoredBeforeEveryRun) {
  const CompiledKernel kernel = compile_foreign("scale_in_place", arch());
  constexpr int n = 4096;
  TrialRequest r = one_dimensional_request(kernel, "scale_in_place", n, 256);
  BufferPlan source = buffer("source", ElementType::f32, n, BufferInit::iota);
  BufferPlan x = buffer("x", ElementType::f32, n, BufferInit::copy, true);
  x.init.source = 0;
  BufferPlan y = buffer("y", ElementType::f16, n, BufferInit::none, true);
  r.buffers = {source, x, y};
  r.args = {buffer_arg(1), scalar(ElementType::f32, 0.5), buffer_arg(2), scalar(ElementType::f16, 1.5),
            scalar(ElementType::i32, n)};
  // Expected files: x = iota / 2, y = 3 (half).
  testing::TempDir dir;
  std::vector<float> half_iota(n);
  std::vector<std::uint16_t> threes(n, float_to_half_bits(3.0f));
  for (int i = 0; i < n; ++i) half_iota[i] = 0.5f * static_cast<float>(i);
  write_npy(dir.path() / "x.npy", ElementType::f32, std::as_bytes(std::span(half_iota)));
  write_npy(dir.path() / "y.npy", ElementType::f16, std::as_bytes(std::span(threes)));
  r.verify.mode = VerifySettings::Mode::files;
  r.verify.checks = {check(1, n), check(2, n)};
  r.verify.checks[0].expected_file = (dir.path() / "x.npy").string();
  r.verify.checks[1].expected_file = (dir.path() / "y.npy").string();
  // The second trial sees x restored: without the restore, the first one's timed runs would
  // have halved it again and again.
  for (int trial = 0; trial < 2; ++trial) {
    const TrialResult result = runner().run_trial(r);
    ASSERT_EQ(result.status, TrialStatus::ok) << result.detail;
    EXPECT_GE(result.samples, 10);
  }
}

TEST_F(Runner, ScalarsOfEveryTypeReachTheKernelAndOutputsOfEveryTypeAreChecked) {
  const CompiledKernel kernel = compile_foreign("every_scalar", arch());
  constexpr int n = 1000;
  TrialRequest r = one_dimensional_request(kernel, "every_scalar", n, 128);
  const ElementType outputs[] = {ElementType::i8,  ElementType::i16, ElementType::u16,
                                 ElementType::u64, ElementType::u8,  ElementType::f16};
  for (const ElementType t : outputs) r.buffers.push_back(buffer(element_type_name(t), t, n, BufferInit::none, true));
  const std::int64_t d = std::int64_t{1} << 62;
  r.args = {scalar(ElementType::i8, -128), scalar(ElementType::i16, -32768), scalar(ElementType::u16, 65535),
            scalar(ElementType::u64, 0),   scalar(ElementType::u8, 255),     scalar(ElementType::f16, 0.1)};
  r.args[3].int_value = d;  // beyond a double's 53 bits: the slot takes the integer
  for (int i = 0; i < 6; ++i) r.args.push_back(buffer_arg(i));
  r.args.push_back(scalar(ElementType::i32, n));
  // Expected files, one per output.
  testing::TempDir dir;
  const auto expect = [&](int index, const auto& values) {
    const auto path = dir.path() / (std::string(element_type_name(outputs[index])) + ".npy");
    write_npy(path, outputs[index], std::as_bytes(std::span(values)));
    r.verify.checks.push_back(check(index, n));
    r.verify.checks.back().expected_file = path.string();
  };
  std::vector<std::uint64_t> ramp(n);
  for (int i = 0; i < n; ++i) ramp[i] = static_cast<std::uint64_t>(d) + static_cast<std::uint64_t>(i);
  expect(0, std::vector<std::int8_t>(n, -128));
  expect(1, std::vector<std::int16_t>(n, -32768));
  expect(2, std::vector<std::uint16_t>(n, 65535));
  expect(3, ramp);
  expect(4, std::vector<std::uint8_t>(n, 255));
  expect(5, std::vector<std::uint16_t>(n, float_to_half_bits(0.1f)));  // the half the GPU sees
  r.verify.mode = VerifySettings::Mode::files;
  const TrialResult good = runner().run_trial(r);
  ASSERT_EQ(good.status, TrialStatus::ok) << good.detail;
  EXPECT_EQ(good.max_error, 0);

  // A wrong element of each new type is found, and the message prints it as a number.
  const auto wrong = [&](int index, const auto& values, const std::string& detail) {
    TrialRequest bad = r;
    const auto path = dir.path() / "wrong.npy";
    write_npy(path, outputs[index], std::as_bytes(std::span(values)));
    bad.verify.checks[static_cast<std::size_t>(index)].expected_file = path.string();
    const TrialResult result = runner().run_trial(bad);
    ASSERT_EQ(result.status, TrialStatus::wrong_result) << result.detail;
    EXPECT_EQ(result.first_bad_index, 7);
    EXPECT_EQ(result.detail.rfind(detail, 0), 0u) << result.detail;
  };
  std::vector<std::int8_t> a(n, -128);
  a[7] = 127;
  wrong(0, a, "int8[7]: got -128, want 127");
  std::vector<std::int16_t> b(n, -32768);
  b[7] = -1;
  wrong(1, b, "int16[7]: got -32768, want -1");
  std::vector<std::uint16_t> c(n, 65535);
  c[7] = 0;
  wrong(2, c, "uint16[7]: got 65535, want 0");
  std::vector<std::uint64_t> e = ramp;
  e[7] = ~std::uint64_t{0};
  wrong(3, e, "uint64[7]: got 4611686018427387911, want 18446744073709551615");
}

TEST_F(Runner, ALibraryReferenceSeesWhatTheGpuGenerated) {
  const CompiledKernel kernel = compile_foreign("saxpy", arch());
  constexpr int n = 10000;
  TrialRequest r = one_dimensional_request(kernel, "saxpy", n, 128);
  BufferPlan y = buffer("y", ElementType::f32, n, BufferInit::normal, true);
  y.init.b = 1;
  r.buffers = {buffer("x", ElementType::f32, n, BufferInit::random), y};
  r.args = {buffer_arg(0), buffer_arg(1), scalar(ElementType::i32, n)};
  r.verify.mode = VerifySettings::Mode::library;
  r.verify.library = TILETUNE_TEST_REFERENCE_LIBRARY;
  r.verify.function = "saxpy_reference";
  r.verify.checks = {check(1, n)};
  const TrialResult good = runner().run_trial(r);
  EXPECT_EQ(good.status, TrialStatus::ok) << good.detail;
  EXPECT_EQ(good.max_error, 0);  // 0.5 x + y in float, the same on both sides
  TrialRequest other = r;
  other.verify.function = "failing_reference";
  const TrialResult failed = runner().run_trial(other);
  EXPECT_EQ(failed.status, TrialStatus::runtime_fault);
  EXPECT_TRUE(failed.shared_failure) << "no config of the problem can pass: " << failed.detail;
  EXPECT_NE(failed.detail.find("the reference of"), std::string::npos) << failed.detail;
}

TEST_F(Runner, AnElementsCheckCoversItsCount) {
  const CompiledKernel kernel = compile_foreign("first_n", arch());
  TrialRequest r = partial_sums_request(kernel, 1000, 0);
  r.kernel = "first_n";
  r.problem_key = "first_n";
  r.grid[0] = 8;
  r.block[0] = 128;
  r.buffers[1].count = 1024;
  r.args = {buffer_arg(0), buffer_arg(1), scalar(ElementType::i32, 900), scalar(ElementType::i32, 1024)};
  r.verify.mode = VerifySettings::Mode::cpu;
  r.verify.cpu_reference = "vector_add";  // c = a + b: "a" and "b" are both the only input
  r.verify.checks = {check(1, 900)};
  r.sizes = {{"N", 900}};
  EXPECT_EQ(runner().run_trial(r).status, TrialStatus::ok);
  r.verify.checks[0].count = 901;
  const TrialResult over = runner().run_trial(r);
  EXPECT_EQ(over.status, TrialStatus::wrong_result) << over.detail;
  EXPECT_EQ(over.first_bad_index, 900);
}

// --- the host check (verify.command) and the samples ----------------------------------------

// The samples of a trial come back in the order taken, the statistics are theirs.
TEST_F(Runner, TheSamplesComeBackWithTheirStatistics) {
  const CompiledKernel kernel = shipped_transpose(arch(), 32, 8, 0);
  const TrialResult r = runner().run_trial(transpose_request(kernel, 2048, 32, 8, 32));
  ASSERT_EQ(r.status, TrialStatus::ok) << r.detail;
  ASSERT_GE(r.samples, 10);
  ASSERT_EQ(r.times_ms.size(), std::min<std::size_t>(static_cast<std::size_t>(r.samples), trial_times_max_samples));
  if (static_cast<std::size_t>(r.samples) <= trial_times_max_samples) {  // all of them
    EXPECT_EQ(*std::min_element(r.times_ms.begin(), r.times_ms.end()), r.min_ms);
    std::vector<double> sorted = r.times_ms;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    EXPECT_EQ(n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]), r.median_ms);
  }
  EXPECT_FALSE(r.host_check_failed);
}

// A check in Python that reads the .npy files of the request: out must be in transposed (on a
// grid of elements); it logs what it saw to seen.txt in its directory, the space's.
constexpr const char* kTransposeCheck = R"(import json, struct, sys
def floats(path, count):
    data = open(path, "rb").read()
    header = struct.unpack("<H", data[8:10])[0]
    return struct.unpack("<%df" % count, data[10 + header:10 + header + 4 * count])
for line in sys.stdin:
    r = json.loads(line)
    n = r["problem"]["N"]
    a = floats(r["buffers"]["in"]["path"], r["buffers"]["in"]["count"])
    b = floats(r["buffers"]["out"]["path"], r["buffers"]["out"]["count"])
    bad = sum(1 for y in range(0, n, 7) for x in range(0, n, 13) if b[x * n + y] != a[y * n + x])
    with open("seen.txt", "a") as log:
        log.write("%s TILE=%s %s %d\n" % (r["kernel"], r["config"]["TILE"], ",".join(r["buffers"]), bad))
    print(json.dumps({"ok": bad == 0, "detail": "%d elements not transposed" % bad}))
)";

HostCommand python_check(const testing::TempDir& dir, const std::string& name, const std::string& text) {
  (void)dir.write(name, text);
  return HostCommand{{"env", "python3", name}, "/usr/bin/env", dir.path().string(), {}};
}

TEST_F(Runner, AHostCheckSeesEveryBufferOfAVerifiedTrial) {
  testing::TempDir dir;
  const CompiledKernel kernel = shipped_transpose(arch(), 32, 8, 1);
  TrialRequest r = transpose_request(kernel, 1000, 32, 8, 32);
  r.params = {{"TILE", AxisKind::integer, "32"}};
  r.verify.command = python_check(dir, "check.py", kTransposeCheck);
  const TrialResult ok = runner().run_trial(r);
  ASSERT_EQ(ok.status, TrialStatus::ok) << ok.detail;
  EXPECT_GE(ok.samples, 10) << "timed after the check";
  EXPECT_GT(ok.verify_ms, 0);
  EXPECT_EQ(testing::read_file(dir.path() / "seen.txt"), "transpose TILE=32 in,out 0\n");

  // A candidate the GPU comparison already failed never reaches the check.
  const CompiledKernel wrong = compile(test_kernels(), "copy_not_transpose", arch());
  TrialRequest w = test_kernel_request(wrong, 1000);
  w.params = r.params;
  w.verify.command = r.verify.command;
  const TrialResult bad = runner().run_trial(w);
  EXPECT_EQ(bad.status, TrialStatus::wrong_result);
  EXPECT_EQ(bad.detail.rfind("out[1]: got ", 0), 0u) << bad.detail;
  EXPECT_EQ(testing::read_file(dir.path() / "seen.txt"), "transpose TILE=32 in,out 0\n");

  // Nor does a reference run.
  TrialRequest reference = r;
  reference.is_reference = true;
  reference.verify.mode = VerifySettings::Mode::reference_run;
  reference.problem_key = "N=1000 reference";
  EXPECT_EQ(runner().run_trial(reference).status, TrialStatus::ok);
  EXPECT_EQ(testing::read_file(dir.path() / "seen.txt"), "transpose TILE=32 in,out 0\n");
}

// command_buffers: only the buffers the check reads are downloaded and written for it.
TEST_F(Runner, AHostCheckSeesOnlyTheBuffersItReads) {
  testing::TempDir dir;
  const CompiledKernel kernel = shipped_transpose(arch(), 32, 8, 1);
  TrialRequest r = transpose_request(kernel, 1000, 32, 8, 32);
  r.params = {{"TILE", AxisKind::integer, "32"}};
  r.verify.command = python_check(dir, "names.py", R"(import json, os, sys
for line in sys.stdin:
    r = json.loads(line)
    with open("seen.txt", "a") as log:
        log.write(",".join("%s:%d" % (k, os.path.getsize(b["path"])) for k, b in r["buffers"].items()) + "\n")
    print(json.dumps({"ok": True}))
)");
  r.verify.command.buffers = {"out"};
  const TrialResult ok = runner().run_trial(r);
  ASSERT_EQ(ok.status, TrialStatus::ok) << ok.detail;
  const std::string seen = testing::read_file(dir.path() / "seen.txt");
  EXPECT_EQ(seen.rfind("out:", 0), 0u) << seen;
  EXPECT_EQ(seen.find("in:"), std::string::npos) << "the input stays on the GPU: " << seen;
}

TEST_F(Runner, ACandidateTheHostCheckRejectsIsAWrongResultAndNotTimed) {
  testing::TempDir dir;
  const CompiledKernel kernel = shipped_transpose(arch(), 32, 8, 1);
  TrialRequest r = transpose_request(kernel, 1000, 32, 8, 32);
  r.params = {{"TILE", AxisKind::integer, "32"}};
  r.verify.command = python_check(dir, "reject.py", R"(import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print(json.dumps({"ok": False, "detail": "TILE=%s is not allowed here" % r["config"]["TILE"]}))
)");
  const TrialResult t = runner().run_trial(r);
  EXPECT_EQ(t.status, TrialStatus::wrong_result);
  EXPECT_EQ(t.detail, "host check: TILE=32 is not allowed here");
  EXPECT_EQ(t.samples, 0);
  EXPECT_TRUE(t.times_ms.empty());
  EXPECT_EQ(t.measure_ms, 0);
  EXPECT_GT(t.verify_ms, 0) << "the check's time is verification time";
  EXPECT_FALSE(t.host_check_failed);
}

// A check that exits is the check's failure, not the candidate's; the worker goes on.
TEST_F(Runner, AHostCheckThatExitsFailsTheCheckNotTheCandidate) {
  const CompiledKernel kernel = shipped_transpose(arch(), 32, 8, 1);
  TrialRequest r = transpose_request(kernel, 1000, 32, 8, 32);
  r.verify.command = HostCommand{{"sh", "-c", "read -r line; exit 5"}, "/bin/sh", "/", {}};
  const TrialResult t = runner().run_trial(r);
  EXPECT_EQ(t.status, TrialStatus::runtime_fault);
  EXPECT_TRUE(t.host_check_failed);
  EXPECT_TRUE(t.shared_failure) << "the sweep stops on it";
  EXPECT_EQ(t.detail, "host check [sh, -c, read -r line; exit 5] exited with status 5 before answering");
  EXPECT_FALSE(runner().context_lost());
  r.verify.command = {};
  EXPECT_EQ(runner().run_trial(r).status, TrialStatus::ok);
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
