// Lookups with ties and pins (issue 24), in C++ and through the C API: the answer is the pick of
// the tie set with its size, spread and fastest time; a pin answers at the level `pinned`, the
// device's pin before its model's before its architecture's, only for its problem; a pin written
// by another connection is seen after the memory's recheck; a cache of schema 7 (no pins table)
// still answers with tie sets.
#include <gtest/gtest.h>

#include "db/sqlite.hpp"
#include "cache_builder.hpp"
#include "test_support.hpp"
#include "tiletune/cache_db.hpp"
#include "tiletune/query.hpp"
#include "tiletune/tiletune.h"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;

const std::string gpu_a = "GPU-aaaaaaaa-1111-4000-8000-000000000001";
const std::string gpu_b = "GPU-bbbbbbbb-1111-4000-8000-000000000002";
const std::string gpu_old = "GPU-0a100a10-1111-4000-8000-000000000003";

// On each H200 at N=8192: T=32 fastest, T=64 0.3 % slower with the higher occupancy (tied), T=16
// 20 % slower. At N=1024 on A: T=16 alone. On the A100 (sm_80): T=32 at N=8192.
fs::path write_cache(const fs::path& path) {
  CacheBuilder cache;
  cache.kernel();
  for (const std::string& uuid : {gpu_a, gpu_b})
    cache.device(uuid)
        .trial("N=8192", "TILE=32;PAD=1", 1.000, with_low_noise(0.5, 32))
        .trial("N=8192", "TILE=64;PAD=1", 1.003, with_low_noise(1.0, 40))
        .trial("N=8192", "TILE=16;PAD=1", 1.200, with_low_noise(1.0, 16));
  return cache.device(gpu_a)
      .trial("N=1024", "TILE=16;PAD=0", 0.1, with_low_noise(0.5, 32))
      .device(gpu_old, "NVIDIA A100", 8)
      .trial("N=8192", "TILE=32;PAD=1", 2.0, with_low_noise(0.5, 32))
      .build(path);
}

QueryResult look(const QueryCache& cache, QueryDevice dev, std::int64_t n) {
  QueryResult r = cache.lookup(QueryRequest{"transpose", std::move(dev), {{"N", n}}});
  EXPECT_TRUE(r.ok()) << r.message;
  return r;
}

QueryDevice by_uuid(const std::string& u) { return QueryDevice{u, "", 0, 0}; }

void pin(const fs::path& path, PinScope scope, const std::string& target, const std::string& params,
         const std::string& problem = "N=8192") {
  CacheDb db = CacheDb::open(path);
  db.pin(PinRecord{scope, target, "transpose", problem, params, "pinned by " + std::string(pin_scope_name(scope)), ""});
}

TEST(AnswersLookup, TheAnswerIsThePickOfTheTieSetWithItsSizeAndSpread) {
  TempDir dir;
  const QueryCache cache = QueryCache::open(write_cache(dir.path() / "c.db"));
  const QueryResult r = look(cache, by_uuid(gpu_a), 8192);
  EXPECT_EQ(r.match, MatchLevel::exact);
  EXPECT_EQ(r.params_text, "TILE=64;PAD=1");
  EXPECT_EQ(r.param("TILE"), 64);
  EXPECT_EQ(r.tie_count, 2u);
  EXPECT_NEAR(r.tie_spread, 0.003, 1e-9);
  EXPECT_DOUBLE_EQ(r.fastest_ms, 1.0);
  EXPECT_DOUBLE_EQ(r.time_ms, 1.003);
  // A clear winner: one config in its tie set.
  const QueryResult alone = look(cache, by_uuid(gpu_a), 1024);
  EXPECT_EQ(alone.tie_count, 1u);
  EXPECT_EQ(alone.tie_spread, 0.0);
  // The same answer on the other GPU of the model, by name and by architecture.
  EXPECT_EQ(look(cache, by_uuid(gpu_b), 8192).params_text, "TILE=64;PAD=1");
  EXPECT_EQ(look(cache, QueryDevice{"", "NVIDIA H200", 0, 0}, 8192).params_text, "TILE=64;PAD=1");
  const QueryResult arch = look(cache, QueryDevice{"GPU-new", "", 9, 0}, 8192);
  EXPECT_EQ(arch.match, MatchLevel::same_architecture);
  EXPECT_EQ(arch.params_text, "TILE=64;PAD=1");
  EXPECT_EQ(arch.tie_count, 2u);
  // The portable default has no tie set.
  const QueryResult portable = look(cache, QueryDevice{"", "", 7, 5}, 8192);
  EXPECT_EQ(portable.match, MatchLevel::portable_default);
  EXPECT_EQ(portable.tie_count, 0u);
  EXPECT_EQ(portable.fastest_ms, -1.0);
}

TEST(AnswersLookup, ADevicePinBeatsAModelPinBeatsAnArchitecturePin) {
  TempDir dir;
  const fs::path path = write_cache(dir.path() / "c.db");
  pin(path, PinScope::architecture, "sm_90", "TILE=8;PAD=0");
  pin(path, PinScope::model, "NVIDIA H200", "TILE=16;PAD=1");
  pin(path, PinScope::device, gpu_b, "TILE=128;PAD=0");
  pin(path, PinScope::architecture, "sm_80", "TILE=4;PAD=0");
  const QueryCache cache = QueryCache::open(path);

  const QueryResult model = look(cache, by_uuid(gpu_a), 8192);
  EXPECT_EQ(model.match, MatchLevel::pinned);
  EXPECT_EQ(match_level_name(model.match), "pinned");
  EXPECT_EQ(model.params_text, "TILE=16;PAD=1");
  EXPECT_EQ(model.pin_scope, "model");
  EXPECT_EQ(model.pin_reason, "pinned by model");
  EXPECT_DOUBLE_EQ(model.time_ms, 1.2);  // measured there
  EXPECT_EQ(model.device_uuid, gpu_a);
  EXPECT_EQ(model.tie_count, 0u);

  const QueryResult dev = look(cache, by_uuid(gpu_b), 8192);
  EXPECT_EQ(dev.pin_scope, "device");
  EXPECT_EQ(dev.params_text, "TILE=128;PAD=0");
  EXPECT_EQ(dev.time_ms, -1.0);  // never measured

  const QueryResult by_name = look(cache, QueryDevice{"", "NVIDIA H200", 0, 0}, 8192);
  EXPECT_EQ(by_name.pin_scope, "model");
  const QueryResult arch = look(cache, QueryDevice{"GPU-new", "NVIDIA H100", 9, 0}, 8192);
  EXPECT_EQ(arch.pin_scope, "architecture");
  EXPECT_EQ(arch.params_text, "TILE=8;PAD=0");
  const QueryResult a100 = look(cache, by_uuid(gpu_old), 8192);  // its cc is read from the cache
  EXPECT_EQ(a100.pin_scope, "architecture");
  EXPECT_EQ(a100.params_text, "TILE=4;PAD=0");

  // Another problem is not pinned: measurements answer.
  const QueryResult other = look(cache, by_uuid(gpu_a), 1024);
  EXPECT_EQ(other.match, MatchLevel::exact);
  EXPECT_EQ(other.params_text, "TILE=16;PAD=0");
}

TEST(AnswersLookup, APinWrittenMeanwhileIsSeenAfterTheRecheck) {
  TempDir dir;
  const fs::path path = write_cache(dir.path() / "c.db");
  QueryOptions options;
  options.recheck_interval = std::chrono::nanoseconds(0);
  const QueryCache cache = QueryCache::open(path, options);
  EXPECT_EQ(look(cache, by_uuid(gpu_a), 8192).match, MatchLevel::exact);
  pin(path, PinScope::device, gpu_a, "TILE=16;PAD=1");
  EXPECT_EQ(look(cache, by_uuid(gpu_a), 8192).match, MatchLevel::pinned);
  {
    CacheDb db = CacheDb::open(path);
    ASSERT_TRUE(db.unpin(PinScope::device, gpu_a, "transpose", "N=8192"));
  }
  EXPECT_EQ(look(cache, by_uuid(gpu_a), 8192).match, MatchLevel::exact);
}

TEST(AnswersLookup, TheCApiReturnsTiesAndPins) {
  TempDir dir;
  const fs::path path = write_cache(dir.path() / "c.db");
  pin(path, PinScope::device, gpu_b, "TILE=16;PAD=1");
  tiletune_cache* cache = nullptr;
  ASSERT_EQ(tiletune_open(path.c_str(), &cache), TILETUNE_OK) << tiletune_last_error();
  tiletune_result* r = nullptr;
  ASSERT_EQ(tiletune_lookup(cache, "transpose", gpu_a.c_str(), "N=8192", &r), TILETUNE_OK) << tiletune_last_error();
  EXPECT_EQ(tiletune_result_match_level(r), TILETUNE_MATCH_EXACT);
  EXPECT_STREQ(tiletune_result_params_text(r), "TILE=64;PAD=1");
  EXPECT_EQ(tiletune_result_tie_count(r), 2u);
  EXPECT_NEAR(tiletune_result_tie_spread(r), 0.003, 1e-9);
  EXPECT_DOUBLE_EQ(tiletune_result_fastest_ms(r), 1.0);
  EXPECT_STREQ(tiletune_result_pin_scope(r), "");
  tiletune_result_free(r);
  ASSERT_EQ(tiletune_lookup(cache, "transpose", gpu_b.c_str(), "N=8192", &r), TILETUNE_OK) << tiletune_last_error();
  EXPECT_EQ(tiletune_result_match_level(r), TILETUNE_MATCH_PINNED);
  EXPECT_STREQ(tiletune_match_level_string(tiletune_result_match_level(r)), "pinned");
  EXPECT_STREQ(tiletune_result_params_text(r), "TILE=16;PAD=1");
  EXPECT_STREQ(tiletune_result_pin_scope(r), "device");
  EXPECT_STREQ(tiletune_result_pin_reason(r), "pinned by device");
  EXPECT_EQ(tiletune_result_tie_count(r), 0u);
  tiletune_result_free(r);
  EXPECT_EQ(tiletune_result_tie_count(nullptr), 0u);
  EXPECT_EQ(tiletune_result_fastest_ms(nullptr), -1.0);
  EXPECT_STREQ(tiletune_result_pin_reason(nullptr), "");
  tiletune_close(cache);
}

TEST(AnswersLookup, ACacheOfSchema7AnswersWithTieSets) {
  TempDir dir;
  const fs::path path = write_cache(dir.path() / "c.db");
  {
    // Back to what schema 7 had: no pins, no history.
    db_detail::Connection conn(path, SQLITE_OPEN_READWRITE);
    conn.exec("DROP TABLE pins");
    conn.exec("DROP TABLE answer_history");
    conn.exec("PRAGMA user_version = 7");
  }
  const QueryCache cache = QueryCache::open(path);
  EXPECT_EQ(cache.schema_version(), 7);
  const QueryResult r = look(cache, by_uuid(gpu_a), 8192);
  EXPECT_EQ(r.match, MatchLevel::exact);
  EXPECT_EQ(r.params_text, "TILE=64;PAD=1");
  EXPECT_EQ(r.tie_count, 2u);
}

}  // namespace
}  // namespace tiletune::testing
