// merge_cache: caches of several machines into one, the better trial kept per key.
#include <gtest/gtest.h>

#include <map>

#include "db_test_util.hpp"
#include "test_support.hpp"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;

std::map<std::string, TrialRow> rows_by_key(const CacheDb& db) {
  TrialFilter all;
  all.current_only = false;
  std::map<std::string, TrialRow> m;
  for (TrialRow& r : db.trials(all))
    m[r.device_uuid + "|" + r.kernel.source_hash + "|" + r.trial.key.problem + "|" + r.trial.key.params] = r;
  return m;
}

TEST(Merge, KeepsTheBetterTrialPerKeyAndAddsTheRest) {
  TempDir dir;
  CacheDb a = CacheDb::open(dir.path() / "a.db");
  CacheDb b = CacheDb::open(dir.path() / "b.db");
  const auto h200 = sample_device("GPU-aaaaaaaa-0000-0000-0000-000000000001", "NVIDIA H200");
  const auto a100 = sample_device("GPU-bbbbbbbb-0000-0000-0000-000000000002", "NVIDIA A100");
  const auto ka = a.upsert_kernel(sample_kernel());
  const auto da = a.upsert_device(h200);
  (void)a.record_trial(ok_trial(da, ka, "N=8192", "TILE=32", 2.0));           // b is faster
  (void)a.record_trial(ok_trial(da, ka, "N=8192", "TILE=64", 1.0));           // a is faster
  (void)a.record_trial(failed_trial(da, ka, "N=8192", "TILE=16", TrialStatus::timeout, "hung"));  // b ok

  const auto kb = b.upsert_kernel(sample_kernel());
  const auto db1 = b.upsert_device(h200);
  const auto db2 = b.upsert_device(a100);
  (void)b.record_trial(ok_trial(db1, kb, "N=8192", "TILE=32", 1.5));
  (void)b.record_trial(ok_trial(db1, kb, "N=8192", "TILE=64", 1.2));
  (void)b.record_trial(ok_trial(db1, kb, "N=8192", "TILE=16", 3.0));
  (void)b.record_trial(failed_trial(db1, kb, "N=8192", "TILE=8", TrialStatus::wrong_result, "bad"));
  (void)b.record_trial(ok_trial(db2, kb, "N=8192", "TILE=32", 4.0));         // another device

  const MergeStats s = merge_cache(a, b);
  EXPECT_EQ(s.trials_read, 5u);
  EXPECT_EQ(s.added, 2u);     // TILE=8 on the H200, TILE=32 on the A100
  EXPECT_EQ(s.replaced, 2u);  // TILE=32 (faster) and TILE=16 (ok beats timeout)
  EXPECT_EQ(s.kept, 1u);      // TILE=64: a's is faster

  auto rows = rows_by_key(a);
  ASSERT_EQ(rows.size(), 5u);  // four configs on the H200, one on the A100
  const std::string h = h200.uuid + "|abc123|N=8192|";
  EXPECT_DOUBLE_EQ(*rows.at(h + "TILE=32").trial.time_ms, 1.5);
  EXPECT_DOUBLE_EQ(*rows.at(h + "TILE=64").trial.time_ms, 1.0);
  EXPECT_EQ(rows.at(h + "TILE=16").trial.status, TrialStatus::ok);
  EXPECT_EQ(rows.at(h + "TILE=8").trial.status, TrialStatus::wrong_result);
  EXPECT_DOUBLE_EQ(*rows.at(a100.uuid + "|abc123|N=8192|TILE=32").trial.time_ms, 4.0);

  // Best follows: the H200's best is TILE=64 at 1.0 ms, the A100's TILE=32.
  for (const BestEntry& e : a.best()) {
    if (e.device.device.uuid == h200.uuid) {
      EXPECT_EQ(e.trial.key.params, "TILE=64");
    } else {
      EXPECT_EQ(e.trial.key.params, "TILE=32");
    }
  }
  // Merging again changes nothing.
  const MergeStats again = merge_cache(a, b);
  EXPECT_EQ(again.added, 0u);
  EXPECT_EQ(again.replaced, 0u);
  EXPECT_EQ(again.kept, 5u);
}

TEST(Merge, TheSourcesCurrentVersionStaysCurrent) {
  TempDir dir;
  CacheDb a = CacheDb::open(dir.path() / "a.db");
  CacheDb b = CacheDb::open(dir.path() / "b.db");
  const auto d = b.upsert_device(sample_device());
  const auto old_kernel = b.upsert_kernel(sample_kernel("old"));
  (void)b.record_trial(ok_trial(d, old_kernel, "N=1", "T=1", 1.0));
  const auto new_kernel = b.upsert_kernel(sample_kernel("new"));
  (void)b.record_trial(ok_trial(d, new_kernel, "N=1", "T=1", 2.0));
  (void)merge_cache(a, b);
  const auto best = a.best();  // current versions only
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].kernel.source_hash, "new");
}

// A merge that fails in the target itself (here a trigger refuses every new trial) rolls back,
// and the target keeps its rollback journal: it is switched to WAL only after a merge commits.
TEST(Merge, AMergeThatFailsInTheTargetLeavesItByteForByteAndItsJournal) {
  TempDir dir;
  const fs::path into = dir.path() / "into.db", from = dir.path() / "from.db";
  {
    CacheDb::Options rollback;
    rollback.wal = false;
    CacheDb a = CacheDb::open(into, rollback);
    const auto d = a.upsert_device(sample_device("GPU-aaaaaaaa-0000-0000-0000-000000000001", "NVIDIA H200"));
    (void)a.record_trial(ok_trial(d, a.upsert_kernel(sample_kernel()), "N=8192", "TILE=32", 2.0));
    CacheDb b = CacheDb::open(from);
    const auto db = b.upsert_device(sample_device("GPU-bbbbbbbb-0000-0000-0000-000000000002", "NVIDIA A100"));
    (void)b.record_trial(ok_trial(db, b.upsert_kernel(sample_kernel()), "N=8192", "TILE=32", 1.0));
  }
  const CommandResult t = run_command("sqlite3 '" + into.string() +
                                      "' 'CREATE TRIGGER refuse BEFORE INSERT ON trials BEGIN SELECT RAISE(ABORT, \"refused\"); END'");
  ASSERT_EQ(t.exit_code, 0) << t.output;
  const std::string before = cache_files_digest(into);
  EXPECT_THROW((void)merge_cache_files(into, {from}), Error);
  EXPECT_EQ(cache_files_digest(into), before) << "a failed merge changed its target (or switched it to WAL)";

  // Without the trigger the same merge commits, and only then is the target in WAL.
  ASSERT_EQ(run_command("sqlite3 '" + into.string() + "' 'DROP TRIGGER refuse'").exit_code, 0);
  const std::vector<MergeStats> stats = merge_cache_files(into, {from});
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].added, 1u);
  EXPECT_EQ(CacheDb::open(into, CacheDb::Mode::read_only).journal_mode(), "wal");
}

}  // namespace
}  // namespace tiletune::testing
