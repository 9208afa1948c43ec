// The query library and the engine share one declaration of a cache's identity, its schema range
// and its trial columns (tiletune/trial_record.hpp): the library reads exactly the versions the
// engine's migrations reach (the newest, not one more), a version-6 cache (before the samples)
// answers as a version-7 one does, and tiletune_trials_json carries every column of the table
// with its exact value.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "query_fixture.hpp"
#include "test_support.hpp"
#include "tiletune/query.hpp"
#include "tiletune/tiletune.h"

namespace tiletune {
namespace {

namespace fs = std::filesystem;

void set_user_version(const fs::path& path, int version) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, ("PRAGMA user_version = " + std::to_string(version)).c_str(), nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
}

TEST(QuerySchemaRange, IsTheRangeTheEngineWrites) {
  EXPECT_EQ(cache_newest_schema, CacheDb::latest_schema_version());
  testing::TempDir dir;
  const fs::path newest = testing::write_fixture(dir.path() / "newest.db", /*wal=*/false);
  QueryError error;
  auto cache = QueryCache::try_open(newest, &error);
  ASSERT_TRUE(cache) << error.message;
  EXPECT_EQ(cache->schema_version(), CacheDb::latest_schema_version());

  // One past the engine's newest is refused, and the message names the range the library reads.
  const fs::path beyond = testing::write_fixture(dir.path() / "beyond.db", /*wal=*/false);
  set_user_version(beyond, CacheDb::latest_schema_version() + 1);
  EXPECT_FALSE(QueryCache::try_open(beyond, &error));
  EXPECT_EQ(error.status, QueryStatus::unsupported_schema) << error.message;
  EXPECT_NE(error.message.find("versions " + std::to_string(cache_oldest_schema) + " to " +
                               std::to_string(CacheDb::latest_schema_version())),
            std::string::npos)
      << error.message;
}

// The number after "name": in a JSON text, or nothing when the key is absent.
std::optional<double> json_number(const std::string& json, std::string_view name) {
  const std::string key = "\"" + std::string(name) + "\": ";
  const auto at = json.find(key);
  if (at == std::string::npos) return std::nullopt;
  return std::strtod(json.c_str() + at + key.size(), nullptr);
}

// tiletune_trials_json of a cache's current trials ("" after a failed assertion).
std::string current_trials_json(const fs::path& path) {
  tiletune_cache* cache = nullptr;
  EXPECT_EQ(tiletune_open(path.c_str(), &cache), TILETUNE_OK) << tiletune_last_error();
  if (cache == nullptr) return "";
  char* json = nullptr;
  EXPECT_EQ(tiletune_trials_json(cache, nullptr, nullptr, nullptr, 1, &json), TILETUNE_OK) << tiletune_last_error();
  const std::string text = json != nullptr ? json : "";
  tiletune_string_free(json);
  tiletune_close(cache);
  return text;
}

// A cache as a tiletune of schema `version` wrote it (db/migrations/001 to `version` applied),
// with one ok trial of transpose on an H200.
fs::path write_cache_of_version(const fs::path& path, int version) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  auto exec = [&](const std::string& sql) {
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "") << "\n" << sql;
    sqlite3_free(err);
  };
  std::vector<fs::path> migrations;
  for (const auto& e : fs::directory_iterator(testing::source_dir() / "db" / "migrations"))
    migrations.push_back(e.path());
  std::sort(migrations.begin(), migrations.end());
  for (const fs::path& m : migrations)
    if (std::stoi(m.filename().string().substr(0, 3)) <= version) exec(testing::read_file(m));
  exec("PRAGMA application_id = " + std::to_string(cache_application_id));
  exec("PRAGMA user_version = " + std::to_string(version));
  exec("INSERT INTO devices(id, uuid, name, cc_major, cc_minor) VALUES (1, '" + testing::h200_a +
       "', 'NVIDIA H200', 9, 0)");
  exec("INSERT INTO kernels(id, name, source_hash, used_seq) VALUES (1, 'transpose', 'v1', 1)");
  exec(
      "INSERT INTO trials(id, device_id, kernel_id, problem, params, status, time_ms) VALUES "
      "(1, 1, 1, 'N=4096', 'TILE=32;PAD=1', 'ok', 0.2)");
  exec("INSERT INTO best(device_id, kernel_id, problem, trial_id, time_ms) VALUES (1, 1, 'N=4096', 1, 0.2)");
  sqlite3_close(db);
  return path;
}

// Version 6, the one before the samples, and version 7 both answer; trials_json carries the
// samples and the verification time only where the cache has them.
TEST(QuerySchemaRange, Versions6And7AreReadTheSamplesWhereTheCacheHasThem) {
  testing::TempDir dir;
  for (const int version : {6, 7}) {
    SCOPED_TRACE("schema " + std::to_string(version));
    const fs::path path = write_cache_of_version(dir.path() / ("v" + std::to_string(version) + ".db"), version);
    if (version == 7) {
      sqlite3* db = nullptr;
      ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
      ASSERT_EQ(
          sqlite3_exec(db, "UPDATE trials SET times_ms = '[0.25,0.2]', verify_ms = 1.5", nullptr, nullptr, nullptr),
          SQLITE_OK);
      sqlite3_close(db);
    }
    auto cache = QueryCache::open(path);
    EXPECT_EQ(cache.schema_version(), version);
    const auto answer = cache.lookup({"transpose", QueryDevice{testing::h200_a, "", 0, 0}, {{"N", 4096}}});
    ASSERT_TRUE(answer.ok()) << answer.message;
    EXPECT_EQ(answer.params_text, "TILE=32;PAD=1");
    const std::string text = current_trials_json(path);
    if (version == 6) {
      EXPECT_EQ(text.find("times_ms"), std::string::npos) << text;
      EXPECT_EQ(text.find("verify_ms"), std::string::npos) << text;
    } else {
      EXPECT_NE(text.find(R"("times_ms": "[0.25,0.2]")"), std::string::npos) << text;
      EXPECT_EQ(json_number(text, "verify_ms"), 1.5) << text;
    }
  }
}

TEST(QuerySchemaRange, TrialsJsonCarriesEveryColumnOfTheTable) {
  testing::TempDir dir;
  const fs::path path = dir.path() / "cache.db";
  TrialRecord t;
  {
    CacheDb db = CacheDb::open(path);
    t.key = TrialKey{db.upsert_device(testing::fixture_device(testing::h200_a)),
                     db.upsert_kernel(testing::transpose_version("h1")), "N=8192", testing::c1};
    for (std::size_t i = 0; i < trial_column_count; ++i) {
      const TrialColumn& c = trial_columns[i];
      if (c.type == TrialColumn::Type::integer)
        c.set(t, TrialValue(std::int64_t(7 + i)));
      else if (c.type == TrialColumn::Type::text)
        c.set(t, TrialValue("k.cu(2): warning: \"quoted\"\nnext line"));
      else
        c.set(t, TrialValue(0.1 + 1.0 / double(i + 3)));
    }
    (void)db.record_trial(t);
  }
  const std::string text = current_trials_json(path);
  for (const TrialColumn& c : trial_columns) {
    SCOPED_TRACE(std::string(c.name));
    const TrialValue v = c.get(t);
    if (std::holds_alternative<std::string>(v)) {  // escaped as JSON: the quotes and the newline
      EXPECT_NE(text.find("\"" + std::string(c.name) + "\": \"k.cu(2): warning: \\\"quoted\\\"\\nnext line\""),
                std::string::npos)
          << text;
      continue;
    }
    const double expected =
        c.type == TrialColumn::Type::integer ? double(std::get<std::int64_t>(v)) : std::get<double>(v);
    EXPECT_EQ(json_number(text, c.name), expected) << text;
  }
}

// --- the current kernel version ------------------------------------------------------------

// Which version of "transpose" each reader takes for the current one, named by its source hash
// ("v<n>": its one trial has the params "V=<n>"): "" where a reader finds none, "several" where it
// finds more than one.
struct CurrentVersionViews {
  std::string engine_trials;  // CacheDb::trials, the rows marked current
  std::string engine_show;    // CacheDb::trials with current_only
  std::string engine_best;    // CacheDb::best (current_only)
  std::string query_lookup;   // QueryCache::lookup, exact
  std::string query_json;     // tiletune_trials_json, the trials marked current
  std::string query_current;  // tiletune_trials_json of the current versions only
};

void take(std::string& view, const std::string& hash) { view = view.empty() || view == hash ? hash : "several"; }

// (params, current) of every trial in a tiletune_trials_json text.
std::vector<std::pair<std::string, bool>> json_trials(const std::string& json) {
  std::vector<std::pair<std::string, bool>> out;
  const std::string key = R"("params": "V=)";
  for (auto at = json.find(key); at != std::string::npos; at = json.find(key, at + 1)) {
    const auto start = at + key.size();
    const auto end_of_object = json.find('}', start);
    const std::string object = json.substr(start, end_of_object - start);
    out.emplace_back("v" + object.substr(0, object.find('"')), object.find(R"("current": true)") != std::string::npos);
  }
  return out;
}

std::string trials_json_of(const fs::path& path, bool all_versions) {
  tiletune_cache* cache = nullptr;
  EXPECT_EQ(tiletune_open(path.c_str(), &cache), TILETUNE_OK) << tiletune_last_error();
  if (cache == nullptr) return "";
  char* json = nullptr;
  EXPECT_EQ(tiletune_trials_json(cache, "transpose", nullptr, nullptr, all_versions ? 1 : 0, &json), TILETUNE_OK)
      << tiletune_last_error();
  const std::string text = json != nullptr ? json : "";
  tiletune_string_free(json);
  tiletune_close(cache);
  return text;
}

CurrentVersionViews current_version_views(const fs::path& path) {
  CurrentVersionViews v;
  {
    const CacheDb db = CacheDb::open(path, CacheDb::Mode::read_only);
    TrialFilter all;
    all.kernel = "transpose";
    for (const TrialRow& r : db.trials(all))
      if (r.current) take(v.engine_trials, r.kernel.source_hash);
    TrialFilter current = all;
    current.current_only = true;
    for (const TrialRow& r : db.trials(current)) take(v.engine_show, r.kernel.source_hash);
    BestFilter best;
    best.kernel = "transpose";
    for (const BestEntry& e : db.best(best)) take(v.engine_best, e.kernel.source_hash);
  }
  const auto answer =
      QueryCache::open(path).lookup({"transpose", QueryDevice{testing::h200_a, "", 0, 0}, {{"N", 1024}}});
  EXPECT_EQ(answer.match, MatchLevel::exact) << answer.message;
  if (answer.params_text.rfind("V=", 0) == 0) take(v.query_lookup, "v" + answer.params_text.substr(2));
  for (const auto& [hash, current] : json_trials(trials_json_of(path, true)))
    if (current) take(v.query_json, hash);
  for (const auto& [hash, current] : json_trials(trials_json_of(path, false))) take(v.query_current, hash);
  return v;
}

// Every reader of the engine and of the query library takes `expected` for the current version.
void expect_current(const fs::path& path, const std::string& expected) {
  const CurrentVersionViews v = current_version_views(path);
  EXPECT_EQ(v.engine_trials, expected) << "CacheDb::trials' current flag";
  EXPECT_EQ(v.engine_show, expected) << "CacheDb::trials with current_only";
  EXPECT_EQ(v.engine_best, expected) << "CacheDb::best";
  EXPECT_EQ(v.query_lookup, expected) << "QueryCache::lookup";
  EXPECT_EQ(v.query_json, expected) << "tiletune_trials_json's current flag";
  EXPECT_EQ(v.query_current, expected) << "tiletune_trials_json of the current versions";
}

// Tunes version `hash` ("v<n>") of transpose (one trial, V=<n>, on the H200 at N=1024), as a sweep does.
void tune_version(const fs::path& path, const std::string& hash) {
  CacheDb db = CacheDb::open(path, CacheDb::Options{.wal = false});
  TrialRecord t;
  t.key = TrialKey{db.upsert_device(testing::fixture_device(testing::h200_a)),
                   db.upsert_kernel(testing::transpose_version(hash)), "N=1024", "V=" + hash.substr(1)};
  t.status = TrialStatus::ok;
  t.time_ms = 1.0;
  (void)db.record_trial(t);
}

// The engine (best, show, merge) and the query library (lookups, trials JSON) read one rule
// (common/kernel_version.hpp); if one of them wrote its own again, a case below would tell them
// apart: the version tuned last, not the one stored last, nor the newest id.
TEST(QueryCurrentVersion, EngineAndQueryLibraryAgreeOnWhichVersionIsCurrent) {
  testing::TempDir dir;
  const fs::path a = dir.path() / "a.db";
  {
    SCOPED_TRACE("two versions: the one tuned last");
    tune_version(a, "v1");
    tune_version(a, "v2");
    expect_current(a, "v2");
  }
  {
    SCOPED_TRACE("an older version tuned again (its id is still the smaller)");
    tune_version(a, "v1");
    expect_current(a, "v1");
  }
  {
    SCOPED_TRACE("a tie in used_seq (a hand-edited cache): the higher id");
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(a.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "UPDATE kernels SET used_seq = 5", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    expect_current(a, "v2");
  }
  {
    SCOPED_TRACE("merged caches: the source's current version, though another was new to the target");
    const fs::path b = dir.path() / "b.db";
    tune_version(b, "v2");
    tune_version(b, "v3");
    tune_version(b, "v2");
    expect_current(b, "v2");
    tune_version(a, "v1");
    expect_current(a, "v1");
    (void)merge_cache_files(a, {b});
    expect_current(a, "v2");
    // And back: the target's versions, older in the source, do not win by being copied last.
    (void)merge_cache_files(b, {a});
    expect_current(b, "v2");
  }
}

}  // namespace
}  // namespace tiletune
