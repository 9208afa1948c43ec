// The SQLite cache of tuning results: which devices and kernel versions were tuned, one row per
// trial (every status, with its measurements), the best ok trial per (device, kernel version,
// problem), and compiled cubins for the launcher. Small value types go in, rows come out; the
// header needs only the C++ standard library (SQLite stays inside the implementation). The trial
// record and its columns are declared in trial_record.hpp.
//
// A CacheDb is one connection: use it from one thread at a time. Many processes may write the
// same file at once (each write is one BEGIN IMMEDIATE transaction, waiting up to busy_timeout).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <variant>
#include <vector>

#include "tiletune/error.hpp"
#include "tiletune/objective.hpp"
#include "tiletune/status.hpp"
#include "tiletune/trial_record.hpp"

namespace tiletune {

/// A failed SQLite call, or a file that cannot be used as a cache. what() is one line naming the
/// operation and the database file (never the whole SQL: that is in sql()).
class DbError : public Error {
 public:
  DbError(std::string message, std::string call, std::string sql, std::filesystem::path path, int sqlite_code = 0);
  /// The SQLite function that failed ("sqlite3_step"), or what was checked ("application_id").
  [[nodiscard]] const std::string& call() const noexcept { return call_; }
  [[nodiscard]] const std::string& sql() const noexcept { return sql_; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  /// The extended SQLite result code, 0 when the error is not from SQLite itself.
  [[nodiscard]] int sqlite_code() const noexcept { return sqlite_code_; }

 private:
  std::string call_;
  std::string sql_;
  std::filesystem::path path_;
  int sqlite_code_;
};

/// $TILETUNE_DB, else $XDG_CACHE_HOME/tiletune/tiletune.db, else ~/.cache/tiletune/tiletune.db.
[[nodiscard]] std::filesystem::path default_cache_path();

/// A GPU as the tuner saw it. The UUID is the key; the rest is refreshed on every upsert.
struct DeviceRecord {
  std::string uuid;  ///< e.g. "GPU-5f2c..." (cuDeviceGetUuid)
  std::string name;  ///< e.g. "NVIDIA H200"
  int cc_major = 0;
  int cc_minor = 0;
  std::optional<int> sm_count;
  std::optional<std::int64_t> memory_bytes;
  std::optional<std::int64_t> l2_bytes;
  std::optional<int> driver_version;  ///< cuDriverGetVersion, e.g. 12040
  std::optional<double> copy_gbps;    ///< measured D2D copy bandwidth; nullopt keeps the stored one
  /// The SM clock, kHz (CU_DEVICE_ATTRIBUTE_CLOCK_RATE): with sm_count, the peak arithmetic rate
  /// the physics guard holds trials against, in a replay of an exported recording too (schema 10).
  std::optional<int> sm_clock_khz;
  /// "9.0": the compute capability as outputs write it (export, landscape, T4).
  [[nodiscard]] std::string compute_capability() const {
    return std::to_string(cc_major) + "." + std::to_string(cc_minor);
  }
  friend bool operator==(const DeviceRecord&, const DeviceRecord&) = default;
};

/// One field of a DeviceRecord as a column of the devices table, declared once: CacheDb's reads
/// and writes of a device and the outputs that list a device's fields (`export`'s devices, a
/// landscape's header) go through device_columns, so a field is added here and nowhere else.
struct DeviceColumn {
  using Type = TrialColumn::Type;
  std::string_view name;  ///< SQL column, and the key where an output lists the field
  Type type;
  int since_schema;  ///< the migration that added it: older caches read NULL
  /// Beyond the device's identity (UUID, name, compute capability): optional, listed by outputs
  /// only where known, and kept by an upsert that does not know it (online tuning knows the
  /// identity only; a sweep that skipped the copy benchmark has no copy_gbps), so no writer
  /// blanks what a sweep stored.
  bool description;
  TrialValue (*get)(const DeviceRecord&);
  void (*set)(DeviceRecord&, const TrialValue&);  ///< NULL: nullopt, or "" and 0 for the identity
};

namespace device_column_detail {
template <class T>
struct Field {
  using type = T;
  static constexpr bool optional = false;
};
template <class T>
struct Field<std::optional<T>> {
  using type = T;
  static constexpr bool optional = true;
};

template <auto member>
TrialValue get(const DeviceRecord& d) {
  const auto& field = d.*member;
  using F = Field<std::remove_cvref_t<decltype(field)>>;
  const auto value = [](const typename F::type& v) -> TrialValue {
    if constexpr (std::is_same_v<typename F::type, std::string>)
      return v;
    else if constexpr (std::is_floating_point_v<typename F::type>)
      return static_cast<double>(v);
    else
      return static_cast<std::int64_t>(v);
  };
  if constexpr (F::optional)
    return field ? value(*field) : TrialValue();
  else
    return value(field);
}

template <auto member>
void set(DeviceRecord& d, const TrialValue& v) {
  auto& field = d.*member;
  using F = Field<std::remove_cvref_t<decltype(field)>>;
  using T = typename F::type;
  std::optional<T> value;
  if constexpr (std::is_same_v<T, std::string>) {
    if (const auto* text = std::get_if<std::string>(&v)) value = *text;
  } else if constexpr (std::is_floating_point_v<T>) {
    if (const auto* real = std::get_if<double>(&v)) value = *real;
  } else {
    if (const auto* integer = std::get_if<std::int64_t>(&v)) value = static_cast<T>(*integer);
  }
  if constexpr (F::optional)
    field = value;
  else
    field = value.value_or(T{});
}

template <auto member>
constexpr DeviceColumn column(std::string_view name, DeviceColumn::Type type, int since_schema, bool description) {
  return {name, type, since_schema, description, &get<member>, &set<member>};
}
}  // namespace device_column_detail

/// The columns of the devices table besides id and last_seen (tests/db/test_cache_db.cpp checks
/// them against the schema).
inline constexpr DeviceColumn device_columns[] = {
    device_column_detail::column<&DeviceRecord::uuid>("uuid", DeviceColumn::Type::text, 1, false),
    device_column_detail::column<&DeviceRecord::name>("name", DeviceColumn::Type::text, 1, false),
    device_column_detail::column<&DeviceRecord::cc_major>("cc_major", DeviceColumn::Type::integer, 1, false),
    device_column_detail::column<&DeviceRecord::cc_minor>("cc_minor", DeviceColumn::Type::integer, 1, false),
    device_column_detail::column<&DeviceRecord::sm_count>("sm_count", DeviceColumn::Type::integer, 1, true),
    device_column_detail::column<&DeviceRecord::memory_bytes>("memory_bytes", DeviceColumn::Type::integer, 1, true),
    device_column_detail::column<&DeviceRecord::l2_bytes>("l2_bytes", DeviceColumn::Type::integer, 1, true),
    device_column_detail::column<&DeviceRecord::driver_version>("driver_version", DeviceColumn::Type::integer, 1, true),
    device_column_detail::column<&DeviceRecord::copy_gbps>("copy_gbps", DeviceColumn::Type::real, 3, true),
    device_column_detail::column<&DeviceRecord::sm_clock_khz>("sm_clock_khz", DeviceColumn::Type::integer, 10, true),
};

struct DeviceRow {
  std::int64_t id = 0;
  DeviceRecord device;
  std::string last_seen;  ///< ISO 8601 UTC
};

/// A kernel version: anything that changes the generated code is part of the key, so results of
/// an edited source or other options never count for the new one.
struct KernelRecord {
  std::string name;
  std::string source_hash;    ///< hash of the source and the headers it includes
  std::string options;        ///< canonical compile options (without the params)
  std::string nvrtc_version;  ///< e.g. "12.4"
};

/// What record_trial did.
struct RecordResult {
  std::int64_t trial_id = 0;
  bool replaced = false;  ///< a trial with the same key existed and was overwritten
  bool is_best = false;   ///< the trial is now the best for its key
};

/// A stored trial with the names of its device and kernel.
struct TrialRow {
  std::int64_t id = 0;
  TrialRecord trial;
  std::string device_uuid;
  std::string device_name;
  KernelRecord kernel;
  std::string created_at;  ///< ISO 8601 UTC
  bool is_best = false;
  bool current = false;  ///< its kernel version is the latest one tuned
};

/// Filters for trials(); an unset field matches everything.
struct TrialFilter {
  std::optional<std::string> kernel;  ///< kernel name
  std::optional<std::string> device;  ///< device UUID or name
  std::optional<TrialStatus> status;
  std::optional<std::string> problem;
  bool current_only = false;  ///< only the latest tuned version of each kernel
  std::optional<std::int64_t> limit;
};

/// What a pin names: one device (by UUID), every device of a model (by name) or of an
/// architecture ("sm_90").
enum class PinScope { device, model, architecture };
[[nodiscard]] std::string_view pin_scope_name(PinScope scope) noexcept;
[[nodiscard]] std::optional<PinScope> parse_pin_scope(std::string_view name) noexcept;

/// A config chosen by a person for a kernel (by name, any version) and problem on what the
/// scope names (schema 9). It answers lookups at the match level `pinned`, above every measured one.
struct PinRecord {
  PinScope scope = PinScope::device;
  std::string target;      ///< a UUID, a device name, or "sm_90"
  std::string kernel;      ///< kernel name
  std::string problem;     ///< sizes sorted by name, "N=8192;R=3" (stored so)
  std::string params;      ///< params, "TILE=32;BLOCK_ROWS=8" (the space's order)
  std::string reason;      ///< why, in the person's words (may be empty)
  std::string created_at;  ///< ISO 8601 UTC; empty when pinning: now
};

/// True when `pin` applies to `device` (its UUID, name or architecture).
[[nodiscard]] bool pin_applies(const PinRecord& pin, const DeviceRecord& device);
/// "sm_90" for compute capability 9.0.
[[nodiscard]] std::string architecture_name(int cc_major, int cc_minor);

/// The answer for a (device, kernel version, problem): the pick of the tie set of its ok trials
/// (tiletune/answers.hpp; the fastest trial alone for the energy objectives), what a pin says, and
/// how often the answer changed over the runs that wrote trials of it.
struct BestEntry {
  std::int64_t trial_id = 0;  ///< the answer's trial
  DeviceRow device;
  std::int64_t kernel_id = 0;
  KernelRecord kernel;
  TrialRecord trial;           ///< key.problem and key.params name the answer
  bool current = false;        ///< its kernel version is the latest one tuned
  std::string fastest_params;  ///< the fastest ok trial (equal times: config order)
  double fastest_ms = 0.0;
  /// The configs tied with the fastest, fastest first (time objective; empty otherwise).
  std::vector<std::string> tie_params;
  double tie_spread = 0.0;  ///< (slowest tied - fastest) / fastest
  /// The configs that would stand as the answer were they the standing one (held with the
  /// fastest: answers.hpp), fastest first: a superset of tie_params (time objective).
  std::vector<std::string> holdable_params;
  /// The pin that answers instead, for this device (device, else model, else architecture).
  std::optional<PinRecord> pin;
  /// The pinned config's own trial on this device and problem, when it was measured.
  std::optional<TrialRecord> pinned_trial;
  /// Runs (sweeps, merges: values of the version's used_seq) that wrote trials of this key, and
  /// how many of them ended with another answer than the run before (answer_history, schema 9).
  int runs = 0;
  int winner_changes = 0;
  /// The params that actually answer: the pin's when there is one, else the tie set's pick.
  [[nodiscard]] const std::string& answer_params() const noexcept { return pin ? pin->params : trial.key.params; }
};

/// One row of answer_history (schema 9): the answer a run left for a device, kernel version and
/// problem (the tie set's pick, or the standing answer while it was still held: answers.hpp).
struct AnswerRecord {
  std::string device_uuid;
  KernelRecord kernel;
  bool current = false;  ///< its kernel version is the latest one tuned
  std::string problem;
  std::int64_t run_seq = 0;  ///< the run: a value of the version's used_seq
  std::string params;
  double time_ms = 0.0;
  std::int64_t ties = 0;  ///< the tie set's size
};

/// Filters for best(); an unset field matches everything.
struct BestFilter {
  std::optional<std::string> kernel;  ///< kernel name
  std::optional<std::string> device;  ///< device UUID or name
  std::optional<std::string> problem;
  bool current_only = true;  ///< results of older kernel versions are not served
  /// What "best" means: the fastest ok trial (the best table), or the ok trial with the lowest
  /// energy or energy-delay product among those whose energy was measured.
  Objective objective = Objective::time;
};

/// A compiled kernel image, keyed by the compile cache key.
struct CubinRecord {
  std::string key;
  std::string arch;          ///< e.g. "sm_90"
  std::string cubin;         ///< the ELF image, bytes
  std::string lowered_name;  ///< mangled name of the entry point
};

class CacheDb {
 public:
  enum class Mode { read_write, read_only };

  struct Options {
    Mode mode = Mode::read_write;
    /// How long a statement waits for another process's lock before failing.
    std::chrono::milliseconds busy_timeout{10'000};
    /// Use WAL where the file is on a local disk (it is never used on NFS, SMB and the like).
    bool wal = true;
    /// read_write only: create missing parent directories of the file.
    bool create_directories = true;
  };

  /// Opens (read_write: creating or upgrading) the cache at path. Throws DbError for a file that
  /// is not a tiletune cache (left untouched), one written by a newer tiletune, or, read_only, a
  /// missing or uninitialized file.
  [[nodiscard]] static CacheDb open(const std::filesystem::path& path, Options options);
  [[nodiscard]] static CacheDb open(const std::filesystem::path& path, Mode mode = Mode::read_write);

  CacheDb(CacheDb&&) noexcept;
  CacheDb& operator=(CacheDb&&) noexcept;
  ~CacheDb();

  [[nodiscard]] const std::filesystem::path& path() const noexcept;
  [[nodiscard]] Mode mode() const noexcept;
  /// The schema version of the file (below latest only for an old cache opened read_only).
  [[nodiscard]] int schema_version() const noexcept;
  /// The schema version this build writes.
  [[nodiscard]] static int latest_schema_version() noexcept;
  /// "wal" on local disks, else SQLite's rollback journal mode ("delete").
  [[nodiscard]] std::string journal_mode() const;

  /// Inserts or refreshes a device (by UUID) and returns its id.
  [[nodiscard]] std::int64_t upsert_device(const DeviceRecord& device);
  [[nodiscard]] std::optional<DeviceRow> device(std::string_view uuid) const;
  [[nodiscard]] std::vector<DeviceRow> devices() const;

  /// Inserts a kernel version (or finds it) and marks it the latest tuned one; returns its id.
  [[nodiscard]] std::int64_t upsert_kernel(const KernelRecord& kernel);
  /// The id of a kernel version, without changing anything.
  [[nodiscard]] std::optional<std::int64_t> find_kernel(const KernelRecord& kernel) const;

  /// Stores one finished trial in its own transaction, replacing a trial with the same key, and
  /// updates best: an ok trial becomes best when it is faster than the current best; replacing
  /// a trial recomputes the best of its key from the stored ok trials.
  RecordResult record_trial(const TrialRecord& trial);
  /// Whether a trial (any status) is stored for this key.
  [[nodiscard]] bool has_trial(const TrialKey& key) const;
  /// The params of every stored trial (any status) of a device, kernel version and problem:
  /// what a resumed sweep skips.
  [[nodiscard]] std::unordered_set<std::string> existing_trials(std::int64_t device_id, std::int64_t kernel_id,
                                                                std::string_view problem) const;
  /// Stored trials, ordered by kernel, device, problem, then ok ones fastest first.
  [[nodiscard]] std::vector<TrialRow> trials(const TrialFilter& filter = {}) const;

  /// The answers, one per device, kernel version and problem with an ok trial, ordered by kernel
  /// name, device UUID and problem: the tie set's pick (tiletune/answers.hpp), its tie set, the pin
  /// that overrides it and its history.
  [[nodiscard]] std::vector<BestEntry> best(const BestFilter& filter = {}) const;
  /// The best entry for exactly this kernel version (so an edited source, other options or another
  /// NVRTC find nothing), device and problem.
  [[nodiscard]] std::optional<BestEntry> best_for(const KernelRecord& kernel, std::string_view device_uuid,
                                                  std::string_view problem) const;
  /// The problem sizes stored for the latest tuned version of a kernel, sorted.
  [[nodiscard]] std::vector<std::string> problems(std::string_view kernel_name) const;

  /// Stores a pin, replacing one with the same scope, target, kernel and problem (read-write,
  /// schema 9). An empty created_at stores now.
  void pin(const PinRecord& pin);
  /// Removes a pin; false when there was none with that key.
  bool unpin(PinScope scope, std::string_view target, std::string_view kernel, std::string_view problem);
  /// Stored pins (none in a cache older than schema 9), by kernel, problem, scope and target;
  /// kernel filters when not empty.
  [[nodiscard]] std::vector<PinRecord> pins(std::string_view kernel = {}) const;

  /// The standing answer of key's device, kernel version and problem (its params are not read):
  /// the answer the runs before the version's current run left (answers.hpp); empty when none
  /// (or before schema 9).
  [[nodiscard]] std::string standing_answer(const TrialKey& key) const;
  /// The answer history, by kernel version, run, device and problem (none before schema 9).
  [[nodiscard]] std::vector<AnswerRecord> answer_history() const;
  /// Stores the answers of one run of another cache (a merge copies its sources' histories) as a
  /// new run of kernel version `kernel_id`: raises the version's used_seq, as a sweep does, and
  /// keeps each answer under it for the device of its UUID (read-write, schema 9; the devices
  /// must be stored already). The run after it takes the latest of them as its standing answer.
  void append_answer_run(std::int64_t kernel_id, const std::vector<AnswerRecord>& answers);

  /// Stores (or replaces) a cubin under its key.
  void put_cubin(const CubinRecord& cubin);
  [[nodiscard]] std::optional<CubinRecord> get_cubin(std::string_view key) const;

  /// Many writes as one transaction (BEGIN IMMEDIATE): until the batch is committed, every write
  /// made through this CacheDb joins it (each write's own transaction becomes a savepoint in it),
  /// so either all of them are stored or, when the batch ends without commit() (an exception),
  /// none is. Read-write caches only.
  class Batch {
   public:
    Batch(Batch&&) noexcept;
    Batch& operator=(Batch&&) = delete;
    ~Batch();
    void commit();

   private:
    friend class CacheDb;
    struct State;
    explicit Batch(std::unique_ptr<State> state) noexcept;
    std::unique_ptr<State> state_;
  };
  [[nodiscard]] Batch batch();

  /// Free-form key/value metadata (created_by, schema history, ...).
  [[nodiscard]] std::optional<std::string> meta(std::string_view key) const;
  void set_meta(std::string_view key, std::string_view value);

 private:
  struct Impl;
  explicit CacheDb(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

/// What merge_cache did.
struct MergeStats {
  std::uint64_t trials_read = 0;
  std::uint64_t added = 0;        ///< keys the target did not have
  std::uint64_t replaced = 0;     ///< keys where the source's trial was better
  std::uint64_t kept = 0;         ///< keys where the target's trial was as good or better
  std::uint64_t pins_copied = 0;  ///< pins added or replaced by a newer one
};

/// Copies every trial of `from` into `into` (caches of several machines into one), keeping per
/// key (device, kernel version, problem, params) the better trial: an ok trial beats any other
/// status, the faster of two ok trials wins, and otherwise the target's stays. Pins are copied
/// too: a pin the target lacks is added, and of two pins with one key the newer stays. Kernel versions
/// that are current in `from` become current in `into`. `from` is read and checked whole first,
/// and everything is written in one transaction: a DbError (a row that cannot be stored, the
/// same file as `into`) leaves `into` unchanged.
MergeStats merge_cache(CacheDb& into, const CacheDb& from);

/// merge_cache of every source into the cache file `into` (created if missing, in an existing
/// directory), in one transaction. Every source is opened read-only and checked before `into` is
/// opened for writing, so a bad source, or a source that is `into` itself (same_file), fails with
/// every file as it was; a target this call created is removed again when it fails.
std::vector<MergeStats> merge_cache_files(const std::filesystem::path& into,
                                          const std::vector<std::filesystem::path>& sources);

/// True when a and b are the same existing file (the same device and inode: another spelling of
/// the path, a symbolic or a hard link); false when either does not exist.
[[nodiscard]] bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace tiletune
