// The files a QueryCache opens: a cache written by an older schema (only db/migrations/001
// applied, rows inserted by hand) still answers; a cache of a newer schema, a foreign SQLite
// file, a text file, an empty file and a missing one are refused with their own status; and
// nothing is ever written (the bytes and the side files stay as they were).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <sstream>

#include "query_fixture.hpp"
#include "test_support.hpp"
#include "tiletune/query.hpp"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;

void exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  std::string message = err ? err : "";
  sqlite3_free(err);
  ASSERT_EQ(rc, SQLITE_OK) << message << "\n  SQL: " << sql;
}

// Everything in the directory with its size and contents, to show nothing changed.
std::string snapshot(const fs::path& dir) {
  std::ostringstream out;
  for (const auto& e : fs::directory_iterator(dir))
    out << e.path().filename().string() << ':' << read_file(e.path()) << '\n';
  return out.str();
}

// A cache as tiletune 0.1 with schema version 1 wrote it: migration 001 only, no cubins table, no
// devices.copy_gbps, rollback journal.
fs::path write_v1_cache(const fs::path& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr), SQLITE_OK);
  exec(db, read_file(source_dir() / "db" / "migrations" / "001_initial.sql"));
  exec(db, "PRAGMA application_id = 1414812721");  // 0x54545431
  exec(db, "PRAGMA user_version = 1");
  exec(db,
       "INSERT INTO devices(id, uuid, name, cc_major, cc_minor) VALUES "
       "(1, '" +
           h200_a + "', 'NVIDIA H200', 9, 0), (2, '" + a100 + "', 'NVIDIA A100-SXM4-80GB', 8, 0)");
  // Two versions of transpose: id 2 was tuned last (used_seq 7) and is current.
  exec(db,
       "INSERT INTO kernels(id, name, source_hash, used_seq) VALUES (1, 'transpose', 'v0', 3), "
       "(2, 'transpose', 'v1', 7)");
  exec(db,
       "INSERT INTO trials(id, device_id, kernel_id, problem, params, status, time_ms) VALUES "
       "(1, 1, 2, 'N=4096', 'TILE=32;PAD=1', 'ok', 0.2),"
       "(2, 1, 2, 'N=4096', 'TILE=16;PAD=1', 'ok', 0.3),"
       "(3, 1, 2, 'N=4096', 'TILE=8;PAD=1', 'timeout', 0.01),"
       "(4, 2, 2, 'N=4096', 'TILE=16;PAD=1', 'ok', 0.5),"
       "(5, 2, 2, 'N=4096', 'TILE=32;PAD=1', 'ok', 0.6),"
       "(6, 1, 1, 'N=4096', 'TILE=99;PAD=0', 'ok', 0.001)");
  exec(db,
       "INSERT INTO best(device_id, kernel_id, problem, trial_id, time_ms) VALUES "
       "(1, 2, 'N=4096', 1, 0.2), (2, 2, 'N=4096', 4, 0.5), (1, 1, 'N=4096', 6, 0.001)");
  sqlite3_close(db);
  return path;
}

TEST(QueryFiles, CacheOfSchemaVersion1StillAnswers) {
  TempDir dir;
  auto path = write_v1_cache(dir.path() / "v1.db");
  std::string before = snapshot(dir.path());
  {
    auto cache = QueryCache::open(path);
    EXPECT_EQ(cache.schema_version(), 1);
    auto exact = cache.lookup({"transpose", QueryDevice{h200_a, "", 0, 0}, {{"N", 4096}}});
    ASSERT_TRUE(exact.ok()) << exact.message;
    EXPECT_EQ(exact.match, MatchLevel::exact);
    EXPECT_EQ(exact.params_text, "TILE=32;PAD=1");
    auto nearest = cache.lookup({"transpose", QueryDevice{h200_a, "", 0, 0}, {{"N", 1000}}});
    EXPECT_EQ(nearest.match, MatchLevel::nearest_problem);
    auto arch = cache.lookup({"transpose", QueryDevice::parse("sm_80"), {{"N", 4096}}});
    EXPECT_EQ(arch.match, MatchLevel::same_architecture);
    EXPECT_EQ(arch.params_text, "TILE=16;PAD=1");
    // Portable: TILE=32 (relative 1 and 1.2: mean 1.1) beats TILE=16 (1.5 and 1: 1.25).
    auto portable = cache.lookup({"transpose", QueryDevice::parse("sm_75"), {{"N", 4096}}});
    EXPECT_EQ(portable.match, MatchLevel::portable_default);
    EXPECT_EQ(portable.params_text, "TILE=32;PAD=1");
    EXPECT_NEAR(portable.relative_time, 1.1, 1e-12);
  }
  EXPECT_EQ(snapshot(dir.path()), before) << "a read-only lookup changed the directory";
}

TEST(QueryFiles, LatestSchemaIsRead) {
  TempDir dir;
  auto path = write_fixture(dir.path() / "cache.db");
  auto cache = QueryCache::open(path);
  EXPECT_EQ(cache.schema_version(), CacheDb::latest_schema_version())
      << "a new migration: check query.cpp's statements against it and raise newest_schema";
}

QueryError refusal(const fs::path& path) {
  QueryError error;
  auto cache = QueryCache::try_open(path, &error);
  EXPECT_FALSE(cache.has_value());
  return error;
}

TEST(QueryFiles, ForeignAndBrokenFilesAreRefusedUntouched) {
  TempDir dir;
  {
    auto path = dir.write("notes.txt", "these are not the droids you are looking for\n");
    std::string before = snapshot(dir.path());
    auto e = refusal(path);
    EXPECT_EQ(e.status, QueryStatus::not_a_cache) << e.message;
    EXPECT_NE(e.message.find("not a tiletune cache"), std::string::npos) << e.message;
    EXPECT_EQ(snapshot(dir.path()), before);
  }
  {
    auto path = dir.path() / "other.db";
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    exec(db, "CREATE TABLE t(x); PRAGMA application_id = 42; PRAGMA user_version = 3");
    sqlite3_close(db);
    std::string before = snapshot(dir.path());
    auto e = refusal(path);
    EXPECT_EQ(e.status, QueryStatus::not_a_cache) << e.message;
    EXPECT_NE(e.message.find("0x0000002a"), std::string::npos) << e.message;
    EXPECT_EQ(snapshot(dir.path()), before);
  }
  {
    auto path = write_fixture(dir.path() / "newer.db", /*wal=*/false);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    exec(db, "PRAGMA user_version = 99");
    sqlite3_close(db);
    auto e = refusal(path);
    EXPECT_EQ(e.status, QueryStatus::unsupported_schema) << e.message;
    EXPECT_NE(e.message.find("newer"), std::string::npos) << e.message;
  }
  {
    auto path = dir.write("empty.db", "");
    auto e = refusal(path);
    EXPECT_EQ(e.status, QueryStatus::unsupported_schema) << e.message;
    EXPECT_EQ(fs::file_size(path), 0U);
  }
  {
    auto e = refusal(dir.path() / "missing.db");
    EXPECT_EQ(e.status, QueryStatus::io_error) << e.message;
    EXPECT_FALSE(fs::exists(dir.path() / "missing.db"));
  }
  {
    auto e = refusal(dir.path());
    EXPECT_EQ(e.status, QueryStatus::not_a_cache) << e.message;
  }
  EXPECT_THROW((void)QueryCache::open(dir.path() / "missing.db"), std::runtime_error);
}

TEST(QueryFiles, DefaultPathIsTheEngines) {
  struct Env {
    const char* name;
    std::optional<std::string> saved;
    explicit Env(const char* n) : name(n) {
      if (const char* v = std::getenv(n)) saved = v;
    }
    ~Env() {
      if (saved)
        ::setenv(name, saved->c_str(), 1);
      else
        ::unsetenv(name);
    }
  } db("TILETUNE_DB"), xdg("XDG_CACHE_HOME"), home("HOME");
  ::setenv("TILETUNE_DB", "/x/y.db", 1);
  EXPECT_EQ(QueryCache::default_path(), fs::path("/x/y.db"));
  EXPECT_EQ(QueryCache::default_path(), default_cache_path());
  ::unsetenv("TILETUNE_DB");
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(QueryCache::default_path(), fs::path("/xdg/tiletune/tiletune.db"));
  EXPECT_EQ(QueryCache::default_path(), default_cache_path());
  ::setenv("XDG_CACHE_HOME", "relative", 1);  // ignored, as the XDG spec says
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(QueryCache::default_path(), fs::path("/home/u/.cache/tiletune/tiletune.db"));
  EXPECT_EQ(QueryCache::default_path(), default_cache_path());
  ::unsetenv("XDG_CACHE_HOME");
  ::unsetenv("HOME");
  EXPECT_TRUE(QueryCache::default_path().empty());
}

}  // namespace
}  // namespace tiletune::testing
