// A trial as the result cache stores it, declared once: the record (TrialKey, TrialRecord), the
// table of its measurement columns (SQL name and type, the record's member, the schema that added
// it, how people and T4 see it), and the identity of a cache file (application id, the schema
// versions). The engine's writer and readers (db/), `show` and `export` (cli/), the T4 export and
// the query library (query/) all go through this table, so adding a measurement is one line in
// trial_columns (+ a migration in db/migrations/ and cache_newest_schema raised).
//
// Needs only the C++ standard library: the query library, which links nothing of the engine,
// includes it too.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tiletune/status.hpp"

namespace tiletune {

/// PRAGMA application_id of every tiletune cache: 'TTT1'. A file with another id is refused.
inline constexpr std::int32_t cache_application_id = 0x54545431;
/// The schema versions a reader of this build understands: 1 (the first cache) up to the one
/// the last of db/migrations/ leaves (embedding the migrations checks that they agree).
inline constexpr int cache_oldest_schema = 1;
inline constexpr int cache_newest_schema = 11;
/// The schema that added the pins and answer_history tables (db/migrations/009_pins_and_answers.sql).
inline constexpr int cache_pins_schema = 9;

/// Identifies one trial: a config (params) of a kernel version on a problem and a device.
struct TrialKey {
  std::int64_t device_id = 0;  ///< from upsert_device
  std::int64_t kernel_id = 0;  ///< from upsert_kernel
  std::string problem;         ///< canonical sizes, "N=8192;R=3"
  std::string params;          ///< canonical params, "TILE=32;BLOCK_ROWS=8;PAD=1"
};

/// The outcome of one trial. Times are over the samples of one measurement; an ok trial needs a
/// positive time_ms (the median), the others keep what went wrong in detail. Every optional
/// member is a column of trial_columns below (unset = NULL = not measured).
struct TrialRecord {
  TrialKey key;
  TrialStatus status = TrialStatus::ok;
  std::string detail;             ///< reason, NVRTC log, CUresult name, max error...
  std::optional<double> time_ms;  ///< median
  std::optional<double> mean_ms;
  std::optional<double> min_ms;
  std::optional<double> stddev_ms;
  std::optional<std::int64_t> samples;
  std::optional<double> gbps;
  std::optional<double> gflops;
  std::optional<std::int64_t> registers;
  std::optional<std::int64_t> shared_bytes;
  std::optional<std::int64_t> spill_bytes;
  std::optional<double> occupancy_offline;
  std::optional<double> occupancy_driver;
  std::optional<double> compile_ms;
  std::optional<double> measure_ms;
  std::optional<double> energy_mj;  ///< energy of one run (NVML), schema 4 and later
  std::optional<double> power_w;    ///< mean power while it ran back to back
  /// Samples discarded because the SM clock was throttled (schema 5; set by the measurement).
  std::optional<std::int64_t> throttled_samples;
  /// CPU-side wall time of one sample's launch + synchronize, mean over the kept samples, seconds
  /// (schema 5).
  std::optional<double> cpu_time_s;
  /// The compiler's warnings of the config's compile, one per line, at most compile_log_max_bytes
  /// (schema 6); unset when it gave none or did not compile (a failure's log is in detail).
  std::optional<std::string> compile_log;
  /// The samples time_ms is the median of, in ms in the order taken, as a JSON array ("[0.0123,
  /// 0.0121]"), at most trial_times_max_samples: the first ones (schema 7; times_ms_of).
  std::optional<std::string> times_ms;
  /// Verification: the checked launch, the comparisons with the reference and the host check, ms
  /// (schema 7).
  std::optional<double> verify_ms;
  /// The ceilings the physics guard held the trial against (tiletune/physics.hpp; schema 8): the
  /// bandwidth (the sweep's copy, or the L2 ceiling for a working set that fits in L2) and the
  /// device's peak arithmetic rate for the space's flop_type. Unset where none was known. best
  /// and the report show the winner's headroom against them.
  std::optional<double> ceiling_gbps;
  std::optional<double> ceiling_gflops;
  /// What NVML read while the trial was timed (schema 11): the mean SM clock over the kept samples,
  /// and the memory clock (MHz) and the GPU's temperature (degrees C) right after the last one.
  std::optional<double> sm_clock_mhz;
  std::optional<double> mem_clock_mhz;
  std::optional<double> temperature_c;
};

/// The longest compile_log a trial keeps: longer warnings are cut at the end of the last line
/// that fits, followed by compile_log_cut.
inline constexpr std::size_t compile_log_max_bytes = 4096;
inline constexpr std::string_view compile_log_cut = "\n[warnings cut at 4 KiB]";

/// A trial's compile_log: the warnings one per line, at most compile_log_max_bytes; unset when
/// there are none.
[[nodiscard]] inline std::optional<std::string> compile_log_of(const std::vector<std::string>& warnings) {
  if (warnings.empty()) return std::nullopt;
  std::string log;
  for (const std::string& w : warnings) {
    if (!log.empty()) log += '\n';
    log += w;
  }
  if (log.size() <= compile_log_max_bytes) return log;
  std::size_t keep = compile_log_max_bytes - compile_log_cut.size();
  if (const std::size_t line_end = log.rfind('\n', keep); line_end != std::string::npos && line_end > 0)
    keep = line_end;
  log.resize(keep);
  log += compile_log_cut;
  return log;
}

/// The most samples a trial keeps in times_ms: a sweep that took more keeps the first ones.
inline constexpr std::size_t trial_times_max_samples = 1000;

/// A trial's times_ms: the first trial_times_max_samples samples as a JSON array of numbers, each
/// with the digits that read back as the same double; unset when there are none (or one is not
/// finite, which JSON cannot hold).
[[nodiscard]] inline std::optional<std::string> times_ms_of(const std::vector<double>& samples) {
  if (samples.empty()) return std::nullopt;
  std::string out = "[";
  const std::size_t kept = std::min(samples.size(), trial_times_max_samples);
  for (std::size_t i = 0; i < kept; ++i) {
    if (!std::isfinite(samples[i])) return std::nullopt;
    char digits[32];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, samples[i]);
    if (ec != std::errc()) return std::nullopt;
    if (i) out += ',';
    out.append(digits, end);
  }
  return out + "]";
}

/// A measurement value as a column holds it: NULL, an INTEGER, a REAL or a TEXT.
using TrialValue = std::variant<std::monostate, std::int64_t, double, std::string>;

/// One measurement column of the trials table.
struct TrialColumn {
  enum class Type { integer, real, text };
  std::string_view name;  ///< SQL column, CSV header and JSON key
  Type type;
  int since_schema;          ///< the migration that added it: older caches read NULL
  std::string_view heading;  ///< in human tables ("time ms")
  int digits;                ///< decimals in human tables (CSV and JSON keep every digit)
  std::string_view t4_name;  ///< its T4 "measurements" name; empty: not one (see t4_export.cpp)
  std::string_view t4_unit;
  std::optional<std::int64_t> TrialRecord::*integer = nullptr;  ///< the member, Type::integer
  std::optional<double> TrialRecord::*real = nullptr;           ///< the member, Type::real
  std::optional<std::string> TrialRecord::*text = nullptr;      ///< the member, Type::text

  [[nodiscard]] constexpr std::string_view sql_type() const noexcept {
    return type == Type::integer ? "INTEGER" : type == Type::real ? "REAL" : "TEXT";
  }
  [[nodiscard]] TrialValue get(const TrialRecord& t) const {
    if (type == Type::integer) return (t.*integer) ? TrialValue(*(t.*integer)) : TrialValue();
    if (type == Type::text) return (t.*text) ? TrialValue(*(t.*text)) : TrialValue();
    return (t.*real) ? TrialValue(*(t.*real)) : TrialValue();
  }
  void set(TrialRecord& t, const TrialValue& v) const {
    if (type == Type::integer) {
      t.*integer = std::holds_alternative<std::int64_t>(v) ? std::optional(std::get<std::int64_t>(v)) : std::nullopt;
    } else if (type == Type::text) {
      t.*text = std::holds_alternative<std::string>(v) ? std::optional(std::get<std::string>(v)) : std::nullopt;
    } else {
      t.*real = std::holds_alternative<double>(v) ? std::optional(std::get<double>(v)) : std::nullopt;
    }
  }
};

namespace trial_column_detail {
struct Shown {
  std::string_view heading;
  int digits;
  std::string_view t4_name = {};
  std::string_view t4_unit = {};
};
constexpr TrialColumn column(std::string_view name, std::optional<double> TrialRecord::*m, int since, Shown s) {
  return {name, TrialColumn::Type::real, since, s.heading, s.digits, s.t4_name, s.t4_unit, nullptr, m};
}
constexpr TrialColumn column(std::string_view name, std::optional<std::string> TrialRecord::*m, int since, Shown s) {
  return {name, TrialColumn::Type::text, since, s.heading, s.digits, s.t4_name, s.t4_unit, nullptr, nullptr, m};
}
constexpr TrialColumn column(std::string_view name, std::optional<std::int64_t> TrialRecord::*m, int since, Shown s) {
  return {name, TrialColumn::Type::integer, since, s.heading, s.digits, s.t4_name, s.t4_unit, m, nullptr};
}
}  // namespace trial_column_detail

/// Every measurement column, in the table's column order (new ones at the end: a migration adds
/// them there). The SQL type follows the member's type.
inline constexpr TrialColumn trial_columns[] = {
    // name                  member                                schema  heading, digits, T4 name, unit
    trial_column_detail::column("time_ms", &TrialRecord::time_ms, 1, {"time ms", 4, "time", "ms"}),
    trial_column_detail::column("mean_ms", &TrialRecord::mean_ms, 1, {"mean ms", 4, "mean_time", "ms"}),
    trial_column_detail::column("min_ms", &TrialRecord::min_ms, 1, {"min ms", 4, "min_time", "ms"}),
    trial_column_detail::column("stddev_ms", &TrialRecord::stddev_ms, 1, {"stddev ms", 4, "stddev_time", "ms"}),
    trial_column_detail::column("samples", &TrialRecord::samples, 1, {"samples", 0, "samples", ""}),
    trial_column_detail::column("gbps", &TrialRecord::gbps, 1, {"GB/s", 1, "throughput", "GB/s"}),
    trial_column_detail::column("gflops", &TrialRecord::gflops, 1, {"GFLOP/s", 1, "performance", "GFLOP/s"}),
    trial_column_detail::column("registers", &TrialRecord::registers, 1, {"regs", 0, "registers", ""}),
    trial_column_detail::column("shared_bytes", &TrialRecord::shared_bytes, 1, {"smem", 0, "shared_memory", "B"}),
    trial_column_detail::column("spill_bytes", &TrialRecord::spill_bytes, 1, {"spill", 0, "spilled_bytes", "B"}),
    trial_column_detail::column("occupancy_offline", &TrialRecord::occupancy_offline, 1, {"occ (model)", 3}),
    trial_column_detail::column("occupancy_driver", &TrialRecord::occupancy_driver, 1, {"occ (driver)", 3}),
    trial_column_detail::column("compile_ms", &TrialRecord::compile_ms, 1, {"compile ms", 1}),
    trial_column_detail::column("measure_ms", &TrialRecord::measure_ms, 1, {"measure ms", 1}),
    trial_column_detail::column("energy_mj", &TrialRecord::energy_mj, 4, {"energy mJ", 4, "energy", "mJ"}),
    trial_column_detail::column("power_w", &TrialRecord::power_w, 4, {"power W", 0, "power", "W"}),
    trial_column_detail::column("throttled_samples", &TrialRecord::throttled_samples, 5,
                                {"throttled", 0, "throttled_samples", ""}),
    trial_column_detail::column("cpu_time_s", &TrialRecord::cpu_time_s, 5, {"cpu s", 6, "cpu_time", "s"}),
    trial_column_detail::column("compile_log", &TrialRecord::compile_log, 6, {"compile log", 0}),
    // T4 has times for these two (t4_export.cpp): times.runtimes and times.validation.
    trial_column_detail::column("times_ms", &TrialRecord::times_ms, 7, {"times ms", 0}),
    trial_column_detail::column("verify_ms", &TrialRecord::verify_ms, 7, {"verify ms", 1}),
    trial_column_detail::column("ceiling_gbps", &TrialRecord::ceiling_gbps, 8, {"ceiling GB/s", 0}),
    trial_column_detail::column("ceiling_gflops", &TrialRecord::ceiling_gflops, 8, {"ceiling GFLOP/s", 0}),
    // T4 names as Kernel Tuner's NVMLObserver names them (core_freq, mem_freq, temperature).
    trial_column_detail::column("sm_clock_mhz", &TrialRecord::sm_clock_mhz, 11, {"SM MHz", 0, "core_freq", "MHz"}),
    trial_column_detail::column("mem_clock_mhz", &TrialRecord::mem_clock_mhz, 11, {"mem MHz", 0, "mem_freq", "MHz"}),
    trial_column_detail::column("temperature_c", &TrialRecord::temperature_c, 11, {"temp C", 0, "temperature", "C"}),
};
inline constexpr std::size_t trial_column_count = std::size(trial_columns);

/// The column of that name; throws std::out_of_range (in a constant expression: does not
/// compile) for a name that is not one.
[[nodiscard]] constexpr const TrialColumn& trial_column(std::string_view name) {
  for (const TrialColumn& c : trial_columns)
    if (c.name == name) return c;
  throw std::out_of_range("no trial column of that name");
}

/// The columns of a trials table under SQL alias `table` ("t"), comma-separated in the order of
/// trial_columns, with NULL for each that a cache of `schema` does not have yet.
[[nodiscard]] inline std::string trial_columns_select(std::string_view table, int schema) {
  std::string out;
  for (const TrialColumn& c : trial_columns) {
    if (!out.empty()) out += ", ";
    if (c.since_schema > schema) {
      out += "NULL";
      continue;
    }
    out += table;
    out += '.';
    out += c.name;
  }
  return out;
}

/// Reads the columns that trial_columns_select put at `first` (0-based) of a result row into t.
/// Row is a statement of either library: is_null(i), int64(i), real(i) and text(i).
template <class Row>
void read_trial_columns(const Row& row, int first, TrialRecord& t) {
  int i = first;
  for (const TrialColumn& c : trial_columns) {
    const int at = i++;
    if (row.is_null(at))
      c.set(t, TrialValue());
    else if (c.type == TrialColumn::Type::integer)
      c.set(t, TrialValue(row.int64(at)));
    else if (c.type == TrialColumn::Type::text)
      c.set(t, TrialValue(std::string(row.text(at))));
    else
      c.set(t, TrialValue(row.real(at)));
  }
}

}  // namespace tiletune
