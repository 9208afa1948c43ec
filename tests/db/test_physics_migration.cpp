// Schema 8 (the physics guard, issue 24): the trials table is rebuilt so its CHECK allows
// 'suspect'. A version-7 cache migrates keeping every trial (ids and columns) and its best rows
// (which the rebuild would otherwise cascade away), the index comes back, a suspect trial is
// stored with its ceilings and never becomes best, and a status that is none still fails.
#include <gtest/gtest.h>

#include "db/embedded_sql.hpp"
#include "db_test_util.hpp"
#include "test_support.hpp"
#include "tiletune/query.hpp"

namespace tiletune {
namespace {

namespace fs = std::filesystem;

// A cache as tiletune with schema 7 wrote it: an ok trial with samples, the best, a wrong result.
void build_v7(const fs::path& p) {
  auto conn = testing::cache_at_version(p, 7);
  testing::insert_h200_and_transpose(conn);
  conn.exec(
      "INSERT INTO trials(id, device_id, kernel_id, problem, params, status, time_ms, gbps, times_ms, verify_ms) "
      "VALUES (5, 1, 1, 'N=8192', 'TILE=32', 'ok', 0.5, 3911.0, '[0.5,0.5]', 1.25)");
  conn.exec(
      "INSERT INTO trials(id, device_id, kernel_id, problem, params, status, detail) "
      "VALUES (9, 1, 1, 'N=8192', 'TILE=64', 'wrong_result', 'max error 1 at index 7')");
  conn.exec("INSERT INTO best(device_id, kernel_id, problem, trial_id, time_ms) VALUES (1, 1, 'N=8192', 5, 0.5)");
}

TEST(PhysicsMigration, Version7IsMigratedKeepingItsTrialsAndItsBest) {
  testing::TempDir tmp;
  const auto p = tmp.path() / "v7.db";
  build_v7(p);
  {
    CacheDb db = CacheDb::open(p);  // foreign keys on: dropping the old trials cascades to best
    EXPECT_EQ(db.schema_version(), CacheDb::latest_schema_version());  // through 8 and on
    const std::vector<TrialRow> rows = db.trials();
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].trial.key.params, "TILE=32");
    EXPECT_TRUE(rows[0].is_best);
    EXPECT_EQ(rows[0].trial.times_ms, "[0.5,0.5]");
    EXPECT_EQ(rows[0].trial.verify_ms, 1.25);
    EXPECT_EQ(rows[0].trial.gbps, 3911.0);
    EXPECT_FALSE(rows[0].trial.ceiling_gbps) << "an older tiletune held nothing against a ceiling";
    EXPECT_EQ(rows[1].trial.status, TrialStatus::wrong_result);
    EXPECT_EQ(rows[1].trial.detail, "max error 1 at index 7");
    const auto best = db.best_for(KernelRecord{"transpose", "h", "", ""}, "GPU-1", "N=8192");
    ASSERT_TRUE(best);
    EXPECT_EQ(best->trial.key.params, "TILE=32");
  }
  auto conn = testing::raw_connection(p);
  EXPECT_EQ(conn.query_int("SELECT id FROM trials WHERE params = 'TILE=64'"), 9) << "ids are kept: best points at them";
  EXPECT_EQ(conn.query_int("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'trials_kernel_status'"),
            1);
  EXPECT_EQ(conn.query_int("SELECT count(*) FROM sqlite_master WHERE name = 'trials_008'"), 0);
  EXPECT_EQ(conn.query_int("SELECT count(*) FROM sqlite_master WHERE sql LIKE '%''suspect''%'"), 1);
  // The CHECK is still there for everything else.
  conn.exec("PRAGMA foreign_keys = ON");
  EXPECT_THROW(conn.exec("INSERT INTO trials(device_id, kernel_id, problem, params, status) "
                         "VALUES (1, 1, 'N=8192', 'TILE=16', 'too_fast')"),
               DbError);
  EXPECT_THROW(conn.exec("INSERT INTO trials(device_id, kernel_id, problem, params, status) "
                         "VALUES (1, 1, 'N=8192', 'TILE=16', 'ok')"),
               DbError)
      << "an ok trial still needs a time";
}

TEST(PhysicsMigration, ASuspectIsStoredWithItsCeilingsAndNeverBecomesBest) {
  for (const bool migrated : {false, true}) {
    SCOPED_TRACE(migrated ? "a migrated cache" : "a new cache");
    testing::TempDir tmp;
    const auto p = tmp.path() / "c.db";
    if (migrated) build_v7(p);
    CacheDb db = CacheDb::open(p);
    const std::int64_t device = db.upsert_device(testing::sample_device());
    const std::int64_t kernel = db.upsert_kernel(testing::sample_kernel());
    TrialRecord honest = testing::ok_trial(device, kernel, "N=4096", "TILE=32", 0.5);
    honest.ceiling_gbps = 4058.0;
    (void)db.record_trial(honest);
    TrialRecord fast = testing::ok_trial(device, kernel, "N=4096", "TILE=8", 0.001);
    fast.status = TrialStatus::suspect;
    fast.detail = "faster than the GPU can: ...";
    fast.ceiling_gbps = 4058.0;
    fast.ceiling_gflops = 66908.0;
    (void)db.record_trial(fast);
    const auto best = db.best_for(testing::sample_kernel(), testing::sample_device().uuid, "N=4096");
    ASSERT_TRUE(best);
    EXPECT_EQ(best->trial.key.params, "TILE=32");
    EXPECT_EQ(best->trial.ceiling_gbps, 4058.0);
    TrialFilter suspects;
    suspects.status = TrialStatus::suspect;
    const std::vector<TrialRow> rows = db.trials(suspects);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].trial.key.params, "TILE=8");
    EXPECT_EQ(rows[0].trial.ceiling_gflops, 66908.0);
    EXPECT_FALSE(rows[0].is_best);
    // The query library reads the new status and serves the honest config.
    const QueryCache q = QueryCache::open(p);
    const QueryResult r = q.lookup({"transpose", QueryDevice::parse(testing::sample_device().uuid), {{"N", 4096}}});
    EXPECT_EQ(r.match, MatchLevel::exact);
  }
}

}  // namespace
}  // namespace tiletune
