// NVRTC compilation of a kernel source for one config: source loading (with its quoted
// #includes), the compile itself, the resource report of ptxas, a content-addressed
// cubin cache on disk and a pool of threads that compiles many configs at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tiletune {

/// A named text handed to NVRTC.
struct SourceFile {
  std::string name;      ///< as written in #include "name" (or the main file's name)
  std::string text;
};

/// A kernel source with every header it includes by quoted path (found recursively,
/// relative to the including file). The hash covers all of them.
struct KernelSource {
  SourceFile main;
  std::vector<SourceFile> headers;
  std::string hash;      ///< hex digest of main + headers (names and texts)
};

/// Reads a .cu file and its quoted includes. Throws Error naming the file that is missing.
[[nodiscard]] KernelSource load_kernel_source(const std::filesystem::path& path);

/// What ptxas reports for one kernel (`-Xptxas -v`).
struct Resources {
  int registers = 0;
  int static_shared_bytes = 0;  ///< "smem"
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int stack_frame_bytes = 0;
  int barriers = 0;             ///< named barriers used (0 when ptxas does not print it)
  int constant_bytes = 0;       ///< cmem[0]
  friend bool operator==(const Resources&, const Resources&) = default;
};

/// Parses ptxas' verbose report for `function` (mangled or extern "C" name). Throws
/// Error when the log has no resource lines for it.
[[nodiscard]] Resources parse_ptxas_report(const std::string& log, const std::string& function);

/// One compile: a source, its options (-D... and extras; -arch and -Xptxas -v are added),
/// an arch ("sm_90") and the entry point (a name or template instantiation expression).
struct CompileRequest {
  const KernelSource* source = nullptr;
  std::vector<std::string> options;
  std::string arch;
  std::string entry;
};

/// A successful compile.
struct CompiledKernel {
  std::string cubin;            ///< the ELF image, bytes
  std::string lowered_name;     ///< the symbol to look up with cuModuleGetFunction
  Resources resources;
  std::string log;              ///< NVRTC + ptxas output
};

/// A compile outcome: a kernel, or the failure with the log and options that produced it.
struct CompileResult {
  std::optional<CompiledKernel> kernel;
  std::string error;            ///< first line of what went wrong (empty on success)
  std::string log;              ///< full NVRTC log (also on failure)
  std::vector<std::string> options;  ///< the exact options given to NVRTC
  double seconds = 0;           ///< wall time of the compile (0 on a cache hit)
  bool cache_hit = false;
  std::string cache_key;        ///< hex key in the cubin cache
  [[nodiscard]] bool ok() const noexcept { return kernel.has_value(); }
};

/// "13.0"
[[nodiscard]] std::string nvrtc_version();
/// Architectures NVRTC can target, e.g. {75, 80, ..., 120}.
[[nodiscard]] std::vector<int> nvrtc_supported_archs();
/// Parses "sm_90", "90", "9.0", "compute_90" (and suffixed targets such as "sm_90a",
/// "sm_100f") to the compute capability times ten; throws Error for anything else.
[[nodiscard]] int parse_arch(const std::string& text);
/// The real-architecture name NVRTC is given for an arch text: "9.0" -> "sm_90",
/// "compute_90a" -> "sm_90a" (a suffix is kept). Throws Error like parse_arch.
[[nodiscard]] std::string normalize_arch(const std::string& text);

/// The full option list NVRTC receives for a request (used for the cache key and the log):
/// --gpu-architecture=sm_XX, --ptxas-options=-v, --no-cache (NVRTC >= 13: its own cache
/// would return cubins without ptxas' report), --std=c++17 (unless the request sets a
/// --std), then request.options in their order.
[[nodiscard]] std::vector<std::string> nvrtc_options(const CompileRequest& request);

/// Content-addressed store of compiled cubins that outlives the process. Keyed by the
/// source hash (headers included), the options, the NVRTC version and the arch.
/// Safe for concurrent use by threads and processes (writes go to a temp file + rename).
class CubinCache {
 public:
  /// An empty path disables the cache.
  explicit CubinCache(std::filesystem::path directory);
  /// $TILETUNE_CUBIN_CACHE, else $XDG_CACHE_HOME/tiletune/cubin, else ~/.cache/tiletune/cubin.
  [[nodiscard]] static std::filesystem::path default_directory();

  [[nodiscard]] std::string key(const CompileRequest& request) const;
  [[nodiscard]] std::optional<CompiledKernel> get(const std::string& key) const;
  void put(const std::string& key, const CompiledKernel& kernel) const;
  [[nodiscard]] const std::filesystem::path& directory() const noexcept { return dir_; }

 private:
  std::filesystem::path dir_;
};

/// Compiles one request with NVRTC (no cache). Never throws for a bad kernel: a failure is
/// returned with its log; throws Error only when NVRTC itself cannot be used.
[[nodiscard]] CompileResult compile_nvrtc(const CompileRequest& request);

/// Compiles through the cache: a hit returns the stored kernel without calling NVRTC.
[[nodiscard]] CompileResult compile_cached(const CompileRequest& request, const CubinCache& cache);

/// A fixed pool of threads compiling requests; results come back as futures.
class CompilePool {
 public:
  /// threads == 0 means std::thread::hardware_concurrency().
  CompilePool(unsigned threads, const CubinCache& cache);
  ~CompilePool();
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  /// The request's source must outlive the future.
  [[nodiscard]] std::future<CompileResult> submit(CompileRequest request);
  [[nodiscard]] unsigned threads() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tiletune
