// The tests' cache builder (see cache_builder.hpp).
#include "cache_builder.hpp"

#include <optional>
#include <utility>

namespace tiletune::testing {

DeviceRecord h200_record(std::string uuid, std::string name) {
  DeviceRecord d;
  d.uuid = std::move(uuid);
  d.name = std::move(name);
  d.cc_major = 9;
  d.cc_minor = 0;
  return d;
}

TrialRecord trial_record(std::string problem, std::string params, double time_ms) {
  TrialRecord t;
  t.key = TrialKey{0, 0, std::move(problem), std::move(params)};
  t.status = TrialStatus::ok;
  t.time_ms = time_ms;
  return t;
}

CacheBuilder& CacheBuilder::device(DeviceRecord device) {
  steps_.emplace_back(std::move(device));
  return *this;
}

CacheBuilder& CacheBuilder::device(std::string uuid, std::string name, int cc_major, int cc_minor) {
  DeviceRecord d = h200_record(std::move(uuid), std::move(name));
  d.cc_major = cc_major;
  d.cc_minor = cc_minor;
  return device(std::move(d));
}

CacheBuilder& CacheBuilder::kernel(KernelRecord kernel) {
  steps_.emplace_back(std::move(kernel));
  return *this;
}

CacheBuilder& CacheBuilder::kernel(std::string name, std::string source_hash, std::string options,
                                   std::string nvrtc_version) {
  return kernel(KernelRecord{std::move(name), std::move(source_hash), std::move(options), std::move(nvrtc_version)});
}

CacheBuilder& CacheBuilder::trial(std::string problem, std::string params, double time_ms, const Edit& edit) {
  TrialRecord t = trial_record(std::move(problem), std::move(params), time_ms);
  if (edit) edit(t);
  return trial(std::move(t));
}

CacheBuilder& CacheBuilder::trial(TrialRecord trial) {
  steps_.emplace_back(std::move(trial));
  return *this;
}

CacheBuilder& CacheBuilder::failed(std::string problem, std::string params, TrialStatus status, std::string detail,
                                   const Edit& edit) {
  TrialRecord t;
  t.key = TrialKey{0, 0, std::move(problem), std::move(params)};
  t.status = status;
  t.detail = std::move(detail);
  if (edit) edit(t);
  return trial(std::move(t));
}

CacheBuilder& CacheBuilder::pin(PinRecord pin) {
  steps_.emplace_back(std::move(pin));
  return *this;
}

CacheBuilder& CacheBuilder::wal(bool on) {
  wal_ = on;
  return *this;
}

std::filesystem::path CacheBuilder::build(const std::filesystem::path& path) const {
  CacheDb::Options o;
  o.wal = wal_;
  CacheDb db = CacheDb::open(path, o);
  build(db);
  return path;
}

void CacheBuilder::build(CacheDb& db) const {
  std::optional<std::int64_t> device, kernel;
  for (const Step& step : steps_) {
    if (const auto* d = std::get_if<DeviceRecord>(&step)) {
      device = db.upsert_device(*d);
    } else if (const auto* k = std::get_if<KernelRecord>(&step)) {
      kernel = db.upsert_kernel(*k);
    } else if (const auto* t = std::get_if<TrialRecord>(&step)) {
      // The defaults, upserted only when a trial needs them, so a cache of other devices has no H200.
      if (!device) device = db.upsert_device(h200_record());
      if (!kernel) kernel = db.upsert_kernel(KernelRecord{"transpose", "h1", "", "12.4"});
      TrialRecord keyed = *t;
      keyed.key.device_id = *device;
      keyed.key.kernel_id = *kernel;
      (void)db.record_trial(keyed);
    } else {
      db.pin(std::get<PinRecord>(step));
    }
  }
}

CacheBuilder::Edit with_occupancy(double occupancy) {
  return [occupancy](TrialRecord& t) { t.occupancy_driver = occupancy; };
}

CacheBuilder::Edit with_low_noise(double occupancy, std::int64_t registers) {
  return [occupancy, registers](TrialRecord& t) {
    t.stddev_ms = t.time_ms.value_or(0) * 0.001;
    t.samples = 100;
    t.occupancy_driver = occupancy;
    t.registers = registers;
  };
}

}  // namespace tiletune::testing
