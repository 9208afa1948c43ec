// The schedule of a sweep (tiletune/sweep.hpp), on the CPU: `auto` by the size of the space and
// the budget (10^3, 10^5 and 10^7 configs), each problem's share of a time budget and its seed,
// the finalist rule and the confirmation's passes, replay_sweep's confirmation on the simulated
// clock, and warm starts from a recording or a cache (and the files refused), through the
// library and through `tune --replay --warm-start`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "cache_builder.hpp"
#include "test_support.hpp"
#include "tiletune/cache_db.hpp"
#include "tiletune/enumerate.hpp"
#include "tiletune/error.hpp"
#include "tiletune/landscape.hpp"
#include "tiletune/sweep.hpp"
#include "tiletune/trial.hpp"

namespace tiletune::testing {
namespace {

Space transpose() { return shipped_space("transpose"); }
DomainSize exact(std::uint64_t n) { return DomainSize{n, true, 0}; }

DeviceRecord gpu(const std::string& uuid, const std::string& name, int cc_major, int sm_count) {
  DeviceRecord d = h200_record(uuid, name);
  d.cc_major = cc_major;
  d.sm_count = sm_count;
  return d;
}

/// A cache holding one ok trial (1 ms) of `kernel` on one sm_90 device.
void write_one_trial_cache(const std::filesystem::path& db_path, const std::string& uuid, const std::string& kernel,
                           const std::string& problem, const std::string& params) {
  CacheBuilder()
      .device(gpu(uuid, "This GPU", 9, 132))
      .kernel(kernel, "h", "--gpu-architecture=sm_90", "13.0")
      .trial(problem, params, 1)
      .build(db_path);
}

TEST(Schedule, AutoIsExhaustiveUpToAMinuteAndTheLargeSpaceStrategyBeyond) {
  // 10^2 configs: 10 s estimated, measured whole.
  EXPECT_EQ(choose_strategy("auto", {}, exact(100)).strategy, "exhaustive");
  // 10^3: 100 s estimated; 10^5: 10^4 s; 10^7 (an estimate, as a large space's count is):
  // the large-space strategy, measuring 10 % of each problem's configs, at most 500.
  const std::pair<DomainSize, std::uint64_t> sizes[] = {
      {exact(1'000), 100}, {exact(100'000), 500}, {DomainSize{10'000'000, false, 0.05}, 500}};
  for (const auto& [size, trials] : sizes) {
    const StrategyChoice c = choose_strategy("auto", {}, size);
    EXPECT_EQ(c.strategy, auto_large_space_strategy) << size.count;
    EXPECT_TRUE(c.default_budget) << size.count;
    EXPECT_EQ(choice_evaluations(c, size.count), trials) << size.count;
  }
  // The minute holds for the estimate's upper end, and is shared by the devices.
  EXPECT_EQ(choose_strategy("auto", {}, exact(590)).strategy, "exhaustive");
  EXPECT_EQ(choose_strategy("auto", {}, DomainSize{590, false, 0.05}).strategy, auto_large_space_strategy);
  EXPECT_EQ(choose_strategy("auto", {}, exact(1'200), 2).strategy, "exhaustive");
  EXPECT_EQ(choose_strategy("auto", {}, exact(1'200), 1).strategy, auto_large_space_strategy);
  // A budget asks for a search that stops early: never exhaustive, and the budget is kept.
  SearchBudget budget;
  budget.seconds = 90;
  const StrategyChoice budgeted = choose_strategy("auto", budget, exact(100));
  EXPECT_EQ(budgeted.strategy, auto_large_space_strategy);
  EXPECT_FALSE(budgeted.default_budget);
  EXPECT_FALSE(choice_evaluations(budgeted, 100));
  // A small space's default budget is at least 30 configs; a named strategy stays.
  EXPECT_EQ(choice_evaluations(choose_strategy("auto", {}, exact(1'000)), 200), 30u);
  EXPECT_EQ(choose_strategy("local", {}, exact(10)).strategy, "local");
}

TEST(Schedule, EachProblemGetsAnEqualShareOfTheTimeLeftAndItsOwnSeed) {
  SearchBudget budget;
  budget.seconds = 100;
  const SweepSchedule s = sweep_schedule("auto", budget, 7, ConfirmPlan{3, 3}, 4, exact(400));
  EXPECT_DOUBLE_EQ(s.estimated_seconds, 40);
  EXPECT_EQ(s.choice.strategy, auto_large_space_strategy);
  EXPECT_DOUBLE_EQ(*problem_schedule(s, 0, 100, 0).budget.seconds, 25);
  EXPECT_DOUBLE_EQ(*problem_schedule(s, 1, 100, 40).budget.seconds, 20);  // 60 s left for 3
  EXPECT_DOUBLE_EQ(*problem_schedule(s, 3, 100, 120).budget.seconds, 0);  // spent: nothing
  EXPECT_EQ(problem_schedule(s, 2, 100, 0).seed, 9u);
  EXPECT_FALSE(problem_schedule(s, 0, 100, 0).budget.evaluations);
  // A share of the space is counted in evaluations of each problem's own size.
  SearchBudget share;
  share.fraction = 0.25;
  const SweepSchedule f = sweep_schedule("random", share, 1, {}, 2, exact(300));
  EXPECT_EQ(problem_schedule(f, 0, 200, 0).budget.evaluations, 50u);
  EXPECT_EQ(problem_schedule(f, 1, 100, 0).budget.evaluations, 25u);
  EXPECT_FALSE(problem_schedule(f, 1, 100, 0).budget.fraction);
  // The finalists are confirmed when the search measured something and the time is not spent.
  EXPECT_TRUE(confirms_after_search(s, 10, 99));
  EXPECT_FALSE(confirms_after_search(s, 10, 100));
  EXPECT_FALSE(confirms_after_search(s, 0, 0));
  EXPECT_FALSE(confirms_after_search(sweep_schedule("auto", budget, 7, ConfirmPlan{0, 3}, 4, exact(4)), 10, 0));
  EXPECT_EQ(confirmation_limit(ConfirmPlan{3, 3}, 4), 9u);
  EXPECT_EQ(confirmation_limit(ConfirmPlan{3, 3}, 40), 40u);
}

TEST(Schedule, FinalistsAreTheTopByScoreTiesByParamsAndConfirmedInPasses) {
  const std::vector<ScoredPoint> scored = {{2.0, "A=1", 5}, {1.0, "A=3", 9}, {1.0, "A=2", 4}, {3.0, "A=0", 1}};
  EXPECT_EQ(top_points(scored, 3), (std::vector<std::size_t>{4, 9, 5}));
  EXPECT_EQ(top_points(scored, 10).size(), 4u);
  // The top changes after the first pass (a finalist fell back): the second pass confirms the new
  // top, the third finds it all confirmed.
  int passes = 0;
  std::vector<std::vector<std::size_t>> measured;
  const Confirmation c = run_confirmation(
      ConfirmPlan{2, 3}, 100, 1,
      [&] {
        return passes++ == 0 ? std::vector<std::size_t>{1, 2} : std::vector<std::size_t>{2, 3};
      },
      [&](const std::vector<std::size_t>& points) {
        measured.push_back(points);
        return points.size() * 3;
      });
  EXPECT_EQ(measured.size(), 2u);
  EXPECT_EQ(c.trials, 12u);
  EXPECT_EQ(c.finalists, 3u);
  EXPECT_EQ(c.confirmed, (std::vector<std::size_t>{1, 2, 3}));
  // No pass that would go past the limit (on two devices a pass costs twice as much); none
  // without rounds.
  EXPECT_EQ(run_confirmation(
                ConfirmPlan{2, 3}, 11, 2,
                [] {
                  return std::vector<std::size_t>{1, 2};
                },
                [](const std::vector<std::size_t>&) -> std::uint64_t { return 12; })
                .trials,
            0u);
  EXPECT_EQ(run_confirmation(
                ConfirmPlan{2, 3}, 12, 2,
                [] {
                  return std::vector<std::size_t>{1, 2};
                },
                [](const std::vector<std::size_t>&) -> std::uint64_t { return 12; })
                .trials,
            12u);
  EXPECT_EQ(run_confirmation(
                ConfirmPlan{2, 3}, 5, 1,
                [] {
                  return std::vector<std::size_t>{1, 2};
                },
                [](const std::vector<std::size_t>&) -> std::uint64_t { return 6; })
                .trials,
            0u);
  EXPECT_EQ(run_confirmation(
                ConfirmPlan{2, 0}, 100, 1, [] { return std::vector<std::size_t>{1}; },
                [](const std::vector<std::size_t>&) -> std::uint64_t { return 1; })
                .trials,
            0u);
}

TEST(Schedule, TieCandidatesAreTheConfigsNearTheBestAndTheStandingAnswers) {
  // Best 1.0; within 10 %: 1.05, 1.10 (the bound itself); beyond: 1.2, 2.0.
  const std::vector<ScoredPoint> scored = {
      {1.2, "A=4", 40}, {1.05, "A=2", 20}, {1.0, "A=1", 10}, {2.0, "A=5", 50}, {1.10, "A=3", 30}};
  EXPECT_EQ(tie_candidate_points(scored, 32), (std::vector<std::size_t>{10, 20, 30}));
  EXPECT_EQ(tie_candidate_points(scored, 2), (std::vector<std::size_t>{10, 20})) << "nearest first";
  EXPECT_TRUE(tie_candidate_points(scored, 1).empty()) << "one config compares with nothing";
  EXPECT_TRUE(tie_candidate_points({{1.0, "A=1", 10}, {1.5, "A=2", 20}}, 32).empty()) << "nothing near";
  // A standing answer joins whatever its score, right after the best, and a cut keeps it.
  EXPECT_EQ(tie_candidate_points(scored, 32, {"A=5"}), (std::vector<std::size_t>{10, 50, 20, 30}));
  EXPECT_EQ(tie_candidate_points(scored, 2, {"A=5"}), (std::vector<std::size_t>{10, 50}));
  EXPECT_EQ(tie_candidate_points(scored, 32, {"A=1", "A=9"}), (std::vector<std::size_t>{10, 20, 30}));
}

TEST(Schedule, TheTiePassMeasuresTheCandidatesTogetherWithinItsOwnLimit) {
  std::vector<std::vector<std::size_t>> measured;
  auto measure = [&](const std::vector<std::size_t>& points) {
    measured.push_back(points);
    return points.size() * 3;
  };
  const auto top = [] { return std::vector<std::size_t>{1, 2}; };
  // One pass of the top 2, then the 4 candidates together (the pass had only 2 of them).
  Confirmation c = run_confirmation(ConfirmPlan{2, 3, 32}, 100, 1, top, measure,
                                    [] { return std::vector<std::size_t>{1, 3, 2, 4}; });
  ASSERT_EQ(measured.size(), 2u);
  EXPECT_EQ(measured[1], (std::vector<std::size_t>{1, 3, 2, 4}));
  EXPECT_EQ(c.trials, 6u + 12u);
  EXPECT_EQ(c.tie_candidates, 4u);
  EXPECT_EQ(c.finalists, 4u);
  EXPECT_EQ(c.confirmed, (std::vector<std::size_t>{1, 2, 3, 4}));
  // Candidates the last pass measured together already: no tie pass.
  measured.clear();
  c = run_confirmation(ConfirmPlan{2, 3, 32}, 100, 1, top, measure, [] { return std::vector<std::size_t>{2, 1}; });
  EXPECT_EQ(measured.size(), 1u);
  EXPECT_EQ(c.tie_candidates, 0u);
  // Cut to what the limit allows on its own (9 trials: 3 candidates of 3 rounds), on two devices
  // half as many; none when fewer than two remain; none when asked for fewer than two.
  measured.clear();
  c = run_confirmation(ConfirmPlan{2, 3, 32}, 9, 1, top, measure, [] { return std::vector<std::size_t>{1, 3, 2, 4}; });
  ASSERT_EQ(measured.size(), 2u);
  EXPECT_EQ(measured[1], (std::vector<std::size_t>{1, 3, 2}));
  measured.clear();
  c = run_confirmation(ConfirmPlan{2, 3, 32}, 12, 2, top, measure, [] { return std::vector<std::size_t>{1, 3, 2, 4}; });
  ASSERT_EQ(measured.size(), 2u);
  EXPECT_EQ(measured[1], (std::vector<std::size_t>{1, 3}));
  measured.clear();
  c = run_confirmation(ConfirmPlan{2, 3, 32}, 11, 2, top, measure, [] { return std::vector<std::size_t>{1, 3, 2, 4}; });
  EXPECT_EQ(measured.size(), 0u) << "the pass of 2 x 3 x 2 = 12 is over 11 too";
  measured.clear();
  c = run_confirmation(ConfirmPlan{2, 3, 1}, 100, 1, top, measure, [] { return std::vector<std::size_t>{1, 3}; });
  EXPECT_EQ(measured.size(), 1u);
}

std::vector<Problem> transpose_problems(const Space& s) {
  return {select_problem(s, {"N=1024"}), select_problem(s, {"N=4096"}), select_problem(s, {"N=8192"})};
}

TEST(Schedule, AReplayedSweepConfirmsItsFinalistsOnTheSimulatedClockAndSharesTheTime) {
  const Space s = transpose();
  const Landscape l = load_landscape(shipped_landscape("transpose"));
  ReplaySweepOptions o;
  o.strategy = "random";
  o.budget.seconds = 60;
  o.seed = 3;
  o.confirm = ConfirmPlan{3, 3};
  const ReplayedSweep r = replay_sweep(s, l, transpose_problems(s), o);
  ASSERT_EQ(r.problems.size(), 3u);
  double clock = 0;
  int spent = 0;
  for (std::size_t p = 0; p < r.problems.size(); ++p) {
    const ReplayedProblem& rp = r.problems[p];
    SCOPED_TRACE(rp.recording.canonical);
    EXPECT_EQ(rp.schedule.seed, 3 + p);
    // The share of the time the simulated sweep had left when this problem began.
    ASSERT_TRUE(rp.schedule.budget.seconds);
    EXPECT_NEAR(*rp.schedule.budget.seconds, std::max(0.0, (60 - clock) / double(3 - p)), 1e-9);
    EXPECT_LE(rp.trace.cost_seconds, *rp.schedule.budget.seconds + 1.0);  // one evaluation may end past it
    // The finalists: the top 3 by recorded time of what the search evaluated, 3 rounds each.
    std::vector<std::pair<double, std::string>> ok;
    for (const Evaluation& e : rp.trace.evaluations)
      if (e.time) ok.emplace_back(*e.time, canonical_config(s, rp.recording.space.config(e.point)));
    std::sort(ok.begin(), ok.end());
    ASSERT_GE(ok.size(), 3u);
    clock += rp.trace.cost_seconds;
    if (clock >= 60) {  // the time budget is spent: no confirmation, as in a sweep
      ++spent;
      EXPECT_EQ(rp.confirmation.trials, 0u);
      continue;
    }
    // Then the tie pass: every config within 10 % of the best recorded time (at most 32), when
    // they are more than the top 3 the pass measured together.
    std::size_t near = 0;
    while (near < std::min<std::size_t>(ok.size(), 32) && ok[near].first <= ok[0].first * (1 + kTieCandidateWindow))
      ++near;
    const std::size_t together = near > 3 ? near : 0;
    EXPECT_EQ(rp.confirmation.tie_candidates, together);
    ASSERT_EQ(rp.confirmation.confirmed.size(), std::max<std::size_t>(3, together));
    double cost = 0;
    for (std::size_t i = 0; i < rp.confirmation.confirmed.size(); ++i) {
      EXPECT_EQ(canonical_config(s, rp.recording.space.config(rp.confirmation.confirmed[i])), ok[i].second);
      cost += (i < 3 ? 3 : 0) * recorded_trial(rp.recording, rp.confirmation.confirmed[i]).measure_ms / 1000;
    }
    for (std::size_t i = 0; i < together; ++i)
      cost += 3 * recorded_trial(rp.recording, rp.confirmation.confirmed[i]).measure_ms / 1000;
    EXPECT_EQ(rp.confirmation.trials, 9u + 3 * together) << "one pass: a recording's times do not change";
    EXPECT_NEAR(rp.confirmation_cost_seconds, cost, 1e-12);
    clock += rp.confirmation_cost_seconds;
  }
  EXPECT_NEAR(r.clock_seconds, clock, 1e-9);
  EXPECT_EQ(spent, 1) << "the last problem's search spends what is left of the budget";
  // Without --confirm, nothing is confirmed and the clock is the searches'.
  o.confirm.finalists = 0;
  const ReplayedSweep bare = replay_sweep(s, l, transpose_problems(s), o);
  for (const ReplayedProblem& rp : bare.problems) EXPECT_EQ(rp.confirmation.trials, 0u);
}

// A recording of transpose on another GPU whose ranking is the shipped one reversed: its top
// configs are the shipped recording's slowest.
std::string reversed_recording(const std::string& kernel = "transpose") {
  const Landscape shipped_one = load_landscape(shipped_landscape("transpose"));
  Landscape other;
  other.kernel = kernel;
  other.header = {{"device", "Other GPU"}};
  for (LandscapeProblem p : shipped_one.problems) {
    for (LandscapeTrial& t : p.trials)
      if (t.time_ms) t.time_ms = 100.0 / *t.time_ms;
    other.problems.push_back(std::move(p));
  }
  std::ostringstream out;
  write_landscape(out, other);
  return out.str();
}

/// The params of a problem's ok trials in a landscape, fastest first.
std::vector<std::string> ranking(const Landscape& l, const std::string& problem) {
  std::vector<std::pair<double, std::string>> ok;
  for (const LandscapeTrial& t : l.find_problem(problem)->trials)
    if (t.time_ms) ok.emplace_back(*t.time_ms, t.params);
  std::sort(ok.begin(), ok.end());
  std::vector<std::string> out;
  for (auto& [t, p] : ok) out.push_back(p);
  return out;
}

TEST(WarmStart, FromARecordingItsTopConfigsInThisDomainBestFirst) {
  TempDir dir;
  const Space s = transpose();
  const auto path = dir.write("other.csv", reversed_recording());
  const WarmStart warm = load_warm_start(path, s);
  EXPECT_NE(warm.source.find("Other GPU"), std::string::npos) << warm.source;
  const std::vector<std::string> want = ranking(load_landscape(path), "N=8192");
  ASSERT_EQ(warm.rankings.at("N=8192"), want);
  const SpaceDomain domain = space_domain(s, select_problem(s, {"N=8192"}));
  const std::vector<std::size_t> points = warm_start_of(warm, s, "N=8192", domain);
  ASSERT_EQ(points.size(), warm_start_points);
  for (std::size_t i = 0; i < points.size(); ++i) EXPECT_EQ(canonical_config(s, domain.config(points[i])), want[i]);
  // A problem the warm start lacks has none; configs the domain lacks are skipped.
  EXPECT_TRUE(warm_start_of(warm, s, "N=2048", domain).empty());
  WarmStart partial;
  partial.rankings["N=8192"] = {"TILE=3;BLOCK_ROWS=8;PAD=0;VEC=1", want[0], "bogus", want[1]};
  const auto two = warm_start_of(partial, s, "N=8192", domain);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(canonical_config(s, domain.config(two[1])), want[1]);
}

TEST(WarmStart, FromACacheTheOtherDeviceWithTheMostOkTrials) {
  TempDir dir;
  const Space s = transpose();
  const auto db_path = dir.path() / "other.db";
  {
    const DeviceRecord here = gpu("GPU-HERE", "This GPU", 9, 132), few = gpu("GPU-FEW", "Few GPU", 9, 132),
                       many = gpu("GPU-MANY", "Many GPU", 8, 108);
    CacheBuilder cache;
    cache.device(here).device(few).device(many).kernel("transpose", "h", "--gpu-architecture=sm_90", "13.0");
    Enumerator e(s, Problem{{4096}});
    int i = 0;
    while (auto c = e.next()) {
      const std::string params = canonical_config(s, *c);
      for (const DeviceRecord* device : {&here, &few, &many}) {
        if (device == &few && i % 2 == 0) continue;  // half as many
        // "Many GPU" ranks by i, the others against it.
        cache.device(*device).trial("N=4096", params, device == &many ? 1.0 + i : 1000.0 - i);
      }
      ++i;
    }
    cache.build(db_path);
  }
  const WarmStart warm = load_warm_start(db_path, s, {"GPU-HERE"});
  EXPECT_NE(warm.source.find("GPU-MANY"), std::string::npos) << warm.source;
  EXPECT_TRUE(warm.note.empty()) << "no architecture asked for: " << warm.note;
  // A device of the tuned architecture (sm_90) first, though it has fewer ok trials.
  const WarmStart same = load_warm_start(db_path, s, {"GPU-HERE"}, {}, 90);
  EXPECT_NE(same.source.find("GPU-FEW"), std::string::npos) << same.source;
  EXPECT_TRUE(same.note.empty()) << same.note;
  // None of the tuned architecture: the most ok trials, and a note that it may not help.
  const WarmStart across = load_warm_start(db_path, s, {"GPU-HERE"}, {}, 75);
  EXPECT_NE(across.source.find("GPU-MANY"), std::string::npos) << across.source;
  EXPECT_NE(
      across.note.find("no device of sm_75 has kernel 'transpose' there; the ranking comes from GPU-MANY (sm_80)"),
      std::string::npos)
      << across.note;
  const std::vector<std::string>& r = warm.rankings.at("N=4096");
  ASSERT_EQ(r.size(), 138u);  // every valid transpose config at N=4096
  Enumerator e(s, Problem{{4096}});
  EXPECT_EQ(r.front(), canonical_config(s, *e.next())) << "the fastest on GPU-MANY";
  // Only this device's own trials: no warm start.
  TempDir other;
  const auto lone = other.path() / "lone.db";
  write_one_trial_cache(lone, "GPU-HERE", "transpose", "N=4096", "TILE=32;BLOCK_ROWS=8;PAD=0;VEC=1");
  try {
    (void)load_warm_start(lone, s, {"GPU-HERE"});
    ADD_FAILURE() << "a cache with this device's trials only";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no ok trial of kernel 'transpose' on a device other than this one"),
              std::string::npos)
        << e.what();
  }
}

TEST(WarmStart, AFileThatIsNeitherOrOfAnotherKernelIsRefused) {
  TempDir dir;
  const Space s = transpose();
  const auto expect_error = [&](const std::filesystem::path& path, const std::string& what) {
    try {
      (void)load_warm_start(path, s);
      ADD_FAILURE() << path << " was taken";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    }
  };
  expect_error(dir.write("notes.txt", "hello\n"), "neither a tiletune cache (SQLite) nor a landscape recording");
  expect_error(dir.write("empty.csv", ""), "neither a tiletune cache");
  expect_error(dir.write("matmul.csv", reversed_recording("matmul")),
               "the recording is of kernel 'matmul', the space of 'transpose'");
  expect_error(shipped_landscape("matmul"), "the recording is of kernel 'matmul'");
  const auto db_path = dir.path() / "matmul.db";
  write_one_trial_cache(db_path, "GPU-1", "matmul", "M=64", "TILE=16");
  expect_error(db_path, "no ok trial of kernel 'transpose'");
}

/// Whether the strategies propose what they are told to prefer first (SearchStrategy::prefer,
/// implemented in the strategies on branch h23-strat).
bool strategies_take_prefer() {
  const SearchDomain domain({"X"}, {{1, 2, 3, 4}}, {{0}, {1}, {2}, {3}});
  const auto s = make_strategy("exhaustive", domain, 1);
  s->prefer({3});
  return s->propose(1) == std::vector<std::size_t>{3};
}

TEST(WarmStartCli, AReplayFromARecordingProposesItsTopConfigsFirst) {
  TempDir dir;
  const auto other = dir.write("other.csv", reversed_recording());
  const auto space = source_dir() / "configs" / "transpose.yaml";
  const std::string base = shell_quoted(cli_path()) + " tune " + shell_quoted(space) + " --replay " +
                           shell_quoted(shipped_landscape("transpose")) +
                           " --size N=8192 --strategy random --seed 3 --budget 20 --warm-start " + shell_quoted(other);
  const CommandResult json = run_command(base + " --format json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const nlohmann::json j = nlohmann::json::parse(json.output);
  EXPECT_NE(j["warm_start"].get<std::string>().find("Other GPU"), std::string::npos);
  const nlohmann::json& p = j["problems"][0];
  const std::vector<std::string> want = ranking(load_landscape(other), "N=8192");
  ASSERT_EQ(p["warm_start"].size(), warm_start_points);
  for (std::size_t i = 0; i < warm_start_points; ++i) EXPECT_EQ(p["warm_start"][i], want[i]) << i;
  const CommandResult table = run_command(base);
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("warm start: the other device's top 8 configs proposed first"), std::string::npos)
      << table.output;
  if (!strategies_take_prefer())
    GTEST_SKIP() << "the strategies ignore SearchStrategy::prefer (h23-strat implements it)";
  // The default config first (as in every sweep), then the other device's top 8, each measured.
  ASSERT_GE(p["evaluations"].size(), 1 + warm_start_points);
  EXPECT_EQ(p["evaluations"][0]["params"], "TILE=32;BLOCK_ROWS=8;PAD=0;VEC=1");
  std::size_t at = 1;
  for (std::size_t i = 0; i < warm_start_points; ++i) {
    if (want[i] == "TILE=32;BLOCK_ROWS=8;PAD=0;VEC=1") continue;  // measured first already
    EXPECT_EQ(p["evaluations"][at++]["params"], want[i]) << i;
  }
}

TEST(WarmStartCli, FromACacheAndTheFilesRefused) {
  TempDir dir;
  const auto space = source_dir() / "configs" / "transpose.yaml";
  const auto db_path = dir.path() / "other.db";
  {
    CacheBuilder()
        .device(gpu("GPU-OTHER", "Other GPU", 8, 108))
        .kernel("transpose", "h", "--gpu-architecture=sm_80", "13.0")
        .trial("N=8192", "TILE=64;BLOCK_ROWS=16;PAD=1;VEC=4", 1)
        .trial("N=8192", "TILE=16;BLOCK_ROWS=4;PAD=1;VEC=2", 2)
        .build(db_path);
  }
  const std::string base = shell_quoted(cli_path()) + " tune " + shell_quoted(space) + " --replay " +
                           shell_quoted(shipped_landscape("transpose")) +
                           " --size N=8192 --strategy random --budget 20 --format json --warm-start ";
  const CommandResult from_db = run_command(base + shell_quoted(db_path));
  ASSERT_EQ(from_db.exit_code, 0) << from_db.output;
  const nlohmann::json j = nlohmann::json::parse(from_db.output);
  EXPECT_NE(j["warm_start"].get<std::string>().find("GPU-OTHER"), std::string::npos);
  EXPECT_EQ(j["problems"][0]["warm_start"],
            nlohmann::json::array({"TILE=64;BLOCK_ROWS=16;PAD=1;VEC=4", "TILE=16;BLOCK_ROWS=4;PAD=1;VEC=2"}));
  // A file that is neither: an error naming it (exit 1, docs/reference/exit-status.md).
  const CommandResult neither = run_command(base + shell_quoted(dir.write("notes.txt", "hello\n")));
  EXPECT_EQ(neither.exit_code, 1) << neither.output;
  EXPECT_NE(neither.output.find("notes.txt: neither a tiletune cache (SQLite) nor a landscape recording"),
            std::string::npos)
      << neither.output;
  // Another kernel's ranking is refused.
  const CommandResult other_kernel = run_command(base + shell_quoted(shipped_landscape("matmul")));
  EXPECT_EQ(other_kernel.exit_code, 1) << other_kernel.output;
  EXPECT_NE(other_kernel.output.find("the recording is of kernel 'matmul', the space of 'transpose'"),
            std::string::npos)
      << other_kernel.output;
  const CommandResult missing = run_command(base + shell_quoted(dir.path() / "nope.db"));
  EXPECT_EQ(missing.exit_code, 2) << missing.output;  // checked before any work
}

}  // namespace
}  // namespace tiletune::testing
