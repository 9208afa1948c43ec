// A recorded landscape: every trial of one kernel version on one GPU, for one or more problems,
// as a small text file (comment header + CSV) that ships with the tests and that a replay runs
// search strategies against instead of the GPU. Written by `tiletune export --format landscape`.
//
//   # tiletune landscape 1
//   # kernel: transpose
//   # device: NVIDIA H200
//   # ...                      (device, kernel version and recording details, "key: value")
//   problem,params,status,time_ms,compile_ms,measure_ms,registers,shared_bytes,occupancy,detail
//   N=8192,TILE=64;BLOCK_ROWS=16;PAD=1;VEC=4,ok,0.1373,212.5,31.2,20,0,1,
//
// problem is NAME=INTEGER;... (empty for a space without problem sizes); params is NAME=VALUE;...
// with each value as the space writes it: an integer, or a real or text param's value ("0.5",
// "half"), which is why such a value may hold no ',' or ';' (recordable_value).
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tiletune/cache_db.hpp"
#include "tiletune/space.hpp"
#include "tiletune/status.hpp"

namespace tiletune {

/// One recorded trial. compile_ms and measure_ms are what it cost the recording sweep (NVRTC in
/// one compile thread; load, verify and timing on the GPU).
struct LandscapeTrial {
  std::string params;  ///< canonical: "TILE=64;BLOCK_ROWS=16;PAD=1;VEC=4" (T=half, ALPHA=0.5)
  TrialStatus status = TrialStatus::ok;
  std::optional<double> time_ms;  ///< ok trials only
  double compile_ms = 0;
  double measure_ms = 0;
  std::optional<std::int64_t> registers;
  std::optional<std::int64_t> shared_bytes;
  std::optional<double> occupancy;  ///< the driver's, else the offline model's
  std::string detail;               ///< first line of what went wrong
};

struct LandscapeProblem {
  std::string problem;  ///< canonical: "M=4096;N=4096;K=4096"; "" without problem sizes
  std::vector<LandscapeTrial> trials;
};

struct Landscape {
  std::string kernel;
  /// The header's "key: value" lines after the kernel (device, source_hash, recorded...), in
  /// file order, for reports.
  std::vector<std::pair<std::string, std::string>> header;
  std::vector<LandscapeProblem> problems;

  [[nodiscard]] std::optional<std::string> header_value(const std::string& key) const;
  [[nodiscard]] const LandscapeProblem* find_problem(const std::string& canonical) const;
};

/// Whether a param's value can stand in a recording's params column: 1 to
/// max_param_value_chars characters, none of them ',' or ';' (the separators) or a control
/// character.
[[nodiscard]] bool recordable_value(std::string_view value);

/// Reads a landscape file. Throws Error naming file:line and what is wrong with it.
[[nodiscard]] Landscape load_landscape(const std::filesystem::path& path);

/// Writes a landscape in the format load_landscape reads. Throws Error, before writing anything,
/// when a problem or params field is not one the reader takes (a value that is not recordable).
void write_landscape(std::ostream& out, const Landscape& landscape);

/// The landscape of a kernel's current version in a result cache, on one device (UUID or name;
/// empty: the only device the kernel has trials on). Throws Error when there are no trials, or
/// several devices and none was named.
[[nodiscard]] Landscape landscape_from_cache(const CacheDb& db, const std::string& kernel,
                                             const std::string& device = {});

}  // namespace tiletune
