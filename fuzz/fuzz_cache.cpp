// libFuzzer harness of the result-cache readers: any bytes as a cache file (an SQLite database,
// a damaged one, or not SQLite at all), opened by both readers a user's program and the CLI use:
// the query library (QueryCache: open, lookups at every match level, the trials listing behind
// the C API and the Python package) and the engine's CacheDb read-only (devices, best, trials,
// as `show`, `best` and `export` read them). A refusal (QueryError, tiletune::Error) is the
// reader doing its job; anything else that escapes, a crash, a sanitizer report or a hang is a
// finding. The file is written once per input, its -wal/-shm/-journal removed first.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "scratch_file.hpp"
#include "tiletune/cache_db.hpp"
#include "tiletune/error.hpp"
#include "tiletune/query.hpp"
#include "tiletune/tiletune.h"

namespace {

void read_with_query_library(const std::filesystem::path& path) {
  tiletune::QueryOptions options;
  options.busy_timeout = std::chrono::milliseconds(0);
  auto cache = tiletune::QueryCache::try_open(path, nullptr, options);
  if (!cache) return;
  for (const char* spec : {"GPU-00000000-0000-0000-0000-000000000000", "NVIDIA H200", "sm_90", ""}) {
    tiletune::QueryRequest request;
    request.kernel = "transpose";
    request.device = tiletune::QueryDevice::parse(spec);
    request.sizes = {{"N", 8192}};
    (void)cache->lookup(request);
    request.sizes.clear();
    request.objective = tiletune::Objective::energy;
    (void)cache->lookup(request);
  }
}

// The trials listing of the C API (what the Python package reads), which must be valid UTF-8.
void list_with_c_api(const std::filesystem::path& path) {
  tiletune_cache* cache = nullptr;
  if (tiletune_open(path.c_str(), &cache) != TILETUNE_OK) return;
  char* json = nullptr;
  if (tiletune_trials_json(cache, nullptr, nullptr, nullptr, 1, &json) == TILETUNE_OK) tiletune_string_free(json);
  tiletune_close(cache);
}

void read_with_engine(const std::filesystem::path& path) {
  tiletune::CacheDb::Options options;
  options.mode = tiletune::CacheDb::Mode::read_only;
  options.busy_timeout = std::chrono::milliseconds(0);
  try {
    const tiletune::CacheDb db = tiletune::CacheDb::open(path, options);
    (void)db.devices();
    (void)db.best();
    (void)db.trials();
  } catch (const tiletune::Error&) {}
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const tiletune::fuzz::ScratchFiles dir;
  dir.clear("cache.db");
  const auto path = dir.write("cache.db", data, size);
  read_with_query_library(path);
  list_with_c_api(path);
  read_with_engine(path);  // the readers change nothing in the file (at most an empty -wal, -shm)
  return 0;
}
