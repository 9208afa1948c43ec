// The standing answer (issue 24, tiletune/answers.hpp): an answer stays while it is still held (the hold window),
// over reruns and merges, and the engine (CacheDb::best) and the query library (every lookup)
// agree on it; a merge carries its sources' answer histories; a lookup reports the answer's
// headroom against the ceilings the sweep recorded.
#include <gtest/gtest.h>

#include "cache_builder.hpp"
#include "test_support.hpp"
#include "tiletune/answers.hpp"
#include "tiletune/cache_db.hpp"
#include "tiletune/query.hpp"
#include "tiletune/tiletune.h"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;

const std::string gpu = "GPU-5a5a5a5a-1111-4000-8000-000000000001";
const KernelRecord reduction{"reduction", "h1", "", "12.4"};

// An ok trial at N=1000003 with a small noise (0.1 % over 100 samples: the 1.5 % floor decides).
TrialRecord timed(const std::string& params, double ms, double occupancy) {
  TrialRecord t = trial_record("N=1000003", params, ms);
  with_low_noise(occupancy)(t);
  return t;
}

// One sweep into `path`: a run of the kernel (its version tuned again) that measures each config.
void sweep(const fs::path& path, const std::vector<TrialRecord>& trials) {
  CacheBuilder b;
  b.device(gpu).kernel(reduction);
  for (const TrialRecord& t : trials) b.trial(t);
  (void)b.build(path);
}

struct Answer {
  std::string engine;  // CacheDb::best
  std::string query;   // QueryCache::lookup
  int runs = 0;
  int changes = 0;
};

Answer answer_of(const fs::path& path) {
  Answer a;
  {
    const CacheDb db = CacheDb::open(path, CacheDb::Mode::read_only);
    const std::vector<BestEntry> best = db.best();
    EXPECT_EQ(best.size(), 1u);
    if (best.empty()) return a;
    a.engine = best[0].trial.key.params;
    a.runs = best[0].runs;
    a.changes = best[0].winner_changes;
  }
  const QueryCache cache = QueryCache::open(path);
  const QueryResult r = cache.lookup(QueryRequest{"reduction", QueryDevice{gpu, "", 0, 0}, {{"N", 1000003}}});
  EXPECT_TRUE(r.found()) << r.message;
  a.query = r.params_text;
  return a;
}

TEST(StandingAnswer, TieSetKeepsTheStandingAnswerWhileItIsAMember) {
  // B=256 fastest; B=128 tied (1 %) with the higher occupancy; B=64 3 % away.
  const std::vector<TieTrial> trials = {
      {"B=256", 1.000, {}, {}, 0.5, 32}, {"B=128", 1.010, {}, {}, 1.0, 32}, {"B=64", 1.030, {}, {}, 1.0, 16}};
  EXPECT_EQ(trials[tie_set(trials).pick].params, "B=128");           // the pick rule
  EXPECT_EQ(trials[tie_set(trials, "B=256").pick].params, "B=256");  // standing and tied: stays
  EXPECT_EQ(trials[tie_set(trials, "B=64").pick].params, "B=128");   // standing but not tied
  EXPECT_EQ(trials[tie_set(trials, "B=999").pick].params, "B=128");  // not measured at all
}

TEST(StandingAnswer, ARerunWhoseTieSetTakesInAPreferredConfigKeepsTheAnswer) {
  TempDir dir;
  const fs::path db = dir.path() / "c.db";
  // Run 1: B=128 is 2 % slower (not tied): B=256 answers.
  sweep(db, {timed("B=256", 1.000, 0.5), timed("B=128", 1.020, 1.0)});
  // Run 2 (--force): B=128 now 1.2 % slower, tied, and the pick rule prefers it (occupancy);
  // B=256 is still tied with the fastest, so it stands.
  sweep(db, {timed("B=256", 1.002, 0.5), timed("B=128", 1.014, 1.0)});
  Answer a = answer_of(db);
  EXPECT_EQ(a.engine, "B=256");
  EXPECT_EQ(a.query, "B=256");
  EXPECT_EQ(a.runs, 2);
  EXPECT_EQ(a.changes, 0);
  // Run 3: B=256 measured 2.5 % slower than B=128: out of the tie window (1.5 %) but within the
  // hold window (3 %), so it stands, and the tie set counts it.
  sweep(db, {timed("B=256", 1.025, 0.5), timed("B=128", 1.000, 1.0)});
  a = answer_of(db);
  EXPECT_EQ(a.engine, "B=256");
  EXPECT_EQ(a.query, "B=256");
  EXPECT_EQ(a.changes, 0);
  // Run 4: B=256 measured 4 % slower: beyond the hold window, the answer moves.
  sweep(db, {timed("B=256", 1.040, 0.5), timed("B=128", 1.000, 1.0)});
  a = answer_of(db);
  EXPECT_EQ(a.engine, "B=128");
  EXPECT_EQ(a.query, "B=128");
  EXPECT_EQ(a.runs, 4);
  EXPECT_EQ(a.changes, 1);
}

TEST(StandingAnswer, AnAnswerEntersAtTheTieWindowAndLeavesOnlyBeyondTheHoldWindow) {
  // B=128 fastest; B=256 2.5 % behind; B=64 3.5 % behind. No noise known: the floors decide.
  const std::vector<TieTrial> trials = {
      {"B=128", 1.000, {}, {}, 0.5, 32}, {"B=256", 1.025, {}, {}, 1.0, 32}, {"B=64", 1.035, {}, {}, 1.0, 16}};
  const TieSet fresh = tie_set(trials);
  EXPECT_EQ(trials[fresh.pick].params, "B=128") << "2.5 % does not enter";
  EXPECT_EQ(fresh.members, (std::vector<std::size_t>{0}));
  EXPECT_EQ(fresh.holdable, (std::vector<std::size_t>{0, 1}));
  const TieSet held = tie_set(trials, "B=256");
  EXPECT_EQ(trials[held.pick].params, "B=256") << "but a standing answer 2.5 % behind stays";
  EXPECT_EQ(held.members, (std::vector<std::size_t>{0, 1}));
  EXPECT_NEAR(held.spread, 0.025, 1e-12);
  const TieSet left = tie_set(trials, "B=64");
  EXPECT_EQ(trials[left.pick].params, "B=128") << "3.5 % is beyond the hold window";
  EXPECT_EQ(left.members, (std::vector<std::size_t>{0}));
  // Noisy medians widen the hold window like the tie window, never past the 5 % cap.
  const std::vector<TieTrial> noisy = {{"B=128", 1.000, 0.2, 16, 0.5, 32}, {"B=64", 1.045, 0.2, 16, 1.0, 16}};
  EXPECT_EQ(noisy[tie_set(noisy, "B=64").pick].params, "B=64");
  EXPECT_TRUE(held_with(noisy[0], noisy[1]));
  EXPECT_FALSE(held_with(noisy[0], TieTrial{"B=64", 1.055, 0.2, 16, 1.0, 16}));
}

TEST(StandingAnswer, WithinOneRunTheOrderOfTheTrialsDoesNotDecide) {
  // A fresh cache: the first ok trial is not an answer that stands against the rest of its run.
  TempDir dir;
  sweep(dir.path() / "a.db", {timed("B=256", 1.000, 0.5), timed("B=128", 1.010, 1.0)});
  sweep(dir.path() / "b.db", {timed("B=128", 1.010, 1.0), timed("B=256", 1.000, 0.5)});
  EXPECT_EQ(answer_of(dir.path() / "a.db").engine, "B=128");
  EXPECT_EQ(answer_of(dir.path() / "b.db").engine, "B=128");
  EXPECT_EQ(answer_of(dir.path() / "a.db").query, "B=128");
}

TEST(StandingAnswer, AMergeCarriesTheSourcesHistoriesAndKeepsTheLatestAnswerWhileTied) {
  TempDir dir;
  // Two independent sweeps whose tie sets differ at the edge: A answers B=256, B answers B=128.
  sweep(dir.path() / "a.db", {timed("B=256", 1.000, 0.5), timed("B=128", 1.020, 1.0)});
  sweep(dir.path() / "b.db", {timed("B=256", 1.001, 0.5), timed("B=128", 1.012, 1.0)});
  ASSERT_EQ(answer_of(dir.path() / "a.db").engine, "B=256");
  ASSERT_EQ(answer_of(dir.path() / "b.db").engine, "B=128");
  // The merge keeps each config's faster trial (B=256 1.000, B=128 1.012: tied) and the sources'
  // runs: A's answer, the merge's run of A, B's answer, the merge's run of B, which keeps B's.
  const fs::path ab = dir.path() / "ab.db";
  (void)merge_cache_files(ab, {dir.path() / "a.db", dir.path() / "b.db"});
  Answer m = answer_of(ab);
  EXPECT_EQ(m.engine, "B=128");
  EXPECT_EQ(m.query, "B=128");
  EXPECT_EQ(m.runs, 4);
  EXPECT_EQ(m.changes, 1);
  // The other order: B's answer first, A's last, and A's stands.
  const fs::path ba = dir.path() / "ba.db";
  (void)merge_cache_files(ba, {dir.path() / "b.db", dir.path() / "a.db"});
  m = answer_of(ba);
  EXPECT_EQ(m.engine, "B=256");
  EXPECT_EQ(m.query, "B=256");
  // A rerun into the merged cache that keeps both tied keeps the merged answer.
  sweep(ab, {timed("B=256", 1.000, 0.5), timed("B=128", 1.011, 1.0)});
  EXPECT_EQ(answer_of(ab).engine, "B=128");
  EXPECT_EQ(answer_of(ab).query, "B=128");
}

TEST(StandingAnswer, ALookupReportsTheAnswersHeadroomInCppAndC) {
  TempDir dir;
  const fs::path db = dir.path() / "c.db";
  TrialRecord t = timed("B=256", 1.0, 0.5);
  t.gbps = 3200.0;
  t.ceiling_gbps = 4000.0;  // 80 % of the copy: 20 % headroom, bandwidth-bound
  t.gflops = 10.0;
  t.ceiling_gflops = 60000.0;
  sweep(db, {t});
  const QueryCache cache = QueryCache::open(db);
  const QueryResult r = cache.lookup(QueryRequest{"reduction", QueryDevice{gpu, "", 0, 0}, {{"N", 1000003}}});
  ASSERT_TRUE(r.found()) << r.message;
  EXPECT_NEAR(r.headroom_percent, 20.0, 1e-9);
  EXPECT_NEAR(r.ceiling_fraction, 0.8, 1e-12);
  EXPECT_EQ(r.bound, "bandwidth");

  tiletune_cache* c = nullptr;
  ASSERT_EQ(tiletune_open(db.c_str(), &c), TILETUNE_OK);
  tiletune_result* res = nullptr;
  ASSERT_EQ(tiletune_lookup_objective(c, "reduction", gpu.c_str(), "N=1000003", "time", &res), TILETUNE_OK);
  EXPECT_NEAR(tiletune_result_headroom_percent(res), 20.0, 1e-9);
  EXPECT_STREQ(tiletune_result_bound(res), "bandwidth");
  tiletune_result_free(res);
  tiletune_close(c);
  EXPECT_EQ(tiletune_result_headroom_percent(nullptr), -1.0);
  EXPECT_STREQ(tiletune_result_bound(nullptr), "");
}

TEST(StandingAnswer, WithoutCeilingsTheHeadroomIsUnknown) {
  TempDir dir;
  const fs::path db = dir.path() / "c.db";
  sweep(db, {timed("B=256", 1.0, 0.5)});
  const QueryResult r =
      QueryCache::open(db).lookup(QueryRequest{"reduction", QueryDevice{gpu, "", 0, 0}, {{"N", 1000003}}});
  ASSERT_TRUE(r.found());
  EXPECT_EQ(r.headroom_percent, -1.0);
  EXPECT_EQ(r.bound, "");
}

}  // namespace
}  // namespace tiletune::testing
