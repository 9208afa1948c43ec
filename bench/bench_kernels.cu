// bench_kernels: the kernel families of issue 4 against the hardware and the libraries, in one
// call on one GPU. It measures
//   - the bandwidth ceiling: a device-to-device copy of 1 GiB (cudaMemcpyAsync), bytes read
//     plus bytes written over the median time;
//   - the library baselines: CUB DeviceReduce::Sum on 2^28 floats, CUB DeviceHistogram::
//     HistogramEven (256 bins) on 2^28 bytes, cuBLAS SGEMM with FP32 math (no TF32; checked)
//     at 4096^3 and 8192^3;
//   - each family's tuned best (from the tiletune cache, --db, or --tuned on the command line)
//     and its naive textbook config (the table below), compiled with NVRTC and run, verified
//     and timed by tiletune's GpuRunner exactly as a sweep does it,
// and prints a markdown table of ratios (% of the copy, x the library, tuned over naive, the
// issue's targets met or missed); --out writes the same table to a file with the date, the
// GPU, the driver and the command line.
//
// All timings are cold (1x L2 flushed before each sample), medians of more than --min-samples
// samples, sampling until tiletune::StdrelCriterion stops (the relative standard deviation under
// 0.5 % or a noise plateau: nvbench's stdrel rule, see tiletune/timing.hpp) or --max-time is up:
// the rule of tiletune's runner, applied to the library calls and the copy ceiling too. (The
// runner also discards samples taken while the GPU throttles; this timer of the runtime-API
// baselines does not read the clock.)
//
// The runtime API (CUB, cuBLAS) and GpuRunner (driver API) share the device's primary context.
// The library baselines run first and free their memory before the families run, so that a
// family kernel that faults (which loses the context) cannot take the baselines with it.
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_reduce.cuh>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tiletune/cache_db.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/device.hpp"
#include "tiletune/enumerate.hpp"
#include "tiletune/error.hpp"
#include "tiletune/plan.hpp"
#include "tiletune/runner.hpp"
#include "tiletune/space.hpp"
#include "tiletune/sweep.hpp"
#include "tiletune/trial.hpp"

#ifndef TILETUNE_SOURCE_DIR
#define TILETUNE_SOURCE_DIR "."
#endif

namespace {

namespace fs = std::filesystem;
namespace tt = tiletune;

// ---------------------------------------------------------------------------------------------
// Small helpers

std::string strf(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string strf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string s(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(s.data(), s.size() + 1, format, args);
  va_end(args);
  return s;
}

void check_cuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess)
    throw std::runtime_error(strf("%s:%d: %s failed: %s (%s)", file, line, call, cudaGetErrorName(e),
                                  cudaGetErrorString(e)));
}
void check_cublas(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(strf("%s:%d: %s failed: cuBLAS status %d", file, line, call, static_cast<int>(s)));
}
#define BK_CUDA(call) check_cuda((call), #call, __FILE__, __LINE__)
#define BK_CUBLAS(call) check_cublas((call), #call, __FILE__, __LINE__)
// After a launch: the launch error now, a fault at the next synchronize.
#define BK_LAUNCHED() BK_CUDA(cudaGetLastError())

void log_line(const std::string& s) {
  std::cerr << "[bench] " << s << std::endl;
}

std::vector<std::string> split(const std::string& text, const std::string& separators) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : text) {
    if (separators.find(c) != std::string::npos) {
      if (!cur.empty()) parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) parts.push_back(cur);
  return parts;
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// "2^28" for powers of two, the number otherwise: sizes in the table stay readable.
std::string pretty_size(std::int64_t v) {
  if (v >= 65536 && (v & (v - 1)) == 0) {
    int e = 0;
    while ((std::int64_t{1} << e) != v) ++e;
    return strf("2^%d", e);
  }
  return std::to_string(v);
}

// "N=268435456;R=3" -> "N=2^28 R=3"
std::string pretty_problem(const std::string& canonical) {
  std::string out;
  for (const std::string& item : split(canonical, ";")) {
    const auto eq = item.find('=');
    if (!out.empty()) out += ' ';
    if (eq == std::string::npos) {
      out += item;
      continue;
    }
    try {
      out += item.substr(0, eq + 1) + pretty_size(std::stoll(item.substr(eq + 1)));
    } catch (...) {
      out += item;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Deterministic random inputs, the same on the device and the host (splitmix64 of the index).

__host__ __device__ inline std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
// Uniform in [-1, 1), 24 random bits: exact in float.
__host__ __device__ inline float unit_float_at(std::uint64_t seed, std::uint64_t i) {
  return static_cast<float>(mix64(seed * 0xD1B54A32D192ED03ull + i) >> 40) * 0x1p-23f - 1.0f;
}
__host__ __device__ inline unsigned char byte_at(std::uint64_t seed, std::uint64_t i) {
  return static_cast<unsigned char>(mix64(seed * 0xD1B54A32D192ED03ull + i) >> 56);
}

__global__ void fill_uniform_kernel(float* out, std::uint64_t n, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    out[i] = unit_float_at(seed, i);
}
__global__ void fill_bytes_kernel(unsigned char* out, std::uint64_t n, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    out[i] = byte_at(seed, i);
}

// Runs body(begin, end) over [0, n) on every core; the partial results are the caller's.
void parallel_chunks(std::uint64_t n, const std::function<void(unsigned, std::uint64_t, std::uint64_t)>& body,
                     unsigned threads) {
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    const std::uint64_t b = n * t / threads, e = n * (t + 1) / threads;
    pool.emplace_back([&body, t, b, e] { body(t, b, e); });
  }
  for (auto& th : pool) th.join();
}

unsigned host_threads() {
  return std::max(1u, std::min(64u, std::thread::hardware_concurrency()));
}

// ---------------------------------------------------------------------------------------------
// Timing of the runtime-API baselines: the runner's rule (tiletune::StdrelCriterion) with a 1x L2
// flush before each sample.

struct Timer {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  void* flush = nullptr;
  std::size_t flush_bytes = 0;
  tt::TimingSettings settings;

  Timer(std::size_t l2_bytes, const tt::TimingSettings& s) : settings(s) {
    BK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    BK_CUDA(cudaEventCreate(&start));
    BK_CUDA(cudaEventCreate(&stop));
    flush_bytes = std::max<std::size_t>(l2_bytes, std::size_t{1} << 20);
    BK_CUDA(cudaMalloc(&flush, flush_bytes));
  }
  ~Timer() {
    cudaFree(flush);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaStreamDestroy(stream);
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // Warm-up runs, then cold samples until the stopping rule says so.
  tt::TimingStats measure(const std::function<void(cudaStream_t)>& op, int warmup = 2) {
    for (int i = 0; i < warmup; ++i) op(stream);
    BK_CUDA(cudaStreamSynchronize(stream));
    std::vector<double> samples;
    tt::StdrelCriterion criterion(settings);
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
      if (settings.cold) BK_CUDA(cudaMemsetAsync(flush, static_cast<int>(samples.size() & 0xFF), flush_bytes, stream));
      BK_CUDA(cudaEventRecord(start, stream));
      op(stream);
      BK_CUDA(cudaEventRecord(stop, stream));
      BK_CUDA(cudaEventSynchronize(stop));
      float ms = 0;
      BK_CUDA(cudaEventElapsedTime(&ms, start, stop));
      samples.push_back(ms);
      criterion.add_sample(ms);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (criterion.verdict(wall) != tt::StopReason::keep_going) break;
    }
    return tt::summarize(std::move(samples));
  }
};

// ---------------------------------------------------------------------------------------------
// Rows of the table

struct Row {
  std::string kernel;    // "transpose", "copy", "CUB DeviceReduce::Sum"
  std::string problem;   // "N=2^13"
  std::string variant;   // "tuned", "naive", "padded tile", "ceiling", "library"
  std::string config;    // "TILE=32 BLOCK_ROWS=8 PAD=1"
  bool ok = false;
  std::string failure;   // why there is no time
  double ms = 0;
  int samples = 0;
  double noise = 0;      // relative standard deviation of the samples
  std::optional<double> gbps, tflops, pct_copy, x_lib, x_naive;
  std::string lib;       // "CUB", "cuBLAS"
  std::string target;    // "≥97% copy"
  std::string result;    // "met", "missed", ""
  std::vector<std::string> notes;
};

std::string fmt_opt(const std::optional<double>& v, const char* format) {
  return v ? strf(format, *v) : std::string("");
}

std::string markdown_table(const std::vector<Row>& rows) {
  std::ostringstream o;
  o << "| kernel | problem | variant | config | time ms | GB/s | TFLOP/s | % copy | × lib | × naive | target | result |\n";
  o << "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---|\n";
  for (const Row& r : rows) {
    o << "| " << r.kernel << " | " << r.problem << " | " << r.variant << " | " << r.config << " | ";
    if (r.ok) {
      o << strf(r.ms < 1 ? "%.4f" : r.ms < 100 ? "%.3f" : "%.1f", r.ms) << " | " << fmt_opt(r.gbps, "%.0f") << " | "
        << fmt_opt(r.tflops, "%.2f") << " | " << fmt_opt(r.pct_copy, "%.1f") << " | "
        << (r.x_lib ? strf("%.2f× %s", *r.x_lib, r.lib.c_str()) : std::string()) << " | "
        << fmt_opt(r.x_naive, "%.2f×") << " | ";
    } else {
      o << "— | | | | | | ";
    }
    const bool dry = r.failure.rfind("dry run", 0) == 0;
    o << r.target << " | " << (r.ok ? r.result : (dry ? "" : "FAILED: ") + r.failure) << " |\n";
  }
  return o.str();
}

// ---------------------------------------------------------------------------------------------
// The families: problem sizes of the benchmark, the naive textbook config, the targets.

struct Targets {
  std::optional<double> pct_copy;  // % of the copy's GB/s, at least
  std::optional<double> x_lib;     // library time / our time, at least
  std::optional<double> x_naive;   // naive time / our time, at least
};

struct ProblemSpec {
  // Sizes "N=268435456;R=3"; alternatives separated by '|' (the first whose names the space has).
  std::string sizes;
  std::string baseline;   // "copy", "cub_reduce", "cub_hist", "sgemm4096", "sgemm8192"
  Targets tuned;          // checked on the tuned row
};

struct ExtraConfig {
  std::string label;      // the variant column
  std::string overlay;    // params over the naive config, "PAD=1"
  Targets targets;
};

struct Family {
  std::string name;       // kernel family = configs/NAME.yaml
  std::vector<ProblemSpec> problems;
  // The textbook version: "NAME=value;..."; a name with a leading '?' applies only where the space
  // has that param. Params not named take the space's `default:` value (else their first value).
  std::string naive;
  std::vector<ExtraConfig> extras;
};

constexpr std::int64_t kN28 = std::int64_t{1} << 28;

std::vector<Family> families() {
  const std::string n28 = "N=" + std::to_string(kN28);
  std::vector<Family> f;
  // Names as in configs/*.yaml (2026-11-29); the params a row does not name take the space's
  // `default:` value, which each space documents as its textbook config. Targets as in issue 38
  // (2026-12-07): transpose 97 % of the copy, SGEMM 1.00x cuBLAS, histogram 85 % of the copy
  // and 1.5x CUB, stencil R=16 92 % of the copy; the others keep their earlier level.
  f.push_back({"vector_add", {{n28, "copy", {97.0, {}, {}}}}, "VEC=1;ITEMS=1;GRID_STRIDE=0;BLOCK=256", {}});
  f.push_back({"reduction",
               {{n28, "cub_reduce", {{}, 1.0, {}}}},
               "VARIANT=0",  // global atomics only: the first step of the progression
               {{"shared-memory tree", "VARIANT=1", {}}}});
  f.push_back({"stencil_1d",
               {{n28 + ";R=1", "copy", {90.0, {}, {}}},
                {n28 + ";R=3", "copy", {90.0, {}, {}}},
                {n28 + ";R=8", "copy", {90.0, {}, {}}},
                {n28 + ";R=16", "copy", {92.0, {}, {}}}},
               "SHARED=0;ITEMS=1",
               // Beside the tuned row: issue 4's best at R=16, and issue 38's long skewed window.
               {{"tile, 4 per thread", "SHARED=1;BLOCK=256;ITEMS=4", {}},
                {"skewed tile, 16 per thread", "SHARED=2;BLOCK=256;ITEMS=16", {}}}});
  f.push_back({"transpose",
               {{"N=8192", "copy", {97.0, {}, {}}}},
               "TILE=32;BLOCK_ROWS=8;PAD=0;?VEC=1",
               {{"padded tile", "PAD=1", {{}, {}, 1.5}}}});
  // The simplest config of the space (its default and verify reference): 64x64x8 block tile,
  // 4x4 per thread, no padding, scalar loads, no prefetch.
  f.push_back({"matmul",
               {{"M=4096;N=4096;K=4096|N=4096", "sgemm4096", {{}, 1.00, {}}},
                {"M=8192;N=8192;K=8192|N=8192", "sgemm8192", {{}, 1.00, {}}}},
               "?PAD=0;?VEC=1;?PREFETCH=0",
               {}});
  // Beside the tuned row: issue 4's best (bin-major shared bins) and issue 38's lane columns.
  f.push_back({"histogram",
               {{n28, "cub_hist", {85.0, 1.5, {}}}},
               "PRIVATE=0;?COPIES=1",
               {{"bin-major, 8 copies", "PRIVATE=1;COPIES=8;ITEMS=4;GRID=528", {}},
                {"lane columns", "PRIVATE=2;COPIES=1;BLOCK=512;ITEMS=4;GRID=528", {}}}});
  return f;
}

std::string targets_text(const Targets& t, const std::string& lib) {
  std::vector<std::string> parts;
  if (t.pct_copy) parts.push_back(strf("≥%.0f%% copy", *t.pct_copy));
  if (t.x_lib) parts.push_back(strf("≥%.2g× %s", *t.x_lib, lib.c_str()));
  if (t.x_naive) parts.push_back(strf("≥%.2g× naive", *t.x_naive));
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
  return s;
}

void judge(Row& r, const Targets& t) {
  r.target = targets_text(t, r.lib);
  if (r.target.empty() || !r.ok) return;
  bool met = true, known = true;
  auto check = [&](const std::optional<double>& want, const std::optional<double>& got, double scale) {
    if (!want) return;
    if (!got) {
      known = false;
      return;
    }
    met = met && (*got * scale >= *want * (1 - 1e-9));
  };
  check(t.pct_copy, r.pct_copy, 1.0);
  check(t.x_lib, r.x_lib, 1.0);
  check(t.x_naive, r.x_naive, 1.0);
  r.result = !known ? "n/a (no metric)" : met ? "met" : "missed";
}

// ---------------------------------------------------------------------------------------------
// Options

struct Options {
  std::string db;
  std::string configs;
  std::string out;
  int device = 0;
  std::set<std::string> only;
  std::map<std::string, std::string> tuned;   // family -> params text
  std::map<std::string, std::string> naive;   // family -> params text (replaces the table)
  std::map<std::string, std::vector<std::string>> sizes;  // family -> problem texts (replace the table)
  tt::TimingSettings timing;
  std::string verify = "auto";
  bool cubin_cache = true;
  bool baselines = true;
  bool families = true;
  bool print_tune_args = false;
  bool dry_run = false;
  int arch = 90;  // for --dry-run
  std::uint64_t copy_bytes = std::uint64_t{1} << 30;
  std::string command_line;
};

const char* kUsage = R"(usage: bench_kernels [options]

Measures the copy ceiling, CUB and cuBLAS baselines and every kernel family's tuned and naive
configs on one GPU; prints a markdown table (and writes it with --out).

  --db PATH               tiletune cache to read the tuned bests from (best per device, kernel, problem)
  --configs DIR           where NAME.yaml spaces are (default: ./configs, else the source tree's)
  --out FILE              write the table (markdown, with date, GPU, driver, command line)
  --device N              CUDA device ordinal (default 0)
  --only a,b,...          only these families (vector_add reduction stencil_1d transpose matmul histogram)
  --tuned FAMILY=PARAMS   tuned params instead of the cache's, e.g. transpose=TILE=64;BLOCK_ROWS=16;PAD=1
  --naive FAMILY=PARAMS   naive params instead of the built-in table
  --size FAMILY=SIZES     problem instead of the built-in one (repeatable), e.g. stencil_1d=N=1048576;R=3
  --verify auto|space|naive|none
                          auto (default): the space's check, except that a CPU reference over more
                          than 1e10 flops (matmul 4096^3) is replaced by the naive config's outputs
  --min-samples N         (default 20)   --max-noise PCT (default 0.5)   --max-time S (default 2)
  --hot                   no L2 flush between samples
  --copy-bytes N          size of the ceiling copy (default 1 GiB)
  --no-cubin-cache        compile every config with NVRTC (default: tiletune's cubin cache)
  --no-baselines          skip copy, CUB and cuBLAS (no % copy / × lib columns)
  --no-families           only the copy, CUB and cuBLAS
  --dry-run [--arch sm_90] no GPU: resolve the problems and configs, compile them with NVRTC and
                          build the launches (what would run), time nothing
  --print-tune-args       print "FAMILY<TAB>SPACE<TAB>--size A=1 --size B=2" per benchmark problem
                          (what scripts/bench_h200.sh tunes) and exit; needs no GPU
)";

std::pair<std::string, std::string> family_value(const std::string& arg, const std::string& flag) {
  const auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) throw std::runtime_error(flag + " wants FAMILY=VALUE, got '" + arg + "'");
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

Options parse_options(int argc, char** argv) {
  Options o;
  o.timing.cold = true;
  o.timing.warmup_runs = 1;
  o.timing.min_samples = 20;
  o.timing.max_noise = 0.005;
  o.timing.min_seconds = 0.01;
  o.timing.max_seconds = 2.0;
  for (int i = 0; i < argc; ++i) o.command_line += (i ? " " : "") + std::string(argv[i]);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string value;
    const auto eq = a.find('=');
    const bool has_inline = a.rfind("--", 0) == 0 && eq != std::string::npos;
    if (has_inline) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
    }
    auto need = [&]() -> std::string {
      if (has_inline) return value;
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      std::exit(0);
    } else if (a == "--db") {
      o.db = need();
    } else if (a == "--configs") {
      o.configs = need();
    } else if (a == "--out") {
      o.out = need();
    } else if (a == "--device") {
      o.device = std::stoi(need());
    } else if (a == "--only") {
      for (const auto& s : split(need(), ", ")) o.only.insert(s);
    } else if (a == "--tuned") {
      auto [k, v] = family_value(need(), a);
      o.tuned[k] = v;
    } else if (a == "--naive") {
      auto [k, v] = family_value(need(), a);
      o.naive[k] = v;
    } else if (a == "--size") {
      auto [k, v] = family_value(need(), a);
      o.sizes[k].push_back(v);
    } else if (a == "--verify") {
      o.verify = need();
      if (o.verify != "auto" && o.verify != "space" && o.verify != "naive" && o.verify != "none")
        throw std::runtime_error("--verify: auto, space, naive or none");
    } else if (a == "--min-samples") {
      o.timing.min_samples = std::stoi(need());
    } else if (a == "--max-noise") {
      o.timing.max_noise = std::stod(need()) / 100.0;
    } else if (a == "--max-time") {
      o.timing.max_seconds = std::stod(need());
    } else if (a == "--hot") {
      o.timing.cold = false;
    } else if (a == "--copy-bytes") {
      o.copy_bytes = std::stoull(need());
    } else if (a == "--no-cubin-cache") {
      o.cubin_cache = false;
    } else if (a == "--no-baselines") {
      o.baselines = false;
    } else if (a == "--no-families") {
      o.families = false;
    } else if (a == "--dry-run") {
      o.dry_run = true;
    } else if (a == "--arch") {
      o.arch = tt::parse_arch(need());
    } else if (a == "--print-tune-args") {
      o.print_tune_args = true;
    } else {
      throw std::runtime_error("unknown option '" + a + "' (see --help)");
    }
  }
  if (o.configs.empty()) o.configs = fs::is_directory("configs") ? "configs" : TILETUNE_SOURCE_DIR "/configs";
  return o;
}

// ---------------------------------------------------------------------------------------------
// Baselines: copy, CUB, cuBLAS

struct Baselines {
  std::optional<double> copy_gbps;
  std::map<std::string, double> ms;  // "cub_reduce", "cub_hist", "sgemm4096", "sgemm8192"
  std::map<std::string, std::string> lib;  // library name per baseline
};

// Fills a device buffer on the stream.
void fill_uniform(float* p, std::uint64_t n, std::uint64_t seed, cudaStream_t s) {
  fill_uniform_kernel<<<132 * 16, 256, 0, s>>>(p, n, seed);
  BK_LAUNCHED();
}
void fill_bytes(unsigned char* p, std::uint64_t n, std::uint64_t seed, cudaStream_t s) {
  fill_bytes_kernel<<<132 * 16, 256, 0, s>>>(p, n, seed);
  BK_LAUNCHED();
}

template <class T>
struct DeviceArray {
  T* p = nullptr;
  std::size_t n = 0;
  explicit DeviceArray(std::size_t count) : n(count) { BK_CUDA(cudaMalloc(reinterpret_cast<void**>(&p), count * sizeof(T))); }
  ~DeviceArray() { cudaFree(p); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  std::size_t bytes() const { return n * sizeof(T); }
};

Row stats_row(const std::string& kernel, const std::string& problem, const std::string& variant,
              const std::string& config, const tt::TimingStats& s) {
  Row r;
  r.kernel = kernel;
  r.problem = problem;
  r.variant = variant;
  r.config = config;
  r.ok = s.samples > 0 && s.median_ms > 0;
  r.ms = s.median_ms;
  r.samples = s.samples;
  r.noise = s.noise;
  if (!r.ok) r.failure = "no samples";
  return r;
}

void log_row(const Row& r) {
  if (!r.ok) {
    log_line(strf("%s %s %s [%s]: FAILED: %s", r.kernel.c_str(), r.problem.c_str(), r.variant.c_str(),
                  r.config.c_str(), r.failure.c_str()));
    return;
  }
  std::string rates;
  if (r.gbps) rates += strf(" %.0f GB/s", *r.gbps);
  if (r.tflops) rates += strf(" %.2f TFLOP/s", *r.tflops);
  if (r.pct_copy) rates += strf(" %.1f%% copy", *r.pct_copy);
  if (r.x_lib) rates += strf(" %.3fx %s", *r.x_lib, r.lib.c_str());
  if (r.x_naive) rates += strf(" %.2fx naive", *r.x_naive);
  log_line(strf("%s %s %s [%s]: %.4f ms (n=%d, ±%.2f%%)%s", r.kernel.c_str(), r.problem.c_str(),
                r.variant.c_str(), r.config.c_str(), r.ms, r.samples, 100 * r.noise, rates.c_str()));
}

Row bench_copy(Timer& timer, std::uint64_t bytes, Baselines& base) {
  DeviceArray<unsigned char> src(bytes), dst(bytes);
  fill_bytes(src.p, bytes, 11, timer.stream);
  const tt::TimingStats s = timer.measure(
      [&](cudaStream_t st) { BK_CUDA(cudaMemcpyAsync(dst.p, src.p, bytes, cudaMemcpyDeviceToDevice, st)); }, 3);
  // Checked: the copy did copy (a sample of positions).
  std::vector<unsigned char> a(4096), b(4096);
  BK_CUDA(cudaMemcpy(a.data(), src.p + bytes / 3, a.size(), cudaMemcpyDeviceToHost));
  BK_CUDA(cudaMemcpy(b.data(), dst.p + bytes / 3, b.size(), cudaMemcpyDeviceToHost));
  Row r = stats_row("copy (cudaMemcpyAsync D2D)", strf("%.0f MiB", bytes / 1048576.0), "ceiling", "", s);
  if (a != b) {
    r.ok = false;
    r.failure = "destination differs from source";
    return r;
  }
  r.gbps = 2.0 * static_cast<double>(bytes) / (r.ms * 1e-3) / 1e9;
  r.pct_copy = 100.0;
  base.copy_gbps = r.gbps;
  r.notes.push_back("bytes read + bytes written");
  return r;
}

Row bench_cub_reduce(Timer& timer, Baselines& base) {
  const std::uint64_t n = kN28;
  const std::uint64_t seed = 21;
  DeviceArray<float> in(n), out(1);
  fill_uniform(in.p, n, seed, timer.stream);
  std::size_t temp_bytes = 0;
  BK_CUDA(cub::DeviceReduce::Sum(nullptr, temp_bytes, in.p, out.p, static_cast<int>(n), timer.stream));
  DeviceArray<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1));
  auto op = [&](cudaStream_t st) {
    BK_CUDA(cub::DeviceReduce::Sum(temp.p, temp_bytes, in.p, out.p, static_cast<int>(n), st));
  };
  // Correct first: poisoned output, then against a double sum of the same inputs on the host.
  const float nan = std::nanf("");
  BK_CUDA(cudaMemcpyAsync(out.p, &nan, sizeof nan, cudaMemcpyHostToDevice, timer.stream));
  op(timer.stream);
  float got = 0;
  BK_CUDA(cudaMemcpyAsync(&got, out.p, sizeof got, cudaMemcpyDeviceToHost, timer.stream));
  BK_CUDA(cudaStreamSynchronize(timer.stream));
  const unsigned threads = host_threads();
  std::vector<double> sums(threads), abs_sums(threads);
  parallel_chunks(n, [&](unsigned t, std::uint64_t b, std::uint64_t e) {
    double s = 0, a = 0;
    for (std::uint64_t i = b; i < e; ++i) {
      const double v = unit_float_at(seed, i);
      s += v;
      a += std::fabs(v);
    }
    sums[t] = s;
    abs_sums[t] = a;
  }, threads);
  double want = 0, abs_sum = 0;
  for (unsigned t = 0; t < threads; ++t) {
    want += sums[t];
    abs_sum += abs_sums[t];
  }
  const double err = std::fabs(static_cast<double>(got) - want) / abs_sum;

  const tt::TimingStats s = timer.measure(op);
  Row r = stats_row("CUB DeviceReduce::Sum", "N=2^28 float", "library", "", s);
  r.notes.push_back(strf("CUB sum %.6g vs double %.6g: error %.2e of sum|x|", got, want, err));
  if (!(err <= 1e-6)) {
    r.ok = false;
    r.failure = strf("wrong sum: %.9g, want %.9g", got, want);
    return r;
  }
  r.gbps = static_cast<double>(n * sizeof(float)) / (r.ms * 1e-3) / 1e9;
  if (base.copy_gbps) r.pct_copy = 100.0 * *r.gbps / *base.copy_gbps;
  base.ms["cub_reduce"] = r.ms;
  base.lib["cub_reduce"] = "CUB";
  return r;
}

Row bench_cub_histogram(Timer& timer, Baselines& base) {
  const std::uint64_t n = kN28;
  const std::uint64_t seed = 31;
  constexpr int kBins = 256;
  DeviceArray<unsigned char> in(n);
  DeviceArray<unsigned int> hist(kBins);
  fill_bytes(in.p, n, seed, timer.stream);
  std::size_t temp_bytes = 0;
  BK_CUDA(cub::DeviceHistogram::HistogramEven(nullptr, temp_bytes, in.p, hist.p, kBins + 1, 0, 256,
                                              static_cast<int>(n), timer.stream));
  DeviceArray<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1));
  auto op = [&](cudaStream_t st) {
    BK_CUDA(cub::DeviceHistogram::HistogramEven(temp.p, temp_bytes, in.p, hist.p, kBins + 1, 0, 256,
                                                static_cast<int>(n), st));
  };
  BK_CUDA(cudaMemsetAsync(hist.p, 0xFF, hist.bytes(), timer.stream));  // poison
  op(timer.stream);
  std::vector<unsigned int> got(kBins);
  BK_CUDA(cudaMemcpyAsync(got.data(), hist.p, hist.bytes(), cudaMemcpyDeviceToHost, timer.stream));
  BK_CUDA(cudaStreamSynchronize(timer.stream));
  const unsigned threads = host_threads();
  std::vector<std::vector<std::uint64_t>> partial(threads, std::vector<std::uint64_t>(kBins, 0));
  parallel_chunks(n, [&](unsigned t, std::uint64_t b, std::uint64_t e) {
    auto& h = partial[t];
    for (std::uint64_t i = b; i < e; ++i) ++h[byte_at(seed, i)];
  }, threads);
  int bad = 0;
  for (int k = 0; k < kBins; ++k) {
    std::uint64_t want = 0;
    for (unsigned t = 0; t < threads; ++t) want += partial[t][k];
    bad += got[k] != want;
  }
  const tt::TimingStats s = timer.measure(op);
  Row r = stats_row("CUB HistogramEven", "N=2^28 u8, 256 bins", "library", "", s);
  if (bad) {
    r.ok = false;
    r.failure = strf("%d of 256 bins wrong", bad);
    return r;
  }
  r.gbps = static_cast<double>(n) / (r.ms * 1e-3) / 1e9;
  if (base.copy_gbps) r.pct_copy = 100.0 * *r.gbps / *base.copy_gbps;
  base.ms["cub_hist"] = r.ms;
  base.lib["cub_hist"] = "CUB";
  return r;
}

// C = A B, row major, A M x K, B K x N: cuBLAS (column major) computes C^T = B^T A^T.
Row bench_sgemm(Timer& timer, cublasHandle_t handle, int n, Baselines& base) {
  const int M = n, N = n, K = n;
  const std::uint64_t seed_a = 41, seed_b = 42;
  DeviceArray<float> a(std::size_t(M) * K), b(std::size_t(K) * N), c(std::size_t(M) * N);
  fill_uniform(a.p, a.n, seed_a, timer.stream);
  fill_uniform(b.p, b.n, seed_b, timer.stream);
  BK_CUBLAS(cublasSetStream(handle, timer.stream));
  const float one = 1.0f, zero = 0.0f;
  auto op = [&](cudaStream_t) {
    BK_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, b.p, N, a.p, K, &zero, c.p, N));
  };
  BK_CUDA(cudaMemsetAsync(c.p, 0xFF, c.bytes(), timer.stream));  // NaN
  op(timer.stream);
  BK_CUDA(cudaStreamSynchronize(timer.stream));
  // FP32, not TF32: ||C - ref|| / ||ref|| over sampled elements, ref in double. FP32 lands near
  // 1e-6 at K = 8192, TF32 (10-bit mantissas) near 3e-4.
  std::uint64_t state = 12345;
  double num = 0, den = 0;
  int nan_count = 0;
  for (int s = 0; s < 128; ++s) {
    const int i = static_cast<int>(mix64(state++) % M), j = static_cast<int>(mix64(state++) % N);
    float got = 0;
    BK_CUDA(cudaMemcpy(&got, c.p + std::size_t(i) * N + j, sizeof got, cudaMemcpyDeviceToHost));
    double want = 0;
    for (int k = 0; k < K; ++k)
      want += double(unit_float_at(seed_a, std::uint64_t(i) * K + k)) * double(unit_float_at(seed_b, std::uint64_t(k) * N + j));
    if (!std::isfinite(got)) ++nan_count;
    num += (got - want) * (got - want);
    den += want * want;
  }
  const double rel = std::sqrt(num / den);
  const tt::TimingStats st = timer.measure(op);
  Row r = stats_row("cuBLAS SGEMM (FP32)", strf("%d³", n), "library", "CUBLAS_DEFAULT_MATH, COMPUTE_32F", st);
  r.notes.push_back(strf("cuBLAS SGEMM %d³: ||C-ref||/||ref|| = %.2e over 128 sampled elements (FP32 ~1e-6, TF32 ~3e-4)",
                         n, rel));
  if (nan_count || !(rel < 5e-5)) {
    r.ok = false;
    r.failure = nan_count ? strf("%d sampled elements not finite", nan_count)
                          : strf("relative error %.2e: not FP32 math (TF32?)", rel);
    return r;
  }
  r.tflops = 2.0 * M * double(N) * K / (r.ms * 1e-3) / 1e12;
  base.ms[strf("sgemm%d", n)] = r.ms;
  base.lib[strf("sgemm%d", n)] = "cuBLAS";
  return r;
}

// ---------------------------------------------------------------------------------------------
// Families through tiletune

// Parses "A=1;B=2" (also "A=1 B=2", "A=1,B=2") into (name, value) pairs in order.
std::vector<std::pair<std::string, std::int64_t>> parse_assignments(const std::string& text) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (const std::string& item : split(text, "; ,")) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw std::runtime_error("'" + item + "' is not NAME=value");
    std::size_t used = 0;
    const std::string v = item.substr(eq + 1);
    const long long value = std::stoll(v, &used);
    if (used != v.size()) throw std::runtime_error("'" + item + "' is not NAME=integer");
    out.emplace_back(item.substr(0, eq), value);
  }
  return out;
}

// The space's default config, else each param's first value.
tt::Config base_config(const tt::Space& space) {
  if (space.default_config) return tt::Config{*space.default_config};
  tt::Config c;
  for (const auto& axis : space.params) c.values.push_back(axis.values.empty() ? 0 : axis.values.front());
  return c;
}

// A config from "A=1;?B=2" over a base: nullopt and `why` when a required param is missing.
std::optional<tt::Config> overlay_config(const tt::Space& space, tt::Config base, const std::string& text,
                                         std::string& why) {
  for (const std::string& item : split(text, "; ,")) {
    const bool optional = item[0] == '?';
    const auto pairs = parse_assignments(optional ? item.substr(1) : item);
    for (const auto& [name, value] : pairs) {
      const int index = space.param_index(name);
      if (index < 0) {
        if (optional) continue;
        std::string names;
        for (const auto& a : space.params) names += (names.empty() ? "" : " ") + a.name;
        why = strf("param %s is not in %s (its params: %s)", name.c_str(), space.yaml_path.filename().c_str(),
                   names.c_str());
        return std::nullopt;
      }
      base.values[static_cast<std::size_t>(index)] = value;
    }
  }
  return base;
}

// The problem of a spec: the first alternative whose size names the space all has.
std::optional<tt::Problem> resolve_problem(const tt::Space& space, const std::string& spec, std::string& why) {
  for (const std::string& alt : split(spec, "|")) {
    std::vector<std::string> overrides = split(alt, ";");
    bool names_ok = true;
    for (const auto& o : overrides)
      names_ok = names_ok && space.problem_index(o.substr(0, o.find('='))) >= 0;
    if (!names_ok) continue;
    try {
      return tt::select_problem(space, overrides);
    } catch (const std::exception& e) {
      why = e.what();
      return std::nullopt;
    }
  }
  std::string names;
  for (const auto& a : space.problem) names += (names.empty() ? "" : " ") + a.name;
  why = strf("no alternative of '%s' names only the problem sizes of %s (%s)", spec.c_str(),
             space.yaml_path.filename().c_str(), names.c_str());
  return std::nullopt;
}

struct FamilyContext {
  tt::GpuRunner* runner = nullptr;  // nullptr: --dry-run (compile and plan, run nothing)
  int arch = 90;
  const tt::DeviceInfo* device = nullptr;
  std::optional<tt::CacheDb>* db = nullptr;
  const tt::CubinCache* cache = nullptr;
  const Options* options = nullptr;
  const Baselines* base = nullptr;
  std::uint64_t next_id = 1;
};

struct Candidate {
  std::string variant;
  tt::Config config;
  std::string source;  // where the params came from
  Targets targets;
  bool is_naive = false;
};

// Where the tuned params of a family come from: --tuned, else the cache.
std::optional<tt::Config> tuned_config(FamilyContext& cx, const tt::Space& space, const tt::KernelSource& source,
                                       const std::string& canonical, std::string& from, std::string& why) {
  const Options& o = *cx.options;
  if (auto it = o.tuned.find(space.kernel); it != o.tuned.end()) {
    from = "--tuned";
    return overlay_config(space, base_config(space), it->second, why);
  }
  if (!cx.db->has_value()) {
    why = "no --db given and no --tuned " + space.kernel + "=...";
    return std::nullopt;
  }
  tt::CacheDb& db = **cx.db;
  std::optional<tt::BestEntry> best =
      db.best_for(tt::kernel_record(space, source, cx.device->arch()), cx.device->uuid, canonical);
  if (best) {
    from = "cache";
  } else {
    // Another version of the kernel on this GPU, then this problem on another GPU of the same name.
    std::vector<std::optional<std::string>> devices = {cx.device->uuid, cx.device->name};
    if (!cx.runner) devices = {std::nullopt};  // --dry-run: whatever GPU tuned it
    for (const std::optional<std::string>& dev : devices) {
      tt::BestFilter f;
      f.kernel = space.kernel;
      f.device = dev;
      f.problem = canonical;
      f.current_only = false;
      std::vector<tt::BestEntry> all = db.best(f);
      std::stable_sort(all.begin(), all.end(), [](const tt::BestEntry& a, const tt::BestEntry& b) {
        return a.current > b.current;  // the latest tuned version first
      });
      if (!all.empty()) {
        best = all.front();
        from = !dev                     ? "cache (" + all.front().device.device.name + ")"
               : *dev == cx.device->uuid ? "cache (older kernel version!)"
                                         : "cache (another " + cx.device->name + ")";
        break;
      }
    }
  }
  if (!best) {
    // Tuned at another problem size on this GPU (a sweep cut short by its budget): the best of
    // the largest such problem, said so in the source column.
    tt::BestFilter f;
    f.kernel = space.kernel;
    if (cx.runner) f.device = cx.device->uuid;
    f.current_only = true;
    double largest = -1;
    for (tt::BestEntry& e : db.best(f)) {
      double product = 1;
      for (const auto& [name, value] : parse_assignments(e.trial.key.problem)) product *= double(value);
      if (product > largest && tt::parse_canonical_config(space, e.trial.key.params)) {
        largest = product;
        best = std::move(e);
      }
    }
    if (best) from = "cache, tuned at " + pretty_problem(best->trial.key.problem) + " (none at this size)";
  }
  if (!best) {
    why = strf("the cache %s has no ok trial of %s for %s on %s", db.path().c_str(), space.kernel.c_str(),
               canonical.c_str(), cx.device->name.c_str());
    return std::nullopt;
  }
  std::optional<tt::Config> c = tt::parse_canonical_config(space, best->trial.key.params);
  if (!c) why = "the cached params '" + best->trial.key.params + "' are not the params of " + space.yaml_path.string();
  return c;
}

// One family on one problem: naive, tuned and the extras, each compiled, verified and timed.
void bench_problem(FamilyContext& cx, const Family& fam, const ProblemSpec& spec, const tt::Space& space,
                   const tt::KernelSource& source, std::vector<Row>& rows, std::vector<std::string>& skipped) {
  const Options& o = *cx.options;
  std::string why;
  const std::optional<tt::Problem> problem = resolve_problem(space, spec.sizes, why);
  if (!problem) {
    skipped.push_back(fam.name + ": " + why);
    return;
  }
  const std::string canonical = tt::canonical_problem(space, *problem);
  const std::string shown = pretty_problem(canonical);
  const std::string lib = cx.base->lib.count(spec.baseline) ? cx.base->lib.at(spec.baseline)
                          : spec.baseline == "cub_reduce" || spec.baseline == "cub_hist" ? "CUB"
                          : spec.baseline.rfind("sgemm", 0) == 0                         ? "cuBLAS"
                                                                                         : "";

  // The candidates: naive first (it may be the reference of the others), then tuned, then extras.
  std::vector<Candidate> candidates;
  const std::string naive_text = o.naive.count(fam.name) ? o.naive.at(fam.name) : fam.naive;
  std::optional<tt::Config> naive = overlay_config(space, base_config(space), naive_text, why);
  if (!naive) {
    skipped.push_back(strf("%s %s naive: %s", fam.name.c_str(), shown.c_str(), why.c_str()));
  } else {
    candidates.push_back({"naive", *naive, o.naive.count(fam.name) ? "--naive" : "built-in table", {}, true});
  }
  std::string from;
  if (std::optional<tt::Config> tuned = tuned_config(cx, space, source, canonical, from, why)) {
    // "tuned†": params not from this exact kernel version, GPU and problem (the notes say whence).
    candidates.push_back({from == "cache" ? "tuned" : from == "--tuned" ? "tuned (--tuned)" : "tuned†", *tuned, from,
                          spec.tuned, false});
  } else {
    skipped.push_back(strf("%s %s tuned: %s", fam.name.c_str(), shown.c_str(), why.c_str()));
  }
  if (naive) {
    for (const ExtraConfig& x : fam.extras) {
      if (std::optional<tt::Config> c = overlay_config(space, *naive, x.overlay, why))
        candidates.push_back({x.label, *c, "naive + " + x.overlay, x.targets, false});
      else
        skipped.push_back(strf("%s %s %s: %s", fam.name.c_str(), shown.c_str(), x.label.c_str(), why.c_str()));
    }
  }
  if (candidates.empty()) return;

  // How outputs are checked.
  const tt::RunMetrics naive_metrics = tt::evaluate_metrics(space, *problem, candidates.front().config);
  std::string verify = o.verify;
  if (verify == "auto") {
    verify = "space";
    if (space.verify.reference == tt::VerifySpec::Reference::builtin && naive && naive_metrics.flops &&
        *naive_metrics.flops > 1e10)
      verify = "naive";
  }
  if (verify == "naive" && !naive) verify = "space";
  std::optional<tt::Config> space_reference;
  if (verify == "space" && space.verify.reference == tt::VerifySpec::Reference::config) {
    space_reference = tt::Config{space.verify.reference_config};
  }

  const std::string arch = strf("sm_%d", cx.arch);
  tt::Enumerator enumerator(space, *problem);
  double naive_ms = 0;
  bool reference_done = false;

  struct Prepared {
    tt::TrialRequest request;
    tt::RunMetrics metrics;
  };
  // Compile and build the request of one config; nullopt with `why` for a config that cannot run.
  auto prepare = [&](const tt::Config& config, std::string& why_not) -> std::optional<Prepared> {
    if (auto rejection = enumerator.check(config)) {
      why_not = "rejected by the space's constraints: " + rejection->reason;
      return std::nullopt;
    }
    try {
      const tt::LaunchGeometry launch = tt::evaluate_launch(space, *problem, config);
      tt::CompileRequest creq;
      creq.source = &source;
      creq.options = tt::compile_options(space, *problem, config);
      creq.arch = arch;
      creq.entry = space.entry;
      const tt::CompileResult compiled = tt::compile_cached(creq, *cx.cache);
      if (!compiled.ok()) {
        why_not = "compile failed: " + compiled.error + "\n" + compiled.log.substr(0, 2000);
        return std::nullopt;
      }
      Prepared p{tt::make_trial_request(space, *problem, config, launch, *compiled.kernel),
                 tt::evaluate_metrics(space, *problem, config)};
      p.request.id = cx.next_id++;
      p.request.timing = o.timing;
      p.request.seed = 1;
      if (verify == "none") {
        p.request.verify.mode = tt::VerifySettings::Mode::none;
      } else if (verify == "naive") {
        // Against the naive config's outputs: both sides carry float rounding, so twice the tolerance.
        p.request.verify.mode = tt::VerifySettings::Mode::reference_run;
        for (tt::CheckPlan& check : p.request.verify.checks) {
          check.rtol *= 2;
          check.atol *= 2;
        }
      }
      return p;
    } catch (const tt::Error& e) {
      why_not = e.what();
      return std::nullopt;
    }
  };
  auto run = [&](Prepared& p, bool is_reference) -> tt::TrialResult {
    p.request.is_reference = is_reference;
    return cx.runner->run_trial(p.request);
  };

  // The space's own reference config (verify: reference: config) runs first, untimed in the table.
  if (space_reference && !(naive && *space_reference == *naive)) {
    std::string why_not;
    if (auto p = prepare(*space_reference, why_not)) {
      const tt::TrialResult r = cx.runner ? run(*p, true) : tt::TrialResult{};
      if (r.status != tt::TrialStatus::ok) why_not = std::string(tt::status_name(r.status)) + ": " + r.detail;
      else reference_done = true;
    }
    if (!reference_done) {
      skipped.push_back(strf("%s %s: the space's reference config failed (%s): nothing can be verified",
                             fam.name.c_str(), shown.c_str(), first_line(why_not).c_str()));
      return;
    }
  }

  for (Candidate& cand : candidates) {
    Row row;
    row.kernel = fam.name;
    row.problem = shown;
    row.variant = cand.variant;
    row.config = tt::format_config(space, cand.config);
    row.lib = lib;
    if (cx.runner && cx.runner->context_lost()) {
      row.failure = "the CUDA context was lost by an earlier kernel";
      rows.push_back(row);
      continue;
    }
    std::string why_not;
    std::optional<Prepared> p = prepare(cand.config, why_not);
    if (!p) {
      row.failure = first_line(why_not);
      row.notes.push_back(strf("%s %s %s: %s", fam.name.c_str(), shown.c_str(), cand.variant.c_str(), why_not.c_str()));
      judge(row, cand.targets);
      rows.push_back(row);
      log_row(row);
      continue;
    }
    const bool needs_reference = p->request.verify.mode == tt::VerifySettings::Mode::reference_run && !reference_done;
    if (!cx.runner) {  // --dry-run
      const auto& q = p->request;
      row.failure = strf("dry run: compiled; grid (%lld, %lld, %lld), block (%lld, %lld, %lld), %lld B dynamic shared, "
                         "verify %s%s; params from %s",
                         q.grid[0], q.grid[1], q.grid[2], q.block[0], q.block[1], q.block[2], q.shared_bytes,
                         q.verify.mode == tt::VerifySettings::Mode::cpu ? "cpu" :
                         q.verify.mode == tt::VerifySettings::Mode::none ? "none" : "reference_run",
                         needs_reference && cand.is_naive ? " (is the reference)" : "", cand.source.c_str());
      if (needs_reference && cand.is_naive) reference_done = true;
      judge(row, cand.targets);
      rows.push_back(row);
      log_row(row);
      continue;
    }
    if (needs_reference && !cand.is_naive) {
      row.failure = "no reference run (the naive config failed)";
      judge(row, cand.targets);
      rows.push_back(row);
      continue;
    }
    tt::TrialResult result;
    try {
      result = run(*p, needs_reference);
    } catch (const tt::Error& e) {
      // The request itself cannot run here (e.g. a reference of other buffers): say so.
      row.failure = first_line(e.what());
      row.notes.push_back(strf("%s %s %s: %s", fam.name.c_str(), shown.c_str(), cand.variant.c_str(), e.what()));
      judge(row, cand.targets);
      rows.push_back(row);
      log_row(row);
      continue;
    }
    if (needs_reference && result.status == tt::TrialStatus::ok) reference_done = true;
    if (result.status != tt::TrialStatus::ok) {
      row.failure = std::string(tt::status_name(result.status)) + ": " + first_line(result.detail);
      judge(row, cand.targets);
      rows.push_back(row);
      log_row(row);
      continue;
    }
    row.ok = true;
    row.ms = result.median_ms;
    row.samples = result.samples;
    row.noise = result.samples > 1 && result.mean_ms > 0 ? result.stddev_ms / result.mean_ms : 0;
    const double seconds = row.ms * 1e-3;
    const bool compute_bound = spec.baseline.rfind("sgemm", 0) == 0;
    if (p->metrics.bytes && !compute_bound) row.gbps = *p->metrics.bytes / seconds / 1e9;
    if (p->metrics.flops && compute_bound) row.tflops = *p->metrics.flops / seconds / 1e12;
    if (row.gbps && cx.base->copy_gbps) row.pct_copy = 100.0 * *row.gbps / *cx.base->copy_gbps;
    if (auto it = cx.base->ms.find(spec.baseline); it != cx.base->ms.end()) row.x_lib = it->second / row.ms;
    if (cand.is_naive) naive_ms = row.ms;
    else if (naive_ms > 0) row.x_naive = naive_ms / row.ms;
    const char* checked = p->request.verify.mode == tt::VerifySettings::Mode::cpu ? "the CPU reference"
                          : p->request.verify.mode == tt::VerifySettings::Mode::none ? "nothing (NOT verified)"
                          : p->request.is_reference ? "nothing: it is the reference run (checked: all written, no NaN)"
                          : verify == "naive" ? "the naive config's outputs" : "the space's reference config's outputs";
    row.notes.push_back(strf("%s %s %s [%s]: params from %s; verified against %s; %d samples, ±%.2f%%; %d blocks/SM",
                             fam.name.c_str(), shown.c_str(), cand.variant.c_str(), row.config.c_str(),
                             cand.source.c_str(), checked, row.samples, 100 * row.noise,
                             result.driver_blocks_per_sm));
    judge(row, cand.targets);
    rows.push_back(row);
    log_row(row);
  }
}

// ---------------------------------------------------------------------------------------------
// Report

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&t));
  return buf;
}

std::string version_text(int v) {
  return strf("%d.%d", v / 1000, (v % 1000) / 10);
}

}  // namespace

int main(int argc, char** argv) try {
  Options o = parse_options(argc, argv);
  std::vector<Family> table = families();
  auto selected = [&](const Family& f) { return o.only.empty() || o.only.count(f.name); };
  for (const std::string& name : o.only) {
    bool known = false;
    for (const Family& f : table) known = known || f.name == name;
    if (!known) throw std::runtime_error("--only: no family named '" + name + "'");
  }
  for (auto& [name, sizes] : o.sizes) {
    bool found = false;
    for (Family& f : table) {
      if (f.name != name) continue;
      found = true;
      const ProblemSpec model = f.problems.empty() ? ProblemSpec{} : f.problems.front();
      f.problems.clear();
      for (const std::string& s : sizes) f.problems.push_back({s, model.baseline, model.tuned});
    }
    if (!found) throw std::runtime_error("--size: no family named '" + name + "'");
  }

  if (o.print_tune_args) {
    for (const Family& f : table) {
      if (!selected(f)) continue;
      const fs::path yaml = fs::path(o.configs) / (f.name + ".yaml");
      if (!fs::exists(yaml)) {
        std::cerr << "bench_kernels: " << yaml.string() << " does not exist: " << f.name << " skipped\n";
        continue;
      }
      try {
        const tt::Space space = tt::load_space(yaml);
        for (const ProblemSpec& p : f.problems) {
          std::string why;
          const auto problem = resolve_problem(space, p.sizes, why);
          if (!problem) {
            std::cerr << "bench_kernels: " << f.name << ": " << why << "\n";
            continue;
          }
          std::cout << f.name << '\t' << yaml.string() << '\t';
          for (std::size_t i = 0; i < space.problem.size(); ++i)
            std::cout << (i ? " " : "") << "--size " << space.problem[i].name << '=' << problem->sizes[i];
          std::cout << '\n';
        }
      } catch (const std::exception& e) {
        std::cerr << "bench_kernels: " << yaml.string() << ": " << e.what() << "\n";
      }
    }
    return 0;
  }

  // The device, as tiletune and the runtime see it.
  std::vector<tt::DeviceInfo> devices;
  int driver = 0, runtime = 0;
  if (o.dry_run) {
    tt::DeviceInfo fake;
    fake.name = "dry run (no GPU)";
    fake.cc_major = o.arch / 10;
    fake.cc_minor = o.arch % 10;
    devices.push_back(fake);
    o.device = 0;
    o.baselines = false;
  } else {
    devices = tt::list_devices();
    if (o.device < 0 || o.device >= static_cast<int>(devices.size()))
      throw std::runtime_error(strf("no CUDA device %d (the driver sees %zu; --dry-run needs none)", o.device,
                                    devices.size()));
    BK_CUDA(cudaSetDevice(o.device));
    BK_CUDA(cudaFree(nullptr));  // create (retain) the primary context now
    BK_CUDA(cudaDriverGetVersion(&driver));
  }
  BK_CUDA(cudaRuntimeGetVersion(&runtime));
  const tt::DeviceInfo& dev = devices[static_cast<std::size_t>(o.device)];
  std::vector<std::string> header;
  header.push_back("# bench_kernels");
  header.push_back("");
  header.push_back("- date: " + utc_now());
  header.push_back(strf("- GPU: %s (%s), sm_%d, %d SMs, L2 %.0f MiB, %.1f GiB, SM clock %d MHz", dev.name.c_str(),
                        dev.uuid.c_str(), dev.arch(), dev.sm_count, dev.l2_bytes / 1048576.0,
                        dev.total_memory / 1073741824.0, dev.sm_clock_khz / 1000));
  header.push_back(strf("- driver: CUDA %s; runtime %s; NVRTC %s; CUB %d.%d.%d", version_text(driver).c_str(),
                        version_text(runtime).c_str(), tt::nvrtc_version().c_str(), CUB_MAJOR_VERSION,
                        CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION));
  header.push_back("- command: `" + o.command_line + "`");
  header.push_back(strf("- timing: %s, median, ≥ %d samples, until ±%.2g%% or %.3g s per config",
                        o.timing.cold ? "cold (L2 flushed before each sample)" : "hot", o.timing.min_samples,
                        100 * o.timing.max_noise, o.timing.max_seconds));
  for (const auto& h : header) log_line(h);

  std::vector<Row> rows;
  std::vector<std::string> skipped;
  Baselines base;

  // 1. Copy, CUB, cuBLAS (runtime API). Their memory is freed before the families run.
  if (o.baselines) {
    Timer timer(dev.l2_bytes, o.timing);
    tt::TimingSettings copy_timing = o.timing;
    copy_timing.min_samples = std::max(20, o.timing.min_samples);
    timer.settings = copy_timing;
    auto attempt = [&](const char* what, const std::function<Row()>& f) {
      try {
        rows.push_back(f());
        log_row(rows.back());
      } catch (const std::exception& e) {
        Row r;
        r.kernel = what;
        r.variant = "library";
        r.failure = first_line(e.what());
        rows.push_back(r);
        log_row(r);
        cudaGetLastError();
      }
    };
    attempt("copy", [&] { return bench_copy(timer, o.copy_bytes, base); });
    timer.settings = o.timing;
    attempt("CUB DeviceReduce::Sum", [&] { return bench_cub_reduce(timer, base); });
    attempt("CUB HistogramEven", [&] { return bench_cub_histogram(timer, base); });
    cublasHandle_t handle = nullptr;
    BK_CUBLAS(cublasCreate(&handle));
    BK_CUBLAS(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));  // FP32: no TF32 tensor ops
    int cublas_version = 0;
    BK_CUBLAS(cublasGetVersion(handle, &cublas_version));
    header.push_back(strf("- cuBLAS %d (CUBLAS_DEFAULT_MATH, cublasSgemm: compute type 32F, no TF32; row-major "
                          "as C^T = B^T A^T)",
                          cublas_version));
    for (int n : {4096, 8192}) attempt("cuBLAS SGEMM", [&] { return bench_sgemm(timer, handle, n, base); });
    BK_CUDA(cudaStreamSynchronize(timer.stream));
    cublasDestroy(handle);
  }
  if (!o.dry_run) BK_CUDA(cudaDeviceSynchronize());

  // 2. The families through tiletune's runner.
  if (o.families) {
    std::optional<tt::CacheDb> db;
    if (!o.db.empty()) {
      try {
        db.emplace(tt::CacheDb::open(o.db, tt::CacheDb::Mode::read_only));
      } catch (const std::exception& e) {
        skipped.push_back(std::string("cache: ") + e.what() + " (tuned rows need --tuned)");
      }
    }
    const tt::CubinCache cache(o.cubin_cache ? tt::CubinCache::default_directory() : fs::path{});
    std::optional<tt::GpuRunner> runner;
    if (!o.dry_run) runner.emplace(o.device);
    FamilyContext cx;
    cx.runner = runner ? &*runner : nullptr;
    cx.arch = runner ? runner->arch() : o.arch;
    cx.device = &dev;
    cx.db = &db;
    cx.cache = &cache;
    cx.options = &o;
    cx.base = &base;
    for (const Family& f : table) {
      if (!selected(f)) continue;
      const fs::path yaml = fs::path(o.configs) / (f.name + ".yaml");
      if (!fs::exists(yaml)) {
        skipped.push_back(f.name + ": " + yaml.string() + " does not exist");
        log_line(skipped.back());
        continue;
      }
      try {
        const tt::Space space = tt::load_space(yaml);
        const tt::KernelSource source = tt::load_kernel_source(space.source);
        for (const ProblemSpec& p : f.problems) bench_problem(cx, f, p, space, source, rows, skipped);
      } catch (const std::exception& e) {
        skipped.push_back(f.name + ": " + e.what());
        log_line(skipped.back());
      }
    }
  }

  // 3. The table.
  std::vector<std::string> notes;
  for (const Row& r : rows)
    for (const auto& n : r.notes) notes.push_back(n);
  // Library rows are judged on nothing; the families' rows were judged as they ran.
  std::ostringstream head, legend, tail;
  for (const auto& h : header) head << h << "\n";
  legend << "\n% copy: the kernel's bytes (the space's `metrics.bytes`: each input read once, each output written "
            "once) per second over the copy's (read + written) per second. × lib: the library's time over the "
            "kernel's (CUB for reduction and histogram, cuBLAS FP32 SGEMM of the same size for matmul). × naive: "
            "the naive config's time over this one's. tuned†: params not tuned for exactly this kernel version, "
            "GPU and problem (see the notes).\n";
  if (!skipped.empty()) {
    tail << "\nSkipped:\n";
    for (const auto& s : skipped) tail << "- " << s << "\n";
  }
  if (!notes.empty()) {
    tail << "\nNotes:\n";
    for (const auto& n : notes) tail << "- " << n << "\n";
  }
  const std::string table_text = markdown_table(rows);
  if (!o.out.empty()) {
    const fs::path out(o.out);
    if (out.has_parent_path()) fs::create_directories(out.parent_path());
    std::ofstream f(out);
    f << head.str() << "\n" << table_text << legend.str() << tail.str();
    if (!f) throw std::runtime_error("cannot write " + o.out);
    log_line("wrote " + o.out);
  }
  // On the terminal the table comes last (the end of the output is what a remote call returns).
  std::cout << head.str() << tail.str() << legend.str() << "\n" << table_text << std::flush;
  bool any_failed = false;
  for (const Row& r : rows) any_failed = any_failed || !r.ok;
  return any_failed ? 1 : 0;
} catch (const std::exception& e) {
  std::cerr << "bench_kernels: " << e.what() << std::endl;
  return 2;
}
