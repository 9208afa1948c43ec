// The real sweep (run_sweep: NVRTC compiles, the worker protocol, SQLite writes) in CI, against
// tests/process/fake_worker answering from a recording: faults and hangs of the worker, count
// and time budgets, resume, a sweep killed with SIGKILL between trials and run again, a sweep
// interrupted by SIGINT and run again, one GPU as a pool of one, the
// worker session's reference-run bookkeeping, and the acceptance test of issue 13: a replay of
// the recording and the sweep propose the same configs in the same order for the same seed,
// recording and in-flight width; the confirmation of the finalists (interleaved rounds, the
// median round kept, a failed round kept) against a fake GPU whose state drifts; the samples and
// verification time each trial keeps, and a failing host check stopping the sweep.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <sstream>
#include <set>
#include <thread>

#include "common/interrupt_signals.hpp"
#include "tune/sweep_stages.hpp"
#include "test_support.hpp"
#include "toy_sweep.hpp"
#include "tiletune/landscape.hpp"
#include "tiletune/replay.hpp"
#include "tiletune/sweep.hpp"

namespace tiletune {
namespace {

TEST(FakeSweep, ExhaustiveSweepRecordsEveryConfigAndRanksFromTheCache) {
  ToySweep toy;
  // A cold cubin cache, as this test had when it ran first in a process of all the cases: the
  // fake worker's measure times are the recording's, so wall >= setup + measure below holds when
  // the compiles take their real time, not when every one is a hit of the shared cache.
  const CubinCache cold(toy.dir.path() / "cubins");
  SweepOptions o = toy.options();
  o.cubin_cache = &cold;
  const SweepReport r = run_sweep(toy.space, o);
  EXPECT_EQ(r.strategy, "exhaustive");
  ASSERT_EQ(r.trials.size(), kConfigs);
  EXPECT_EQ(canonical_config(toy.space, r.trials.front().config), "A=2;B=3;C=0") << "the default config goes first";
  const std::vector<TrialRow> rows = toy.rows();
  ASSERT_EQ(rows.size(), kConfigs);
  auto s = statuses(rows);
  EXPECT_EQ(s[TrialStatus::compile_failed], kCompileFailures);
  EXPECT_EQ(s[TrialStatus::wrong_result], kWrongResults);
  EXPECT_EQ(s[TrialStatus::ok], kConfigs - kCompileFailures - kWrongResults);
  ASSERT_EQ(r.problems.size(), 1u);
  ASSERT_FALSE(r.problems[0].ranked.empty());
  EXPECT_EQ(r.problems[0].ranked.front().trial.key.params, "A=6;B=2;C=1");
  ASSERT_TRUE(r.problems[0].default_trial);
  EXPECT_EQ(r.problems[0].evaluations, kConfigs);
  EXPECT_FALSE(r.budget_exhausted);
  EXPECT_EQ(r.worker_starts, 1);
  // The split tune prints: every part measured, and the overhead defined.
  EXPECT_GT(r.setup_seconds, 0);
  EXPECT_GT(r.measure_seconds, 0);
  EXPECT_GT(r.worker_seconds, 0);
  EXPECT_GT(r.copy_seconds, 0);
  EXPECT_GE(r.wall_seconds, r.setup_seconds + r.measure_seconds);
  EXPECT_GT(r.copy.gbps, 0);
  EXPECT_DOUBLE_EQ(sweep_overhead(r), r.wall_seconds / (gpu_busy_seconds(r) + r.wait_compile_seconds));
}

// One GPU is a pool of one: the same driver, its device's view is the report's, and a worker
// that cannot start ends the sweep the way it ends a model of several GPUs (not tuned, said why).
TEST(FakeSweep, OneGpuIsAPoolOfOne) {
  ToySweep toy;
  const SweepReport r = run_sweep(toy.space, toy.options());
  ASSERT_EQ(r.pool.size(), 1u);
  EXPECT_EQ(r.pool[0].device.uuid, r.device.uuid);
  EXPECT_EQ(r.pool[0].trials, r.trials.size());
  EXPECT_EQ(r.pool[0].copy.gbps, r.copy.gbps);
  ASSERT_EQ(r.pool[0].problems.size(), 1u);
  ASSERT_FALSE(r.pool[0].problems[0].ranked.empty());
  EXPECT_EQ(r.pool[0].problems[0].ranked.front().trial.key.params, r.problems[0].ranked.front().trial.key.params);
  EXPECT_TRUE(r.pool_errors.empty());

  ToySweep dead;
  const SweepReport lost = run_sweep(dead.space, dead.options("dead"));
  EXPECT_TRUE(lost.trials.empty());
  ASSERT_EQ(lost.pool_errors.size(), 1u);
  EXPECT_NE(lost.pool_errors[0].find("N=1024 not tuned"), std::string::npos) << lost.pool_errors[0];
  EXPECT_NE(lost.pool[0].left.find("failed 3 starts in a row"), std::string::npos) << lost.pool[0].left;
}

// SIGINT during a sweep, caught as `tune` catches it (InterruptSignals) and sent as a terminal
// sends it, to the whole process group: the sweep stops between trials, its workers (in groups
// of their own) are not hit, every trial it recorded stays and none is a fault, nothing is
// confirmed, and it says it was interrupted; a rerun measures the rest, each config once.
TEST(FakeSweep, ASignalToTheGroupStopsTheSweepBetweenTrialsAndARerunResumes) {
  ToySweep toy;
  constexpr int kInterruptedCleanly = 42;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      (void)::setpgid(0, 0);  // a group of its own, as a shell gives a foreground job
      const InterruptSignals signals;
      SweepOptions o = toy.options("ok", {"--delay-ms", "20"});
      o.confirm_finalists = 3;
      // Sent while the sweep waits for a trial being measured (each takes 20 ms): a worker the
      // signal reached would die in it, and that trial would be recorded as a fault.
      o.progress = [](const SweepProgress& p) {
        if (p.done == 10)
          std::thread([] {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            (void)::kill(0, SIGINT);
          }).detach();
      };
      o.interrupted = [] { return InterruptSignals::received() == SIGINT; };
      const SweepReport r = run_sweep(toy.space, o);
      const bool faults = std::any_of(r.trials.begin(), r.trials.end(),
                                      [](const SweepTrial& t) { return sweep_detail::worker_lost(t.status); });
      const bool clean = r.interrupted && !faults && r.confirmation_trials == 0 && r.trials.size() >= 10 &&
                         r.trials.size() < kConfigs && !r.problems[0].ranked.empty();
      ::_exit(clean ? kInterruptedCleanly : 1);
    } catch (...) { ::_exit(2); }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the sweep did not survive its own SIGINT";
  ASSERT_EQ(WEXITSTATUS(status), kInterruptedCleanly);
  const std::vector<TrialRow> before = toy.rows();
  ASSERT_GE(before.size(), 10u);
  for (const TrialRow& row : before)
    EXPECT_FALSE(sweep_detail::worker_lost(row.trial.status)) << row.trial.key.params << ": " << row.trial.detail;

  const SweepReport rest = run_sweep(toy.space, toy.options());
  EXPECT_FALSE(rest.interrupted);
  EXPECT_EQ(rest.problems[0].resumed, before.size());
  EXPECT_EQ(before.size() + rest.trials.size(), kConfigs);
  EXPECT_EQ(toy.rows().size(), kConfigs);
}

// The cache's rows after an exhaustive sweep of the toy that measures `evaluations` configs.
std::vector<TrialRow> rows_after_sweep(const ToySweep& toy, std::size_t evaluations) {
  SweepOptions o = toy.options();
  o.budget.evaluations = evaluations;
  (void)run_sweep(toy.space, o);
  return toy.rows();
}

TEST(FakeSweep, ATrialKeepsTheWarningsOfItsCompile) {
  ToySweep toy;
  // The default, then A=1 with B=1 to 5 (exhaustive order).
  const std::vector<TrialRow> rows = rows_after_sweep(toy, 16);
  ASSERT_EQ(rows.size(), 16u);
  std::size_t warned = 0;
  for (const TrialRow& r : rows) {
    SCOPED_TRACE(r.trial.key.params);
    if (r.trial.key.params.find("B=5") == std::string::npos) {
      EXPECT_FALSE(r.trial.compile_log) << *r.trial.compile_log;
      continue;
    }
    ++warned;
    ASSERT_TRUE(r.trial.compile_log);
    EXPECT_NE(r.trial.compile_log->find("toy_unused"), std::string::npos) << *r.trial.compile_log;
    EXPECT_NE(r.trial.compile_log->find("warning"), std::string::npos) << *r.trial.compile_log;
    EXPECT_EQ(r.trial.status, TrialStatus::ok);
  }
  EXPECT_EQ(warned, 3u);  // A=1 B=5 C=0..2
}

// What the worker measured beyond the statistics: the samples (times_ms, a JSON array) and the
// verification time, on every ok trial; a failed trial has no samples.
TEST(FakeSweep, ATrialKeepsItsSamplesAndItsVerificationTime) {
  ToySweep toy;
  const std::vector<TrialRow> rows = rows_after_sweep(toy, 20);
  ASSERT_EQ(rows.size(), 20u);
  const auto is_ok = [](const TrialRow& r) { return r.trial.status == TrialStatus::ok; };
  EXPECT_GT(std::count_if(rows.begin(), rows.end(), is_ok), 10);
  for (const TrialRow& r : rows) {
    SCOPED_TRACE(r.trial.key.params);
    EXPECT_EQ(r.trial.times_ms.has_value(), is_ok(r));
    if (!is_ok(r)) continue;
    ASSERT_TRUE(r.trial.times_ms);
    ASSERT_TRUE(r.trial.time_ms);
    // Ten samples, each the recorded time (the fake worker's), as a JSON array.
    const std::string one = fmt::format("{}", *r.trial.time_ms);
    std::string want = "[" + one;
    for (int i = 1; i < 10; ++i) want += "," + one;
    EXPECT_EQ(*r.trial.times_ms, want + "]");
    EXPECT_EQ(r.trial.verify_ms, 0.25);
  }
}

// The message of a sweep of 12 trials whose fake worker answers trial `at` with a failure every
// config would share (`mode`): the sweep must stop with an Error.
std::string error_of_stopped_sweep(ToySweep& toy, const char* mode, const char* at) {
  SweepOptions o = toy.options(mode, {"--at", at});
  o.budget.evaluations = 12;
  try {
    (void)run_sweep(toy.space, o);
  } catch (const Error& e) { return e.what(); }
  ADD_FAILURE() << "the sweep did not stop on " << mode;
  return {};
}

// A host check that fails (its program exited, answered garbage or nothing) would fail every
// config after it: the sweep stops with the check's message, the trials before it are kept and
// the one it could not judge is not recorded (a rerun measures it).
TEST(FakeSweep, AHostCheckThatFailsStopsTheSweep) {
  ToySweep toy;
  const std::string error = error_of_stopped_sweep(toy, "checkfail", "4");
  EXPECT_NE(error.find("host check [./check.py] exited with status 1 before answering"), std::string::npos) << error;
  EXPECT_NE(error.find("the sweep stops"), std::string::npos) << error;
  const std::vector<TrialRow> rows = toy.rows();
  std::size_t faults = 0;
  for (const TrialRow& r : rows) faults += r.trial.status == TrialStatus::runtime_fault ? 1 : 0;
  EXPECT_EQ(faults, 0u) << "the check's failure is no config's";
  EXPECT_GE(rows.size(), 3u) << "the trials before it are kept";
  EXPECT_LT(rows.size(), 12u) << "and none after it is measured";
  // Measured again (the fake's check works there), the rest of the budget completes.
  EXPECT_EQ(rows_after_sweep(toy, 12).size(), 12u + rows.size());
}

// A failure no config can escape (a __constant__ array smaller than the space's data, a symbol
// the module lacks) is found once: the sweep stops with the worker's one line, and nothing is
// recorded for the config that met it, where it used to record it for every config.
TEST(FakeSweep, AGlobalThatCannotBeFilledStopsTheSweepWithOneLine) {
  ToySweep toy;
  const std::string error = error_of_stopped_sweep(toy, "globalfail", "1");
  EXPECT_NE(error.find("module global 'filter' is 900 bytes"), std::string::npos) << error;
  EXPECT_NE(error.find("every config would fail the same way"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << "one line: " << error;
  for (const TrialRow& r : toy.rows())
    EXPECT_NE(r.trial.status, TrialStatus::launch_failed) << "nothing recorded per config: " << r.trial.detail;
}

TEST(FakeSweep, AWorkerThatFaultsHangsOrDiesCostsOneTrialAndTheSweepGoesOn) {
  struct Case {
    const char* mode;
    TrialStatus status;
    int starts;
  };
  for (const Case& c : {Case{"crash", TrialStatus::runtime_fault, 2}, Case{"sleep", TrialStatus::timeout, 2},
                        Case{"exit", TrialStatus::runtime_fault, 2}, Case{"garbage", TrialStatus::runtime_fault, 2},
                        Case{"lost", TrialStatus::runtime_fault, 2}, Case{"throw", TrialStatus::runtime_fault, 1}}) {
    ToySweep toy;
    SweepOptions o = toy.options(c.mode, {"--at", "4"});
    o.budget.evaluations = 12;
    const SweepReport r = run_sweep(toy.space, o);
    ASSERT_EQ(r.trials.size(), 12u) << c.mode;
    // Trial 4 of the worker protocol is the fourth trial that reached the worker.
    std::size_t reached = 0;
    for (const SweepTrial& t : r.trials) {
      if (!t.result) continue;
      if (++reached == 4)
        EXPECT_EQ(t.status, c.status) << c.mode << ": " << t.detail;
      else if (t.status != TrialStatus::wrong_result)
        EXPECT_EQ(t.status, TrialStatus::ok) << c.mode << ": " << t.detail;
    }
    EXPECT_GE(reached, 5u) << c.mode << ": the sweep went on after the fault";
    EXPECT_EQ(r.worker_starts, c.starts) << c.mode;
    EXPECT_EQ(toy.rows().size(), 12u) << c.mode;
  }
}

TEST(FakeSweep, ACountBudgetStopsEachProblemAndAShareOfTheTimeStopsTheSweep) {
  ToySweep toy;
  SweepOptions o = toy.options();
  o.strategy = "forest";
  o.budget.evaluations = 12;
  o.problems.clear();  // both problems
  const SweepReport r = run_sweep(toy.space, o);
  ASSERT_EQ(r.problems.size(), 2u);
  for (const ProblemOutcome& p : r.problems) {
    EXPECT_EQ(p.evaluations, 12u) << p.canonical;
    EXPECT_TRUE(p.budget_reached) << p.canonical;
    EXPECT_EQ(toy.rows(p.canonical).size(), 12u) << p.canonical;
  }
  EXPECT_TRUE(r.budget_exhausted);

  // 0.1 s per trial and 3 s for two problems: each problem gets its share of what is left.
  ToySweep timed;
  SweepOptions t = timed.options("ok", {"--delay-ms", "100"});
  t.problems.clear();
  t.budget.seconds = 3;
  const auto t0 = std::chrono::steady_clock::now();
  const SweepReport tr = run_sweep(timed.space, t);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(tr.problems.size(), 2u);
  for (const ProblemOutcome& p : tr.problems) {
    EXPECT_TRUE(p.budget_reached) << p.canonical;
    EXPECT_GE(p.evaluations, 2u) << p.canonical;
    EXPECT_LT(p.evaluations, 30u) << p.canonical << ": 0.1 s per trial cannot fit 30 in 3 s for two";
  }
  EXPECT_LT(wall, 3.0 + 3.0) << "the time budget overran by more than setup and one trial";
  EXPECT_TRUE(tr.budget_exhausted);
}

TEST(FakeSweep, ARerunMeasuresOnlyWhatIsMissing) {
  ToySweep toy;
  SweepOptions o = toy.options();
  o.budget.evaluations = 40;
  const SweepReport first = run_sweep(toy.space, o);
  EXPECT_EQ(first.trials.size(), 40u);
  o.budget = {};
  const SweepReport second = run_sweep(toy.space, o);
  EXPECT_EQ(second.trials.size(), kConfigs - 40);
  EXPECT_EQ(second.problems[0].resumed, 40u);
  EXPECT_EQ(second.problems[0].evaluations, kConfigs - 40);
  const std::vector<std::string> a = configs_of(toy.space, first), b = configs_of(toy.space, second);
  for (const std::string& c : b) EXPECT_EQ(std::count(a.begin(), a.end(), c), 0) << c << " was measured twice";
  EXPECT_EQ(toy.rows().size(), kConfigs);
  const SweepReport third = run_sweep(toy.space, o);
  EXPECT_TRUE(third.trials.empty());
  EXPECT_EQ(third.problems[0].resumed, kConfigs);
  EXPECT_EQ(third.problems[0].ranked.size(), kConfigs - kCompileFailures - kWrongResults);
  EXPECT_EQ(third.problems[0].ranked.front().trial.key.params, "A=6;B=2;C=1");
}

TEST(FakeSweep, KilledBetweenTrialsThenRunAgainMeasuresTheRestOnce) {
  ToySweep toy;
  const SweepOptions o = toy.options("ok", {"--delay-ms", "20"});
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      (void)run_sweep(toy.space, o);
      ::_exit(0);
    } catch (...) { ::_exit(1); }
  }
  // Kill it with SIGKILL once some trials are in the cache.
  std::size_t seen = 0;
  for (int i = 0; i < 3000 && seen < 25; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (std::filesystem::exists(toy.db)) {
      try {
        seen = toy.rows().size();
      } catch (const Error&) {
        // the schema is being created
      }
    }
  }
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the sweep ended before it was killed";
  const std::size_t before = toy.rows().size();
  ASSERT_GE(before, 25u);
  ASSERT_LT(before, kConfigs);

  SweepOptions again = toy.options();
  const SweepReport r = run_sweep(toy.space, again);
  EXPECT_EQ(r.problems[0].resumed, before);
  EXPECT_EQ(r.trials.size(), kConfigs - before);
  const std::vector<TrialRow> rows = toy.rows();
  EXPECT_EQ(rows.size(), kConfigs);
  std::set<std::string> params;
  for (const TrialRow& row : rows) EXPECT_TRUE(params.insert(row.trial.key.params).second) << row.trial.key.params;
}

TEST(FakeSweep, TheReferenceRunsFirstAndAgainInEveryFreshWorker) {
  ToySweep toy("{reference: {config: {A: 2, B: 3, C: 0}}}");
  const Space& space = toy.space;
  ASSERT_EQ(space.verify.reference, VerifySpec::Reference::config);
  SweepOptions o = toy.options("crash", {"--at", "5"});
  o.budget.evaluations = 8;
  const SweepReport r = run_sweep(space, o);
  EXPECT_EQ(r.worker_starts, 2);
  std::ifstream in(toy.log);
  std::vector<std::string> kinds;
  for (std::string id, kind, rest; in >> id >> kind && std::getline(in, rest);) kinds.push_back(kind);
  // Request 1 is the reference, 2-4 trials, 5 the trial that crashed; the fresh worker gets the
  // reference again (6) before the next trial.
  ASSERT_GE(kinds.size(), 7u);
  EXPECT_EQ(kinds[0], "reference");
  EXPECT_EQ(kinds[1], "trial");
  EXPECT_EQ(kinds[4], "trial");
  EXPECT_EQ(kinds[5], "reference");
  EXPECT_EQ(kinds[6], "trial");
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "reference"), 2);
}

TEST(WorkerSession, KnowsWhatTheWorkerHoldsAcrossRestartsAndProblems) {
  ToySweep toy;
  sweep_detail::WorkerSession session({TILETUNE_FAKE_WORKER, "crash", "--at", "3"}, {});
  TrialRequest request;
  request.problem_key = "N=1024";
  request.config_text = "A=1 B=1 C=0";
  request.is_reference = true;
  EXPECT_FALSE(session.holds_reference("N=1024"));
  EXPECT_EQ(session.run(request).status, TrialStatus::ok);
  EXPECT_TRUE(session.holds_reference("N=1024"));
  EXPECT_TRUE(session.holds_buffers("N=1024"));
  request.is_reference = false;
  EXPECT_EQ(session.run(request).status, TrialStatus::ok);
  EXPECT_TRUE(session.holds_reference("N=1024"));
  EXPECT_EQ(session.run(request).status, TrialStatus::runtime_fault);  // request 3 crashes
  EXPECT_FALSE(session.holds_reference("N=1024")) << "a fresh worker holds no reference";
  EXPECT_FALSE(session.holds_buffers("N=1024"));
  request.is_reference = true;
  EXPECT_EQ(session.run(request).status, TrialStatus::ok);
  EXPECT_TRUE(session.holds_reference("N=1024"));
  request.is_reference = false;
  request.problem_key = "N=4096";
  EXPECT_EQ(session.run(request).status, TrialStatus::ok);
  EXPECT_FALSE(session.holds_reference("N=1024")) << "another problem replaced the buffers";
  EXPECT_FALSE(session.holds_reference("N=4096"));
  EXPECT_EQ(session.starts(), 2);
}

TEST(CompileAhead, CompilesEachOptionListOnceAndNeverRedoesAFailure) {
  ToySweep toy;
  const CubinCache no_cache{std::filesystem::path{}};
  sweep_detail::CompileAhead compile(toy.space, "sm_90", 2, no_cache);
  const Problem n1024 = select_problem(toy.space, {"N=1024"});
  const Problem n4096 = select_problem(toy.space, {"N=4096"});
  const auto ok = compile.config(n1024, Config{{2, 3, 0}});
  const auto again = compile.config(n4096, Config{{2, 3, 0}});  // the options do not depend on N
  const auto bad = compile.config(n1024, Config{{8, 1, 2}});
  const auto bad_again = compile.config(n1024, Config{{8, 1, 2}});
  EXPECT_EQ(compile.submitted(), 2u);
  EXPECT_TRUE(ok.get().ok()) << ok.get().error;
  EXPECT_FALSE(bad.get().ok());
  EXPECT_NE(bad.get().log.find("planted compile failure"), std::string::npos) << bad.get().log;
  EXPECT_EQ(&ok.get(), &again.get()) << "the same option list is one compile";
  EXPECT_EQ(&bad.get(), &bad_again.get()) << "a failed compile is not redone";
  EXPECT_GT(compile.finished_seconds(), 0);
}

// --- the acceptance test of issue 13 -----------------------------------------------------------

// The search of N=1024 sends the worker one trial per config that compiles (no reference run:
// verify none), ids 1 to kSearchTrials in exhaustive order after the default; the confirmation
// of 3 finalists over 3 rounds comes next, ids kSearchTrials + 1 to + 9.
constexpr std::uint64_t kSearchTrials = kConfigs - kCompileFailures;

std::vector<std::string> logged_configs(const std::filesystem::path& log) {
  std::vector<std::string> configs;
  std::ifstream in(log);
  for (std::string id, kind, problem, line; in >> id >> kind >> problem && std::getline(in, line);)
    configs.push_back(line.substr(1));
  return configs;
}

double recorded_time(const ToySweep& toy, const std::string& params) {
  for (const TrialRow& row : toy.rows())
    if (row.trial.key.params == params) return row.trial.time_ms.value_or(-1);
  return -1;
}

TEST(FakeSweep, FinalistsAreMeasuredAgainInRotatedRoundsAndKeepTheirMedianRound) {
  ToySweep toy;
  SweepOptions o = toy.options("ok", {"--scale", fmt::format("{0}-{0}:0.25", kSearchTrials + 1)});
  o.confirm_finalists = 3;
  o.confirm_rounds = 3;
  const SweepReport r = run_sweep(toy.space, o);
  EXPECT_EQ(r.confirmation_trials, 9u);
  EXPECT_EQ(r.confirm_rounds, 3);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].confirmed, 3u);
  EXPECT_EQ(r.problems[0].evaluations, kConfigs) << "the confirmation is no part of the search";
  // One trial per finalist in the report, after the search's, marked.
  ASSERT_EQ(r.trials.size(), kConfigs + 3);
  for (std::size_t i = 0; i < r.trials.size(); ++i) EXPECT_EQ(r.trials[i].finalist, i >= kConfigs) << i;
  // The finalists by the search (1.0, then the two of 1.1 by domain order), in rounds that
  // each start one finalist later.
  const std::string f0 = "A=6 B=2 C=1", f1 = "A=6 B=2 C=0", f2 = "A=6 B=2 C=2";
  const std::vector<std::string> logged = logged_configs(toy.log);
  ASSERT_EQ(logged.size(), kSearchTrials + 9);
  EXPECT_EQ(std::vector<std::string>(logged.end() - 9, logged.end()),
            (std::vector<std::string>{f0, f1, f2, f1, f2, f0, f2, f0, f1}));
  // f0's first round ran at a quarter of its time: its median round is one of the other two.
  EXPECT_NEAR(recorded_time(toy, "A=6;B=2;C=1"), 1.0, 1e-9);
  EXPECT_NEAR(recorded_time(toy, "A=6;B=2;C=0"), 1.1, 1e-9);
  ASSERT_FALSE(r.problems[0].ranked.empty());
  EXPECT_EQ(r.problems[0].ranked.front().trial.key.params, "A=6;B=2;C=1");
}

TEST(FakeSweep, FinalistsConfirmedOutOfADriftKeepTheTrueWinner) {
  // Trials 100 to 104 of the search (A=6 B=4 C=0 to A=6 B=5 C=1) run at half their time, as if
  // the GPU were faster for a moment: measured once, A=6 B=4 C=1 (1.4, seen as 0.7) wins. The
  // first pass confirms the three of B=4, the second A=6 B=5 C=1 and C=0 with A=6 B=2 C=1 (the
  // true best, 1.0), the third the true top 3.
  const std::string drift = "100-104:0.5";
  {
    ToySweep toy;
    const SweepReport r = run_sweep(toy.space, toy.options("ok", {"--scale", drift}));
    ASSERT_FALSE(r.problems[0].ranked.empty());
    EXPECT_EQ(r.problems[0].ranked.front().trial.key.params, "A=6;B=4;C=1") << "without the confirmation";
  }
  ToySweep toy;
  SweepOptions o = toy.options("ok", {"--scale", drift});
  o.confirm_finalists = 3;
  const SweepReport r = run_sweep(toy.space, o);
  ASSERT_FALSE(r.problems[0].ranked.empty());
  EXPECT_EQ(r.problems[0].ranked.front().trial.key.params, "A=6;B=2;C=1");
  EXPECT_NEAR(recorded_time(toy, "A=6;B=4;C=1"), 1.4, 1e-9) << "the finalist keeps a round out of the drift";
  EXPECT_EQ(r.confirmation_trials, 27u) << "three passes";
  EXPECT_EQ(r.problems[0].confirmed, 8u);  // 3 + 3 + the two of A=6 B=2 C=0 and C=2
}

TEST(FakeSweep, TheConfirmationStopsAfterThreePassesAndTheTiePassMeasuresTheRestTogether) {
  // A drift over 11 configs (trials 100 to 110): three passes of 3 do not reach the true best.
  {
    ToySweep toy;
    SweepOptions o = toy.options("ok", {"--scale", "100-110:0.5"});
    o.confirm_finalists = 3;
    o.confirm_ties = 0;
    const SweepReport r = run_sweep(toy.space, o);
    EXPECT_EQ(r.confirmation_trials, 27u);
    EXPECT_EQ(r.problems[0].confirmed, 9u);
    EXPECT_EQ(r.problems[0].tie_candidates, 0u);
    ASSERT_FALSE(r.problems[0].ranked.empty());
    EXPECT_NE(r.problems[0].ranked.front().trial.key.params, "A=6;B=2;C=1") << "a drifted config stays on top";
  }
  // With the tie pass (the default), the configs within 10 % of the best score after the passes
  // are measured together in 3 more rounds: the drift's last two configs (seen at half their
  // time) and the true best, within 10 % of them, which wins once they fall back.
  ToySweep toy;
  SweepOptions o = toy.options("ok", {"--scale", "100-110:0.5"});
  o.confirm_finalists = 3;
  const SweepReport r = run_sweep(toy.space, o);
  EXPECT_EQ(r.problems[0].tie_candidates, 3u);
  EXPECT_EQ(r.confirmation_trials, 27u + 3 * 3);
  EXPECT_EQ(r.problems[0].confirmed, 12u);
  std::size_t together = 0;  // the finalist rows of the tie pass: each candidate once
  for (const SweepTrial& t : r.trials) together += t.finalist ? 1 : 0;
  EXPECT_EQ(together, 9u + 3);
  std::vector<std::string> tie_pass;  // the last 3 finalist rows
  for (const SweepTrial& t : r.trials)
    if (t.finalist) tie_pass.push_back(canonical_config(toy.space, t.config));
  tie_pass.erase(tie_pass.begin(), tie_pass.end() - 3);
  std::sort(tie_pass.begin(), tie_pass.end());
  EXPECT_EQ(tie_pass, (std::vector<std::string>{"A=6;B=2;C=1", "A=6;B=6;C=0", "A=6;B=6;C=2"}));
  ASSERT_FALSE(r.problems[0].ranked.empty());
  EXPECT_EQ(r.problems[0].ranked.front().trial.key.params, "A=6;B=2;C=1") << "the true best";
}

TEST(FakeSweep, AFinalistThatFailsARoundKeepsTheFailure) {
  // Round 2 measures A=6 B=2 C=0, A=6 B=2 C=2, then A=6 B=2 C=1: the second of them crashes.
  ToySweep toy;
  SweepOptions o = toy.options("crash", {"--at", std::to_string(kSearchTrials + 5)});
  o.confirm_finalists = 3;
  const SweepReport r = run_sweep(toy.space, o);
  EXPECT_EQ(r.worker_starts, 2);
  for (const TrialRow& row : toy.rows()) {
    if (row.trial.key.params == "A=6;B=2;C=2") EXPECT_EQ(row.trial.status, TrialStatus::runtime_fault);
    if (row.trial.key.params == "A=6;B=2;C=1") EXPECT_EQ(row.trial.status, TrialStatus::ok);
  }
  ASSERT_GE(r.problems[0].ranked.size(), 2u);
  EXPECT_EQ(r.problems[0].ranked[0].trial.key.params, "A=6;B=2;C=1");
  EXPECT_EQ(r.problems[0].ranked[1].trial.key.params, "A=6;B=2;C=0");
  for (const TrialRow& row : r.problems[0].ranked) EXPECT_NE(row.trial.key.params, "A=6;B=2;C=2");
}

TEST(FakeSweep, ARerunThatMeasuresNothingConfirmsNothing) {
  ToySweep toy;
  SweepOptions o = toy.options();
  o.confirm_finalists = 3;
  EXPECT_EQ(run_sweep(toy.space, o).confirmation_trials, 9u);
  const SweepReport again = run_sweep(toy.space, o);
  EXPECT_TRUE(again.trials.empty());
  EXPECT_EQ(again.confirmation_trials, 0u);
}

TEST(FakeSweep, ReplayAndSweepProposeTheSameConfigsForTheSameSeedRecordingAndWidth) {
  ToySweep toy;
  const Landscape landscape = load_landscape(toy.recording);
  for (const std::string& name : strategy_names()) {
    for (const std::uint64_t seed : {1u, 7u}) {
      SweepOptions o = toy.options();
      o.strategy = name;
      o.seed = seed;
      o.force = true;  // every sweep measures: nothing answered from the previous one
      o.budget.evaluations = 30;
      const SweepReport sweep = run_sweep(toy.space, o);

      const ReplayProblem rp = replay_problem(toy.space, landscape, o.problems[0]);
      ASSERT_EQ(rp.space.domain.size(), kConfigs);
      const auto strategy = make_strategy(name, rp.space.domain, seed);
      SearchBudget budget;
      budget.evaluations = 30;
      const SearchRun run = sweep_search_run(rp.space.domain, *strategy, budget, o.compile_threads);
      const SearchTrace trace = replay(rp, *strategy, run);

      std::vector<std::string> replayed;
      for (const Evaluation& e : trace.evaluations)
        replayed.push_back(canonical_config(toy.space, rp.space.config(e.point)));
      EXPECT_EQ(configs_of(toy.space, sweep), replayed)
          << name << " seed " << seed << ", " << run.in_flight << " in flight";
      ASSERT_EQ(sweep.trials.size(), trace.evaluations.size()) << name;
      for (std::size_t i = 0; i < sweep.trials.size(); ++i) {
        const SweepTrial& t = sweep.trials[i];
        const bool ok = t.status == TrialStatus::ok;
        EXPECT_EQ(ok, trace.evaluations[i].time.has_value()) << name << " trial " << i;
        if (ok && trace.evaluations[i].time) EXPECT_DOUBLE_EQ(t.result->median_ms, *trace.evaluations[i].time) << name;
      }
      EXPECT_EQ(sweep.problems[0].budget_reached, trace.budget_exhausted) << name;
    }
  }
}

// Issue 23: a replay simulates a sweep with the defaults on. A sweep of both problems with
// `auto`, a time budget that does not bind (wall time decides nothing), the finalists confirmed
// (3 finalists, 3 rounds) and a warm start; then the sweep's own recording (export --format
// landscape: landscape_from_cache) replayed with the same options (replay_sweep): the same
// strategy, the same configs in the same order per problem, the same finalists confirmed, the
// same confirmation trials.
TEST(FakeSweep, AReplayOfTheSweepsRecordingDoesWhatTheSweepDidWithTheDefaultsOn) {
  ToySweep toy;
  SweepOptions o = toy.options();
  o.problems = {select_problem(toy.space, {"N=1024"}), select_problem(toy.space, {"N=4096"})};
  o.strategy = "auto";
  o.budget.seconds = 3600;
  o.confirm_finalists = 3;
  o.confirm_rounds = 3;
  o.warm_start = load_warm_start(toy.recording, toy.space);
  const SweepReport sweep = run_sweep(toy.space, o);
  EXPECT_EQ(sweep.strategy, auto_large_space_strategy);

  std::ostringstream exported;
  {
    CacheDb::Options read_only;
    read_only.mode = CacheDb::Mode::read_only;
    write_landscape(exported, landscape_from_cache(CacheDb::open(toy.db, read_only), "toy", o.device.uuid));
  }
  const testing::TempDir dir;
  const Landscape recording = load_landscape(dir.write("sweep.csv", exported.str()));
  ReplaySweepOptions r;
  r.strategy = o.strategy;
  r.budget = o.budget;
  r.seed = o.seed;
  r.confirm = ConfirmPlan{o.confirm_finalists, o.confirm_rounds};
  r.compile_threads = o.compile_threads;
  r.warm_start = &o.warm_start;
  const ReplayedSweep replayed = replay_sweep(toy.space, recording, o.problems, r);
  EXPECT_EQ(replayed.schedule.choice.strategy, sweep.strategy);
  ASSERT_EQ(replayed.problems.size(), 2u);

  std::uint64_t confirmation_trials = 0;
  for (std::size_t p = 0; p < 2; ++p) {
    const ReplayedProblem& rp = replayed.problems[p];
    SCOPED_TRACE(rp.recording.canonical);
    EXPECT_EQ(rp.recording.unrecorded, 0u) << "the sweep measured every config: the replay's domain is the sweep's";
    EXPECT_EQ(rp.schedule.warm_start.size(), sweep.problems[p].warm_started);
    std::vector<std::string> searched, confirmed;
    for (const SweepTrial& t : sweep.trials)
      if (t.problem == p) (t.finalist ? confirmed : searched).push_back(canonical_config(toy.space, t.config));
    std::vector<std::string> replay_searched, replay_confirmed;
    for (const Evaluation& e : rp.trace.evaluations)
      replay_searched.push_back(canonical_config(toy.space, rp.recording.space.config(e.point)));
    for (const std::size_t point : rp.confirmation.confirmed)
      replay_confirmed.push_back(canonical_config(toy.space, rp.recording.space.config(point)));
    EXPECT_EQ(searched, replay_searched);
    EXPECT_EQ(confirmed, replay_confirmed);
    EXPECT_EQ(confirmed.size(), 3u);
    EXPECT_EQ(sweep.problems[p].confirmed, rp.confirmation.finalists);
    EXPECT_EQ(sweep.problems[p].evaluations, rp.trace.evaluated);
    EXPECT_EQ(sweep.problems[p].budget_reached, rp.trace.budget_exhausted);
    confirmation_trials += rp.confirmation.trials;
  }
  EXPECT_EQ(sweep.confirmation_trials, confirmation_trials);
  EXPECT_EQ(confirmation_trials, 18u);
}

}  // namespace
}  // namespace tiletune
