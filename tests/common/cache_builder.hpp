// One way for the tests to write a result cache: devices, kernel versions, trials and pins in the
// order given, through the engine's CacheDb (so the file is what a sweep would leave). Used by the
// tests that need a cache as their input (the CLI, query, report, launcher, sweep, interchange and
// merge tests); the tests of CacheDb itself call it directly.
//
//   CacheBuilder()
//       .device("GPU-aaaa", "NVIDIA H200")          // later trials are of this device
//       .kernel("transpose", "h1")                  // and of this kernel version (now current)
//       .trial("N=8192", "TILE=32", 1.0)            // an ok trial
//       .failed("N=8192", "TILE=8", TrialStatus::timeout, "hung")
//       .build(dir.path() / "cache.db");
//
// Without device() the trials are of h200_record() (an H200, sm_90); without kernel(), of
// transpose version "h1" (no options, NVRTC 12.4). Calling kernel() again with the same record is a second run of
// that version (upsert_kernel marks it the latest tuned one again).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "tiletune/cache_db.hpp"

namespace tiletune::testing {

/// An NVIDIA H200 (sm_90) with the UUID given, nothing else measured.
[[nodiscard]] DeviceRecord h200_record(std::string uuid = "GPU-00000000-1111-2222-3333-444444444444",
                                       std::string name = "NVIDIA H200");

/// An ok trial of problem and params taking time_ms; device and kernel ids are left 0 (the
/// builder sets them).
[[nodiscard]] TrialRecord trial_record(std::string problem, std::string params, double time_ms);

class CacheBuilder {
 public:
  using Edit = std::function<void(TrialRecord&)>;

  /// The device of the trials that follow (upserted, by UUID).
  CacheBuilder& device(DeviceRecord device);
  CacheBuilder& device(std::string uuid, std::string name = "NVIDIA H200", int cc_major = 9, int cc_minor = 0);
  /// The kernel version of the trials that follow (upserted: the latest tuned one from here on).
  CacheBuilder& kernel(KernelRecord kernel);
  CacheBuilder& kernel(std::string name = "transpose", std::string source_hash = "h1", std::string options = "",
                       std::string nvrtc_version = "12.4");
  /// An ok trial of the current device and kernel; edit (when given) sets its other columns.
  CacheBuilder& trial(std::string problem, std::string params, double time_ms, const Edit& edit = {});
  /// A trial as given, of the current device and kernel (its key's ids are replaced).
  CacheBuilder& trial(TrialRecord trial);
  /// A trial that did not pass: no time, its status and detail.
  CacheBuilder& failed(std::string problem, std::string params, TrialStatus status,
                       std::string detail = "planted failure", const Edit& edit = {});
  CacheBuilder& pin(PinRecord pin);
  /// Whether build(path) opens the file in WAL mode (CacheDb's default) or with a rollback journal.
  CacheBuilder& wal(bool on);

  /// Writes everything into the cache at path (created, or added to) and returns path.
  std::filesystem::path build(const std::filesystem::path& path) const;
  /// Writes everything into an open cache.
  void build(CacheDb& db) const;

 private:
  using Step = std::variant<DeviceRecord, KernelRecord, TrialRecord, PinRecord>;
  std::vector<Step> steps_;
  bool wal_ = true;
};

/// Edits for CacheBuilder::trial: the driver's occupancy; and a measured trial of the tie tests,
/// with a small noise (0.1 % stddev over 100 samples: its median's standard error is far below the
/// tie floor), the occupancy and register count given.
[[nodiscard]] CacheBuilder::Edit with_occupancy(double occupancy);
[[nodiscard]] CacheBuilder::Edit with_low_noise(double occupancy, std::int64_t registers = 32);

}  // namespace tiletune::testing
