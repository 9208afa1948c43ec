// Private to the query library: the stored trials of a cache as JSON text, for the C API's
// tiletune_trials_json (and so for the Python package, which reads trials through it).
#pragma once

#include <optional>
#include <string>

#include "query/reader.hpp"
#include "tiletune/query.hpp"

namespace tiletune::query_detail {

struct TrialsFilter {
  std::optional<std::string> kernel;
  std::optional<std::string> device;  ///< UUID or name
  std::optional<std::string> status;
  bool all_versions = false;  ///< false: only each kernel's current version
};

/// A JSON array with one object per trial. Opens its own read-only connection to the cache's
/// file, so that the lookups' connection and memory are left alone. Throws Failure.
[[nodiscard]] std::string trials_json(const QueryCache& cache, const TrialsFilter& filter);

}  // namespace tiletune::query_detail
