// merge_cache: caches of several machines into one, the better trial kept per key.
#include <gtest/gtest.h>

#include <map>

#include "cache_builder.hpp"
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
  // (ok_trial: every measured column set; CacheBuilder sets the device and kernel.)
  CacheBuilder()
      .kernel(sample_kernel())
      .device(h200)
      .trial(ok_trial(0, 0, "N=8192", "TILE=32", 2.0))            // b is faster
      .trial(ok_trial(0, 0, "N=8192", "TILE=64", 1.0))            // a is faster
      .failed("N=8192", "TILE=16", TrialStatus::timeout, "hung")  // b ok
      .build(a);

  CacheBuilder()
      .kernel(sample_kernel())
      .device(h200)
      .device(a100)
      .device(h200)
      .trial(ok_trial(0, 0, "N=8192", "TILE=32", 1.5))
      .trial(ok_trial(0, 0, "N=8192", "TILE=64", 1.2))
      .trial(ok_trial(0, 0, "N=8192", "TILE=16", 3.0))
      .failed("N=8192", "TILE=8", TrialStatus::wrong_result, "bad")
      .device(a100)
      .trial(ok_trial(0, 0, "N=8192", "TILE=32", 4.0))  // another device
      .build(b);

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
  CacheBuilder()
      .device(sample_device())
      .kernel(sample_kernel("old"))
      .trial(ok_trial(0, 0, "N=1", "T=1", 1.0))
      .kernel(sample_kernel("new"))
      .trial(ok_trial(0, 0, "N=1", "T=1", 2.0))
      .build(b);
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
    CacheBuilder()
        .wal(false)
        .device(sample_device("GPU-aaaaaaaa-0000-0000-0000-000000000001", "NVIDIA H200"))
        .kernel(sample_kernel())
        .trial(ok_trial(0, 0, "N=8192", "TILE=32", 2.0))
        .build(into);
    CacheBuilder()
        .device(sample_device("GPU-bbbbbbbb-0000-0000-0000-000000000002", "NVIDIA A100"))
        .kernel(sample_kernel())
        .trial(ok_trial(0, 0, "N=8192", "TILE=32", 1.0))
        .build(from);
  }
  const CommandResult t =
      run_command("sqlite3 '" + into.string() +
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
