#include "worker/worker_kernels_compile.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>

#include <fmt/format.h>

#include "tiletune/error.hpp"

namespace tiletune {
namespace {

constexpr char kGeneratorSource[] =
#include "worker/input_generators.cu.inc"
    ;
constexpr char kCompareSource[] =
#include "worker/compare_kernel.cu.inc"
    ;
constexpr char kReferenceSource[] =
#include "worker/reference_kernels.cu.inc"
    ;

std::string for_whom(int ordinal) { return ordinal < 0 ? std::string("the build") : fmt::format("device {}", ordinal); }

}  // namespace

std::string worker_kernels_source() {
  return std::string(kGeneratorSource) + "\n" + kCompareSource + "\n" + kReferenceSource;
}

std::vector<std::string> worker_kernels_options() { return {"--fmad=false"}; }

CompiledKernel compile_worker_kernels(int arch, int ordinal, const CubinCache* cache) {
  // NVRTC 12.9+ (with a driver on the machine) serves ptxas from the driver's on-disk compute
  // cache, keyed by the PTX, and a hit comes back without the ptxas report that compile_nvrtc
  // requires. NVRTC 13 takes --no-cache (compile_nvrtc passes it) and the source can stay the
  // same, so the cubin cache keeps the compile; before 13, a device variable named after this
  // process and moment makes the PTX, and so the compile, new each time.
  std::string text = worker_kernels_source();
  if (!nvrtc_has_no_cache_option()) {
    static std::atomic<unsigned> starts{0};
    text = fmt::format("__device__ unsigned long long tiletune_compile_nonce_{}_{}_{};\n{}", ::getpid(),
                       std::chrono::steady_clock::now().time_since_epoch().count(), starts++, text);
  }
  const KernelSource source = memory_source("tiletune_worker_kernels.cu", std::move(text));
  CompileRequest request;
  request.source = &source;
  request.arch = std::to_string(arch);
  request.entry = "tiletune_compare_f32";
  request.options = worker_kernels_options();
  CompileResult compiled = cache != nullptr ? compile_cached(request, *cache) : compile_nvrtc(request);
  if (!compiled.ok()) {
    throw Error(fmt::format("compiling the worker's kernels for sm_{} ({}) failed: {}\n{}", arch, for_whom(ordinal),
                            compiled.error, compiled.log));
  }
  return std::move(*compiled.kernel);
}

}  // namespace tiletune
