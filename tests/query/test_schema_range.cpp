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
  for (const auto& e : fs::directory_iterator(testing::source_dir() / "db" / "migrations")) migrations.push_back(e.path());
  std::sort(migrations.begin(), migrations.end());
  for (const fs::path& m : migrations)
    if (std::stoi(m.filename().string().substr(0, 3)) <= version) exec(testing::read_file(m));
  exec("PRAGMA application_id = " + std::to_string(cache_application_id));
  exec("PRAGMA user_version = " + std::to_string(version));
  exec("INSERT INTO devices(id, uuid, name, cc_major, cc_minor) VALUES (1, '" + testing::h200_a +
       "', 'NVIDIA H200', 9, 0)");
  exec("INSERT INTO kernels(id, name, source_hash, used_seq) VALUES (1, 'transpose', 'v1', 1)");
  exec("INSERT INTO trials(id, device_id, kernel_id, problem, params, status, time_ms) VALUES "
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
      ASSERT_EQ(sqlite3_exec(db, "UPDATE trials SET times_ms = '[0.25,0.2]', verify_ms = 1.5", nullptr, nullptr, nullptr),
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
      if (c.type == TrialColumn::Type::integer) c.set(t, TrialValue(std::int64_t(7 + i)));
      else if (c.type == TrialColumn::Type::text) c.set(t, TrialValue("k.cu(2): warning: \"quoted\"\nnext line"));
      else c.set(t, TrialValue(0.1 + 1.0 / double(i + 3)));
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
    const double expected = c.type == TrialColumn::Type::integer ? double(std::get<std::int64_t>(v)) : std::get<double>(v);
    EXPECT_EQ(json_number(text, c.name), expected) << text;
  }
}

}  // namespace
}  // namespace tiletune
