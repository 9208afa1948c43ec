// The answers of a cache (issue 24): the tie test and the pick rule (tiletune/answers.hpp), the
// tie sets CacheDb::best returns on planted caches, two sweeps and their merge giving one answer,
// the history of answers (runs, winner changes), and pins: stored, replaced, removed, applied by
// device, model and architecture, kept across merges, and a cache of schema 7 migrated.
#include <gtest/gtest.h>

#include "cache_builder.hpp"
#include "db_test_util.hpp"
#include "test_support.hpp"
#include "tiletune/answers.hpp"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;

const std::string h200_a = "GPU-aaaaaaaa-0000-0000-0000-000000000001";
const std::string h200_b = "GPU-bbbbbbbb-0000-0000-0000-000000000002";

TieTrial tie(std::string params, double ms, double stddev = 0.0, std::int64_t samples = 0, double occupancy = 0.5,
             std::int64_t registers = 32) {
  TieTrial t;
  t.params = std::move(params);
  t.time_ms = ms;
  if (samples > 0) {
    t.stddev_ms = stddev;
    t.samples = samples;
  }
  t.occupancy = occupancy;
  t.registers = registers;
  return t;
}

// An ok trial with a chosen occupancy and register count, and a small noise (0.1 % stddev over
// 100 samples: its median's standard error is far below the 0.5 % floor).
// (CacheBuilder sets the device and kernel.)
TrialRecord planted(const std::string& params, double ms, double occupancy, std::int64_t registers) {
  TrialRecord t = ok_trial(0, 0, "N=8192", params, ms);
  with_low_noise(occupancy, registers)(t);
  return t;
}

/// A cache of H200 A and db_test_util's transpose, the trials to come.
CacheBuilder on_h200_a() {
  CacheBuilder cache;
  cache.device(sample_device(h200_a)).kernel(sample_kernel());
  return cache;
}

// --- the tie test and the pick rule ------------------------------------------------------------

TEST(TieTest, BelowTheFloorIsATieAboveTheCapNever) {
  // Just under and just over the floor (1.5 %), no noise known.
  EXPECT_TRUE(tied_with(tie("A=1", 1.000), tie("A=2", 1.0 + 0.9 * tie_relative_floor)));
  EXPECT_FALSE(tied_with(tie("A=1", 1.000), tie("A=2", 1.0 + 1.1 * tie_relative_floor)));
  // Noise: stddev 0.1 ms over 4 samples, se = 1.2533 * 0.05 = 0.063 each; z * sqrt(2) * se = 0.17.
  EXPECT_TRUE(tied_with(tie("A=1", 1.0, 0.1, 4), tie("A=2", 1.03, 0.1, 4)));
  EXPECT_FALSE(tied_with(tie("A=1", 1.0, 0.001, 1000), tie("A=2", 1.03, 0.001, 1000)));
  // However noisy, 6 % is never a tie (the 5 % cap).
  EXPECT_FALSE(tied_with(tie("A=1", 1.0, 10.0, 4), tie("A=2", 1.06, 10.0, 4)));
  EXPECT_TRUE(tied_with(tie("A=1", 1.0, 10.0, 4), tie("A=2", 1.049, 10.0, 4)));
}

TEST(TieTest, CanonicalOrderComparesValuesAsNumbers) {
  EXPECT_LT(compare_params("TILE=8;PAD=1", "TILE=16;PAD=0"), 0);
  EXPECT_GT(compare_params("TILE=16;PAD=1", "TILE=16;PAD=0"), 0);
  EXPECT_EQ(compare_params("TILE=16;PAD=1", "TILE=16;PAD=1"), 0);
  EXPECT_EQ(sorted_assignments("N=8;M=4, K=2"), "K=2;M=4;N=8");
}

TEST(TieTest, ThePickIsTheHighestOccupancyThenFewestRegistersThenConfigOrder) {
  // B is fastest; A, B, C, D tie; E is out. C and D have the highest occupancy; D fewer registers.
  const std::vector<TieTrial> trials = {tie("T=1", 1.002, 0, 0, 0.5, 32), tie("T=2", 1.000, 0, 0, 0.5, 32),
                                        tie("T=3", 1.003, 0, 0, 1.0, 40), tie("T=4", 1.004, 0, 0, 1.0, 24),
                                        tie("T=5", 1.100, 0, 0, 1.0, 8)};
  const TieSet set = tie_set(trials);
  EXPECT_EQ(set.fastest, 1u);
  EXPECT_EQ(set.members, (std::vector<std::size_t>{1, 0, 2, 3}));
  EXPECT_EQ(set.pick, 3u);
  EXPECT_NEAR(set.spread, 0.004, 1e-12);
  // Equal occupancy and registers: the canonical order (T=8 before T=16, as numbers).
  const TieSet order = tie_set({tie("T=16", 1.0), tie("T=8", 1.001)});
  EXPECT_EQ(trials.size(), 5u);
  EXPECT_EQ(order.pick, 1u);
  // The order of the trials does not matter.
  const TieSet reversed = tie_set({tie("T=8", 1.001), tie("T=16", 1.0)});
  EXPECT_EQ(reversed.pick, 0u);
}

// --- CacheDb::best ---------------------------------------------------------------------------

TEST(Answers, BestReturnsThePickOfTheTieSetWithItsSizeAndSpread) {
  TempDir dir;
  CacheDb db = CacheDb::open(dir.path() / "c.db");
  on_h200_a()
      .trial(planted("TILE=32", 1.000, 0.5, 32))  // fastest
      .trial(planted("TILE=64", 1.003, 1.0, 40))  // tied, highest occupancy
      .trial(planted("TILE=16", 1.200, 1.0, 16))  // not tied
      .build(db);
  const auto best = db.best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].trial.key.params, "TILE=64");
  EXPECT_EQ(best[0].answer_params(), "TILE=64");
  EXPECT_EQ(best[0].fastest_params, "TILE=32");
  EXPECT_DOUBLE_EQ(best[0].fastest_ms, 1.0);
  EXPECT_EQ(best[0].tie_params, (std::vector<std::string>{"TILE=32", "TILE=64"}));
  EXPECT_NEAR(best[0].tie_spread, 0.003, 1e-9);
  EXPECT_FALSE(best[0].pin);
}

TEST(Answers, TwoSweepsWithTheFastestSwappedAndTheirMergeGiveOneAnswer) {
  TempDir dir;
  auto sweep = [&](const std::string& name, double t32, double t64) {
    const fs::path path = CacheBuilder()
                              .device(sample_device(name == "a.db" ? h200_a : h200_b))
                              .kernel(sample_kernel())
                              .trial(planted("TILE=32", t32, 0.5, 32))
                              .trial(planted("TILE=64", t64, 0.5, 24))
                              .trial(planted("TILE=16", 1.5, 1.0, 16))
                              .build(dir.path() / name);
    return CacheDb::open(path).best().at(0);
  };
  const BestEntry a = sweep("a.db", 1.000, 1.002);  // TILE=32 fastest on one GPU
  const BestEntry b = sweep("b.db", 1.002, 1.000);  // TILE=64 fastest on the other
  EXPECT_NE(a.fastest_params, b.fastest_params);
  EXPECT_EQ(a.trial.key.params, "TILE=64");  // fewer registers
  EXPECT_EQ(b.trial.key.params, "TILE=64");
  // A merge of both, and a merge of the second into a copy of the first run again.
  CacheDb into = CacheDb::open(dir.path() / "all.db");
  (void)merge_cache(into, CacheDb::open(dir.path() / "a.db", CacheDb::Mode::read_only));
  (void)merge_cache(into, CacheDb::open(dir.path() / "b.db", CacheDb::Mode::read_only));
  for (const BestEntry& e : into.best()) EXPECT_EQ(e.trial.key.params, "TILE=64") << e.device.device.uuid;
  EXPECT_EQ(into.best().size(), 2u);
}

TEST(Answers, WithoutNoiseColumnsOnlyTheFloorTies) {
  TempDir dir;
  CacheDb db = CacheDb::open(dir.path() / "c.db");
  const auto d = db.upsert_device(sample_device(h200_a));
  const auto k = db.upsert_kernel(sample_kernel());
  TrialRecord fast = ok_trial(d, k, "N=1", "T=1", 1.0);
  TrialRecord slow = ok_trial(d, k, "N=1", "T=2", 1.0 + 2 * tie_relative_floor);  // no tie without a large noise
  for (TrialRecord* t : {&fast, &slow}) {
    t->stddev_ms.reset();
    t->samples.reset();
  }
  slow.occupancy_driver = 1.0;
  (void)db.record_trial(fast);
  (void)db.record_trial(slow);
  const auto best = db.best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].trial.key.params, "T=1");
  EXPECT_EQ(best[0].tie_params.size(), 1u);
}

TEST(Answers, HistoryCountsRunsAndTheRunsWhoseAnswerChanged) {
  TempDir dir;
  CacheDb db = CacheDb::open(dir.path() / "c.db");
  // Run 1: TILE=32 wins (its answer changes within the run: that is not counted).
  on_h200_a().trial(planted("TILE=16", 2.0, 0.5, 32)).trial(planted("TILE=32", 1.0, 0.5, 32)).build(db);
  EXPECT_EQ(db.best().at(0).runs, 1);
  EXPECT_EQ(db.best().at(0).winner_changes, 0);
  on_h200_a()  // run 2 (a rerun: the version tuned again): TILE=64 measured much faster
      .trial(planted("TILE=64", 0.5, 0.5, 32))
      .kernel(sample_kernel())  // run 3: TILE=32 re-measured, still slower; the answer stays TILE=64
      .trial(planted("TILE=32", 1.0, 0.5, 32))
      .build(db);
  const BestEntry e = db.best().at(0);
  EXPECT_EQ(e.trial.key.params, "TILE=64");
  EXPECT_EQ(e.runs, 3);
  EXPECT_EQ(e.winner_changes, 1);
}

TEST(Answers, AMergeCopiesTheSourcesRunsAndIsARunOfItsOwn) {
  TempDir dir;
  {
    on_h200_a().trial(planted("TILE=32", 1.0, 0.5, 32)).build(dir.path() / "a.db");
    on_h200_a().trial(planted("TILE=64", 0.8, 0.5, 32)).build(dir.path() / "b.db");
  }
  CacheDb a = CacheDb::open(dir.path() / "a.db");
  (void)merge_cache(a, CacheDb::open(dir.path() / "b.db", CacheDb::Mode::read_only));
  const BestEntry e = a.best().at(0);
  EXPECT_EQ(e.trial.key.params, "TILE=64");
  EXPECT_EQ(e.runs, 3);  // a's sweep, b's sweep (copied), the merge
  EXPECT_EQ(e.winner_changes, 1);
}

// --- pins ------------------------------------------------------------------------------------

PinRecord pin_of(PinScope scope, std::string target, std::string params, std::string created_at = {}) {
  return PinRecord{
      scope, std::move(target), "transpose", "N=8192", std::move(params), "chosen by hand", std::move(created_at)};
}

TEST(Pins, TheMostSpecificPinAnswersForEachDevice) {
  TempDir dir;
  CacheDb db = CacheDb::open(dir.path() / "c.db");
  DeviceRecord a100 = sample_device("GPU-a100a100-0000-0000-0000-000000000003", "NVIDIA A100");
  a100.cc_major = 8;
  CacheBuilder cache;
  cache.kernel(sample_kernel());
  for (const DeviceRecord& d : {sample_device(h200_a), sample_device(h200_b), a100})
    cache.device(d).trial(planted("TILE=32", 1.0, 0.5, 32)).trial(planted("TILE=16", 1.5, 0.5, 32));
  cache.build(db);
  db.pin(pin_of(PinScope::architecture, "sm_90", "TILE=8"));
  db.pin(pin_of(PinScope::model, "NVIDIA H200", "TILE=16"));
  db.pin(pin_of(PinScope::device, h200_b, "TILE=64"));
  std::map<std::string, BestEntry> by_uuid;
  for (BestEntry& e : db.best()) by_uuid[e.device.device.uuid] = e;
  ASSERT_EQ(by_uuid.size(), 3u);
  ASSERT_TRUE(by_uuid[h200_a].pin);
  EXPECT_EQ(by_uuid[h200_a].pin->scope, PinScope::model);
  EXPECT_EQ(by_uuid[h200_a].answer_params(), "TILE=16");
  ASSERT_TRUE(by_uuid[h200_a].pinned_trial);  // TILE=16 was measured there
  EXPECT_DOUBLE_EQ(*by_uuid[h200_a].pinned_trial->time_ms, 1.5);
  EXPECT_EQ(by_uuid[h200_a].trial.key.params, "TILE=32");  // the measured answer stays visible
  EXPECT_EQ(by_uuid[h200_b].answer_params(), "TILE=64");
  EXPECT_FALSE(by_uuid[h200_b].pinned_trial);
  EXPECT_FALSE(by_uuid[a100.uuid].pin);  // sm_80
  EXPECT_EQ(by_uuid[a100.uuid].answer_params(), "TILE=32");

  // Pinning a key again replaces its pin; unpin removes it, once.
  db.pin(pin_of(PinScope::device, h200_b, "TILE=16"));
  EXPECT_EQ(db.pins().size(), 3u);
  EXPECT_TRUE(db.unpin(PinScope::device, h200_b, "transpose", "N=8192"));
  EXPECT_FALSE(db.unpin(PinScope::device, h200_b, "transpose", "N=8192"));
  for (const BestEntry& e : db.best())
    if (e.device.device.uuid == h200_b) EXPECT_EQ(e.pin->scope, PinScope::model);
}

TEST(Pins, AProblemIsStoredWithItsSizesSortedAndMatchesInAnyOrder) {
  TempDir dir;
  CacheDb db = CacheDb::open(dir.path() / "c.db");
  TrialRecord t = planted("BM=64", 1.0, 0.5, 32);
  t.key.problem = "M=64;N=32;K=16";  // the space's order
  CacheBuilder().device(sample_device(h200_a)).kernel(sample_kernel("h", "matmul")).trial(t).build(db);
  db.pin(PinRecord{PinScope::device, h200_a, "matmul", "N=32;K=16;M=64", "BM=128", "", ""});
  ASSERT_EQ(db.pins().size(), 1u);
  EXPECT_EQ(db.pins()[0].problem, "K=16;M=64;N=32");
  EXPECT_EQ(db.best().at(0).answer_params(), "BM=128");
}

TEST(Pins, MergeCopiesPinsAndKeepsTheNewerOfOneKey) {
  TempDir dir;
  {
    CacheDb a = CacheDb::open(dir.path() / "a.db");
    a.pin(pin_of(PinScope::model, "NVIDIA H200", "TILE=16", "2026-01-01T00:00:00.000Z"));
    a.pin(pin_of(PinScope::architecture, "sm_90", "TILE=8", "2026-03-01T00:00:00.000Z"));
    CacheDb b = CacheDb::open(dir.path() / "b.db");
    b.pin(pin_of(PinScope::model, "NVIDIA H200", "TILE=64", "2026-02-01T00:00:00.000Z"));  // newer
    b.pin(pin_of(PinScope::architecture, "sm_90", "TILE=4", "2026-02-01T00:00:00.000Z"));  // older
    b.pin(pin_of(PinScope::device, h200_a, "TILE=32", "2026-02-01T00:00:00.000Z"));        // new key
  }
  const auto stats = merge_cache_files(dir.path() / "a.db", {dir.path() / "b.db"});
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].pins_copied, 2u);
  CacheDb a = CacheDb::open(dir.path() / "a.db", CacheDb::Mode::read_only);
  std::map<PinScope, PinRecord> by_scope;
  for (const PinRecord& p : a.pins()) by_scope[p.scope] = p;
  ASSERT_EQ(by_scope.size(), 3u);
  EXPECT_EQ(by_scope[PinScope::model].params, "TILE=64");
  EXPECT_EQ(by_scope[PinScope::model].created_at, "2026-02-01T00:00:00.000Z");
  EXPECT_EQ(by_scope[PinScope::architecture].params, "TILE=8");
  EXPECT_EQ(by_scope[PinScope::device].params, "TILE=32");
  // Merging into a cache with no pins keeps every pin; a merge never drops one.
  (void)merge_cache_files(dir.path() / "c.db", {dir.path() / "a.db"});
  EXPECT_EQ(CacheDb::open(dir.path() / "c.db", CacheDb::Mode::read_only).pins().size(), 3u);
}

TEST(Pins, ACacheOfSchema7MigratesWithItsTrialsAndTakesPins) {
  TempDir dir;
  const fs::path file = dir.path() / "old.db";
  {
    auto conn = cache_at_version(file, 7);
    insert_h200_and_transpose(conn);
    conn.exec(
        "INSERT INTO trials(device_id, kernel_id, problem, params, status, time_ms) "
        "VALUES (1, 1, 'N=8192', 'TILE=32', 'ok', 1.0)");
    conn.exec("INSERT INTO best(device_id, kernel_id, problem, trial_id, time_ms) VALUES (1, 1, 'N=8192', 1, 1.0)");
  }
  {
    CacheDb ro = CacheDb::open(file, CacheDb::Mode::read_only);  // read as it is: no pins table yet
    EXPECT_EQ(ro.schema_version(), 7);
    EXPECT_TRUE(ro.pins().empty());
    ASSERT_EQ(ro.best().size(), 1u);
    EXPECT_EQ(ro.best()[0].runs, 0);
  }
  CacheDb db = CacheDb::open(file);
  EXPECT_EQ(db.schema_version(), CacheDb::latest_schema_version());
  ASSERT_EQ(db.best().size(), 1u);
  EXPECT_EQ(db.best()[0].trial.key.params, "TILE=32");
  EXPECT_EQ(db.best()[0].tie_params.size(), 1u);
  db.pin(PinRecord{PinScope::model, "NVIDIA H200", "transpose", "N=8192", "TILE=64", "", ""});
  EXPECT_EQ(db.best()[0].answer_params(), "TILE=64");
}

}  // namespace
}  // namespace tiletune::testing

namespace tiletune::testing {
namespace {

// A cache edited by hand holds times that are no finite number: the tie set still has its
// fastest as a member and pick, and a spread of 0, where it used to read an empty set (a crash).
TEST(TieTest, TimesThatAreNotFiniteStillGiveATieSetOfTheFastest) {
  const double inf = std::numeric_limits<double>::infinity();
  const TieSet all_inf = tie_set({tie("A=1", inf), tie("A=2", inf)});
  ASSERT_EQ(all_inf.members.size(), 1u);
  EXPECT_EQ(all_inf.members.front(), all_inf.fastest);
  EXPECT_EQ(all_inf.pick, all_inf.fastest);
  EXPECT_EQ(all_inf.spread, 0.0);
  const TieSet one_inf = tie_set({tie("A=1", inf), tie("A=2", 1.0), tie("A=3", 1.001)});
  EXPECT_EQ(one_inf.fastest, 1u);
  EXPECT_EQ(one_inf.members, (std::vector<std::size_t>{1, 2}));
  const TieSet nan = tie_set({tie("A=1", std::numeric_limits<double>::quiet_NaN())});
  EXPECT_EQ(nan.members, (std::vector<std::size_t>{0}));
  EXPECT_EQ(nan.spread, 0.0);
}

}  // namespace
}  // namespace tiletune::testing
