// The CLI of issue 24 on planted caches: `best` lists tie sets, history and pins and answers a
// lookup with them (table, JSON, env); `pin` / `unpin` and their refusals; `merge` keeps pins;
// `diff` in every format, and each --fail-on condition failing (exit 5) on exactly the keys it
// names. CPU only, fast.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/exit_codes.hpp"
#include "cache_builder.hpp"
#include "test_support.hpp"
#include "tiletune/cache_db.hpp"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;

const std::string gpu = "GPU-aaaaaaaa-2222-4000-8000-000000000001";

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }

CommandResult tiletune(const std::string& args) {
  // In braces, so that redirections in args apply to tiletune alone.
  return run_command("{ TILETUNE_DB=/nonexistent/none.db " + quote(cli_path()) + " " + args + "; }");
}

/// stdout only (stderr dropped), parsed as JSON.
nlohmann::json json_of(const std::string& args) {
  const CommandResult r = tiletune(args + " 2>/dev/null");
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.output;
  return nlohmann::json::parse(r.output);
}

struct Planted {
  std::string problem;
  std::string params;
  double ms;
  double occupancy = 0.5;
};

/// A cache of one H200 and transpose, one run of the trials given.
fs::path write(const fs::path& path, const std::vector<Planted>& trials) {
  CacheBuilder cache;
  cache.device(gpu).kernel();
  for (const Planted& p : trials) cache.trial(p.problem, p.params, p.ms, with_low_noise(p.occupancy));
  return cache.build(path);
}

// --- best and pins ---------------------------------------------------------------------------

class Answers : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = write(dir_.path() / "c.db", {{"N=8192", "TILE=32;PAD=1", 1.000},
                                       {"N=8192", "TILE=64;PAD=1", 1.003, 1.0},
                                       {"N=8192", "TILE=16;PAD=1", 1.200, 1.0},
                                       {"N=1024", "TILE=16;PAD=0", 0.100}});
  }
  std::string db() const { return "--db " + quote(db_); }
  TempDir dir_;
  fs::path db_;
};

TEST_F(Answers, BestListsTheTieSetsPickWithItsTiesSpreadAndHistory) {
  const nlohmann::json rows = json_of("best --format json " + db());
  ASSERT_EQ(rows.size(), 2u);
  const nlohmann::json& big = rows[0]["problem"] == "N=8192" ? rows[0] : rows[1];
  EXPECT_EQ(big["params"], "TILE=64;PAD=1");
  EXPECT_EQ(big["ties"], 2);
  EXPECT_NEAR(big["tie_spread_pct"].get<double>(), 0.3, 1e-6);
  EXPECT_EQ(big["tie_set"], (nlohmann::json{"TILE=32;PAD=1", "TILE=64;PAD=1"}));
  EXPECT_EQ(big["fastest_params"], "TILE=32;PAD=1");
  EXPECT_EQ(big["runs"], 1);
  EXPECT_EQ(big["winner_changes"], 0);
  EXPECT_FALSE(big.contains("pinned")) << big.dump();
  const CommandResult table = tiletune("best " + db());
  EXPECT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("TILE=64 PAD=1"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("spread %"), std::string::npos) << table.output;
}

TEST_F(Answers, ALookupSaysHowManyTiedInEveryFormat) {
  const nlohmann::json j = json_of("best --format json --kernel transpose --size N=8192 --device " + gpu + " " + db());
  EXPECT_EQ(j["match"], "exact");
  EXPECT_EQ(j["params"]["TILE"], 64);
  EXPECT_EQ(j["tie_count"], 2);
  EXPECT_NEAR(j["tie_spread"].get<double>(), 0.003, 1e-9);
  EXPECT_DOUBLE_EQ(j["fastest_ms"].get<double>(), 1.0);
  const CommandResult env = tiletune("best --format env --kernel transpose --size N=8192 --device " + gpu + " " + db());
  EXPECT_NE(env.output.find("TILETUNE_TIES=2\n"), std::string::npos) << env.output;
  const CommandResult text = tiletune("best --kernel transpose --size N=8192 --device " + gpu + " " + db());
  EXPECT_NE(text.output.find("2 configs tied within 0.30 %"), std::string::npos) << text.output;
}

TEST_F(Answers, APinAnswersEveryLookupAndShowsInTheListing) {
  const CommandResult pinned = tiletune(
      "pin --kernel transpose --size N=8192 --params 'PAD=1, TILE=16' --model "
      "'NVIDIA H200' --reason 'same numerics as v1' " +
      db());
  ASSERT_EQ(pinned.exit_code, 0) << pinned.output;
  // Spelled as the trials spell it (the space's order), since a trial has those params.
  EXPECT_NE(pinned.output.find("TILE=16;PAD=1"), std::string::npos) << pinned.output;
  EXPECT_EQ(pinned.output.find("note:"), std::string::npos) << pinned.output;

  const nlohmann::json j = json_of("best --format json --kernel transpose --size N=8192 --device " + gpu + " " + db());
  EXPECT_EQ(j["match"], "pinned");
  EXPECT_EQ(j["params"]["TILE"], 16);
  EXPECT_EQ(j["pin_scope"], "model");
  EXPECT_EQ(j["pin_reason"], "same numerics as v1");
  EXPECT_DOUBLE_EQ(j["time_ms"].get<double>(), 1.2);
  const CommandResult text = tiletune("best --kernel transpose --size N=8192 --device " + gpu + " " + db());
  EXPECT_NE(text.output.find("(pinned"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("by model pin: same numerics as v1"), std::string::npos) << text.output;

  const nlohmann::json rows = json_of("best --format json " + db());
  const nlohmann::json& big = rows[0]["problem"] == "N=8192" ? rows[0] : rows[1];
  EXPECT_EQ(big["params"], "TILE=16;PAD=1");
  EXPECT_EQ(big["pinned"], "model");
  EXPECT_EQ(big["pin_reason"], "same numerics as v1");
  EXPECT_DOUBLE_EQ(big["time_ms"].get<double>(), 1.2);

  const nlohmann::json pins = json_of("pin --list --format json " + db());
  ASSERT_EQ(pins.size(), 1u);
  EXPECT_EQ(pins[0]["scope"], "model");
  EXPECT_EQ(pins[0]["target"], "NVIDIA H200");
  EXPECT_EQ(pins[0]["problem"], "N=8192");

  EXPECT_EQ(tiletune("unpin --kernel transpose --size N=8192 --model 'NVIDIA H200' " + db()).exit_code, 0);
  EXPECT_EQ(tiletune("unpin --kernel transpose --size N=8192 --model 'NVIDIA H200' " + db()).exit_code,
            cli::exit_no_result);
  EXPECT_EQ(json_of("best --format json --kernel transpose --size N=8192 --device " + gpu + " " + db())["match"],
            "exact");
}

TEST_F(Answers, PinRefusesWhatItCannotStore) {
  const std::string base = "pin --kernel transpose --size N=8192 " + db();
  const fs::path before = dir_.path() / "before";
  EXPECT_EQ(tiletune(base + " --params TILE=16").exit_code, cli::exit_usage);  // no target
  EXPECT_EQ(tiletune(base + " --params TILE=16 --model A --arch sm_90").exit_code, cli::exit_usage);
  EXPECT_EQ(tiletune(base + " --params TILE=16 --device 'NVIDIA H200'").exit_code, cli::exit_usage);
  EXPECT_EQ(tiletune(base + " --params TILE=x --arch sm_90").exit_code, cli::exit_usage);
  EXPECT_EQ(tiletune(base + " --params 'TILE=1;TILE=2' --arch sm_90").exit_code, cli::exit_usage);
  EXPECT_EQ(tiletune("pin --kernel transpose --params TILE=1 --arch sm_90 " + db()).exit_code, cli::exit_usage);
  EXPECT_TRUE(json_of("pin --list --format json " + db()).empty());
  // A config no trial has is pinned, with a note.
  const CommandResult unmeasured = tiletune(base + " --params TILE=128 --device " + gpu);
  EXPECT_EQ(unmeasured.exit_code, 0) << unmeasured.output;
  EXPECT_NE(unmeasured.output.find("note: no trial of transpose has the config TILE=128"), std::string::npos)
      << unmeasured.output;
}

TEST_F(Answers, MergeKeepsPins) {
  ASSERT_EQ(tiletune("pin --kernel transpose --size N=8192 --params 'TILE=16;PAD=1' --arch sm_90 " + db()).exit_code,
            0);
  const fs::path all = dir_.path() / "all.db";
  const CommandResult merged = tiletune("merge " + quote(all) + " " + quote(db_));
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_NE(merged.output.find("1 pins copied"), std::string::npos) << merged.output;
  EXPECT_EQ(
      json_of("best --format json --kernel transpose --size N=8192 --device " + gpu + " --db " + quote(all))["match"],
      "pinned");
}

// --- diff ------------------------------------------------------------------------------------

class Diff : public ::testing::Test {
 protected:
  // N=512: another answer, the old one 2.5 % behind: out of the new tie set (1.5 %) but within the
  // hold window (3 %), so it would stand had the new cache recorded it. N=1024: the same answer,
  // 3 % slower. N=2048: another answer, the old one tied in the new set. N=4096: another answer,
  // the old one far behind. N=8192: only old. N=16384: only new.
  void SetUp() override {
    old_ = write(dir_.path() / "old.db", {{"N=512", "T=1", 1.0},
                                          {"N=512", "T=2", 1.2},
                                          {"N=1024", "T=1", 1.0},
                                          {"N=2048", "T=1", 1.0},
                                          {"N=2048", "T=2", 1.2},
                                          {"N=4096", "T=1", 1.0},
                                          {"N=4096", "T=2", 1.2},
                                          {"N=8192", "T=1", 1.0}});
    new_ = write(dir_.path() / "new.db", {{"N=512", "T=1", 1.025},
                                          {"N=512", "T=2", 1.0},
                                          {"N=1024", "T=1", 1.03},
                                          {"N=2048", "T=1", 1.003},
                                          {"N=2048", "T=2", 1.0, 1.0},
                                          {"N=4096", "T=1", 1.0},
                                          {"N=4096", "T=2", 0.5},
                                          {"N=16384", "T=1", 1.0}});
  }
  CommandResult diff(const std::string& args) {
    return tiletune("diff " + quote(old_) + " " + quote(new_) + " " + args);
  }
  TempDir dir_;
  fs::path old_, new_;
};

TEST_F(Diff, JsonSaysWhatChangedPerKey) {
  const CommandResult r = diff("--format json 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["failing"], 0);
  std::map<std::string, nlohmann::json> by_problem;
  for (const auto& row : j["changes"]) by_problem[row["problem"]] = row;
  ASSERT_EQ(by_problem.size(), 6u);
  EXPECT_EQ(by_problem["N=512"]["change"], "changed");
  EXPECT_EQ(by_problem["N=512"]["new_ties"], 1) << "2.5 % is outside the tie window";
  EXPECT_EQ(by_problem["N=512"]["tied"], true) << "and inside the hold window";
  EXPECT_EQ(by_problem["N=1024"]["change"], "same");
  EXPECT_NEAR(by_problem["N=1024"]["time_change_pct"].get<double>(), 3.0, 1e-6);
  EXPECT_EQ(by_problem["N=2048"]["change"], "changed");
  EXPECT_EQ(by_problem["N=2048"]["old_params"], "T=1");
  EXPECT_EQ(by_problem["N=2048"]["new_params"], "T=2");
  EXPECT_EQ(by_problem["N=2048"]["tied"], true);
  EXPECT_EQ(by_problem["N=2048"]["new_ties"], 2);
  EXPECT_EQ(by_problem["N=4096"]["change"], "changed");
  EXPECT_EQ(by_problem["N=4096"]["tied"], false);
  EXPECT_EQ(by_problem["N=8192"]["change"], "missing");
  EXPECT_FALSE(by_problem["N=8192"].contains("new_params")) << by_problem["N=8192"].dump();
  EXPECT_EQ(by_problem["N=16384"]["change"], "new");
}

TEST_F(Diff, EachFailOnFailsOnExactlyItsKeys) {
  struct Case {
    std::string fail_on;
    std::vector<std::string> failing;  // problems named on stderr
  };
  const std::vector<Case> cases = {
      {"slower:2%", {"N=1024"}}, {"slower:5%", {}},       {"changed-winner", {"N=512", "N=2048", "N=4096"}},
      {"untied", {"N=4096"}},    {"missing", {"N=8192"}}, {"untied,missing,slower:2%", {"N=1024", "N=4096", "N=8192"}}};
  for (const Case& c : cases) {
    const CommandResult r = diff("--fail-on " + c.fail_on + " 2>&1 >/dev/null");
    EXPECT_EQ(r.exit_code, c.failing.empty() ? cli::exit_ok : cli::exit_gate_failed) << c.fail_on << "\n" << r.output;
    for (const std::string problem : {"N=512", "N=1024", "N=2048", "N=4096", "N=8192", "N=16384"}) {
      const bool named = r.output.find(" " + std::string(problem) + ":") != std::string::npos;
      const bool expected = std::find(c.failing.begin(), c.failing.end(), problem) != c.failing.end();
      EXPECT_EQ(named, expected) << c.fail_on << " " << problem << "\n" << r.output;
    }
  }
  // Repeated options add up like a comma list.
  EXPECT_EQ(diff("--fail-on untied --fail-on missing").exit_code, cli::exit_gate_failed);
  // Without --fail-on nothing fails; a caches compared with itself never fails.
  EXPECT_EQ(diff("").exit_code, cli::exit_ok);
  EXPECT_EQ(tiletune("diff " + quote(old_) + " " + quote(old_) + " --fail-on changed-winner,untied,missing,slower:0%")
                .exit_code,
            cli::exit_ok);
}

TEST_F(Diff, TableAndMarkdownShowEveryKeyAndTheVerdict) {
  const CommandResult table = diff("--fail-on untied");
  EXPECT_EQ(table.exit_code, cli::exit_gate_failed);
  for (const char* text : {"N=512", "N=1024", "N=2048", "N=4096", "N=8192", "N=16384", "missing", "untied",
                           "6 keys: 1 same, 3 changed, 1 new, 1 missing; 1 fail --fail-on"})
    EXPECT_NE(table.output.find(text), std::string::npos) << text << "\n" << table.output;
  const CommandResult md = diff("--format markdown");
  EXPECT_EQ(md.exit_code, cli::exit_ok);
  EXPECT_NE(md.output.find("| kernel |"), std::string::npos) << md.output;
  EXPECT_NE(md.output.find("| transpose |"), std::string::npos) << md.output;
}

TEST_F(Diff, BadArgumentsAreUsageErrors) {
  EXPECT_EQ(diff("--fail-on faster").exit_code, cli::exit_usage);
  EXPECT_EQ(diff("--fail-on slower:").exit_code, cli::exit_usage);
  EXPECT_EQ(diff("--fail-on slower:x%").exit_code, cli::exit_usage);
  EXPECT_EQ(diff("--format csv").exit_code, cli::exit_usage);
  EXPECT_EQ(tiletune("diff " + quote(old_) + " " + quote(dir_.path() / "none.db")).exit_code, cli::exit_usage);
}

TEST_F(Diff, DevicesByNameMatchCachesOfOtherMachines) {
  // The same answers measured on another H200: by UUID every key is new or missing, by name same.
  {
    CacheBuilder().device("GPU-bbbbbbbb-2222-4000-8000-000000000002").kernel().trial("N=8192", "T=1", 1.0).build(new_);
  }
  EXPECT_EQ(diff("--fail-on missing").exit_code, cli::exit_gate_failed);
  const CommandResult by_name = diff("--devices name --fail-on missing --format json 2>/dev/null");
  EXPECT_EQ(by_name.exit_code, cli::exit_ok) << by_name.output;
}

}  // namespace
}  // namespace tiletune::testing
