// Helpers for the database tests: sample records, file fingerprints, raw SQLite access.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "db/sqlite.hpp"
#include "tiletune/cache_db.hpp"

namespace tiletune::testing {

inline DeviceRecord sample_device(std::string uuid = "GPU-00000000-1111-2222-3333-444444444444",
                                  std::string name = "NVIDIA H200") {
  DeviceRecord d;
  d.uuid = std::move(uuid);
  d.name = std::move(name);
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.memory_bytes = 150'000'000'000;
  d.l2_bytes = 50 * 1024 * 1024;
  d.driver_version = 12040;
  d.copy_gbps = 3900.0;
  return d;
}

inline KernelRecord sample_kernel(std::string hash = "abc123", std::string name = "transpose") {
  return KernelRecord{std::move(name), std::move(hash), "-std=c++17 -arch=sm_90", "12.4"};
}

inline TrialRecord ok_trial(std::int64_t device, std::int64_t kernel, std::string problem, std::string params,
                            double time_ms) {
  TrialRecord t;
  t.key = TrialKey{device, kernel, std::move(problem), std::move(params)};
  t.status = TrialStatus::ok;
  t.time_ms = time_ms;
  t.mean_ms = time_ms * 1.01;
  t.min_ms = time_ms * 0.99;
  t.stddev_ms = time_ms * 0.002;
  t.samples = 25;
  t.gbps = 1000.0 / time_ms;
  t.registers = 32;
  t.shared_bytes = 4224;
  t.spill_bytes = 0;
  t.occupancy_offline = 1.0;
  t.occupancy_driver = 0.75;
  t.compile_ms = 40.0;
  t.measure_ms = 12.5;
  return t;
}

inline TrialRecord failed_trial(std::int64_t device, std::int64_t kernel, std::string problem, std::string params,
                                TrialStatus status, std::string detail) {
  TrialRecord t;
  t.key = TrialKey{device, kernel, std::move(problem), std::move(params)};
  t.status = status;
  t.detail = std::move(detail);
  return t;
}

/// What must not change when we refuse a file: its bytes (FNV-1a), its size and its mtime, and
/// the absence of SQLite's side files next to it.
struct Fingerprint {
  std::uint64_t hash = 0;
  std::uintmax_t size = 0;
  std::filesystem::file_time_type mtime;
  std::vector<std::string> siblings;
  bool operator==(const Fingerprint&) const = default;
};
[[nodiscard]] Fingerprint fingerprint(const std::filesystem::path& file);

/// The message of the DbError that CacheDb::open(p, mode) throws, or "<opened>".
[[nodiscard]] std::string open_error(const std::filesystem::path& p, CacheDb::Mode mode);

/// A raw connection (no checks of ours), for building fixtures and inspecting files.
[[nodiscard]] db_detail::Connection raw_connection(const std::filesystem::path& file);

/// A raw connection to a new cache built as tiletune at schema `version` left it: migrations
/// 1..version applied, application_id and user_version set, no rows.
[[nodiscard]] db_detail::Connection cache_at_version(const std::filesystem::path& file, int version);

/// Rows of an old cache written by hand: device 1 ('GPU-1', an H200) and kernel 1 ('transpose').
void insert_h200_and_transpose(db_detail::Connection& conn);

/// A description of every table, column, index and foreign key, to compare two schemas.
[[nodiscard]] std::string describe_schema(db_detail::Connection& conn);

}  // namespace tiletune::testing
