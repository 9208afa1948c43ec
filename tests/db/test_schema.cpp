// The cache file itself: creation, application_id and user_version, migration from every earlier
// schema version, and the files we must refuse and leave untouched.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>

#include "db/embedded_sql.hpp"
#include "db_test_util.hpp"
#include "test_support.hpp"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;

// A database at schema version v, built the way a tiletune of that version would have.
void build_at_version(const fs::path& p, int v) { (void)cache_at_version(p, v); }

TEST(Schema, MigrationsAreNumberedAndSchemaIsLatest) {
  auto ms = db_detail::migrations();
  ASSERT_GE(ms.size(), 3u);
  for (std::size_t i = 0; i < ms.size(); ++i) EXPECT_EQ(ms[i].version, static_cast<int>(i + 1));
  EXPECT_EQ(db_detail::latest_schema_version(), ms.back().version);
  EXPECT_EQ(CacheDb::latest_schema_version(), ms.back().version);
}

TEST(Schema, CreatesANewCacheWithIdsAndParentDirectories) {
  TempDir tmp;
  auto path = tmp.path() / "a" / "b" / "tiletune.db";
  {
    auto db = CacheDb::open(path);
    EXPECT_EQ(db.schema_version(), CacheDb::latest_schema_version());
    EXPECT_EQ(db.journal_mode(), "wal");
    EXPECT_TRUE(db.meta("created_by").has_value());
    EXPECT_TRUE(db.meta("created_at").has_value());
  }
  ASSERT_TRUE(fs::exists(path));
  auto conn = raw_connection(path);
  EXPECT_EQ(conn.query_int("PRAGMA application_id"), 0x54545431);
  EXPECT_EQ(conn.query_int("PRAGMA user_version"), CacheDb::latest_schema_version());
  for (const char* table : {"meta", "devices", "kernels", "problems", "trials", "best", "cubins"})
    EXPECT_EQ(
        conn.query_int(std::string("SELECT count(*) FROM sqlite_master WHERE type='table' AND name='") + table + "'"),
        1)
        << table;
  // Opening again changes nothing and keeps the data.
  {
    auto db = CacheDb::open(path);
    EXPECT_EQ(db.schema_version(), CacheDb::latest_schema_version());
  }
}

TEST(Schema, SchemaSqlEqualsAllMigrationsApplied) {
  TempDir tmp;
  { auto db = CacheDb::open(tmp.path() / "fresh.db"); }
  build_at_version(tmp.path() / "migrated.db", CacheDb::latest_schema_version());
  auto fresh = raw_connection(tmp.path() / "fresh.db");
  auto migrated = raw_connection(tmp.path() / "migrated.db");
  std::string a = describe_schema(fresh), b = describe_schema(migrated);
  EXPECT_NE(a.find("table cubins"), std::string::npos);
  EXPECT_EQ(a, b);
}

TEST(Schema, MigratesFromEveryEarlierVersionKeepingData) {
  const int latest = CacheDb::latest_schema_version();
  for (int v = 1; v < latest; ++v) {
    SCOPED_TRACE("from schema version " + std::to_string(v));
    TempDir tmp;
    auto path = tmp.path() / "old.db";
    build_at_version(path, v);
    {
      // Rows as a version-1 tiletune wrote them (only version-1 columns).
      auto conn = raw_connection(path);
      conn.exec(
          "INSERT INTO devices(id, uuid, name, cc_major, cc_minor) VALUES (1, 'GPU-old', 'Old GPU', 8, 0);"
          "INSERT INTO kernels(id, name, source_hash, options, nvrtc_version, used_seq) "
          "  VALUES (1, 'transpose', 'h1', '', '12.0', 1);"
          "INSERT INTO trials(id, device_id, kernel_id, problem, params, status, time_ms) "
          "  VALUES (1, 1, 1, 'N=1024', 'TILE=32', 'ok', 0.5);"
          "INSERT INTO trials(id, device_id, kernel_id, problem, params, status, detail) "
          "  VALUES (2, 1, 1, 'N=1024', 'TILE=64', 'compile_failed', 'too much smem');"
          "INSERT INTO best(device_id, kernel_id, problem, trial_id, time_ms) VALUES (1, 1, 'N=1024', 1, 0.5);");
    }
    {
      // An old cache opened read-only is read as it is, without the newer columns.
      auto ro = CacheDb::open(path, CacheDb::Mode::read_only);
      EXPECT_EQ(ro.schema_version(), v);
      auto best = ro.best();
      ASSERT_EQ(best.size(), 1u);
      EXPECT_EQ(best[0].trial.key.params, "TILE=32");
      EXPECT_FALSE(best[0].device.device.copy_gbps.has_value());
      EXPECT_FALSE(ro.get_cubin("k").has_value());
      EXPECT_EQ(ro.trials().size(), 2u);
    }
    auto db = CacheDb::open(path);
    EXPECT_EQ(db.schema_version(), latest);
    EXPECT_TRUE(db.meta("upgraded").has_value());
    auto trials = db.trials();
    ASSERT_EQ(trials.size(), 2u);
    EXPECT_EQ(trials[0].trial.key.params, "TILE=32");
    EXPECT_TRUE(trials[0].is_best);
    EXPECT_EQ(trials[1].trial.status, TrialStatus::compile_failed);
    EXPECT_EQ(trials[1].trial.detail, "too much smem");
    auto best = db.best_for(KernelRecord{"transpose", "h1", "", "12.0"}, "GPU-old", "N=1024");
    ASSERT_TRUE(best.has_value());
    EXPECT_DOUBLE_EQ(*best->trial.time_ms, 0.5);
    // The new parts work: copy bandwidth on devices, cubins.
    auto d = sample_device("GPU-old", "Old GPU");
    d.copy_gbps = 1500.0;
    EXPECT_EQ(db.upsert_device(d), 1);
    EXPECT_DOUBLE_EQ(*db.device("GPU-old")->device.copy_gbps, 1500.0);
    db.put_cubin(CubinRecord{"k", "sm_80",
                             std::string("\x7f"
                                         "ELF\0\1",
                                         6),
                             "transpose"});
    EXPECT_TRUE(db.get_cubin("k").has_value());
    // And the migrated file has exactly the schema of a new one.
    TempDir fresh_dir;
    { auto fresh = CacheDb::open(fresh_dir.path() / "fresh.db"); }
    auto a = raw_connection(path);
    auto b = raw_connection(fresh_dir.path() / "fresh.db");
    EXPECT_EQ(a.query_int("PRAGMA user_version"), latest);
    EXPECT_EQ(describe_schema(a), describe_schema(b));
  }
}

TEST(Schema, EmptyFileIsInitialized) {
  TempDir tmp;
  auto path = tmp.write("empty.db", "");
  auto db = CacheDb::open(path);
  EXPECT_EQ(db.schema_version(), CacheDb::latest_schema_version());
  auto conn = raw_connection(path);
  EXPECT_EQ(conn.query_int("PRAGMA application_id"), cache_application_id);
}

void expect_refused_untouched(const fs::path& path, const std::string& why) {
  auto before = fingerprint(path);
  for (auto mode : {CacheDb::Mode::read_write, CacheDb::Mode::read_only}) {
    std::string err = open_error(path, mode);
    EXPECT_NE(err.find(path.string() + " is not a tiletune cache"), std::string::npos) << err;
    EXPECT_NE(err.find("refusing to touch it"), std::string::npos) << err;
    EXPECT_NE(err.find(why), std::string::npos) << err;
    EXPECT_EQ(fingerprint(path), before) << "the refused file (or its directory) changed";
  }
}

TEST(Schema, RefusesRandomBytesAndLeavesThemUntouched) {
  TempDir tmp;
  std::mt19937_64 rng(42);
  std::string bytes(8192, '\0');
  for (auto& c : bytes) c = static_cast<char>(rng());
  expect_refused_untouched(tmp.write("random.db", bytes), "not an SQLite database");
}

TEST(Schema, RefusesAShortTextFile) {
  TempDir tmp;
  expect_refused_untouched(tmp.write("notes.txt", "hello\n"), "not an SQLite database");
}

TEST(Schema, RefusesAnSqliteHeaderFollowedByGarbage) {
  // Our own header check passes; SQLite itself then says SQLITE_NOTADB.
  TempDir tmp;
  std::string bytes("SQLite format 3\0", 16);
  bytes += std::string(4096 - 16, '\xAB');
  expect_refused_untouched(tmp.write("corrupt.db", bytes), "not an SQLite database");
}

TEST(Schema, RefusesAnotherProgramsSqliteDatabase) {
  TempDir tmp;
  auto path = tmp.path() / "other.db";
  {
    auto conn = raw_connection(path);
    conn.exec(
        "CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT);"
        "INSERT INTO customers(name) VALUES ('ada'), ('grace');");
  }
  expect_refused_untouched(path, "application_id 0x00000000");
  auto conn = raw_connection(path);
  EXPECT_EQ(conn.query_int("SELECT count(*) FROM customers"), 2);
}

TEST(Schema, RefusesAForeignApplicationIdEvenWithoutTables) {
  TempDir tmp;
  auto path = tmp.path() / "other.db";
  { raw_connection(path).exec("PRAGMA application_id = 305419896"); }  // 0x12345678
  expect_refused_untouched(path, "application_id 0x12345678");
}

TEST(Schema, RefusesACacheFromANewerTiletune) {
  TempDir tmp;
  auto path = tmp.path() / "new.db";
  { auto db = CacheDb::open(path); }
  {
    auto conn = raw_connection(path);
    conn.exec("PRAGMA user_version = " + std::to_string(CacheDb::latest_schema_version() + 1));
    conn.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  auto before = fingerprint(path);
  for (auto mode : {CacheDb::Mode::read_write, CacheDb::Mode::read_only}) {
    std::string err = open_error(path, mode);
    EXPECT_NE(err.find("written by a newer tiletune"), std::string::npos) << err;
    EXPECT_NE(err.find("schema version " + std::to_string(CacheDb::latest_schema_version() + 1)), std::string::npos)
        << err;
  }
  auto after = fingerprint(path);
  EXPECT_EQ(after.hash, before.hash);
  EXPECT_EQ(after.size, before.size);
}

TEST(Schema, ReadOnlyOpenOfAMissingFileIsAClearError) {
  TempDir tmp;
  auto path = tmp.path() / "nowhere" / "missing.db";
  std::string err = open_error(path, CacheDb::Mode::read_only);
  EXPECT_NE(err.find(path.string()), std::string::npos) << err;
  EXPECT_NE(err.find("no tiletune cache there"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(path.parent_path()));
}

TEST(Schema, ReadOnlyOpenOfAnEmptyFileIsAClearError) {
  TempDir tmp;
  auto path = tmp.write("empty.db", "");
  std::string err = open_error(path, CacheDb::Mode::read_only);
  EXPECT_NE(err.find("is empty, not a tiletune cache yet"), std::string::npos) << err;
  EXPECT_EQ(fs::file_size(path), 0u);
}

TEST(Schema, RefusesADirectory) {
  TempDir tmp;
  std::string err = open_error(tmp.path(), CacheDb::Mode::read_write);
  EXPECT_NE(err.find("is not a tiletune cache (a directory)"), std::string::npos) << err;
}

// Sets or unsets an environment variable for one scope.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~EnvVar() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(Schema, DefaultCachePath) {
  EnvVar home("HOME", "/home/someone");
  {
    EnvVar db("TILETUNE_DB", "/data/my.db");
    EnvVar xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(default_cache_path(), fs::path("/data/my.db"));
  }
  {
    EnvVar db("TILETUNE_DB", nullptr);
    EnvVar xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(default_cache_path(), fs::path("/xdg/tiletune/tiletune.db"));
  }
  {
    EnvVar db("TILETUNE_DB", "");
    EnvVar xdg("XDG_CACHE_HOME", nullptr);
    EXPECT_EQ(default_cache_path(), fs::path("/home/someone/.cache/tiletune/tiletune.db"));
  }
  {
    EnvVar db("TILETUNE_DB", nullptr);
    EnvVar xdg("XDG_CACHE_HOME", "relative/ignored");
    EXPECT_EQ(default_cache_path(), fs::path("/home/someone/.cache/tiletune/tiletune.db"));
  }
}

}  // namespace
}  // namespace tiletune::testing
