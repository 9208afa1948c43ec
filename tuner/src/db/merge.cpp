// merge_cache: the caches of several machines into one, keeping the better trial per key.
// Written against CacheDb's public API, so every write keeps best up to date.
#include <map>
#include <tuple>

#include "tiletune/cache_db.hpp"

namespace tiletune {

namespace {

using KernelKey = std::tuple<std::string, std::string, std::string, std::string>;
using TrialKeyText = std::tuple<std::string, KernelKey, std::string, std::string>;

KernelKey kernel_key(const KernelRecord& k) { return {k.name, k.source_hash, k.options, k.nvrtc_version}; }

/// True when `candidate` should replace `stored`.
bool better(const TrialRecord& candidate, const TrialRecord& stored) {
  const bool c_ok = candidate.status == TrialStatus::ok && candidate.time_ms;
  const bool s_ok = stored.status == TrialStatus::ok && stored.time_ms;
  if (c_ok != s_ok) return c_ok;
  if (c_ok) return *candidate.time_ms < *stored.time_ms;
  return false;
}

}  // namespace

MergeStats merge_cache(CacheDb& into, const CacheDb& from) {
  MergeStats stats;
  TrialFilter all;
  all.current_only = false;
  const std::vector<TrialRow> rows = from.trials(all);
  stats.trials_read = rows.size();

  std::map<std::string, std::int64_t> device_ids;
  for (const DeviceRow& d : from.devices()) device_ids[d.device.uuid] = into.upsert_device(d.device);

  // Older versions first, so that the source's current versions end up current in the target.
  std::map<KernelKey, std::int64_t> kernel_ids;
  for (int pass = 0; pass < 2; ++pass)
    for (const TrialRow& r : rows)
      if (r.current == (pass == 1) && !kernel_ids.contains(kernel_key(r.kernel)))
        kernel_ids[kernel_key(r.kernel)] = into.upsert_kernel(r.kernel);

  std::map<TrialKeyText, TrialRecord> existing;
  for (TrialRow& r : into.trials(all))
    existing.emplace(TrialKeyText{r.device_uuid, kernel_key(r.kernel), r.trial.key.problem, r.trial.key.params},
                     std::move(r.trial));

  for (const TrialRow& r : rows) {
    TrialRecord t = r.trial;
    t.key.device_id = device_ids.at(r.device_uuid);
    t.key.kernel_id = kernel_ids.at(kernel_key(r.kernel));
    auto it = existing.find({r.device_uuid, kernel_key(r.kernel), t.key.problem, t.key.params});
    if (it == existing.end()) {
      ++stats.added;
    } else if (better(t, it->second)) {
      ++stats.replaced;
    } else {
      ++stats.kept;
      continue;
    }
    (void)into.record_trial(t);
  }
  return stats;
}

}  // namespace tiletune
