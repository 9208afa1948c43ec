// NVRTC compilation of a kernel source for one config: source loading (with every header it
// may include, found the way NVRTC finds them and hashed by content), the compile itself and
// its diagnostics, the resource report of ptxas, a content-addressed cache on disk of cubins
// and of failed compiles, and a pool of threads that compiles many configs at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tiletune {

/// A named text handed to NVRTC.
struct SourceFile {
  std::string name;  ///< as written in #include "name" (or the main file's name)
  std::string text;
};

/// The largest kernel source or header tiletune reads (16 MiB): a bigger file is refused
/// before it is read, and so is anything that is not a regular file (a FIFO, a device).
inline constexpr std::uintmax_t kMaxSourceFileBytes = std::uintmax_t{16} << 20;

/// A header NVRTC finds itself through an include directory (-I, the toolkit's): tiletune
/// reads it only to hash it and to follow its own includes.
struct HeaderDependency {
  /// Stable across checkouts and machines: the directory's role and the path below it,
  /// "include[0]/mylib/tile.cuh" (the first -I), "toolkit[1]/cub/block/block_reduce.cuh".
  std::string name;
  std::filesystem::path path;  ///< the file found
  std::string hash;            ///< hex XXH3-128 of its contents
};

/// Where the includes of a kernel are looked for, in NVRTC's order (see docs/reference/cache-keys.md, "Headers,
/// includes and the cache keys"): headers given by name first, then for a quoted include the
/// including file's directory, then `include_dirs`, then `toolkit_dirs`.
struct IncludeSearch {
  std::vector<std::filesystem::path> include_dirs;  ///< the options' -I / --include-path, in order
  std::vector<std::string> pre_includes;            ///< the options' --pre-include / -include
  std::vector<std::filesystem::path> toolkit_dirs;  ///< toolkit_include_dirs()
  friend bool operator==(const IncludeSearch&, const IncludeSearch&) = default;
  friend auto operator<=>(const IncludeSearch&, const IncludeSearch&) = default;
};

/// The include directories (-I DIR, -IDIR, --include-path=DIR) and pre-included headers of an
/// option list, with toolkit_include_dirs() after them.
[[nodiscard]] IncludeSearch include_search(const std::vector<std::string>& options);

/// The options with each relative include directory (-I DIR, -IDIR, --include-path=DIR) made
/// absolute against `base` (a space's YAML directory), written as -IDIR; others unchanged.
[[nodiscard]] std::vector<std::string> resolve_include_dirs(const std::vector<std::string>& options,
                                                            const std::filesystem::path& base);

/// The CUDA toolkit's header directories NVRTC searches after the -I of a space:
/// $TILETUNE_CUDA_INCLUDE (directories separated by ':') when set, else the include directory
/// of the toolkit tiletune was built against and its cccl/ (CUB, Thrust and libcu++ since CUDA
/// 13). Directories that do not exist are left out.
[[nodiscard]] std::vector<std::filesystem::path> toolkit_include_dirs();

/// A kernel source with every header it includes. Headers next to the source (quoted includes
/// found relative to the including file) are handed to NVRTC by name; the rest are found by
/// NVRTC through the include directories and listed as dependencies. The hash covers all of
/// them, by content.
struct KernelSource {
  SourceFile main;
  std::vector<SourceFile> headers;
  std::vector<HeaderDependency> dependencies;
  IncludeSearch search;  ///< the directories the includes were resolved against
  std::string hash;      ///< hex digest of main, headers and dependencies (names and contents)
};

/// Reads a .cu file and every header it may include (see IncludeSearch), without running a
/// preprocessor: each #include, #include_next and __has_include counts, whatever #if it sits
/// under. Throws Error naming the file that is missing, not a regular file, or too large, and
/// for a quoted include next to the source that is found nowhere, its file and line.
[[nodiscard]] KernelSource load_kernel_source(const std::filesystem::path& path, const IncludeSearch& search);
/// The same with no -I: the toolkit's directories only.
[[nodiscard]] KernelSource load_kernel_source(const std::filesystem::path& path);

/// A source held in memory (an embedded or generated kernel, no includes resolved), hashed by
/// its name and text like a loaded one, so that the cubin cache can keep its compiles.
[[nodiscard]] KernelSource memory_source(std::string name, std::string text);

struct CompileRequest;

/// The sources of one kernel file for each include search its requests use, loaded once each
/// (a space whose options differ per config may search different -I). Not thread-safe; the
/// sources live as long as this object.
class KernelSources {
 public:
  explicit KernelSources(std::filesystem::path path) : path_(std::move(path)) {}
  /// The source for requests with these options (their -I and --pre-include).
  [[nodiscard]] const KernelSource& for_options(const std::vector<std::string>& options);
  /// A compile of this file: the options with the source loaded for them (for_options), the arch
  /// and the entry. Valid while this object lives.
  [[nodiscard]] CompileRequest request(std::vector<std::string> options, std::string arch, std::string entry);

 private:
  std::filesystem::path path_;
  std::map<IncludeSearch, KernelSource> loaded_;
};

/// What ptxas reports for one kernel (`-Xptxas -v`).
struct Resources {
  int registers = 0;
  int static_shared_bytes = 0;  ///< "smem"
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int stack_frame_bytes = 0;
  int barriers = 0;        ///< named barriers used (0 when ptxas does not print it)
  int constant_bytes = 0;  ///< cmem[0]
  friend bool operator==(const Resources&, const Resources&) = default;
};

/// Parses ptxas' verbose report for `function` (mangled or extern "C" name). Throws
/// Error when the log has no resource lines for it.
[[nodiscard]] Resources parse_ptxas_report(const std::string& log, const std::string& function);

/// One compile: a source, its options (-D... and extras, -I with absolute directories; -arch,
/// -Xptxas -v and the toolkit's -I are added), an arch ("sm_90") and the entry point (a name
/// or template instantiation expression). The source must have been loaded for the options'
/// include search: KernelSources::request builds one so.
struct CompileRequest {
  const KernelSource* source = nullptr;
  std::vector<std::string> options;
  std::string arch;
  std::string entry;
};

/// A successful compile.
struct CompiledKernel {
  std::string cubin;         ///< the ELF image, bytes
  std::string lowered_name;  ///< the symbol to look up with cuModuleGetFunction
  Resources resources;
  std::string log;                    ///< NVRTC + ptxas output
  std::vector<std::string> warnings;  ///< the first line of each warning in the log
  /// Options NVRTC got after nvrtc_options(request): `--ptxas-options=--entry=SYMBOL` when
  /// another kernel of the file failed ptxas and the entry was compiled alone.
  std::vector<std::string> extra_options;
};

/// A compile outcome: a kernel, or the failure with the log and options that produced it.
struct CompileResult {
  std::optional<CompiledKernel> kernel;
  /// What went wrong, in one line, naming the kernel where ptxas does ("transpose: static
  /// shared memory 81920 B > 48 KB max") or the file and line where the front end does.
  std::string error;
  std::string log;                    ///< full NVRTC log (also on failure), NUL bytes removed
  std::vector<std::string> warnings;  ///< the first line of each warning (also on success)
  std::vector<std::string> options;   ///< the exact options given to NVRTC
  double seconds = 0;                 ///< wall time of the compile (0 on a cache hit)
  bool cache_hit = false;             ///< answered by the cache (a kernel, or a cached failure)
  /// A failure that may not repeat (NVRTC out of memory, an internal error): not cached.
  bool transient = false;
  std::string cache_key;  ///< hex key in the cubin cache
  [[nodiscard]] bool ok() const noexcept { return kernel.has_value(); }
};

/// "13.0"
[[nodiscard]] std::string nvrtc_version();
/// Whether this NVRTC takes `--no-cache` (13.0 and later), which keeps its own cache (12.9+)
/// from answering without ptxas' report; compile_nvrtc passes it when it does.
[[nodiscard]] bool nvrtc_has_no_cache_option();
/// Architectures NVRTC can target, e.g. {75, 80, ..., 120}.
[[nodiscard]] std::vector<int> nvrtc_supported_archs();
/// Parses "sm_90", "90", "9.0", "compute_90" (and suffixed targets such as "sm_90a",
/// "sm_100f") to the compute capability times ten; throws Error for anything else.
[[nodiscard]] int parse_arch(const std::string& text);
/// The real-architecture name NVRTC is given for an arch text: "9.0" -> "sm_90",
/// "compute_90a" -> "sm_90a" (a suffix is kept). Throws Error like parse_arch.
[[nodiscard]] std::string normalize_arch(const std::string& text);

/// The full option list NVRTC receives for a request: --gpu-architecture=sm_XX,
/// --ptxas-options=-v, --no-cache (NVRTC >= 13: its own cache would return cubins without
/// ptxas' report), --std=c++17 (unless the request sets a --std), then request.options in
/// their order, then -I for each of the source's toolkit directories.
[[nodiscard]] std::vector<std::string> nvrtc_options(const CompileRequest& request);

/// nvrtc_options with each include directory written by its role instead of its place,
/// "-I<include[0]>", "-I<toolkit[1]>": what the cubin key and the kernel version hash, so
/// that they do not change with the checkout's path (what is found there is hashed by content
/// in the source hash).
[[nodiscard]] std::vector<std::string> key_options(const CompileRequest& request);

/// A failed compile as the cache keeps it.
struct CompileFailure {
  std::string error;
  std::string log;
  std::vector<std::string> warnings;
};

/// Content-addressed store of compiled cubins, and of failed compiles with their logs, that
/// outlives the process. Keyed by the source hash (every header included, by content),
/// key_options, the NVRTC version, the arch and the entry. Safe for concurrent use by threads
/// and processes (writes go to a temp file + rename).
class CubinCache {
 public:
  /// An empty path disables the cache.
  explicit CubinCache(std::filesystem::path directory);
  /// $TILETUNE_CUBIN_CACHE, else $XDG_CACHE_HOME/tiletune/cubin, else ~/.cache/tiletune/cubin.
  [[nodiscard]] static std::filesystem::path default_directory();

  [[nodiscard]] std::string key(const CompileRequest& request) const;
  [[nodiscard]] std::optional<CompiledKernel> get(const std::string& key) const;
  void put(const std::string& key, const CompiledKernel& kernel) const;
  [[nodiscard]] std::optional<CompileFailure> get_failure(const std::string& key) const;
  void put_failure(const std::string& key, const CompileFailure& failure) const;
  [[nodiscard]] const std::filesystem::path& directory() const noexcept { return dir_; }

 private:
  std::filesystem::path dir_;
};

/// Compiles one request with NVRTC (no cache). Never throws for a bad kernel: a failure is
/// returned with its log; throws Error only when NVRTC itself cannot be used. When ptxas fails
/// on another kernel of the file, only the entry is compiled again (ptxas --entry), and the
/// result carries a warning naming the kernel that failed.
[[nodiscard]] CompileResult compile_nvrtc(const CompileRequest& request);

/// Something that compiles one request at a time: NVRTC in this process (compile_nvrtc), or a
/// compile worker process (make_worker_compiler in tiletune/worker.hpp). Like compile_nvrtc,
/// it returns a failure with its log instead of throwing for a bad kernel.
class Compiler {
 public:
  virtual ~Compiler() = default;
  [[nodiscard]] virtual CompileResult compile(const CompileRequest& request) = 0;
};
/// Makes one Compiler per compile thread; an empty factory means compile_nvrtc in the thread.
using CompilerFactory = std::function<std::unique_ptr<Compiler>()>;

/// Compiles through the cache: a hit returns the stored kernel, or the stored failure, without
/// calling NVRTC; a miss is compiled (by `compiler`, else compile_nvrtc) and stored (a
/// transient failure is not).
[[nodiscard]] CompileResult compile_cached(const CompileRequest& request, const CubinCache& cache,
                                           Compiler* compiler = nullptr);

/// A fixed pool of threads compiling requests; results come back as futures. With a
/// CompilerFactory, each thread compiles through a Compiler of its own, made at its first
/// request: NVRTC serializes much of its work inside one process (on the H200 host, 90
/// transpose configs took 1.56 s with 4 threads and 1.44 s with 16, against 0.72 s as 16
/// processes of one thread each; bench/results/2026-12-01-h200-compile-processes.md), so
/// tiletune's commands give the pool one compile worker process per thread.
class CompilePool {
 public:
  /// threads == 0 means std::thread::hardware_concurrency().
  CompilePool(unsigned threads, const CubinCache& cache, CompilerFactory make_compiler = {});
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
