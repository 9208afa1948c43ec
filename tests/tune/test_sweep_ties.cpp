// Ties on the real sweep (issue 24), against tests/process/fake_worker answering from the toy
// recording: two GPUs of one model whose sweeps find a different fastest config among two within
// the noise give the same answer, with the finalists confirmed, and so does the merge of their
// caches, through CacheDb::best and the query library alike. CPU: NVRTC, no GPU.
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "tiletune/query.hpp"
#include "toy_sweep.hpp"

namespace tiletune {
namespace {

/// The toy recording with the N=1024 time of one config replaced.
std::string with_time(std::string recording, const std::string& params, double ms) {
  const std::string head = "N=1024," + params + ",ok,";
  const auto at = recording.find(head);
  EXPECT_NE(at, std::string::npos) << params;
  const auto end = recording.find(',', at + head.size());
  recording.replace(at + head.size(), end - (at + head.size()), fmt::format("{:.6f}", ms));
  return recording;
}

constexpr const char* optimum = "A=6;B=2;C=1";    // 1.0 ms in the toy recording
constexpr const char* neighbour = "A=6;B=2;C=0";  // 1.1 ms there; made to tie with the optimum

/// Sweeps the toy on a fake H200 with this UUID, the neighbour at neighbour_ms; the cache's path.
/// force: measure every config again (a rerun into the same cache).
std::filesystem::path sweep(ToySweep& toy, const std::string& uuid, double neighbour_ms, bool force = false) {
  toy.dir.write("toy.csv", with_time(toy_recording(), neighbour, neighbour_ms));
  SweepOptions o = toy.options();
  o.device.uuid = uuid;
  o.confirm_finalists = 3;
  o.confirm_rounds = 3;
  o.force = force;
  (void)run_sweep(toy.space, o);
  return toy.db;
}

BestEntry only_answer(const std::filesystem::path& db, const std::string& uuid) {
  CacheDb cache = CacheDb::open(db, CacheDb::Mode::read_only);
  for (BestEntry& e : cache.best())
    if (e.device.device.uuid == uuid && e.trial.key.problem == "N=1024") return e;
  ADD_FAILURE() << "no answer for " << uuid << " in " << db;
  return {};
}

TEST(SweepTies, TwoGpusOfAModelAndTheirMergeGiveOneAnswer) {
  const std::string gpu_a = "GPU-00000000-0000-0000-0000-0000000000a1";
  const std::string gpu_b = "GPU-00000000-0000-0000-0000-0000000000b2";
  ToySweep first, second;
  const auto db_a = sweep(first, gpu_a, 1.003);   // the optimum fastest, the neighbour 0.3 % behind
  const auto db_b = sweep(second, gpu_b, 0.997);  // the neighbour fastest, the optimum 0.3 % behind

  const BestEntry a = only_answer(db_a, gpu_a);
  const BestEntry b = only_answer(db_b, gpu_b);
  EXPECT_EQ(a.fastest_params, optimum);
  EXPECT_EQ(b.fastest_params, neighbour);
  EXPECT_EQ(a.tie_params.size(), 2u);
  EXPECT_EQ(b.tie_params.size(), 2u);
  // Same occupancy and registers in the recording: the canonical order picks C=0 on both.
  EXPECT_EQ(a.trial.key.params, neighbour);
  EXPECT_EQ(b.trial.key.params, neighbour);

  const TempDir dir;
  const auto all = dir.path() / "all.db";
  (void)merge_cache_files(all, {db_a, db_b});
  EXPECT_EQ(only_answer(all, gpu_a).trial.key.params, neighbour);
  EXPECT_EQ(only_answer(all, gpu_b).trial.key.params, neighbour);
  const QueryCache cache = QueryCache::open(all);
  for (const QueryDevice& device : {QueryDevice{gpu_a, "", 0, 0}, QueryDevice{gpu_b, "", 0, 0},
                                    QueryDevice{"", "Fake H200", 0, 0}, QueryDevice{"GPU-other", "", 9, 0}}) {
    const QueryResult r = cache.lookup(QueryRequest{"toy", device, {{"N", 1024}}});
    ASSERT_TRUE(r.found()) << r.message;
    EXPECT_EQ(r.params_text, neighbour) << device.uuid << device.name;
    EXPECT_EQ(r.tie_count, 2u);
  }
}

TEST(SweepTies, ARerunKeepsTheAnswerUntilItIsSlowerThanTheHoldWindow) {
  const std::string gpu = "GPU-00000000-0000-0000-0000-0000000000a1";
  ToySweep toy;
  // Run 1: the neighbour 0.3 % behind the optimum, tied; the canonical order picks it.
  (void)sweep(toy, gpu, 1.003);
  BestEntry e = only_answer(toy.db, gpu);
  ASSERT_EQ(e.trial.key.params, neighbour);
  {
    const CacheDb cache = CacheDb::open(toy.db, CacheDb::Mode::read_only);
    EXPECT_EQ(cache.standing_answer(e.trial.key), "") << "the only run is the current one: nothing before it";
  }
  // Run 2 (--force): the neighbour 2.5 % behind, out of the tie window (1.5 %), but it was the
  // answer and it is within the hold window (3 %): it stays, a member of its tie set.
  (void)sweep(toy, gpu, 1.025, true);
  e = only_answer(toy.db, gpu);
  EXPECT_EQ(e.trial.key.params, neighbour);
  EXPECT_EQ(e.fastest_params, optimum);
  EXPECT_EQ(e.tie_params, (std::vector<std::string>{optimum, neighbour}));
  EXPECT_NEAR(e.tie_spread, 0.025, 1e-9);
  EXPECT_EQ(e.runs, 2);
  EXPECT_EQ(e.winner_changes, 0);
  {
    const CacheDb cache = CacheDb::open(toy.db, CacheDb::Mode::read_only);
    EXPECT_EQ(cache.standing_answer(e.trial.key), neighbour) << "run 1's answer";
  }
  const QueryCache lookup = QueryCache::open(toy.db);
  const QueryResult r = lookup.lookup(QueryRequest{"toy", QueryDevice{gpu, "", 0, 0}, {{"N", 1024}}});
  ASSERT_TRUE(r.found()) << r.message;
  EXPECT_EQ(r.params_text, neighbour);
  EXPECT_EQ(r.tie_count, 2u);
  // Run 3: 4 % behind, beyond the hold window: the answer moves to the optimum.
  (void)sweep(toy, gpu, 1.040, true);
  e = only_answer(toy.db, gpu);
  EXPECT_EQ(e.trial.key.params, optimum);
  EXPECT_EQ(e.tie_params, (std::vector<std::string>{optimum}));
  EXPECT_EQ(e.runs, 3);
  EXPECT_EQ(e.winner_changes, 1);
}

}  // namespace
}  // namespace tiletune
