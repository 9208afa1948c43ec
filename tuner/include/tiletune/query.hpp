// The query API: what an application includes to ask the tuning cache for the best config of a
// kernel on a device and problem size. It reads the SQLite cache that `tiletune tune` writes,
// read-only, and needs nothing but SQLite at link time (no NVRTC, no CUDA driver, no yaml-cpp);
// this header needs nothing but the C++ standard library. A lookup never throws: a miss falls back
// through the match levels (pinned, exact, nearest problem, same architecture, portable default)
// and errors come back inside the result with a status and a message. Where configs tie within
// the noise, the answer is the one the pick rule of tiletune/answers.hpp chooses from the tie
// set, and the result says how many tied and how far apart they are.
//
// The result holds the tuned params only. The launch geometry (grid, block, dynamic shared memory)
// is an expression of the search space's YAML and is not stored in the cache: the engine's
// launcher evaluates it from the YAML with these params, or the application computes it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tiletune/objective.hpp"

#if defined(_WIN32)
#define TILETUNE_QUERY_API
#else
#define TILETUNE_QUERY_API __attribute__((visibility("default")))
#endif

namespace tiletune {

/// How well the returned config matches the request. The levels are tried in the order pinned,
/// exact, nearest_problem, same_architecture, portable_default, none: `pinned` ranks first (a
/// person's choice overrides every measurement) although its value comes last, so that the values
/// of the older levels (and of the C API's) stay what they were.
enum class MatchLevel {
  exact,              ///< measured on this device (UUID, or name when no UUID is given), same problem
  nearest_problem,    ///< this device, the measured problem nearest in log space
  same_architecture,  ///< another device of the same compute capability (exact problem, else nearest)
  portable_default,   ///< the config with the best mean relative time over all measured devices
  none,               ///< nothing usable: use the caller's defaults (params is empty)
  pinned,             ///< a person pinned this config (`tiletune pin`) for this device, its model or
                      ///< its architecture, kernel and problem: ranks above exact
};

/// "exact", "nearest_problem", "same_architecture", "portable_default", "none", "pinned".
[[nodiscard]] TILETUNE_QUERY_API std::string_view match_level_name(MatchLevel level) noexcept;

/// Why a lookup or an open failed. A lookup that finds nothing is `ok` with MatchLevel::none.
enum class QueryStatus {
  ok,
  invalid_argument,    ///< empty kernel name, a size that is not a positive number, ...
  unknown_kernel,      ///< no version of this kernel was ever tuned in the cache
  no_device,           ///< the live device was asked for and the CUDA driver could not tell
  not_a_cache,         ///< the file is not SQLite, or not a tiletune cache (application_id)
  unsupported_schema,  ///< a cache written by a newer tiletune, or one that was never initialized
  io_error,            ///< the file is missing or unreadable, or SQLite failed while reading
  internal_error,      ///< anything else (out of memory, ...)
};

/// "ok", "invalid_argument", ... (the enumerator's name).
[[nodiscard]] TILETUNE_QUERY_API std::string_view query_status_name(QueryStatus status) noexcept;

/// The device a config is wanted for. Any subset of the fields may be given: the UUID is the most
/// precise key, then the name; the compute capability selects the architecture fallback (when it
/// is 0.0 it is taken from the cache's row for the UUID or name, where there is one). An empty
/// device skips the device levels and goes straight to the portable default.
struct TILETUNE_QUERY_API QueryDevice {
  std::string uuid;  ///< "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it
  std::string name;  ///< e.g. "NVIDIA H200"
  int cc_major = 0;
  int cc_minor = 0;

  /// Parses a device spec: "GPU-..."/"MIG-..." is a UUID, "sm_90", "sm90", "sm_90a", "9.0" and
  /// "compute_90" are a compute capability, anything else is a device name. Empty → empty device.
  [[nodiscard]] static QueryDevice parse(std::string_view spec);

  /// Reads device `ordinal` through the CUDA driver, loaded with dlopen("libcuda.so.1") (the
  /// library never links the driver). nullopt, with the reason in *error, when there is no
  /// driver or no such device.
  [[nodiscard]] static std::optional<QueryDevice> detect(int ordinal = 0, std::string* error = nullptr) noexcept;

  [[nodiscard]] bool empty() const noexcept { return uuid.empty() && name.empty() && cc_major == 0 && cc_minor == 0; }
  bool operator==(const QueryDevice&) const = default;
};

/// What a lookup asks for.
struct QueryRequest {
  std::string kernel;  ///< the space's `kernel:` name, e.g. "transpose"
  QueryDevice device;
  std::map<std::string, std::int64_t> sizes;  ///< problem sizes by name, e.g. {{"N", 8192}}
  /// What "best" means at every level: the fastest, or the lowest energy per run or energy-delay
  /// product among the trials whose energy was measured (caches of schema 4 and later).
  Objective objective = Objective::time;
};

/// One tuned parameter, e.g. {"TILE", 32}.
struct QueryParam {
  std::string name;
  std::int64_t value = 0;
  bool operator==(const QueryParam&) const = default;
};

/// The answer to a lookup. Check `status` (errors) and `match` (how good the answer is).
struct TILETUNE_QUERY_API QueryResult {
  QueryStatus status = QueryStatus::ok;
  std::string message;  ///< what went wrong (empty when status is ok)
  MatchLevel match = MatchLevel::none;
  std::vector<QueryParam> params;  ///< in the space's order; empty for MatchLevel::none
  std::string params_text;         ///< canonical, "TILE=32;BLOCK_ROWS=8;PAD=1"
  std::string problem;             ///< the measured problem it came from, "N=8192;R=3"
                                   ///< (empty for portable_default and none)
  double time_ms = -1.0;           ///< median time of that measurement; -1 when there is none
                                   ///< (portable default; a pin whose config was not measured there)
  double energy_mj = -1.0;         ///< its energy per run (energy and edp objectives); -1 otherwise
  double relative_time = 0.0;      ///< portable_default only: mean of time / best time (>= 1)
  std::string device_name;         ///< the device it was measured on (empty: none or portable)
  std::string device_uuid;
  bool from_memory = false;  ///< served from the in-process memory, without SQLite
  /// How many configs of that device and problem are tied with the fastest within the noise
  /// (tiletune/answers.hpp), the answer among them: 1 is a clear winner. 0 where no tie set was
  /// computed: portable_default, none, a pin, and the energy and edp objectives.
  std::size_t tie_count = 0;
  /// The tie set's spread: (slowest tied time - fastest) / fastest, e.g. 0.003 (0.3 %).
  double tie_spread = 0.0;
  /// The fastest median of the tie set, ms (time_ms is the answer's own); -1 without a tie set.
  double fastest_ms = -1.0;
  /// The headroom of the answer: 100 x (1 - its share of its ceiling), the share being its GB/s
  /// over the bandwidth ceiling or its GFLOP/s over the arithmetic one, whichever is larger
  /// (tiletune/physics.hpp); -1 where the cache has no ceiling or no rate for it (a space without
  /// `metrics:`, a cache before schema 8, a pin, the portable default).
  double headroom_percent = -1.0;
  /// That share (1 = at the ceiling; a little over 1 happens); -1 with headroom_percent.
  double ceiling_fraction = -1.0;
  /// Which ceiling bounds it: "bandwidth" or "compute"; empty without a headroom.
  std::string bound;
  /// pinned only: what the pin names, "device", "model" or "architecture", and the reason the
  /// person gave (may be empty).
  std::string pin_scope;
  std::string pin_reason;

  [[nodiscard]] bool ok() const noexcept { return status == QueryStatus::ok; }
  /// True when a config was found (status ok and match is not none).
  [[nodiscard]] bool found() const noexcept { return ok() && match != MatchLevel::none; }
  /// The value of one param, nullopt when the result has no such param.
  [[nodiscard]] std::optional<std::int64_t> param(std::string_view name) const noexcept;
};

/// Settings of a QueryCache.
struct QueryOptions {
  /// How long a read waits for a writer's lock before failing with io_error.
  std::chrono::milliseconds busy_timeout{5'000};
  /// Serve repeated requests from memory. Off: every lookup reads SQLite.
  bool memory_cache = true;
  /// How often a lookup asks SQLite whether another connection changed the file (PRAGMA
  /// data_version: a read transaction, a few system calls, ten times the cost of a warm lookup)
  /// before trusting the memory. 0: on every lookup. Between checks, refresh() forces one.
  std::chrono::nanoseconds recheck_interval{std::chrono::milliseconds(100)};
};

/// An error from QueryCache::open: status and message.
struct QueryError {
  QueryStatus status = QueryStatus::ok;
  std::string message;
};

/// A tuning cache opened read-only (SQLITE_OPEN_READONLY; nothing is ever written). One
/// QueryCache may be used from many threads at once: lookups are serialized by a mutex.
class TILETUNE_QUERY_API QueryCache {
 public:
  /// Opens the cache at path. Refuses (throws std::runtime_error carrying the QueryError's message;
  /// use try_open for the status) a missing file, a file that is not a tiletune cache
  /// (application_id 0x54545431) and a schema this build does not know.
  [[nodiscard]] static QueryCache open(const std::filesystem::path& path, QueryOptions options = {});
  /// As open, but never throws: nullopt with the reason in *error.
  [[nodiscard]] static std::optional<QueryCache> try_open(const std::filesystem::path& path,
                                                          QueryError* error = nullptr,
                                                          QueryOptions options = {}) noexcept;

  /// The engine's default cache: $TILETUNE_DB, else $XDG_CACHE_HOME/tiletune/tiletune.db (when
  /// absolute), else $HOME/.cache/tiletune/tiletune.db; empty when none of them is set.
  [[nodiscard]] static std::filesystem::path default_path();

  QueryCache(QueryCache&&) noexcept;
  QueryCache& operator=(QueryCache&&) noexcept;
  ~QueryCache();

  /// The best config for the request, falling back level by level (see MatchLevel). Only `ok`
  /// trials of the kernel's current version (the one tuned last) count; among configs tied with
  /// the fastest, the pick rule of tiletune/answers.hpp chooses. Never throws.
  [[nodiscard]] QueryResult lookup(const QueryRequest& request) const noexcept;

  /// Checks now whether another connection changed the file, and forgets what is in memory if
  /// so. Returns true when it changed. Never throws (an error counts as a change).
  bool refresh() const noexcept;

  [[nodiscard]] const std::filesystem::path& path() const noexcept;
  /// PRAGMA user_version of the file (1 to cache_newest_schema are read).
  [[nodiscard]] int schema_version() const noexcept;

 private:
  struct Impl;
  explicit QueryCache(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tiletune
