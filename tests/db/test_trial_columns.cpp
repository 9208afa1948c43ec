// The trial column table (tiletune/trial_record.hpp) drives the cache: every column of it is a
// column of the trials table with its SQL type, added by the migration it names; every column
// round-trips through record_trial → trials() / best() with its exact value, and NULL stays NULL;
// schema 5 (throttled_samples, cpu_time_s) migrates a version-4 cache keeping its trials, and a
// version-4 cache opened read-only reads those columns as NULL; schema 6 (compile_log) the same
// for a version-5 cache, and a compile log is kept bounded; schema 7 (times_ms, verify_ms) the
// same for a version-6 cache, and the samples are the first 1000, every digit kept.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include "db/embedded_sql.hpp"
#include "db_test_util.hpp"
#include "test_support.hpp"

namespace tiletune {
namespace {

namespace fs = std::filesystem;
using testing::sample_device;
using testing::sample_kernel;

// A distinct value per column, awkward for a text round trip (no short decimal form; text with
// a newline, quotes and a non-ASCII character).
TrialValue distinct_value(const TrialColumn& c, std::size_t i) {
  if (c.type == TrialColumn::Type::integer) return TrialValue(std::int64_t{1'000'003} * std::int64_t(i + 1));
  if (c.type == TrialColumn::Type::text)
    return TrialValue("k.cu(" + std::to_string(i) + "): warning #177-D: variable \"x\" was declared\n\u00b5 second");
  return TrialValue(1.0 / 3.0 + double(i) * 0.1234567891234);
}

TrialRecord every_column_set(std::int64_t device, std::int64_t kernel) {
  TrialRecord t;
  t.key = TrialKey{device, kernel, "N=8192", "TILE=32;PAD=1"};
  t.status = TrialStatus::ok;
  t.detail = "every column";
  for (std::size_t i = 0; i < trial_column_count; ++i) trial_columns[i].set(t, distinct_value(trial_columns[i], i));
  return t;
}

std::map<std::string, std::string> trials_table_types(const fs::path& p) {
  auto conn = testing::raw_connection(p);
  std::map<std::string, std::string> out;
  auto q = conn.cached("SELECT name, type FROM pragma_table_info('trials')");
  while (q->step()) out[q->text(0)] = q->text(1);
  return out;
}

TEST(TrialColumns, EveryColumnIsInTheSchemaWithItsTypeAndNothingIsMissing) {
  testing::TempDir tmp;
  const auto p = tmp.path() / "c.db";
  { (void)CacheDb::open(p); }
  std::map<std::string, std::string> types = trials_table_types(p);
  for (const TrialColumn& c : trial_columns) {
    SCOPED_TRACE(std::string(c.name));
    ASSERT_TRUE(types.contains(std::string(c.name)));
    EXPECT_EQ(types[std::string(c.name)], c.sql_type());
    types.erase(std::string(c.name));
  }
  // What is left is the key, status, detail and bookkeeping, which the table does not hold.
  EXPECT_EQ(types, (std::map<std::string, std::string>{{"id", "INTEGER"},
                                                       {"device_id", "INTEGER"},
                                                       {"kernel_id", "INTEGER"},
                                                       {"problem", "TEXT"},
                                                       {"params", "TEXT"},
                                                       {"status", "TEXT"},
                                                       {"detail", "TEXT"},
                                                       {"created_at", "TEXT"}}));
}

TEST(TrialColumns, EachColumnIsAddedByTheMigrationItNames) {
  for (const TrialColumn& c : trial_columns) {
    SCOPED_TRACE(std::string(c.name));
    testing::TempDir tmp;
    auto conn = testing::raw_connection(tmp.path() / "m.db");
    auto has_column = [&] {
      auto q = conn.cached("SELECT count(*) FROM pragma_table_info('trials') WHERE name = ?1");
      q->bind(1, c.name);
      return q->step() && q->int64(0) == 1;
    };
    for (const auto& m : db_detail::migrations()) {
      if (m.version == c.since_schema) EXPECT_FALSE(has_column());
      conn.exec(m.sql, m.file);
      if (m.version == c.since_schema) EXPECT_TRUE(has_column());
    }
  }
}

TEST(TrialColumns, EveryColumnRoundTripsThroughTrialsAndBest) {
  testing::TempDir tmp;
  CacheDb db = CacheDb::open(tmp.path() / "c.db");
  const auto dev = db.upsert_device(sample_device());
  const auto ker = db.upsert_kernel(sample_kernel());
  const TrialRecord written = every_column_set(dev, ker);
  ASSERT_TRUE(db.record_trial(written).is_best);

  const std::vector<TrialRow> rows = db.trials();
  ASSERT_EQ(rows.size(), 1u);
  const std::vector<BestEntry> best = db.best();
  ASSERT_EQ(best.size(), 1u);
  for (std::size_t i = 0; i < trial_column_count; ++i) {
    const TrialColumn& c = trial_columns[i];
    SCOPED_TRACE(std::string(c.name));
    EXPECT_EQ(c.get(rows[0].trial), distinct_value(c, i));
    EXPECT_EQ(c.get(best[0].trial), distinct_value(c, i));
  }
  EXPECT_EQ(rows[0].trial.detail, "every column");
  EXPECT_EQ(rows[0].trial.key.params, "TILE=32;PAD=1");
}

TEST(TrialColumns, ReplacingATrialRewritesEveryColumnIncludingToNull) {
  testing::TempDir tmp;
  CacheDb db = CacheDb::open(tmp.path() / "c.db");
  const auto dev = db.upsert_device(sample_device());
  const auto ker = db.upsert_kernel(sample_kernel());
  (void)db.record_trial(every_column_set(dev, ker));
  TrialRecord failed;
  failed.key = TrialKey{dev, ker, "N=8192", "TILE=32;PAD=1"};
  failed.status = TrialStatus::timeout;
  failed.detail = "overran 10 s";
  EXPECT_TRUE(db.record_trial(failed).replaced);
  const std::vector<TrialRow> rows = db.trials();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].trial.status, TrialStatus::timeout);
  for (const TrialColumn& c : trial_columns) {
    SCOPED_TRACE(std::string(c.name));
    EXPECT_TRUE(std::holds_alternative<std::monostate>(c.get(rows[0].trial)));
  }
  EXPECT_TRUE(db.best().empty());
}

TEST(TrialColumns, TheNewMeasurementColumnsStayNullUntilMeasured) {
  testing::TempDir tmp;
  CacheDb db = CacheDb::open(tmp.path() / "c.db");
  const auto dev = db.upsert_device(sample_device());
  const auto ker = db.upsert_kernel(sample_kernel());
  (void)db.record_trial(testing::ok_trial(dev, ker, "N=8192", "TILE=32", 0.2));
  const TrialRecord got = db.trials().front().trial;
  EXPECT_FALSE(got.throttled_samples);
  EXPECT_FALSE(got.cpu_time_s);
  EXPECT_FALSE(got.compile_log);
  EXPECT_EQ(got.samples, 25);
}

// A cache as tiletune with schema `version` wrote it, with one ok trial (0.5 ms) that has `value`
// in `column`, one of that version's columns.
void build_with_a_trial(const fs::path& p, int version, std::string_view column, std::string_view value) {
  auto conn = testing::cache_at_version(p, version);
  testing::insert_h200_and_transpose(conn);
  conn.exec(
      fmt::format("INSERT INTO trials(id, device_id, kernel_id, problem, params, status, time_ms, {}) VALUES "
                  "(1, 1, 1, 'N=8192', 'TILE=32', 'ok', 0.5, {})",
                  column, value));
  conn.exec("INSERT INTO best(device_id, kernel_id, problem, trial_id, time_ms) VALUES (1, 1, 'N=8192', 1, 0.5)");
}
void build_v4_with_a_trial(const fs::path& p) { build_with_a_trial(p, 4, "energy_mj", "7.5"); }
void build_v5_with_a_trial(const fs::path& p) { build_with_a_trial(p, 5, "throttled_samples", "2"); }
void build_v6_with_a_trial(const fs::path& p) { build_with_a_trial(p, 6, "compile_log", "'k.cu(1): warning'"); }

// Versions 4, 5 and 6 opened read-only: what they have is read, every column a later schema added
// is NULL.
TEST(TrialColumns, AnOlderCacheReadOnlyReadsTheColumnsItLacksAsNull) {
  for (const auto& [version, column, value] :
       {std::tuple{4, "energy_mj", 7.5}, std::tuple{5, "throttled_samples", 2.0}, std::tuple{6, "power_w", 250.0}}) {
    SCOPED_TRACE("schema " + std::to_string(version));
    testing::TempDir tmp;
    const auto p = tmp.path() / "old.db";
    build_with_a_trial(p, version, column, fmt::format("{}", value));
    const CacheDb ro = CacheDb::open(p, CacheDb::Mode::read_only);
    EXPECT_EQ(ro.schema_version(), version);
    const std::vector<TrialRow> rows = ro.trials();
    ASSERT_EQ(rows.size(), 1u);
    const TrialValue got = trial_column(column).get(rows[0].trial);
    EXPECT_EQ(std::holds_alternative<std::int64_t>(got) ? double(std::get<std::int64_t>(got)) : std::get<double>(got),
              value);
    for (const TrialColumn& c : trial_columns)
      if (c.since_schema > version) EXPECT_TRUE(std::holds_alternative<std::monostate>(c.get(rows[0].trial))) << c.name;
    ASSERT_EQ(ro.best().size(), 1u);
  }
}

TEST(TrialColumns, AVersion4CacheIsMigratedKeepingItsTrials) {
  testing::TempDir tmp;
  const auto p = tmp.path() / "v4.db";
  build_v4_with_a_trial(p);
  {
    CacheDb db = CacheDb::open(p);
    EXPECT_EQ(db.schema_version(), CacheDb::latest_schema_version());  // through 5 and on
    ASSERT_EQ(db.trials().size(), 1u);
    EXPECT_EQ(db.trials()[0].trial.time_ms, 0.5);
    EXPECT_EQ(db.trials()[0].trial.energy_mj, 7.5);
    TrialRecord t = db.trials()[0].trial;
    t.key.params = "TILE=64";
    t.throttled_samples = 3;
    t.cpu_time_s = 2.5e-5;
    (void)db.record_trial(t);
    EXPECT_NE(
        db.meta("upgraded").value_or("").find("from schema 4 to " + std::to_string(CacheDb::latest_schema_version())),
        std::string::npos);
  }
  const CacheDb ro = CacheDb::open(p, CacheDb::Mode::read_only);
  const std::vector<TrialRow> rows = ro.trials();
  ASSERT_EQ(rows.size(), 2u);
  std::set<std::optional<std::int64_t>> throttled;
  for (const TrialRow& r : rows) throttled.insert(r.trial.throttled_samples);
  EXPECT_EQ(throttled, (std::set<std::optional<std::int64_t>>{std::nullopt, 3}));
}

TEST(TrialColumns, AVersion5CacheIsMigratedAndKeepsCompileLogs) {
  testing::TempDir tmp;
  const auto p = tmp.path() / "v5.db";
  build_v5_with_a_trial(p);
  const std::string warning = "k.cu(3): warning #177-D: variable \"unused\" was declared but never referenced";
  {
    CacheDb db = CacheDb::open(p);
    EXPECT_EQ(db.schema_version(), CacheDb::latest_schema_version());  // through 6 and on
    EXPECT_NE(
        db.meta("upgraded").value_or("").find("from schema 5 to " + std::to_string(CacheDb::latest_schema_version())),
        std::string::npos);
    ASSERT_EQ(db.trials().size(), 1u);
    EXPECT_EQ(db.trials()[0].trial.throttled_samples, 2);
    EXPECT_FALSE(db.trials()[0].trial.compile_log);
    TrialRecord t = db.trials()[0].trial;
    t.key.params = "TILE=64";
    t.compile_log = compile_log_of({warning});
    (void)db.record_trial(t);
  }
  const CacheDb ro = CacheDb::open(p, CacheDb::Mode::read_only);
  std::set<std::optional<std::string>> logs;
  for (const TrialRow& r : ro.trials()) logs.insert(r.trial.compile_log);
  EXPECT_EQ(logs, (std::set<std::optional<std::string>>{std::nullopt, warning}));
}

// Samples with no short decimal form, as the worker takes them.
std::vector<double> awkward_samples(std::size_t n) {
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(0.01 + 1.0 / double(3 + i) + double(i) * 1e-9);
  return v;
}

// Each number of a times_ms array, read back with strtod.
std::vector<double> parse_times(const std::string& json) {
  EXPECT_TRUE(json.starts_with("[") && json.ends_with("]")) << json;
  std::vector<double> out;
  const char* p = json.c_str() + 1;
  while (*p != ']' && *p != '\0') {
    char* end = nullptr;
    out.push_back(std::strtod(p, &end));
    EXPECT_NE(end, p) << json;
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

TEST(TrialColumns, AVersion6CacheIsMigratedAndKeepsSamplesAndVerifyTime) {
  testing::TempDir tmp;
  const auto p = tmp.path() / "v6.db";
  build_v6_with_a_trial(p);
  const std::vector<double> samples = awkward_samples(25);
  {
    CacheDb db = CacheDb::open(p);
    EXPECT_EQ(db.schema_version(), CacheDb::latest_schema_version());  // through 7 and on
    EXPECT_NE(
        db.meta("upgraded").value_or("").find("from schema 6 to " + std::to_string(CacheDb::latest_schema_version())),
        std::string::npos);
    ASSERT_EQ(db.trials().size(), 1u);
    EXPECT_EQ(db.trials()[0].trial.compile_log, "k.cu(1): warning");
    EXPECT_FALSE(db.trials()[0].trial.times_ms);
    EXPECT_FALSE(db.trials()[0].trial.verify_ms);
    TrialRecord t = db.trials()[0].trial;
    t.key.params = "TILE=64";
    t.times_ms = times_ms_of(samples);
    t.verify_ms = 1.0 / 7.0;
    (void)db.record_trial(t);
  }
  const CacheDb ro = CacheDb::open(p, CacheDb::Mode::read_only);
  std::map<std::string, TrialRecord> by_params;
  for (const TrialRow& r : ro.trials()) by_params[r.trial.key.params] = r.trial;
  ASSERT_EQ(by_params.size(), 2u);
  EXPECT_FALSE(by_params["TILE=32"].times_ms);
  ASSERT_TRUE(by_params["TILE=64"].times_ms);
  EXPECT_EQ(parse_times(*by_params["TILE=64"].times_ms), samples) << "every sample, every digit, in order";
  EXPECT_EQ(by_params["TILE=64"].verify_ms, 1.0 / 7.0);
}

TEST(TrialColumns, SamplesAreAJsonArrayOfTheFirst1000) {
  EXPECT_FALSE(times_ms_of({}));
  EXPECT_EQ(times_ms_of({0.5, 0.25, 12}), "[0.5,0.25,12]");
  EXPECT_EQ(times_ms_of({1e-300, 0.1}), "[1e-300,0.1]");
  EXPECT_FALSE(times_ms_of({0.5, std::nan("")})) << "JSON holds no NaN";
  const std::vector<double> many = awkward_samples(2500);
  const std::optional<std::string> kept = times_ms_of(many);
  ASSERT_TRUE(kept);
  const std::vector<double> back = parse_times(*kept);
  ASSERT_EQ(back.size(), trial_times_max_samples);
  EXPECT_EQ(trial_times_max_samples, 1000u);
  EXPECT_TRUE(std::equal(back.begin(), back.end(), many.begin())) << "the first ones, in order";
  // Through the cache and back.
  testing::TempDir tmp;
  CacheDb db = CacheDb::open(tmp.path() / "c.db");
  TrialRecord t =
      testing::ok_trial(db.upsert_device(sample_device()), db.upsert_kernel(sample_kernel()), "N=8192", "TILE=32", 0.2);
  t.times_ms = kept;
  (void)db.record_trial(t);
  EXPECT_EQ(db.trials().front().trial.times_ms, kept);
}

TEST(TrialColumns, ACompileLogIsTheWarningsOneALineCutAt4KiB) {
  EXPECT_FALSE(compile_log_of({}));
  EXPECT_EQ(compile_log_of({"a.cu(1): warning: one", "a.cu(2): warning: two"}),
            "a.cu(1): warning: one\na.cu(2): warning: two");
  // 100 warnings of 54 bytes (5.4 KB), cut after the last whole line that fits with the note.
  std::vector<std::string> many;
  for (int i = 0; i < 100; ++i)
    many.push_back(fmt::format("k.cu({:3}): warning #177-D: variable \"v{:03}\" was declared", i, i));
  const std::optional<std::string> log = compile_log_of(many);
  ASSERT_TRUE(log);
  EXPECT_LE(log->size(), compile_log_max_bytes);
  EXPECT_GT(log->size(), compile_log_max_bytes - many[0].size() - compile_log_cut.size() - 1);
  EXPECT_TRUE(log->starts_with(many[0] + "\n" + many[1] + "\n"));
  EXPECT_TRUE(log->ends_with(compile_log_cut));
  const std::string kept = log->substr(0, log->size() - compile_log_cut.size());
  EXPECT_TRUE(kept.ends_with("was declared")) << kept.substr(kept.size() - 80);  // a whole line
  // One warning longer than the bound is cut inside it.
  const std::optional<std::string> one = compile_log_of({std::string(10000, 'w')});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->size(), compile_log_max_bytes);
  EXPECT_TRUE(one->ends_with(compile_log_cut));
}

TEST(TrialColumns, TheSchemaRangeIsTheOneTheMigrationsReach) {
  EXPECT_EQ(CacheDb::latest_schema_version(), cache_newest_schema);
  EXPECT_EQ(db_detail::migrations().front().version, cache_oldest_schema);
  int newest_column = 0;
  for (const TrialColumn& c : trial_columns) newest_column = std::max(newest_column, c.since_schema);
  EXPECT_LE(newest_column, cache_newest_schema);
}

}  // namespace
}  // namespace tiletune
