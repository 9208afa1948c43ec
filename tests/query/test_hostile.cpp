// Hostile files for the query library (issue 12), from C++ and C: a schema version below 1, a
// foreign or newer WAL file, a FIFO, all refused by their header before SQLite opens them (so no
// -wal or -shm appears); a WAL cache in a directory the reader cannot write answers lookups, and
// one whose commits sit in a -wal without a -shm is refused rather than answered stale; SQLite
// errors come back in one line that names the operation, never the statement.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "query_fixture.hpp"
#include "test_support.hpp"
#include "tiletune/query.hpp"
#include "tiletune/tiletune.h"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;

void sql(const fs::path& path, const std::string& text) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, &err);
  const std::string message = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

QueryError refusal(const fs::path& path) {
  QueryError error;
  EXPECT_FALSE(QueryCache::try_open(path, &error).has_value()) << path;
  EXPECT_EQ(error.message.find('\n'), std::string::npos) << error.message;
  return error;
}

const QueryRequest exact_request{"transpose", QueryDevice{h200_a, "", 0, 0}, {{"N", 8192}}};

TEST(QueryHostile, ASchemaVersionBelowOneIsRefusedUntouched) {
  TempDir dir;
  for (const int version : {-3, 0}) {
    const auto path = write_fixture(dir.path() / ("v" + std::to_string(version + 10) + ".db"), /*wal=*/false);
    sql(path, "PRAGMA user_version = " + std::to_string(version));
    const std::string before = cache_files_digest(path);
    const QueryError e = refusal(path);
    EXPECT_EQ(e.status, QueryStatus::unsupported_schema) << e.message;
    EXPECT_NE(e.message.find("schema version " + std::to_string(version) + ", which no tiletune writes"),
              std::string::npos)
        << e.message;
    EXPECT_EQ(cache_files_digest(path), before);
  }
}

TEST(QueryHostile, ForeignAndNewerWalFilesAreRefusedWithoutSideFiles) {
  TempDir dir;
  const auto foreign = dir.path() / "foreign.db";
  sql(foreign, "PRAGMA journal_mode = WAL; CREATE TABLE t(x); PRAGMA application_id = 7");
  const auto newer = write_fixture(dir.path() / "newer.db");
  sql(newer, "PRAGMA user_version = 99");
  for (const auto& [path, status, why] : {std::tuple{foreign, QueryStatus::not_a_cache, "application_id 0x00000007"},
                                          std::tuple{newer, QueryStatus::unsupported_schema, "schema version 99"}}) {
    const std::string before = cache_files_digest(path);
    ASSERT_FALSE(fs::exists(path.string() + "-wal")) << "closed, so checkpointed";
    const QueryError e = refusal(path);
    EXPECT_EQ(e.status, status) << e.message;
    EXPECT_NE(e.message.find(why), std::string::npos) << e.message;
    EXPECT_EQ(cache_files_digest(path), before);
  }
}

TEST(QueryHostile, AFifoIsRefusedAtOnce) {
  TempDir dir;
  const auto path = dir.path() / "cache.db";
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
  ::alarm(20);  // a reader that blocks on the FIFO ends the test here
  const QueryError e = refusal(path);
  ::alarm(0);
  EXPECT_EQ(e.status, QueryStatus::not_a_cache) << e.message;
  EXPECT_NE(e.message.find("a FIFO, not a regular file"), std::string::npos) << e.message;
}

TEST(QueryHostile, AWalCacheInADirectoryWithoutWriteAccessAnswers) {
  TempDir dir;
  const auto path = write_fixture(dir.path() / "cache.db");  // WAL, closed: no -shm
  const std::string before = cache_files_digest(path);
  const std::string got = run_without_write_access(dir.path(), [&] {
    QueryError error;
    auto cache = QueryCache::try_open(path, &error);
    if (!cache) return "refused: " + error.message;
    const QueryResult r = cache->lookup(exact_request);
    return std::string(match_level_name(r.match)) + " " + r.params_text;
  });
  EXPECT_EQ(got, "exact " + c2);
  EXPECT_EQ(cache_files_digest(path), before);
}

TEST(QueryHostile, CommitsInAWalWithoutItsShmAreAnIoError) {
  TempDir live, copy;
  const auto path = write_fixture(live.path() / "cache.db");
  CacheDb writer = CacheDb::open(path);
  (void)writer.upsert_device(fixture_device(h200_new));  // a commit that stays in the -wal
  fs::copy_file(path, copy.path() / "cache.db");
  fs::copy_file(path.string() + "-wal", copy.path() / "cache.db-wal");
  const auto copied = copy.path() / "cache.db";
  const std::string got = run_without_write_access(copy.path(), [&] {
    QueryError error;
    auto cache = QueryCache::try_open(copied, &error);
    return cache ? std::string("opened") : std::string(query_status_name(error.status)) + ": " + error.message;
  });
  EXPECT_EQ(got.rfind("io_error: " + copied.string() + ": its -wal holds commits", 0), 0u) << got;
}

TEST(QueryHostile, TheCApiGivesARefusedFileItsStatus) {
  TempDir dir;
  const auto negative = write_fixture(dir.path() / "neg.db", false);
  sql(negative, "PRAGMA user_version = -1");
  const auto fifo = dir.path() / "fifo.db";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  tiletune_cache* cache = nullptr;
  EXPECT_EQ(tiletune_open(negative.c_str(), &cache), TILETUNE_UNSUPPORTED_SCHEMA);
  EXPECT_EQ(cache, nullptr);
  EXPECT_NE(std::string(tiletune_last_error()).find("schema version -1"), std::string::npos) << tiletune_last_error();
  EXPECT_EQ(tiletune_open(fifo.c_str(), &cache), TILETUNE_NOT_A_CACHE);
  EXPECT_EQ(cache, nullptr);
}

TEST(QueryHostile, SqliteErrorsNameTheOperationInOneLine) {
  TempDir dir;
  const auto path = write_fixture(dir.path() / "cache.db", false);
  sql(path, "DROP TABLE best");  // hand-edited: the lookup's statement cannot be prepared
  auto cache = QueryCache::open(path);
  const QueryResult r = cache.lookup(exact_request);
  EXPECT_EQ(r.status, QueryStatus::io_error) << r.message;
  EXPECT_EQ(r.message.rfind("SELECT FROM best failed on " + path.string() + ": no such table: best", 0), 0u)
      << r.message;
  EXPECT_EQ(r.message.find("JOIN"), std::string::npos) << r.message;
  EXPECT_EQ(r.message.find('\n'), std::string::npos) << r.message;
}

}  // namespace
}  // namespace tiletune::testing
