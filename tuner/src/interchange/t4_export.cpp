// Trials of the result cache as a T4 results document (kernel_tuner/schema/T4/1.0.0/
// results-schema.json): per result the required configuration (object), times (object),
// invalidity (one of timeout, compile, runtime, correctness, constraints, correct) and
// correctness (number), with timestamp, objectives and measurements. Times are milliseconds
// (metadata.timeunit says so): times.runtimes holds a trial's samples (times_ms; the median
// alone for a trial of a cache older than schema 7), times.validation its verify_ms. What T4 has no field for (kernel,
// device, problem, status and reason) is kept under "tiletune" in each result; the schema allows extra properties.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "common/text_out.hpp"
#include "tiletune/interchange.hpp"

#ifndef TILETUNE_VERSION
#define TILETUNE_VERSION "unknown"
#endif

namespace tiletune {
namespace {

using Json = nlohmann::json;

const char* invalidity(TrialStatus s) {
  switch (s) {
    case TrialStatus::ok: return "correct";
    case TrialStatus::pruned: return "constraints";
    case TrialStatus::compile_failed: return "compile";
    case TrialStatus::launch_failed: return "runtime";
    case TrialStatus::runtime_fault: return "runtime";
    case TrialStatus::timeout: return "timeout";
    case TrialStatus::wrong_result: return "correctness";
    case TrialStatus::suspect: return "correctness";  // passed a check that should have failed it
  }
  return "runtime";
}

// "N=8192;R=3" → {"N": 8192, "R": 3}; a value that is not an integer stays a string.
Json assignments(const std::string& text) {
  Json out = Json::object();
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find(';', pos), text.size());
    const std::string part = text.substr(pos, end - pos);
    pos = end + 1;
    const auto eq = part.find('=');
    if (eq == std::string::npos) continue;
    const std::string value = part.substr(eq + 1);
    try {
      std::size_t used = 0;
      const long long v = std::stoll(value, &used);
      if (used == value.size()) {
        out[part.substr(0, eq)] = v;
        continue;
      }
    } catch (const std::exception&) {}
    out[part.substr(0, eq)] = value;
  }
  return out;
}

// The measurements with a T4 name in the column table (tiletune/trial_record.hpp), then the
// occupancy: T4 has one, so the driver's where it was read, else the model's. compile_ms and
// measure_ms are T4 times (compilation_time, benchmark), not measurements.
Json measurements(const TrialRecord& t) {
  Json out = Json::array();
  for (const TrialColumn& c : trial_columns) {
    if (c.t4_name.empty()) continue;
    const TrialValue v = c.get(t);
    Json value;
    if (const auto* i = std::get_if<std::int64_t>(&v))
      value = *i;
    else if (const auto* d = std::get_if<double>(&v))
      value = *d;
    else
      continue;
    out.push_back({{"name", c.t4_name}, {"value", std::move(value)}, {"unit", c.t4_unit}});
  }
  if (const auto occupancy = t.occupancy_driver ? t.occupancy_driver : t.occupancy_offline)
    out.push_back({{"name", "occupancy"}, {"value", *occupancy}, {"unit", ""}});
  return out;
}

// The samples of an ok trial as T4's runtimes (as Kernel Tuner writes its "times"): times_ms
// when the cache kept them and they read as an array of numbers, else the median alone.
Json runtimes(const TrialRecord& t) {
  if (t.status != TrialStatus::ok || !t.time_ms) return Json::array();
  if (t.times_ms) {
    Json samples = Json::parse(*t.times_ms, nullptr, /*allow_exceptions=*/false);
    if (samples.is_array() && !samples.empty() &&
        std::all_of(samples.begin(), samples.end(), [](const Json& v) { return v.is_number(); }))
      return samples;
  }
  return Json::array({*t.time_ms});
}

Json result(const TrialRow& r, Objective objective) {
  const TrialRecord& t = r.trial;
  Json times = Json::object();
  times["runtimes"] = runtimes(t);
  if (t.compile_ms) times["compilation_time"] = *t.compile_ms;
  if (t.verify_ms) times["validation"] = *t.verify_ms;
  if (t.measure_ms) times["benchmark"] = *t.measure_ms;
  return {{"timestamp", r.created_at},
          {"configuration", assignments(t.key.params)},
          {"objectives", Json::array({std::string(objective_name(objective))})},
          {"times", std::move(times)},
          {"invalidity", invalidity(t.status)},
          {"correctness", t.status == TrialStatus::ok ? 1 : 0},
          {"measurements", measurements(t)},
          {"tiletune",
           {{"kernel", r.kernel.name},
            {"source_hash", r.kernel.source_hash},
            {"device", r.device_name},
            {"device_uuid", r.device_uuid},
            {"problem", assignments(t.key.problem)},
            {"status", std::string(status_name(t.status))},
            {"detail", t.detail.substr(0, t.detail.find('\n'))}}}};
}

}  // namespace

std::string export_t4(const CacheDb& db, const TrialFilter& filter, Objective objective, std::size_t* replaced) {
  Json results = Json::array();
  for (const TrialRow& r : db.trials(filter)) results.push_back(result(r, objective));
  Json devices = Json::array();
  for (const DeviceRow& d : db.devices())
    devices.push_back(
        {{"name", d.device.name}, {"uuid", d.device.uuid}, {"compute_capability", d.device.compute_capability()}});
  const Json doc = {{"schema_version", "1.0.0"},
                    {"metadata",
                     {{"autotuner", "tiletune"},
                      {"autotuner_version", TILETUNE_VERSION},
                      {"compute_api", "CUDA"},
                      {"timeunit", "milliseconds"},
                      {"devices", std::move(devices)}}},
                    {"results", std::move(results)}};
  return text_out::dump_json(doc, 2, replaced) + "\n";
}

}  // namespace tiletune
