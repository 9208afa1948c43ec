// Landscapes and replays, on the CPU: the file format (round trip and every error with its
// line), the join of a space with a recording, replays that answer failures as failures and
// cost the recorded time, the shipped H200 recordings, and `tune --replay` / `export
// --format landscape` through the CLI.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cache_builder.hpp"
#include "test_support.hpp"
#include "tiletune/cache_db.hpp"
#include "tiletune/error.hpp"
#include "tiletune/landscape.hpp"
#include "tiletune/plan.hpp"
#include "tiletune/replay.hpp"
#include "tiletune/trial.hpp"

namespace tiletune::testing {
namespace {

Space transpose() { return shipped_space("transpose"); }

const std::string kHeader =
    "# tiletune landscape 1\n# kernel: transpose\n# device: Test GPU\n"
    "problem,params,status,time_ms,compile_ms,measure_ms,registers,shared_bytes,occupancy,detail\n";

// Every transpose config at N=1000 recorded with a time that grows with the distance from the
// optimum TILE=32 BLOCK_ROWS=8 PAD=1 VEC=4, except a few recorded failures.
std::string synthetic_transpose(const std::set<std::string>& failing, const std::string& skip = {}) {
  const Space s = transpose();
  std::string text = kHeader;
  Enumerator e(s, Problem{{1000}});
  while (auto c = e.next()) {
    const std::string params = canonical_config(s, *c);
    if (params == skip) continue;
    const double t = 1.0 + std::abs(c->values[0] - 32) / 16.0 + std::abs(c->values[1] - 8) / 8.0 +
                     (c->values[2] == 1 ? 0 : 0.5) + (4 - c->values[3]) * 0.25;
    if (failing.contains(params))
      text += "N=1000," + params + ",runtime_fault,,100,5,20,,,illegal address, at index 7\n";
    else
      text += "N=1000," + params + ",ok," + std::to_string(t) + ",100,5,20,4096,0.5,\n";
  }
  return text;
}

TEST(Landscape, WriteAndLoadRoundTrip) {
  Landscape l;
  l.kernel = "transpose";
  l.header = {{"device", "NVIDIA H200"}, {"copy_gbps", "4061"}};
  LandscapeTrial ok;
  ok.params = "TILE=32;BLOCK_ROWS=8;PAD=1;VEC=4";
  ok.time_ms = 0.1469;
  ok.compile_ms = 212.5;
  ok.measure_ms = 31.25;
  ok.registers = 20;
  ok.shared_bytes = 4224;
  ok.occupancy = 1;
  LandscapeTrial bad;
  bad.params = "TILE=64;BLOCK_ROWS=32;PAD=0;VEC=1";
  bad.status = TrialStatus::compile_failed;
  bad.detail = "error: x, y and z\nsecond line is dropped";
  l.problems = {{"N=8192", {ok, bad}}};
  std::ostringstream out;
  write_landscape(out, l);
  TempDir dir;
  const Landscape back = load_landscape(dir.write("l.csv", out.str()));
  EXPECT_EQ(back.kernel, "transpose");
  EXPECT_EQ(back.header_value("copy_gbps"), "4061");
  ASSERT_EQ(back.problems.size(), 1u);
  ASSERT_EQ(back.problems[0].trials.size(), 2u);
  const LandscapeTrial& a = back.problems[0].trials[0];
  EXPECT_EQ(a.params, ok.params);
  EXPECT_DOUBLE_EQ(*a.time_ms, 0.1469);
  EXPECT_DOUBLE_EQ(a.compile_ms, 212.5);
  EXPECT_DOUBLE_EQ(a.measure_ms, 31.25);
  EXPECT_EQ(a.registers, 20);
  EXPECT_EQ(a.shared_bytes, 4224);
  const LandscapeTrial& b = back.problems[0].trials[1];
  EXPECT_EQ(b.status, TrialStatus::compile_failed);
  EXPECT_FALSE(b.time_ms.has_value());
  EXPECT_EQ(b.detail, "error: x, y and z");  // commas kept, one line
}

// Real and text params (a Kernel Tuner cache's floats and strings) are recorded by their values as
// the space writes them; a space without problem sizes has the empty problem.
TEST(Landscape, RealAndTextValuesAndTheEmptyProblemRoundTrip) {
  Landscape l;
  l.kernel = "kt_k";
  LandscapeTrial t;
  t.params = "B=32;ALPHA=1e-05;T=unsigned int;U=x=y";
  t.time_ms = 2;
  l.problems = {{"", {t}}};
  std::ostringstream out;
  write_landscape(out, l);
  TempDir dir;
  const Landscape back = load_landscape(dir.write("l.csv", out.str()));
  ASSERT_EQ(back.problems.size(), 1u);
  EXPECT_EQ(back.problems[0].problem, "");
  EXPECT_EQ(back.problems[0].trials.at(0).params, t.params);
  EXPECT_TRUE(recordable_value("half"));
  EXPECT_FALSE(recordable_value("a,b"));
  EXPECT_FALSE(recordable_value("a;b"));
  EXPECT_FALSE(recordable_value(""));
  // A value the reader would refuse is refused before anything is written.
  l.problems[0].trials[0].params = "T=float,double";
  std::ostringstream refused;
  EXPECT_THROW(write_landscape(refused, l), Error);
  EXPECT_EQ(refused.str(), "");
}

TEST(Landscape, ErrorsNameTheLine) {
  TempDir dir;
  struct Case {
    std::string text, expect;
  };
  const std::vector<Case> cases = {
      {"# not a landscape\n", "l.csv:1: landscape: expected '# tiletune landscape 1'"},
      {"# tiletune landscape 1\n# kernel: t\nproblem,params\n", "l.csv:3: landscape: expected the columns"},
      {kHeader + "N=1,TILE=32;BLOCK_ROWS=8;PAD=1;VEC=1,fine,1,1,1,,,,\n", "l.csv:5: landscape: unknown status 'fine'"},
      {kHeader + "N=1,TILE=32;BLOCK_ROWS=8;PAD=1;VEC=1,ok,,1,1,,,,\n",
       "l.csv:5: landscape: an ok trial needs a positive"},
      {kHeader + "N=1,TILE=32;BLOCK_ROWS=8;PAD=1;VEC=1,ok,1x,1,1,,,,\n",
       "l.csv:5: landscape: time_ms '1x' is not a number"},
      {kHeader + "N=1,TILE=32,ok,1\n", "l.csv:5: landscape: expected 10 columns, found 4"},
      {kHeader + "N=1,P=1,ok,1,1,1,,,,\nN=1,P=1,ok,2,1,1,,,,\n",
       "l.csv:6: landscape: a second trial of 'P=1' at 'N=1'"},
      {kHeader, "landscape: no trials"},
      {"# tiletune landscape 1\nproblem,params,status,time_ms,compile_ms,measure_ms,registers,shared_bytes,occupancy,"
       "detail\nN=1,P=1,ok,1,1,1,,,,\n",
       "no '# kernel: NAME' line"},
  };
  for (const Case& c : cases) {
    const auto path = dir.write("l.csv", c.text);
    try {
      (void)load_landscape(path);
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const Error& e) { EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos) << e.what(); }
  }
  EXPECT_THROW((void)load_landscape(dir.path() / "missing.csv"), Error);
}

// Hostile recordings (issue 12): every malformed field is refused with FILE:LINE and one line
// that quotes at most a short prefix of it; only regular files of a bounded size are read.
TEST(Landscape, HostileRecordingsAreRefusedWithTheirLineInOneLine) {
  TempDir dir;
  const std::string row = "N=1,TILE=32;BLOCK_ROWS=8;PAD=1;VEC=1,";
  struct Case {
    std::string text, expect;
  };
  const std::vector<Case> cases = {
      {kHeader + row + "ok,nan,1,1,,,,\n", "l.csv:5: landscape: time_ms 'nan' is not a finite number"},
      {kHeader + row + "ok,inf,1,1,,,,\n", "l.csv:5: landscape: time_ms 'inf' is not a finite number"},
      {kHeader + row + "ok,-1,1,1,,,,\n", "l.csv:5: landscape: time_ms '-1' is not positive"},
      {kHeader + row + "ok,0,1,1,,,,\n", "l.csv:5: landscape: time_ms '0' is not positive"},
      {kHeader + row + "ok,1,-5,1,,,,\n", "l.csv:5: landscape: compile_ms '-5' is negative"},
      {kHeader + row + "ok,1,1,nan,,,,\n", "l.csv:5: landscape: measure_ms 'nan' is not a finite number"},
      {kHeader + row + "ok,1,1,1,,,1.5,\n", "l.csv:5: landscape: occupancy '1.5' is more than 1"},
      {kHeader + row + "ok,1,1,1,-3,,,\n", "l.csv:5: landscape: registers '-3' is not a whole number"},
      {kHeader + row + "ok,1,1,1,,1.5,,\n", "l.csv:5: landscape: shared_bytes '1.5' is not a whole number"},
      {kHeader + "N=abc,P=1,ok,1,1,1,,,,\n", "l.csv:5: landscape: problem 'N=abc': expected NAME=INTEGER"},
      {kHeader + "N=1,TILE,ok,1,1,1,,,,\n", "l.csv:5: landscape: params 'TILE': expected NAME=VALUE"},
      {kHeader + "N=1,T=a\tb,ok,1,1,1,,,,\n", "l.csv:5: landscape: params 'T=a?b': expected NAME=VALUE"},
      {kHeader + "N=1,T=" + std::string(129, 'w') + ",ok,1,1,1,,,,\n",
       "expected NAME=VALUE;NAME=VALUE... (a value: 1 to 128"},
      {kHeader + "N=1,T=,ok,1,1,1,,,,\n", "l.csv:5: landscape: params 'T=': expected NAME=VALUE"},
      {kHeader + "N=1,,ok,1,1,1,,,,\n", "l.csv:5: landscape: empty params"},
      {kHeader + "N=,P=1,ok,1,1,1,,,,\n", "l.csv:5: landscape: problem 'N=': expected NAME=INTEGER"},
      {kHeader + row + "timeout,1,1,1,,,,\n", "l.csv:5: landscape: a timeout trial has no time_ms"},
      {kHeader + "# kernel: other\n", "l.csv:5: landscape: header line after the column names"},
      {"# tiletune landscape 1\n# kernel: t\n# kernel: u\n", "l.csv:3: landscape: a second '# kernel:' line"},
      {"# tiletune landscape 1\n# kernel: my kernel\n", "l.csv:2: landscape: kernel name 'my kernel' is not a name"},
      {"# tiletune landscape 1\n# bad key!: x\n", "l.csv:2: landscape: header key 'bad key!' is not a name"},
      {kHeader + row + "ok,1,1,1,,,,a NUL " + std::string(1, '\0') + " byte\n",
       "l.csv:5: landscape: a NUL byte in the line"},
      {kHeader + row + "ok," + std::string(100000, '9') + "x,1,1,,,,\n", "l.csv:5: landscape: time_ms '99999"},
  };
  for (const Case& c : cases) {
    const auto path = dir.write("l.csv", c.text);
    try {
      (void)load_landscape(path);
      ADD_FAILURE() << "accepted: " << c.text.substr(0, 300);
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(c.expect), std::string::npos) << what.substr(0, 300);
      EXPECT_EQ(what.find('\n'), std::string::npos) << what.substr(0, 300);
      EXPECT_LT(what.size(), path.string().size() + 200) << "a field quoted whole";
    }
  }
}

TEST(Landscape, OnlyRegularFilesOfARecordingsSizeAreRead) {
  TempDir dir;
  const auto fifo = dir.path() / "fifo.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const auto huge = dir.path() / "huge.csv";
  { std::ofstream(huge) << "# tiletune landscape 1\n"; }
  std::filesystem::resize_file(huge, std::uintmax_t{65} << 20);  // sparse: costs no disk
  const std::vector<std::pair<std::filesystem::path, std::string>> cases = {
      {fifo, ": landscape: not a regular file"},
      {dir.path(), ": landscape: a directory, not a recording"},
      {huge, ": landscape: 68157440 bytes, more than a recording can be (64 MiB)"},
      {dir.path() / "missing.csv", ": landscape: no such file"},
  };
  ::alarm(20);  // a reader that blocks on the FIFO ends the test here
  for (const auto& [path, expect] : cases) {
    try {
      (void)load_landscape(path);
      ADD_FAILURE() << "read " << path;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path.string() + expect), std::string::npos) << e.what();
    }
  }
  ::alarm(0);
}

TEST(Replay, ExhaustiveReplayAnswersFailuresAsFailuresAndCostsTheRecordedTime) {
  TempDir dir;
  const std::set<std::string> failing = {"TILE=32;BLOCK_ROWS=8;PAD=0;VEC=4", "TILE=16;BLOCK_ROWS=4;PAD=1;VEC=2"};
  const Landscape l =
      load_landscape(dir.write("l.csv", synthetic_transpose(failing, "TILE=16;BLOCK_ROWS=1;PAD=0;VEC=1")));
  const Space s = transpose();
  const ReplayProblem rp = replay_problem(s, l, Problem{{1000}});
  EXPECT_EQ(rp.canonical, "N=1000");
  EXPECT_EQ(rp.space.domain.size(), 137u);  // the sweep's valid configs that were recorded
  EXPECT_EQ(rp.outcomes.size(), 137u);      // one of the 138 not recorded: left out
  EXPECT_EQ(rp.unrecorded, 1u);
  EXPECT_FALSE(rp.space.point_of(s, "TILE=16;BLOCK_ROWS=1;PAD=0;VEC=1")) << "not recorded: no point";
  const SpaceDomain sweep = space_domain(s, Problem{{1000}});
  EXPECT_EQ(rp.space.point_of(s, "TILE=32;BLOCK_ROWS=8;PAD=1;VEC=4"),
            sweep.point_of(s, "TILE=32;BLOCK_ROWS=8;PAD=1;VEC=4"))
      << "the same ids as a sweep's domain";
  ASSERT_TRUE(rp.optimum.has_value());
  EXPECT_EQ(canonical_config(s, rp.space.config(*rp.optimum)), "TILE=32;BLOCK_ROWS=8;PAD=1;VEC=4");
  EXPECT_DOUBLE_EQ(rp.optimum_ms, 1.0);
  EXPECT_NEAR(rp.exhaustive_cost_seconds, 137 * 0.105, 1e-9);
  ASSERT_TRUE(rp.space.domain.start().has_value());  // the default config was recorded
  EXPECT_EQ(canonical_config(s, rp.space.config(*rp.space.domain.start())), "TILE=32;BLOCK_ROWS=8;PAD=0;VEC=1");

  const auto exhaustive = make_strategy("exhaustive", rp.space.domain, 1);
  const SearchTrace trace = replay(rp, *exhaustive, SearchRun{});
  ASSERT_EQ(trace.evaluations.size(), 137u);
  std::set<std::string> failed;
  for (const Evaluation& e : trace.evaluations)
    if (!e.time) failed.insert(canonical_config(s, rp.space.config(e.point)));
  EXPECT_EQ(failed, failing);
  EXPECT_EQ(trace.best, rp.optimum);
  EXPECT_NEAR(trace.cost_seconds, rp.exhaustive_cost_seconds, 1e-9);
  EXPECT_FALSE(trace.budget_exhausted);
  EXPECT_EQ(trace.evaluated, 137u);
  const auto at = evaluations_to_reach(trace, rp.optimum_ms, 0.99);
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(trace.evaluations.at(*at - 1).point, *rp.optimum);
}

TEST(Replay, BudgetsAndSeedsOfAReplay) {
  TempDir dir;
  const Landscape l = load_landscape(dir.write("l.csv", synthetic_transpose({})));
  const ReplayProblem rp = replay_problem(transpose(), l, Problem{{1000}});
  SearchBudget budget;
  budget.evaluations = 17;
  for (const std::string& name : strategy_names()) {
    const auto a = make_strategy(name, rp.space.domain, 5);
    const auto b = make_strategy(name, rp.space.domain, 5);
    const SearchTrace ta = replay(rp, *a, SearchRun{budget});
    const SearchTrace tb = replay(rp, *b, SearchRun{budget});
    ASSERT_EQ(ta.evaluations.size(), 17u) << name;
    EXPECT_TRUE(ta.budget_exhausted) << name;
    for (std::size_t i = 0; i < ta.evaluations.size(); ++i)
      EXPECT_EQ(ta.evaluations[i].point, tb.evaluations[i].point) << name << " evaluation " << i;
  }
  SearchBudget seconds;
  seconds.seconds = 1.0;  // each evaluation costs 0.105 s: 10 fit before the budget is spent
  const auto r = make_strategy("random", rp.space.domain, 1);
  const SearchTrace t = replay(rp, *r, SearchRun{seconds});
  EXPECT_EQ(t.evaluations.size(), 10u);
  EXPECT_TRUE(t.budget_exhausted);
}

TEST(Replay, RefusesARecordingOfAnotherKernelOrProblem) {
  TempDir dir;
  const Landscape l = load_landscape(dir.write("l.csv", synthetic_transpose({})));
  try {
    (void)replay_problem(transpose(), l, Problem{{8192}});
    ADD_FAILURE() << "replayed a problem the recording lacks";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no trials for N=8192 (it has: N=1000)"), std::string::npos) << e.what();
  }
  const Space matmul = load_space(source_dir() / "configs" / "matmul.yaml");
  EXPECT_THROW((void)replay_problem(matmul, l, select_problem(matmul, {})), Error);
}

// The recordings that ship: every space, two or more problems, the matmul space over 1000
// configs; each replays exhaustively to its own optimum. The histogram, stencil_1d and transpose
// spaces grew after they were recorded (issue 38: PRIVATE=2; SHARED=2 and ITEMS=16; PAD=2): those
// new configs, and only those, are unrecorded (a replay answers them as failures that cost nothing).
TEST(Replay, TheShippedH200Recordings) {
  const std::map<std::string, std::uint64_t> grown = {
      {"histogram", 5 * 4 * 6},        // PRIVATE=2: BLOCK x ITEMS x GRID (COPIES=1)
      {"stencil_1d", 4 * 5 + 4 * 2},  // SHARED=2: BLOCK x ITEMS; ITEMS=16 with SHARED 0 and 1
      {"transpose", 138 - 92}};        // PAD=2: a third of the valid configs
  for (const std::string kernel : {"transpose", "vector_add", "reduction", "stencil_1d", "histogram", "matmul"}) {
    SCOPED_TRACE(kernel);
    const Landscape l = load_landscape(shipped_landscape(kernel));
    EXPECT_EQ(l.kernel, kernel);
    EXPECT_EQ(l.header_value("device"), "NVIDIA H200");
    EXPECT_GE(l.problems.size(), 2u);
    const Space s = load_space(source_dir() / "configs" / (kernel + ".yaml"));
    for (const LandscapeProblem& lp : l.problems) {
      std::vector<std::string> sizes;
      std::stringstream in(lp.problem);
      for (std::string part; std::getline(in, part, ';');) sizes.push_back(part);
      const ReplayProblem rp = replay_problem(s, l, select_problem(s, sizes));
      EXPECT_EQ(rp.unrecorded, grown.contains(kernel) ? grown.at(kernel) : 0u) << lp.problem;
      if (kernel == "matmul") EXPECT_GT(rp.space.domain.size(), 1000u);
      ASSERT_TRUE(rp.optimum.has_value()) << lp.problem;
      // Pruned configs are dropped before they compile: they cost nothing.
      for (const LandscapeTrial& t : lp.trials)
        if (t.status != TrialStatus::pruned) EXPECT_GT(t.compile_ms + t.measure_ms, 0.0) << t.params;
    }
  }
}

TEST(ReplayCli, JsonListsTheEvaluationsInTheOrderTheStrategyGotThem) {
  const auto space = source_dir() / "configs" / "transpose.yaml";
  const std::string base = shell_quoted(cli_path()) + " tune " + shell_quoted(space) + " --replay " +
                           shell_quoted(shipped_landscape("transpose")) +
                           " --size N=8192 --strategy random --seed 3 --budget 20";
  const CommandResult table = run_command(base);
  const CommandResult json = run_command(base + " --format json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const nlohmann::json j = nlohmann::json::parse(json.output);
  EXPECT_EQ(j["kernel"], "transpose");
  ASSERT_EQ(j["problems"].size(), 1u);
  const nlohmann::json& p = j["problems"][0];
  EXPECT_EQ(p["problem"], "N=8192");
  EXPECT_EQ(p["strategy"], "random");
  EXPECT_EQ(p["seed"], 3);
  ASSERT_EQ(p["evaluations"].size(), 20u);
  // The default config is measured first, as in a sweep; every evaluation names a config of the
  // recording with its recorded status and time, and the best is the fastest of them.
  EXPECT_EQ(p["evaluations"][0]["params"], "TILE=32;BLOCK_ROWS=8;PAD=0;VEC=1");
  const Landscape l = load_landscape(shipped_landscape("transpose"));
  const LandscapeProblem* recorded = l.find_problem("N=8192");
  ASSERT_NE(recorded, nullptr);
  double fastest = 1e300;
  for (const auto& e : p["evaluations"]) {
    const auto t = std::find_if(recorded->trials.begin(), recorded->trials.end(),
                                [&](const LandscapeTrial& x) { return x.params == e["params"].get<std::string>(); });
    ASSERT_NE(t, recorded->trials.end()) << e["params"];
    EXPECT_EQ(e["status"], std::string(status_name(t->status)));
    if (t->time_ms) {
      EXPECT_DOUBLE_EQ(e["time_ms"].get<double>(), *t->time_ms);
      fastest = std::min(fastest, *t->time_ms);
    }
  }
  EXPECT_DOUBLE_EQ(p["best"]["time_ms"].get<double>(), fastest);
  EXPECT_EQ(p["optimum"]["params"], "TILE=64;BLOCK_ROWS=16;PAD=1;VEC=4");
  EXPECT_NE(table.output.find(p["best"]["params"].get<std::string>().substr(0, 7)), std::string::npos);
  const CommandResult misuse =
      run_command(shell_quoted(cli_path()) + " tune " + shell_quoted(space) + " --format json");
  EXPECT_EQ(misuse.exit_code, 2) << misuse.output;
  EXPECT_NE(misuse.output.find("--format requires --replay"), std::string::npos) << misuse.output;
}

TEST(ReplayCli, TuneReplaysAndExportWritesALandscape) {
  TempDir dir;
  const auto space = source_dir() / "configs" / "transpose.yaml";
  const std::string cmd = shell_quoted(cli_path()) + " tune " + shell_quoted(space) + " --replay " +
                          shell_quoted(shipped_landscape("transpose")) +
                          " --size N=8192 --strategy random --seed 3 --budget 20";
  const CommandResult a = run_command(cmd);
  ASSERT_EQ(a.exit_code, 0) << a.output;
  EXPECT_NE(a.output.find("strategy random, seed 3"), std::string::npos) << a.output;
  EXPECT_NE(a.output.find("evaluations 20 of 92 (21.7 %), 0 failed (budget reached)"), std::string::npos) << a.output;
  EXPECT_NE(a.output.find("optimum     TILE=64 BLOCK_ROWS=16 PAD=1 VEC=4"), std::string::npos) << a.output;
  EXPECT_EQ(run_command(cmd).output, a.output);  // the same seed, the same search

  // auto: transpose's recorded sweep takes about 20 s per problem, so it is exhaustive.
  const CommandResult full = run_command(shell_quoted(cli_path()) + " tune " + shell_quoted(space) + " --replay " +
                                         shell_quoted(shipped_landscape("transpose")));
  ASSERT_EQ(full.exit_code, 0) << full.output;
  EXPECT_EQ(std::count(full.output.begin(), full.output.end(), '\n') > 10, true);
  EXPECT_NE(full.output.find("N=1024 — 92 configs recorded (46 configs of the space are not: left out); strategy exhaustive"), std::string::npos) << full.output;
  EXPECT_NE(full.output.find("evaluations 92 of 92 (100.0 %), 2 failed"), std::string::npos) << full.output;

  const CommandResult bad = run_command(shell_quoted(cli_path()) + " tune " + shell_quoted(space) + " --replay " +
                                        shell_quoted(shipped_landscape("transpose")) + " --strategy bogus");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("unknown strategy 'bogus'"), std::string::npos) << bad.output;
  const CommandResult other = run_command(shell_quoted(cli_path()) + " tune " + shell_quoted(space) + " --replay " +
                                          shell_quoted(shipped_landscape("matmul")));
  EXPECT_NE(other.exit_code, 0);
  EXPECT_NE(other.output.find("the recording is of kernel 'matmul', the space of 'transpose'"), std::string::npos)
      << other.output;

  // export --format landscape from a cache, then replay it.
  {
    DeviceRecord device = h200_record("GPU-1", "Test GPU");
    device.sm_count = 132;
    device.copy_gbps = 3000.0;
    CacheBuilder cache;
    cache.device(device).kernel("transpose", "h", "--gpu-architecture=sm_90", "13.0");
    const Space s = transpose();
    Enumerator e(s, Problem{{4096}});
    int i = 0;
    while (auto c = e.next())
      cache.trial("N=4096", canonical_config(s, *c), 1.0 + (i++ % 7), [](TrialRecord& t) {
        t.compile_ms = 50;
        t.measure_ms = 10;
      });
    cache.build(dir.path() / "c.db");
  }
  const CommandResult exported =
      run_command(shell_quoted(cli_path()) + " export --db " + shell_quoted(dir.path() / "c.db") +
                  " --format landscape --kernel transpose > " + shell_quoted(dir.path() / "l.csv"));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  const Landscape l = load_landscape(dir.path() / "l.csv");
  EXPECT_EQ(l.header_value("device"), "Test GPU");
  EXPECT_EQ(l.header_value("copy_gbps"), "3000");
  ASSERT_EQ(l.problems.size(), 1u);
  EXPECT_EQ(l.problems[0].trials.size(), 138u);  // every valid config at N=4096
  const CommandResult replayed = run_command(shell_quoted(cli_path()) + " tune " + shell_quoted(space) + " --replay " +
                                             shell_quoted(dir.path() / "l.csv") + " --strategy local");
  ASSERT_EQ(replayed.exit_code, 0) << replayed.output;
  EXPECT_NE(replayed.output.find("N=4096 — 138 configs recorded; strategy local"), std::string::npos) << replayed.output;
  const CommandResult no_kernel = run_command(shell_quoted(cli_path()) + " export --db " +
                                              shell_quoted(dir.path() / "c.db") + " --format landscape");
  EXPECT_NE(no_kernel.exit_code, 0);
  EXPECT_NE(no_kernel.output.find("--kernel"), std::string::npos) << no_kernel.output;
}

}  // namespace
}  // namespace tiletune::testing
