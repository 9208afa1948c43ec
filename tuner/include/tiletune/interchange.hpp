// Interchange with Kernel Tuner and KTT: search spaces in the T1 input format read into a
// tiletune YAML, and results written in the T4 output format. Both formats are those of the
// BAT / "Towards a benchmarking suite for kernel tuners" work (Tørring, van Werkhoven, Petrovič,
// Willemsen, Filipovič, Elster, IPDPSW 2023): T1 is described by the JSON schema
// kernel_tuner/schema/T1/1.0.0/input-schema.json in Kernel Tuner (and
// TuningLoader/TuningFormatSchema.json in KTT), T4 by kernel_tuner/schema/T4/1.0.0/
// results-schema.json (Kernel Tuner's file_utils.store_output_file and KTT write it). And Kernel
// Tuner's own cache files (the JSON its tune_kernel(cache=...) writes, 1.x) read into a recording
// and the space it replays in.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tiletune/cache_db.hpp"
#include "tiletune/error.hpp"
#include "tiletune/landscape.hpp"
#include "tiletune/objective.hpp"

namespace tiletune {

/// A T1 file or Kernel Tuner cache that cannot be read, or a part of it that has no tiletune
/// equivalent. what() is one line, "FILE: FIELD: what is wrong, and what to do" (FIELD as a JSON
/// path, e.g. KernelSpecification.Arguments[2].FillType or cache['32,4,1'].time).
class InterchangeError : public Error {
 public:
  using Error::Error;
};

/// A T1 space as tiletune YAML.
struct T1Import {
  std::string yaml;                   ///< a complete space (expressions quoted, real YAML)
  std::vector<std::string> notes;     ///< what was kept only as a comment (budget, search, ...)
  std::vector<std::string> warnings;  ///< what the file says twice and differently, defaults left out
};

/// What a T1 file's KernelSpecification.GlobalSize counts, where it sets the grid (without a
/// ProblemSize): what its GlobalSizeType says (CUDA: blocks; OpenCL and Vulkan, the default:
/// threads, divided by LocalSize), or what the user says (`import-t1 --global-size-type`).
enum class T1GlobalSize { from_file, blocks, threads };

/// Converts the T1 file at json_path (a regular file of at most 64 MiB). yaml_path is where the
/// YAML will live: the kernel source and data files are written relative to it. `family` names
/// the space's kernel family (empty: KernelName). Throws InterchangeError for anything that does
/// not map.
[[nodiscard]] T1Import import_t1(const std::filesystem::path& json_path, const std::filesystem::path& yaml_path,
                                 const std::string& family = {}, T1GlobalSize global_size = T1GlobalSize::from_file);

/// Converts T1 text (json_path names it in messages and anchors KernelFile).
[[nodiscard]] T1Import import_t1_text(const std::string& json, const std::filesystem::path& json_path,
                                      const std::filesystem::path& yaml_path, const std::string& family = {},
                                      T1GlobalSize global_size = T1GlobalSize::from_file);

/// Bounds on reading a Kernel Tuner cache, so that no file makes tiletune read or allocate without
/// limit (a gzip bomb stops inflating at max_text_bytes).
struct KtCacheLimits {
  std::uint64_t max_gzip_bytes = std::uint64_t{256} << 20;  ///< a gzip'd file on disk
  std::uint64_t max_text_bytes = std::uint64_t{1} << 30;    ///< the JSON, as read or inflated
  std::uint64_t max_entries = 1'000'000;                    ///< recorded outcomes a replay holds in memory
};

struct KtCacheImportOptions {
  std::string name;  ///< the space's kernel family; empty: kt_ + the cache's kernel_name
  KtCacheLimits limits;
};

/// A Kernel Tuner cache as a recording, and the space the recording replays in.
struct KtCacheImport {
  Landscape recording;             ///< one trial per entry (less the skipped), in file order
  std::string recording_csv;       ///< the recording as write_landscape writes it
  std::string space_yaml;          ///< names stub_file (beside it) as its source
  std::string stub_file;           ///< "kt_convolution_kernel.cu"
  std::string stub_source;         ///< one line: a kernel of the entry's name that does nothing
  std::uint64_t entries = 0;       ///< entries in the cache
  std::vector<std::string> notes;  ///< what was skipped or assumed, one line each
};

/// Reads a Kernel Tuner cache (JSON, or gzip'd JSON: told by its first bytes), closed or left open
/// by an interrupted run (repaired as Kernel Tuner's own reader repairs it), and maps it: the
/// space is checked to load and the recording to read back and replay in it before this returns.
/// Throws InterchangeError "FILE: FIELD: what is wrong".
[[nodiscard]] KtCacheImport import_kt_cache(const std::filesystem::path& cache_path,
                                            const KtCacheImportOptions& options = {});

/// The trials selected by filter as a T4 results document ("schema_version": "1.0.0", one
/// result per trial, times in milliseconds), objectives [objective]. Valid UTF-8 whatever the
/// cache holds: the number of bytes written as U+FFFD is added to *replaced.
[[nodiscard]] std::string export_t4(const CacheDb& db, const TrialFilter& filter, Objective objective,
                                    std::size_t* replaced = nullptr);

}  // namespace tiletune
