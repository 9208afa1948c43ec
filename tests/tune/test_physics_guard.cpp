// The physics guard on the CPU (issue 24): a sweep against tests/process/fake_worker whose
// recording plants an impossibly fast trial (it ends `suspect`, with its reason and a hint at the
// check, and is never the winner nor best), `--good-enough` ending a search at a share of the
// ceiling, a replay of the shipped H200 recording with a planted impossible trial (suspect, not
// the optimum, not the best found; through `tune --replay` too), and the hints the guard gives.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "cache_builder.hpp"
#include "test_support.hpp"
#include "tiletune/landscape.hpp"
#include "tiletune/physics_guard.hpp"
#include "tiletune/replay.hpp"
#include "tiletune/sweep.hpp"
#include "toy_sweep.hpp"

namespace tiletune {
namespace {

// The planted trial: recorded (and so answered by the fake worker) at 1/100 of a millisecond.
constexpr const char* kPlanted = "A=7;B=1;C=0";

// The toy's recording with kPlanted's N=1024 time replaced by `time_ms`.
std::string recording_with(const std::string& params, double time_ms) {
  std::istringstream in(toy_recording());
  std::string out, line;
  const std::string key = "N=1024," + params + ",ok,";
  while (std::getline(in, line)) {
    if (line.starts_with(key)) line = key + fmt::format("{},50,2,8,0,1,", time_ms);
    out += line + '\n';
  }
  return out;
}

// The toy with 1.8 MB per run declared: its optimum (1 ms at N=1024) runs at 1.8 GB/s, 90 % of
// the fake worker's copy (2 GB/s); the device's L2 is unknown, so the copy is the ceiling.
struct GuardedToy : ToySweep {
  GuardedToy(double planted_ms = 0, const std::string& verify = "none") : ToySweep(verify) {
    std::ifstream in(space_path);
    std::stringstream yaml;
    yaml << in.rdbuf();
    space_path = dir.write("toy.yaml", yaml.str() + "metrics: {bytes: 1800000}\n");
    space = load_space(space_path);
    if (planted_ms > 0) recording = dir.write("toy.csv", recording_with(kPlanted, planted_ms));
  }
  SweepOptions guarded_options() const {
    SweepOptions o = options();
    o.device.l2_bytes = 0;
    return o;
  }
};

TEST(PhysicsGuard, AnImpossiblyFastTrialOfAFakeSweepIsSuspectAndNeverTheWinner) {
  GuardedToy toy(0.01);  // 1.8 MB in 10 us: 180 GB/s against a 2 GB/s copy
  const SweepReport r = run_sweep(toy.space, toy.guarded_options());
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.counts[static_cast<std::size_t>(TrialStatus::suspect)], 1u);
  ASSERT_FALSE(r.problems[0].ranked.empty());
  EXPECT_EQ(r.problems[0].ranked.front().trial.key.params, "A=6;B=2;C=1") << "the honest optimum wins";
  for (const TrialRow& row : r.problems[0].ranked) EXPECT_NE(row.trial.key.params, kPlanted);

  const std::vector<TrialRow> rows = toy.rows();
  const auto planted =
      std::find_if(rows.begin(), rows.end(), [](const TrialRow& row) { return row.trial.key.params == kPlanted; });
  ASSERT_NE(planted, rows.end());
  const TrialRecord& t = planted->trial;
  EXPECT_EQ(t.status, TrialStatus::suspect);
  EXPECT_FALSE(planted->is_best);
  EXPECT_NE(t.detail.find("faster than the GPU can: 180 GB/s is 90.00x the bandwidth ceiling of 2 GB/s"),
            std::string::npos)
      << t.detail;
  EXPECT_NE(t.detail.find("verify: none): add a check: the outputs must match a reference"), std::string::npos)
      << t.detail;
  // What it measured is kept, with the ceiling it was held against.
  ASSERT_TRUE(t.time_ms);
  EXPECT_DOUBLE_EQ(*t.time_ms, 0.01);
  EXPECT_DOUBLE_EQ(t.ceiling_gbps.value_or(0), 2.0);
  EXPECT_FALSE(t.ceiling_gflops) << "the toy declares no flops";

  // The cache's best is the honest optimum, and its headroom is 10 % of the copy.
  CacheDb::Options read_only;
  read_only.mode = CacheDb::Mode::read_only;
  const CacheDb db = CacheDb::open(toy.db, read_only);
  const std::vector<BestEntry> best = db.best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].trial.key.params, "A=6;B=2;C=1");
  const auto share =
      ceiling_share(best[0].trial.gbps, best[0].trial.gflops, best[0].trial.ceiling_gbps, best[0].trial.ceiling_gflops);
  ASSERT_TRUE(share);
  EXPECT_NEAR(share->headroom_percent(), 10.0, 1e-6);

  // A rerun recalls it as a failure: still not the winner, not measured again.
  const SweepReport again = run_sweep(toy.space, toy.guarded_options());
  EXPECT_EQ(again.trials.size(), 0u);
  EXPECT_EQ(again.problems[0].ranked.front().trial.key.params, "A=6;B=2;C=1");
}

TEST(PhysicsGuard, WithoutThePlantNothingIsSuspect) {
  GuardedToy toy;
  const SweepReport r = run_sweep(toy.space, toy.guarded_options());
  EXPECT_EQ(r.counts[static_cast<std::size_t>(TrialStatus::suspect)], 0u);
  EXPECT_EQ(r.problems[0].ranked.front().trial.key.params, "A=6;B=2;C=1");
}

TEST(PhysicsGuard, GoodEnoughEndsTheSearchOnceTheBestReachesItsShareOfTheCeiling) {
  // Exhaustive order reaches the optimum (90 % of the copy) at A=6: at 85 % the search stops there.
  GuardedToy toy;
  SweepOptions o = toy.guarded_options();
  o.good_enough = 0.85;
  const SweepReport r = run_sweep(toy.space, o);
  const ProblemOutcome& p = r.problems[0];
  EXPECT_TRUE(p.good_enough);
  EXPECT_FALSE(p.budget_reached);
  EXPECT_LT(p.evaluations, kConfigs - 40) << "A=7 and A=8 are never measured";
  EXPECT_EQ(p.ranked.front().trial.key.params, "A=6;B=2;C=1");
  for (const SweepTrial& t : r.trials) EXPECT_LT(t.config.values[0], 7) << canonical_config(toy.space, t.config);

  // At 95 % no config is good enough: every config is measured.
  GuardedToy strict;
  SweepOptions s = strict.guarded_options();
  s.good_enough = 0.95;
  const SweepReport all = run_sweep(strict.space, s);
  EXPECT_FALSE(all.problems[0].good_enough);
  EXPECT_EQ(all.problems[0].evaluations, kConfigs);
}

TEST(PhysicsGuard, ASuspectIsNotGoodEnough) {
  // The planted trial (A=7) is over every share of the ceiling, and is no reason to stop.
  GuardedToy toy(0.01);
  SweepOptions o = toy.guarded_options();
  o.good_enough = 0.95;
  const SweepReport r = run_sweep(toy.space, o);
  EXPECT_FALSE(r.problems[0].good_enough);
  EXPECT_EQ(r.problems[0].evaluations, kConfigs);
}

// The shipped H200 recording of vector_add with its default config planted at 0.07 ms on 2^28
// floats: 46,000 GB/s, 11x the recorded copy (4058 GB/s).
constexpr const char* kPlantedDefault = "BLOCK=256;ITEMS=1;VEC=1;GRID_STRIDE=0;GRID=264";

std::filesystem::path planted_vector_add(const testing::TempDir& dir) {
  std::ifstream in(testing::shipped_landscape("vector_add"));
  std::string text, line;
  const std::string key = std::string("N=268435456,") + kPlantedDefault + ",ok,";
  bool planted = false;
  while (std::getline(in, line)) {
    if (line.starts_with(key)) {
      line = key + "0.07,54.8091,10.8502,16,0,1,";
      planted = true;
    }
    text += line + '\n';
  }
  EXPECT_TRUE(planted) << "the recording lacks " << key;
  return dir.write("vector_add_planted.csv", text);
}

TEST(PhysicsGuard, AReplayOfARecordingWithAPlantedImpossibleTrialReportsItSuspectAndNotBest) {
  const testing::TempDir dir;
  const Space space = testing::shipped_space("vector_add");
  const Landscape landscape = load_landscape(planted_vector_add(dir));
  const Problem big = select_problem(space, {"N=268435456"});
  const ReplayProblem rp = replay_problem(space, landscape, big);
  ASSERT_EQ(rp.suspects.size(), 1u) << "only the planted trial; the honest ones reach 1.09x the copy at most";
  const std::size_t planted = rp.suspects.front();
  EXPECT_EQ(canonical_config(space, rp.space.config(planted)), kPlantedDefault);
  const LandscapeTrial& t = recorded_trial(rp, planted);
  EXPECT_EQ(t.status, TrialStatus::suspect);
  EXPECT_NE(t.detail.find("bandwidth ceiling of 4058 GB/s"), std::string::npos) << t.detail;
  // The check of vector_add compares every element with the built-in reference: the hint says
  // what else lets a kernel that skips its work through.
  EXPECT_NE(t.detail.find("make sure the kernel writes every output element"), std::string::npos) << t.detail;
  ASSERT_TRUE(rp.optimum);
  EXPECT_NE(*rp.optimum, planted);
  EXPECT_NEAR(rp.optimum_ms, 0.7335, 1e-4);
  EXPECT_FALSE(recorded_evaluation(rp, planted).time) << "answered as a failure";

  // An exhaustive replay meets it and does not take it.
  auto strategy = make_strategy("exhaustive", rp.space.domain, 1);
  const SearchTrace trace = replay(rp, *strategy, SearchRun{});
  ASSERT_TRUE(trace.best);
  EXPECT_NE(*trace.best, planted);
  EXPECT_DOUBLE_EQ(trace.best_time, rp.optimum_ms);

  // The small problem (11 MiB, within L2) has nothing planted and nothing suspect.
  EXPECT_TRUE(replay_problem(space, landscape, select_problem(space, {"N=1000003"})).suspects.empty());
}

TEST(PhysicsGuard, TuneReplayListsTheSuspectAndDoesNotReportItAsBest) {
  const testing::TempDir dir;
  const std::filesystem::path recording = planted_vector_add(dir);
  const std::string cmd = testing::shell_quoted(testing::cli_path()) + " tune " +
                          testing::shell_quoted(testing::source_dir() / "configs" / "vector_add.yaml") + " --replay " +
                          testing::shell_quoted(recording) + " --size N=268435456 --strategy exhaustive --confirm 0";
  const testing::CommandResult table = testing::run_command(cmd);
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("suspect     BLOCK=256 ITEMS=1 VEC=1 GRID_STRIDE=0 GRID=264"), std::string::npos)
      << table.output;
  EXPECT_NE(table.output.find("best found  BLOCK=1024 ITEMS=2 VEC=2 GRID_STRIDE=0 GRID=264"), std::string::npos)
      << table.output;
  const testing::CommandResult json = testing::run_command(cmd + " --format json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  // Among the evaluations it is answered as suspect, with no time, and listed with its reason.
  EXPECT_NE(json.output.find("\"status\": \"suspect\""), std::string::npos) << json.output.substr(0, 2000);
  const std::size_t suspects = json.output.find("\"suspects\": [");
  ASSERT_NE(suspects, std::string::npos);
  EXPECT_NE(json.output.find(kPlantedDefault, suspects), std::string::npos);
  EXPECT_NE(json.output.find("faster than the GPU can", suspects), std::string::npos);
}

TEST(PhysicsGuard, TheHintNamesTheWeakCheck) {
  const testing::TempDir dir;
  const auto space_with = [&](const std::string& verify) {
    dir.write("k.cu", "extern \"C\" __global__ void k(float* out, float* sums, int n) {}\n");
    return parse_space(
        "kernel: k\nsource: k.cu\nentry: k\nproblem: {N: [4096]}\nparams: {B: [128]}\nlaunch: {grid: [1], block: [B]}\n"
        "buffers:\n  out: {type: float, count: N, output: true}\n  sums: {type: float, count: N, output: true}\n"
        "args: [out, sums, N]\nverify: " +
            verify + "\n",
        dir.path() / "k.yaml");
  };
  EXPECT_NE(suspect_hint(space_with("none")).find("add a check: the outputs must match a reference"),
            std::string::npos);
  const std::string counted =
      suspect_hint(space_with("{reference: {config: {B: 128}}, outputs: {out: {count: 64}, sums: {compare: sum}}}"));
  EXPECT_NE(counted.find("verification compares only the first `count` elements of 'out'"), std::string::npos)
      << counted;
  EXPECT_NE(counted.find("verification compares only the sum of 'sums'"), std::string::npos) << counted;
  // A check of every element by a reference: the hint turns to what else passes a lazy kernel.
  EXPECT_NE(suspect_hint(space_with("{reference: {config: {B: 128}}}")).find("writes every output element"),
            std::string::npos);
  // The H200 acceptance space (tests/spaces/planted/skip_work.yaml) points at its `count`.
  const Space skip = load_space(testing::source_dir() / "tests" / "spaces" / "planted" / "skip_work.yaml");
  EXPECT_NE(suspect_hint(skip).find("the first `count` elements of 'out' ("), std::string::npos) << suspect_hint(skip);
  EXPECT_NE(suspect_hint(skip).find("skip_work.yaml:"), std::string::npos) << suspect_hint(skip);
}

}  // namespace
}  // namespace tiletune

namespace tiletune {
namespace {

TEST(PhysicsGuard, ARecordingExportedFromACacheCarriesTheArithmeticCeiling) {
  // The cache keeps the SM clock (schema 10), so a replay of its export holds trials against the
  // peak arithmetic rate as the sweep did: 132 SMs x 1.98 GHz x 256 FP32 flops per clock.
  const testing::TempDir dir;
  DeviceRecord d = testing::h200_record("GPU-c10cc10c-1111-4000-8000-000000000001");
  d.sm_count = 132;
  d.sm_clock_khz = 1980000;
  d.copy_gbps = 4058.0;
  const CacheDb db = CacheDb::open(
      testing::CacheBuilder().device(d).kernel("matmul").trial("N=1024", "T=16", 1.0).build(dir.path() / "c.db"),
      CacheDb::Mode::read_only);
  const Landscape exported = landscape_from_cache(db, "matmul", d.uuid);
  EXPECT_EQ(exported.header_value("sm_clock_khz"), "1980000");
  const CeilingInputs in = ceiling_inputs(exported);
  EXPECT_EQ(in.sm_clock_khz, 1980000);
  const Ceilings c = ceilings_for(in, std::nullopt, FlopType::fp32);
  ASSERT_TRUE(c.gflops);
  EXPECT_NEAR(*c.gflops, 132 * 1.98e6 * 1e3 * *flops_per_sm_per_clock(9, 0, FlopType::fp32) / 1e9, 1e-6);
}

}  // namespace
}  // namespace tiletune
