// What makes a record unstorable: the checks CacheDb's writers make, shared with merge, which
// makes them on every source row before it writes anything. Each returns the reason, or "".
#pragma once

#include <cmath>
#include <string>

#include "tiletune/cache_db.hpp"

namespace tiletune::db_detail {

[[nodiscard]] inline std::string device_defect(const DeviceRecord& d) {
  return d.uuid.empty() ? "the device '" + d.name + "' has no UUID" : std::string();
}

[[nodiscard]] inline std::string kernel_defect(const KernelRecord& k) {
  return k.name.empty() ? std::string("a kernel needs a name") : std::string();
}

[[nodiscard]] inline std::string trial_defect(const TrialRecord& t) {
  if (t.status == TrialStatus::ok && !(t.time_ms && std::isfinite(*t.time_ms) && *t.time_ms > 0))
    return "an ok trial needs a positive time_ms (problem " + t.key.problem + ", params " + t.key.params + ")";
  return {};
}

}  // namespace tiletune::db_detail
