// The query library and the engine share one declaration of a cache's identity, its schema range
// and its trial columns (tiletune/trial_record.hpp): the library reads exactly the versions the
// engine's migrations reach (the newest, not one more), and tiletune_trials_json carries every
// column of the table with its exact value.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>

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
  tiletune_cache* cache = nullptr;
  ASSERT_EQ(tiletune_open(path.c_str(), &cache), TILETUNE_OK) << tiletune_last_error();
  char* json = nullptr;
  ASSERT_EQ(tiletune_trials_json(cache, nullptr, nullptr, nullptr, 1, &json), TILETUNE_OK) << tiletune_last_error();
  const std::string text = json;
  tiletune_string_free(json);
  tiletune_close(cache);
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
