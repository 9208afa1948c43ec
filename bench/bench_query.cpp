// Lookups of the query library (issue 5) on a fixture cache of 1000 ok trials (4 devices,
// 10 problem sizes, 25 configs): a warm lookup answered from memory (goal <= 1 us), a lookup
// through SQLite with the memory off (goal <= 25 us; exact, nearest, same architecture with the
// tie set of the winner's device and problem and the pin check, issue 24; and the portable
// default, which reads every trial), open plus the first lookup (goal <= 200 us), and
// the C API's warm path. Prints; asserts nothing.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "tiletune/cache_db.hpp"
#include "tiletune/query.hpp"
#include "tiletune/tiletune.h"

namespace {

namespace fs = std::filesystem;
using tiletune::MatchLevel;
using tiletune::QueryCache;
using tiletune::QueryDevice;
using tiletune::QueryOptions;
using tiletune::QueryRequest;

const char* const uuids[] = {"GPU-aaaaaaaa-0000-4000-8000-000000000001", "GPU-bbbbbbbb-0000-4000-8000-000000000002",
                             "GPU-a100a100-0000-4000-8000-000000000004", "GPU-14141414-0000-4000-8000-000000000005"};

// The fixture, written once per run into a temporary directory.
const fs::path& fixture() {
  static const fs::path path = [] {
    fs::path dir = fs::temp_directory_path() / ("tiletune-bench-query-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    fs::path p = dir / "cache.db";
    auto db = tiletune::CacheDb::open(p);
    const char* names[] = {"NVIDIA H200", "NVIDIA H200", "NVIDIA A100-SXM4-80GB", "NVIDIA L4"};
    const int cc[][2] = {{9, 0}, {9, 0}, {8, 0}, {8, 9}};
    auto kernel = db.upsert_kernel(tiletune::KernelRecord{"transpose", "bench", "-std=c++17", "12.4"});
    for (int d = 0; d < 4; ++d) {
      tiletune::DeviceRecord rec;
      rec.uuid = uuids[d];
      rec.name = names[d];
      rec.cc_major = cc[d][0];
      rec.cc_minor = cc[d][1];
      auto device = db.upsert_device(rec);
      for (int p = 0; p < 10; ++p) {
        for (int c = 0; c < 25; ++c) {
          tiletune::TrialRecord t;
          t.key = tiletune::TrialKey{
              device, kernel, "N=" + std::to_string(512 << p),
              "TILE=" + std::to_string(8 << (c % 5)) + ";BLOCK_ROWS=" + std::to_string(1 << (c / 5)) + ";PAD=1"};
          t.time_ms = 0.01 * (1 << p) * (1.0 + ((c * 7 + p * 3 + d * 11) % 17) / 10.0);
          (void)db.record_trial(t);
        }
      }
    }
    std::atexit([] { fs::remove_all(fixture().parent_path()); });
    return p;
  }();
  return path;
}

QueryRequest request(const char* device, std::int64_t n) {
  return QueryRequest{"transpose", QueryDevice::parse(device), {{"N", n}}};
}

void run(benchmark::State& state, const QueryCache& cache, const QueryRequest& r, MatchLevel want) {
  auto first = cache.lookup(r);
  if (first.match != want) {
    state.SkipWithError(
        ("unexpected match level " + std::string(tiletune::match_level_name(first.match)) + " " + first.message)
            .c_str());
    return;
  }
  for (auto _ : state) {
    auto res = cache.lookup(r);
    benchmark::DoNotOptimize(res);
  }
}

void BM_WarmLookup(benchmark::State& state) {
  static const QueryCache cache = QueryCache::open(fixture());
  run(state, cache, request(uuids[0], 8192), MatchLevel::exact);
}
BENCHMARK(BM_WarmLookup);

void BM_WarmLookupDataVersionEveryCall(benchmark::State& state) {
  QueryOptions o;
  o.recheck_interval = std::chrono::nanoseconds(0);
  static const QueryCache cache = QueryCache::open(fixture(), o);
  run(state, cache, request(uuids[0], 8192), MatchLevel::exact);
}
BENCHMARK(BM_WarmLookupDataVersionEveryCall);

const QueryCache& sqlite_only() {
  QueryOptions o;
  o.memory_cache = false;
  static const QueryCache cache = QueryCache::open(fixture(), o);
  return cache;
}

void BM_SqliteLookupExact(benchmark::State& state) {
  run(state, sqlite_only(), request(uuids[0], 8192), MatchLevel::exact);
}
BENCHMARK(BM_SqliteLookupExact);

void BM_SqliteLookupNearest(benchmark::State& state) {
  run(state, sqlite_only(), request(uuids[0], 3000), MatchLevel::nearest_problem);
}
BENCHMARK(BM_SqliteLookupNearest);

void BM_SqliteLookupSameArchitectureByCapability(benchmark::State& state) {
  run(state, sqlite_only(), request("sm_90", 8192), MatchLevel::same_architecture);
}
BENCHMARK(BM_SqliteLookupSameArchitectureByCapability);

void BM_SqliteLookupPortableDefault(benchmark::State& state) {
  run(state, sqlite_only(), request("sm_75", 8192), MatchLevel::portable_default);
}
BENCHMARK(BM_SqliteLookupPortableDefault);

void BM_OpenAndFirstLookup(benchmark::State& state) {
  const fs::path& path = fixture();
  auto r = request(uuids[0], 8192);
  for (auto _ : state) {
    auto cache = QueryCache::open(path);
    auto res = cache.lookup(r);
    if (res.match != MatchLevel::exact) state.SkipWithError("not exact");
    benchmark::DoNotOptimize(res);
  }
}
BENCHMARK(BM_OpenAndFirstLookup);

void BM_CApiWarmLookup(benchmark::State& state) {
  tiletune_cache* cache = nullptr;
  if (tiletune_open(fixture().c_str(), &cache) != TILETUNE_OK) {
    state.SkipWithError(tiletune_last_error());
    return;
  }
  for (auto _ : state) {
    tiletune_result* r = nullptr;
    if (tiletune_lookup(cache, "transpose", uuids[0], "N=8192", &r) != TILETUNE_OK) state.SkipWithError("lookup");
    benchmark::DoNotOptimize(tiletune_result_param_value(r, 0));
    tiletune_result_free(r);
  }
  tiletune_close(cache);
}
BENCHMARK(BM_CApiWarmLookup);

}  // namespace

BENCHMARK_MAIN();
