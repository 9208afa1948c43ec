// Interchange with Kernel Tuner and KTT: search spaces in the T1 input format read into a
// tiletune YAML, and results written in the T4 output format. Both formats are those of the
// BAT / "Towards a benchmarking suite for kernel tuners" work (Tørring, van Werkhoven, Petrovič,
// Willemsen, Filipovič, Elster, IPDPSW 2023): T1 is described by the JSON schema
// kernel_tuner/schema/T1/1.0.0/input-schema.json in Kernel Tuner (and
// TuningLoader/TuningFormatSchema.json in KTT), T4 by kernel_tuner/schema/T4/1.0.0/
// results-schema.json (Kernel Tuner's file_utils.store_output_file and KTT write it).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tiletune/cache_db.hpp"
#include "tiletune/error.hpp"
#include "tiletune/objective.hpp"

namespace tiletune {

/// A T1 file that cannot be read, or a part of it that has no tiletune equivalent. what() is
/// "FILE: FIELD: what is wrong, and what to do" (FIELD as a JSON path, e.g.
/// KernelSpecification.Arguments[2].FillType).
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

/// Converts the T1 file at json_path (a regular file of at most 64 MiB). yaml_path is where the
/// YAML will live: the kernel source and data files are written relative to it. `family` names
/// the space's kernel family (empty: KernelName). Throws InterchangeError for anything that does
/// not map.
[[nodiscard]] T1Import import_t1(const std::filesystem::path& json_path, const std::filesystem::path& yaml_path,
                                 const std::string& family = {});

/// Converts T1 text (json_path names it in messages and anchors KernelFile).
[[nodiscard]] T1Import import_t1_text(const std::string& json, const std::filesystem::path& json_path,
                                      const std::filesystem::path& yaml_path, const std::string& family = {});

/// The trials selected by filter as a T4 results document ("schema_version": "1.0.0", one
/// result per trial, times in milliseconds), objectives [objective].
[[nodiscard]] std::string export_t4(const CacheDb& db, const TrialFilter& filter, Objective objective);

}  // namespace tiletune
