// Schema 4 (energy per trial): a version-3 cache is migrated keeping its trials (with no energy),
// an old cache opened read-only reads without energy, energy round-trips, and "best" by the
// energy and edp objectives is the trial with the least energy, or energy x time, in CacheDb and
// in the query library alike.
#include <gtest/gtest.h>

#include "db/embedded_sql.hpp"
#include "db_test_util.hpp"
#include "test_support.hpp"
#include "tiletune/query.hpp"

namespace tiletune {
namespace {

namespace fs = std::filesystem;
using testing::ok_trial;
using testing::sample_device;
using testing::sample_kernel;

// A cache as tiletune with schema 3 wrote it, with two ok trials.
void build_v3_with_trials(const fs::path& p) {
  {
    auto conn = testing::cache_at_version(p, 3);
    testing::insert_h200_and_transpose(conn);
    conn.exec(
        "INSERT INTO trials(id, device_id, kernel_id, problem, params, status, time_ms) VALUES "
        "(1, 1, 1, 'N=8192', 'TILE=32', 'ok', 0.5), (2, 1, 1, 'N=8192', 'TILE=64', 'ok', 0.4)");
    conn.exec("INSERT INTO best(device_id, kernel_id, problem, trial_id, time_ms) VALUES (1, 1, 'N=8192', 2, 0.4)");
  }
}

TEST(EnergyMigration, ReadOnlyVersion3HasNoEnergyAndNoEnergyBest) {
  testing::TempDir tmp;
  const auto p = tmp.path() / "v3.db";
  build_v3_with_trials(p);
  const CacheDb ro = CacheDb::open(p, CacheDb::Mode::read_only);
  EXPECT_EQ(ro.schema_version(), 3);
  const auto rows = ro.trials();
  ASSERT_EQ(rows.size(), 2u);
  for (const TrialRow& r : rows) {
    EXPECT_FALSE(r.trial.energy_mj);
    EXPECT_FALSE(r.trial.power_w);
  }
  EXPECT_EQ(ro.best({}).size(), 1u);
  EXPECT_TRUE(ro.best({.objective = Objective::energy}).empty());
  // The query library reads schema 3 too, and says why an energy lookup finds nothing.
  const QueryCache q = QueryCache::open(p);
  const QueryResult t = q.lookup({"transpose", QueryDevice::parse("GPU-1"), {{"N", 8192}}});
  EXPECT_EQ(t.match, MatchLevel::exact);
  const QueryResult e = q.lookup({"transpose", QueryDevice::parse("GPU-1"), {{"N", 8192}}, Objective::energy});
  EXPECT_EQ(e.match, MatchLevel::none);
  EXPECT_NE(e.message.find("no energy measurements"), std::string::npos) << e.message;
}

TEST(EnergyMigration, Version3IsMigratedKeepingItsTrials) {
  testing::TempDir tmp;
  const auto p = tmp.path() / "v3.db";
  build_v3_with_trials(p);
  CacheDb db = CacheDb::open(p);
  EXPECT_EQ(db.schema_version(), CacheDb::latest_schema_version());  // through 4 and on
  ASSERT_EQ(db.trials().size(), 2u);
  EXPECT_EQ(db.trials().front().trial.key.params, "TILE=64");
  EXPECT_FALSE(db.trials().front().trial.energy_mj);
  EXPECT_NE(
      db.meta("upgraded").value_or("").find("from schema 3 to " + std::to_string(CacheDb::latest_schema_version())),
      std::string::npos);
}

struct EnergyCache {
  testing::TempDir tmp;
  fs::path path = tmp.path() / "e.db";
  std::int64_t device = 0, kernel = 0;
  EnergyCache() {
    CacheDb db = CacheDb::open(path);
    device = db.upsert_device(sample_device());
    kernel = db.upsert_kernel(sample_kernel());
    // time, energy: the fastest (A) is not the most frugal (C); B has the least energy x time.
    const struct {
      const char* params;
      double ms, mj;
    } rows[] = {{"TILE=1", 1.0, 9.0}, {"TILE=2", 1.5, 5.0}, {"TILE=3", 3.0, 4.0}, {"TILE=4", 0.9, 0.0}};
    for (const auto& r : rows) {
      TrialRecord t = ok_trial(device, kernel, "N=8192", r.params, r.ms);
      if (r.mj > 0) {
        t.energy_mj = r.mj;
        t.power_w = r.mj / r.ms;
      }
      (void)db.record_trial(t);
    }
  }
};

TEST(EnergyMigration, EnergyRoundTripsAndRanksBestByObjective) {
  EnergyCache c;
  const CacheDb db = CacheDb::open(c.path, CacheDb::Mode::read_only);
  for (const TrialRow& r : db.trials())
    if (r.trial.key.params == "TILE=2") {
      EXPECT_EQ(r.trial.energy_mj, 5.0);
      EXPECT_DOUBLE_EQ(*r.trial.power_w, 5.0 / 1.5);
    }
  auto winner = [&](Objective o) {
    const auto best = db.best({.objective = o});
    return best.size() == 1 ? best.front().trial.key.params : std::string("?");
  };
  EXPECT_EQ(winner(Objective::time), "TILE=4");    // fastest; no energy needed
  EXPECT_EQ(winner(Objective::energy), "TILE=3");  // 4 mJ
  EXPECT_EQ(winner(Objective::edp), "TILE=2");     // 7.5 mJ·ms against 9 and 12
}

TEST(EnergyMigration, QueryLibraryHonoursTheObjective) {
  EnergyCache c;
  const QueryCache q = QueryCache::open(c.path);
  const QueryDevice dev = QueryDevice::parse(sample_device().uuid);
  auto lookup = [&](Objective o, std::int64_t n) { return q.lookup({"transpose", dev, {{"N", n}}, o}); };
  EXPECT_EQ(lookup(Objective::time, 8192).params_text, "TILE=4");
  const QueryResult e = lookup(Objective::energy, 8192);
  EXPECT_EQ(e.match, MatchLevel::exact);
  EXPECT_EQ(e.params_text, "TILE=3");
  EXPECT_DOUBLE_EQ(e.energy_mj, 4.0);
  EXPECT_EQ(lookup(Objective::edp, 8192).params_text, "TILE=2");
  EXPECT_EQ(lookup(Objective::energy, 4000).match, MatchLevel::nearest_problem);
  EXPECT_EQ(lookup(Objective::energy, 4000).params_text, "TILE=3");
  // Another architecture: the portable default ranks by the objective too.
  const QueryResult p = q.lookup({"transpose", QueryDevice::parse("sm_80"), {{"N", 8192}}, Objective::energy});
  EXPECT_EQ(p.match, MatchLevel::portable_default);
  EXPECT_EQ(p.params_text, "TILE=3");
}

}  // namespace
}  // namespace tiletune
