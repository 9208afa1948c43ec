// Compiles in worker processes (CPU: NVRTC needs no GPU): the compile messages round-trip every
// field and refuse malformed ones; a compile in a worker (fake_worker runs the real serve_worker
// loop, which compiles whatever its trial handler does) gives the same cubin, resources and
// diagnostics as one in this process; a worker that dies or hangs is a transient failure naming
// it, within the deadline, and is never cached; a pool with one worker per thread matches serial
// compiles.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "worker/worker_kernels.hpp"
#include "test_support.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/error.hpp"
#include "tiletune/worker.hpp"

namespace tiletune {
namespace {

using tiletune::testing::TempDir;
using Clock = std::chrono::steady_clock;

const char* const kFakeWorker = TILETUNE_FAKE_WORKER;

std::vector<std::string> fake_worker_argv() { return {kFakeWorker, "ok"}; }

KernelSource transpose_source() {
  return load_kernel_source(tiletune::testing::source_dir() / "kernels" / "transpose.cu");
}

CompileRequest transpose_request(const KernelSource& source, int tile, int pad) {
  return {&source,
          {"-DTILE=" + std::to_string(tile), "-DBLOCK_ROWS=8", "-DPAD=" + std::to_string(pad), "-DVEC=1"},
          "sm_90",
          "transpose"};
}

// A source with a header by name, a dependency, include directories and a pre-include: every
// field of the message is set.
KernelSource full_source() {
  KernelSource k;
  k.main = {"kernel.cu", "#include \"tile.cuh\"\nextern \"C\" __global__ void k(float* x) { x[0] = TILE_VALUE; }\n"};
  k.headers = {{"tile.cuh", "#define TILE_VALUE 3.0f\n"}, {"empty.cuh", ""}};
  k.dependencies = {{"include[0]/lib/a.cuh", "/opt/lib/a.cuh", "0123456789abcdef"}};
  k.search.include_dirs = {"/opt/lib", "/home/u/inc"};
  k.search.pre_includes = {"pre.cuh"};
  k.search.toolkit_dirs = {"/usr/local/cuda/include"};
  k.hash = "feedface";
  return k;
}

TEST(CompileMessages, ARequestRoundTripsEveryField) {
  const KernelSource source = full_source();
  const CompileRequest request{&source, {"-DTILE=32", "--use_fast_math"}, "sm_90a", "k<float>"};
  const WorkerMessage m = decode_message(encode_compile_request(request));
  ASSERT_EQ(m.type, WorkerMessage::Type::compile);
  const CompileJob& job = m.compile;
  EXPECT_EQ(job.source.main.name, source.main.name);
  EXPECT_EQ(job.source.main.text, source.main.text);
  ASSERT_EQ(job.source.headers.size(), 2u);
  EXPECT_EQ(job.source.headers[0].name, "tile.cuh");
  EXPECT_EQ(job.source.headers[0].text, source.headers[0].text);
  EXPECT_EQ(job.source.headers[1].text, "");
  ASSERT_EQ(job.source.dependencies.size(), 1u);
  EXPECT_EQ(job.source.dependencies[0].name, source.dependencies[0].name);
  EXPECT_EQ(job.source.dependencies[0].path, source.dependencies[0].path);
  EXPECT_EQ(job.source.dependencies[0].hash, source.dependencies[0].hash);
  EXPECT_EQ(job.source.search, source.search);
  EXPECT_EQ(job.source.hash, source.hash);
  EXPECT_EQ(job.options, request.options);
  EXPECT_EQ(job.arch, "sm_90a");
  EXPECT_EQ(job.entry, "k<float>");
  const CompileRequest back = job.request();
  EXPECT_EQ(back.source, &job.source);
  EXPECT_EQ(nvrtc_options(back), nvrtc_options(request));
}

TEST(CompileMessages, AKernelAndAFailureRoundTrip) {
  CompileResult ok;
  ok.kernel = CompiledKernel{};
  ok.kernel->cubin = std::string(
      "\x7f"
      "ELF\0\x01\xff",
      7);
  ok.kernel->lowered_name = "_Z1kIfEvPf";
  ok.kernel->resources = {40, 8448, 4, 8, 16, 1, 368};
  ok.kernel->log = "ptxas info: ...";
  ok.kernel->warnings = {"warning #177-D: variable \"x\" was declared but never referenced"};
  ok.kernel->extra_options = {"--ptxas-options=--entry=k"};
  ok.log = "full log";
  ok.warnings = ok.kernel->warnings;
  ok.options = {"--gpu-architecture=sm_90", "-DTILE=32"};
  ok.seconds = 0.0625;
  const CompileResult a = decode_message(encode_compile_result(ok)).compiled;
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.kernel->cubin, ok.kernel->cubin);
  EXPECT_EQ(a.kernel->lowered_name, ok.kernel->lowered_name);
  EXPECT_EQ(a.kernel->resources, ok.kernel->resources);
  EXPECT_EQ(a.kernel->log, ok.kernel->log);
  EXPECT_EQ(a.kernel->warnings, ok.kernel->warnings);
  EXPECT_EQ(a.kernel->extra_options, ok.kernel->extra_options);
  EXPECT_EQ(a.log, ok.log);
  EXPECT_EQ(a.warnings, ok.warnings);
  EXPECT_EQ(a.options, ok.options);
  EXPECT_EQ(a.seconds, ok.seconds);
  EXPECT_FALSE(a.transient);

  CompileResult failed;
  failed.error = "kernel.cu(3): error: identifier \"y\" is undefined";
  failed.log = "kernel.cu(3): error: ...";
  failed.transient = true;
  const CompileResult b = decode_message(encode_compile_result(failed)).compiled;
  EXPECT_FALSE(b.ok());
  EXPECT_EQ(b.error, failed.error);
  EXPECT_EQ(b.log, failed.log);
  EXPECT_TRUE(b.transient);
}

TEST(CompileMessages, MalformedOnesAreRefused) {
  // Neither a kernel nor an error says nothing.
  EXPECT_THROW((void)decode_message(encode_compile_result(CompileResult{})), Error);
  // A request without a source cannot be encoded.
  EXPECT_THROW((void)encode_compile_request(CompileRequest{}), Error);
  // A trial message is not a compile: decode_result refuses a compile_result.
  CompileResult failed;
  failed.error = "x";
  EXPECT_THROW((void)decode_result(encode_compile_result(failed)), Error);
}

TEST(WorkerCompile, AWorkerCompilesWhatThisProcessCompiles) {
  const KernelSource source = transpose_source();
  WorkerProcess worker(fake_worker_argv());
  for (int pad : {0, 1}) {
    const CompileRequest request = transpose_request(source, 32, pad);
    const CompileResult remote = worker.compile(request, 120);
    const CompileResult local = compile_nvrtc(request);
    ASSERT_TRUE(remote.ok()) << remote.error;
    ASSERT_TRUE(local.ok()) << local.error;
    EXPECT_EQ(remote.kernel->cubin, local.kernel->cubin) << "PAD=" << pad;
    EXPECT_EQ(remote.kernel->lowered_name, local.kernel->lowered_name);
    EXPECT_EQ(remote.kernel->resources, local.kernel->resources);
    EXPECT_EQ(remote.kernel->resources.static_shared_bytes, 32 * (32 + pad) * 4);
    EXPECT_EQ(remote.options, local.options);
    EXPECT_GT(remote.seconds, 0);
  }
  EXPECT_EQ(worker.starts(), 1) << "one worker serves every compile";
}

TEST(WorkerCompile, ABadKernelFailsInTheWorkerAsItDoesHere) {
  KernelSource source;
  source.main = {"bad.cu", "extern \"C\" __global__ void bad(float* x) { x[0] = undefined_name; }\n"};
  const CompileRequest request{&source, {}, "sm_90", "bad"};
  WorkerProcess worker(fake_worker_argv());
  const CompileResult remote = worker.compile(request, 120);
  const CompileResult local = compile_nvrtc(request);
  ASSERT_FALSE(remote.ok());
  EXPECT_EQ(remote.error, local.error);
  EXPECT_NE(remote.error.find("undefined_name"), std::string::npos) << remote.error;
  EXPECT_FALSE(remote.transient) << "a bad kernel is the kernel's failure: cached";
}

TEST(WorkerCompile, AWorkerThatDiesIsATransientFailureNamingIt) {
  const KernelSource source = transpose_source();
  WorkerProcess worker({"/bin/true"});
  const CompileResult r = worker.compile(transpose_request(source, 32, 1), 30);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.transient);
  EXPECT_NE(r.error.find("compile worker: worker exited with status 0 before answering"), std::string::npos) << r.error;
  EXPECT_FALSE(r.options.empty()) << "the options that were asked for are kept";
}

TEST(WorkerCompile, AHangIsKilledAtTheDeadline) {
  const KernelSource source = transpose_source();
  WorkerProcess worker({"/bin/sleep", "60"});
  const auto start = Clock::now();
  const CompileResult r = worker.compile(transpose_request(source, 32, 1), 1.0);
  const double waited = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.transient);
  EXPECT_NE(r.error.find("no answer within 1.0 s"), std::string::npos) << r.error;
  EXPECT_LT(waited, 10.0);
  EXPECT_EQ(worker.pid(), 0) << "the hung worker is gone";
}

TEST(WorkerCompile, AMissingProgramIsAFailedCompileNotAnException) {
  const KernelSource source = transpose_source();
  const auto compiler = make_worker_compiler({"/nonexistent/tiletune", "__worker", "--compile-only"}, 30);
  const CompileResult r = compiler->compile(transpose_request(source, 16, 0));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.transient);
  EXPECT_NE(r.error.find("/nonexistent/tiletune"), std::string::npos) << r.error;
}

TEST(WorkerCompile, APoolOfWorkersMatchesSerialCompilesAndCachesOnlyTheKernelsFailures) {
  const KernelSource source = transpose_source();
  std::vector<CompileRequest> requests;
  for (int tile : {16, 32})
    for (int pad : {0, 1}) requests.push_back(transpose_request(source, tile, pad));
  TempDir dir;
  const CubinCache cache(dir.path() / "cubin");
  {
    CompilePool pool(2, cache, [] { return make_worker_compiler(fake_worker_argv()); });
    std::vector<std::future<CompileResult>> futures;
    for (const CompileRequest& r : requests) futures.push_back(pool.submit(r));
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const CompileResult pooled = futures[i].get();
      const CompileResult serial = compile_nvrtc(requests[i]);
      ASSERT_TRUE(pooled.ok()) << pooled.error;
      EXPECT_FALSE(pooled.cache_hit);
      EXPECT_EQ(pooled.kernel->cubin, serial.kernel->cubin) << i;
    }
  }
  // Workers that cannot answer leave nothing in the cache: the next pool compiles again.
  KernelSource other = source;
  other.hash += "-other";  // another key, nothing cached for it
  const CompileRequest fresh = transpose_request(other, 32, 0);
  {
    CompilePool broken(1, cache, [] { return make_worker_compiler({"/bin/true"}); });
    const CompileResult r = broken.submit(fresh).get();
    EXPECT_FALSE(r.ok());
    EXPECT_TRUE(r.transient);
  }
  CompilePool good(1, cache, [] { return make_worker_compiler(fake_worker_argv()); });
  const CompileResult r = good.submit(fresh).get();
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_FALSE(r.cache_hit) << "the worker's failure was not cached";
  // The first pool's results were: a cache hit without any worker.
  CompilePool cached(1, cache, [] { return make_worker_compiler({"/bin/true"}); });
  EXPECT_TRUE(cached.submit(requests[0]).get().cache_hit);
}

TEST(WorkerCompile, AFactoryThatThrowsFailsItsTaskThroughTheFuture) {
  const KernelSource source = transpose_source();
  CompilePool pool(1, CubinCache{std::filesystem::path{}},
                   []() -> std::unique_ptr<Compiler> { throw Error("no compiler today"); });
  std::future<CompileResult> f = pool.submit(transpose_request(source, 16, 1));
  EXPECT_THROW((void)f.get(), Error);
}

TEST(WorkerCompile, TheDefaultArgvIsThisProgramsCompileOnlyWorker) {
  const std::vector<std::string> argv = default_compile_worker_argv();
  ASSERT_EQ(argv.size(), 3u);
  EXPECT_EQ(argv[1], "__worker");
  EXPECT_EQ(argv[2], "--compile-only");
}

// The GPU worker's own kernels compile without a device, and through the cubin cache: a second
// worker start finds them there (one entry, the same cubin), so only the first start pays NVRTC.
TEST(WorkerKernelsCompile, TheWorkersKernelsAreCachedAcrossStarts) {
  if (!nvrtc_has_no_cache_option())
    GTEST_SKIP() << "NVRTC " << nvrtc_version() << " compiles a fresh source each start";
  TempDir dir;
  const CubinCache cache(dir.path() / "cubin");
  // One worker start: its kernels, the seconds they took, the files in the cache after.
  struct Start {
    CompiledKernel kernels;
    double seconds = 0;
    std::size_t entries = 0;
  };
  const auto start_worker = [&] {
    Start s;
    const auto t0 = Clock::now();
    s.kernels = compile_worker_kernels(90, 0, &cache);
    s.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path() / "cubin"))
      s.entries += e.is_regular_file() ? 1 : 0;
    return s;
  };
  const Start first_start = start_worker();
  EXPECT_GE(first_start.entries, 1u) << "the compile was stored";
  const Start second_start = start_worker();
  EXPECT_EQ(second_start.entries, first_start.entries) << "the same key: nothing new stored";
  const CompiledKernel& first = first_start.kernels;
  const CompiledKernel& second = second_start.kernels;
  const double first_s = first_start.seconds, second_s = second_start.seconds;
  EXPECT_EQ(second.cubin, first.cubin);
  EXPECT_FALSE(first.cubin.empty());
  std::printf("[ info ] worker kernels for sm_90: compiled in %.0f ms, from the cache in %.1f ms\n", first_s * 1e3,
              second_s * 1e3);
}

}  // namespace
}  // namespace tiletune
