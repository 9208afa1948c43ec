// Hostile files and failed writes (issue 12): what CacheDb refuses is refused before SQLite opens
// it, so the file and its -wal/-shm/-journal keep their exact bytes (SHA-256 before and after); a
// WAL cache in a directory the reader cannot write is still read; a merge that fails leaves its
// target as it was; a failed migration rolls back and says which migration in one line.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "db/embedded_sql.hpp"
#include "cache_builder.hpp"
#include "db_test_util.hpp"
#include "common/cache_file.hpp"
#include "test_support.hpp"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;

// A tiletune cache with one ok trial, closed (so its -wal and -shm are gone), in WAL mode unless
// wal is false.
fs::path cache_with_one_trial(const fs::path& path, bool wal = true, const std::string& uuid = "GPU-aaaa") {
  return CacheBuilder()
      .wal(wal)
      .device(sample_device(uuid))
      .kernel(sample_kernel())
      .trial(ok_trial(0, 0, "N=1024", "TILE=32", 1.5))
      .build(path);
}

// Sets a header field of a closed file through a raw connection in the rollback journal.
fs::path with_pragma(const fs::path& path, const std::string& pragma) {
  auto conn = raw_connection(path);
  conn.exec("PRAGMA journal_mode = DELETE");
  conn.exec(pragma);
  return path;
}

void expect_refused_untouched(const fs::path& path, const std::string& why) {
  const std::string before = cache_files_digest(path);
  for (auto mode : {CacheDb::Mode::read_write, CacheDb::Mode::read_only}) {
    const std::string err = open_error(path, mode);
    EXPECT_NE(err.find(path.string()), std::string::npos) << err;
    EXPECT_NE(err.find(why), std::string::npos) << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
    EXPECT_EQ(cache_files_digest(path), before) << "the refused file or a side file changed";
  }
}

TEST(Integrity, ANegativeSchemaVersionIsRefusedUntouched) {
  TempDir tmp;
  const auto path = with_pragma(cache_with_one_trial(tmp.path() / "neg.db"), "PRAGMA user_version = -3");
  expect_refused_untouched(path, "schema version -3, which no tiletune writes");
}

TEST(Integrity, SchemaVersionZeroWithOurIdIsRefusedUntouched) {
  TempDir tmp;
  const auto path = with_pragma(cache_with_one_trial(tmp.path() / "zero.db"), "PRAGMA user_version = 0");
  expect_refused_untouched(path, "schema version 0");
}

TEST(Integrity, AForeignIdInAWalFileIsRefusedWithoutCreatingSideFiles) {
  TempDir tmp;
  const auto path = tmp.path() / "foreign.db";
  {
    auto conn = raw_connection(path);
    conn.exec("PRAGMA journal_mode = WAL");
    conn.exec("CREATE TABLE t(x); PRAGMA application_id = 42");
  }
  ASSERT_FALSE(fs::exists(path.string() + "-wal"));  // closed cleanly: checkpointed, side files gone
  expect_refused_untouched(path, "application_id 0x0000002a");
}

TEST(Integrity, ANewerSchemaInAWalFileIsRefusedWithoutCreatingSideFiles) {
  TempDir tmp;
  const auto path = cache_with_one_trial(tmp.path() / "newer.db");
  {
    auto conn = raw_connection(path);
    conn.exec("PRAGMA user_version = " + std::to_string(CacheDb::latest_schema_version() + 7));
  }
  expect_refused_untouched(path, "written by a newer tiletune");
}

TEST(Integrity, AFifoIsRefusedWithoutBlocking) {
  TempDir tmp;
  const auto path = tmp.path() / "fifo.db";
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
  ::alarm(20);  // a reader that blocks on the FIFO ends the test here
  expect_refused_untouched(path, "a FIFO, not a regular file");
  ::alarm(0);
}

TEST(Integrity, ADeviceIsRefused) {
  for (auto mode : {CacheDb::Mode::read_write, CacheDb::Mode::read_only}) {
    const std::string err = open_error("/dev/null", mode);
    EXPECT_NE(err.find("/dev/null is not a tiletune cache (a device, not a regular file)"), std::string::npos) << err;
  }
}

TEST(Integrity, AWalCacheInADirectoryWithoutWriteAccessIsRead) {
  TempDir tmp;
  const auto path = cache_with_one_trial(tmp.path() / "cache.db");
  {
    // The file is in WAL mode (what a sweep leaves), with no -shm beside it.
    std::ifstream in(path, std::ios::binary);
    char head[20];
    in.read(head, 20);
    ASSERT_EQ(head[18], 2);
  }
  const std::string before = cache_files_digest(path);
  const std::string got = run_without_write_access(tmp.path(), [&] {
    auto db = CacheDb::open(path, CacheDb::Mode::read_only);
    return std::to_string(db.trials().size()) + " trials, best " + db.best().at(0).trial.key.params;
  });
  EXPECT_EQ(got, "1 trials, best TILE=32");
  EXPECT_EQ(cache_files_digest(path), before);
}

TEST(Integrity, AReaderWithoutWriteAccessSeesALiveWritersCommits) {
  TempDir tmp;
  const auto path = cache_with_one_trial(tmp.path() / "cache.db");
  CacheDb writer = CacheDb::open(path);  // keeps the -shm; its next commit stays in the -wal
  const auto d = writer.upsert_device(sample_device("GPU-aaaa"));
  const auto k = writer.upsert_kernel(sample_kernel());
  (void)writer.record_trial(ok_trial(d, k, "N=1024", "TILE=64", 0.5));
  ASSERT_TRUE(fs::exists(path.string() + "-shm"));
  const std::string got = run_without_write_access(tmp.path(), [&] {
    auto db = CacheDb::open(path, CacheDb::Mode::read_only);
    return std::to_string(db.trials().size()) + " trials, best " + db.best().at(0).trial.key.params;
  });
  EXPECT_EQ(got, "2 trials, best TILE=64");
}

TEST(Integrity, CommitsInAWalWithoutItsShmAreRefusedNotServedStale) {
  TempDir live, copy;
  const auto path = cache_with_one_trial(live.path() / "cache.db");
  CacheDb writer = CacheDb::open(path);
  const auto d = writer.upsert_device(sample_device("GPU-aaaa"));
  const auto k = writer.upsert_kernel(sample_kernel());
  (void)writer.record_trial(ok_trial(d, k, "N=1024", "TILE=64", 0.5));
  // A copy of the file and its -wal without the -shm, as a careless backup makes it.
  fs::copy_file(path, copy.path() / "cache.db");
  fs::copy_file(path.string() + "-wal", copy.path() / "cache.db-wal");
  ASSERT_GT(fs::file_size(copy.path() / "cache.db-wal"), 0u);
  const auto copied = copy.path() / "cache.db";
  const std::string before = cache_files_digest(copied);
  const std::string got =
      run_without_write_access(copy.path(), [&] { return open_error(copied, CacheDb::Mode::read_only); });
  EXPECT_NE(got.find("its -wal holds commits not yet in the file"), std::string::npos) << got;
  EXPECT_EQ(cache_files_digest(copied), before);
}

TEST(Integrity, ABatchStoresAllOfItsWritesOrNone) {
  TempDir tmp;
  CacheDb db = CacheDb::open(tmp.path() / "cache.db");
  const auto d = db.upsert_device(sample_device());
  const auto k = db.upsert_kernel(sample_kernel());
  try {
    CacheDb::Batch batch = db.batch();
    (void)db.record_trial(ok_trial(d, k, "N=1", "T=1", 1.0));
    (void)db.upsert_kernel(sample_kernel("newer"));
    throw std::runtime_error("a failure before commit");
  } catch (const std::runtime_error&) {}
  EXPECT_TRUE(db.trials().empty());
  EXPECT_EQ(db.best().size(), 0u);
  EXPECT_FALSE(db.find_kernel(sample_kernel("newer")).has_value()) << "used_seq was committed";
  {
    CacheDb::Batch batch = db.batch();
    (void)db.record_trial(ok_trial(d, k, "N=1", "T=1", 1.0));
    (void)db.record_trial(ok_trial(d, k, "N=1", "T=2", 0.5));
    batch.commit();
  }
  EXPECT_EQ(db.trials().size(), 2u);
  EXPECT_EQ(db.best().at(0).trial.key.params, "T=2");
}

// The target in both journal modes and a bad source: nothing of the target may change, not even
// its journal mode (the switch to WAL writes the header).
TEST(Integrity, AMergeWithABadSourceLeavesTheTargetByteForByte) {
  for (const bool wal : {false, true}) {
    SCOPED_TRACE(wal ? "WAL target" : "rollback-journal target");
    TempDir tmp;
    const auto target = cache_with_one_trial(tmp.path() / "all.db", wal, "GPU-target");
    const auto good = cache_with_one_trial(tmp.path() / "good.db", true, "GPU-good");
    const auto bad = with_pragma(cache_with_one_trial(tmp.path() / "bad.db"), "PRAGMA user_version = -1");
    const std::string before = cache_files_digest(target);
    try {
      (void)merge_cache_files(target, {good, bad});
      ADD_FAILURE() << "merged a source with schema version -1";
    } catch (const DbError& e) { EXPECT_NE(std::string(e.what()).find(bad.string()), std::string::npos) << e.what(); }
    EXPECT_EQ(cache_files_digest(target), before);
    EXPECT_EQ(CacheDb::open(target, CacheDb::Mode::read_only).devices().size(), 1u);
  }
}

TEST(Integrity, AMergeIntoANewTargetThatFailsLeavesNoFile) {
  TempDir tmp;
  const auto good = cache_with_one_trial(tmp.path() / "good.db");
  const auto foreign = tmp.write("notes.txt", "not a database, only words, long enough to be read as such");
  EXPECT_THROW((void)merge_cache_files(tmp.path() / "new.db", {good, foreign}), DbError);
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    EXPECT_FALSE(fs::exists(tmp.path() / ("new.db" + std::string(suffix)))) << suffix;
}

TEST(Integrity, AMergeChecksEverySourceRowBeforeWriting) {
  TempDir tmp;
  const auto target = cache_with_one_trial(tmp.path() / "all.db", true, "GPU-target");
  const auto source = cache_with_one_trial(tmp.path() / "src.db", false, "GPU-src");
  {
    // Hand-edited: a device without a UUID, which upsert_device refuses mid-merge.
    auto conn = raw_connection(source);
    conn.exec("INSERT INTO devices(uuid, name, cc_major, cc_minor) VALUES ('', 'Nameless', 9, 0)");
  }
  const std::string before = cache_files_digest(target);
  try {
    (void)merge_cache_files(target, {source});
    ADD_FAILURE() << "merged a device without a UUID";
  } catch (const DbError& e) {
    EXPECT_NE(std::string(e.what()).find("has no UUID; nothing was merged"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cache_files_digest(target), before);
}

TEST(Integrity, AMergeRefusesTheTargetUnderAnotherName) {
  TempDir tmp;
  const auto target = cache_with_one_trial(tmp.path() / "all.db");
  fs::create_hard_link(target, tmp.path() / "hard.db");
  fs::create_symlink(target, tmp.path() / "soft.db");
  fs::create_directories(tmp.path() / "sub");
  const std::string before = cache_files_digest(target);
  for (const fs::path& alias : {tmp.path() / "hard.db", tmp.path() / "soft.db", tmp.path() / "sub" / ".." / "all.db"}) {
    SCOPED_TRACE(alias.string());
    EXPECT_TRUE(same_file(target, alias));
    try {
      (void)merge_cache_files(target, {alias});
      ADD_FAILURE() << "merged a file into itself";
    } catch (const DbError& e) {
      EXPECT_NE(std::string(e.what()).find("(the same file)"), std::string::npos) << e.what();
    }
    EXPECT_EQ(cache_files_digest(target), before);
  }
  CacheDb into = CacheDb::open(target);
  const CacheDb from = CacheDb::open(tmp.path() / "hard.db", CacheDb::Mode::read_only);
  EXPECT_THROW((void)merge_cache(into, from), DbError);
  EXPECT_FALSE(same_file(target, tmp.path() / "missing.db"));
}

TEST(Integrity, AFailedMigrationNamesItsFileInOneLineAndRollsBack) {
  TempDir tmp;
  const auto path = tmp.path() / "v1.db";
  {
    auto conn = raw_connection(path);
    conn.exec(db_detail::migrations()[0].sql, "001");
    conn.exec("PRAGMA application_id = " + std::to_string(cache_application_id));
    conn.exec("PRAGMA user_version = 1");
    conn.exec("CREATE TABLE cubins(x)");  // what migration 002 creates: it must fail
  }
  const std::string before = cache_files_digest(path);
  const std::string err = open_error(path, CacheDb::Mode::read_write);
  EXPECT_NE(
      err.find("CREATE TABLE cubins (sqlite3_prepare_v2 in db/migrations/002_cubins.sql) failed on " + path.string()),
      std::string::npos)
      << err;
  EXPECT_NE(err.find("already exists"), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  EXPECT_EQ(err.find("--"), std::string::npos) << "a migration's comments in: " << err;
  EXPECT_EQ(err.find("PRIMARY KEY"), std::string::npos) << "the statement's text in: " << err;
  EXPECT_EQ(cache_files_digest(path), before);
}

TEST(Integrity, SqlOperationsAreAFewWordsOfTheStatement) {
  EXPECT_EQ(cache_file::sql_operation("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)"), "INSERT INTO meta");
  EXPECT_EQ(cache_file::sql_operation("  -- a comment\n/* another */ select a, b from trials t join x"),
            "SELECT FROM trials");
  EXPECT_EQ(cache_file::sql_operation("SELECT (SELECT application_id FROM pragma_application_id)"),
            "SELECT FROM pragma_application_id");
  EXPECT_EQ(cache_file::sql_operation("CREATE INDEX IF NOT EXISTS trials_kernel ON trials(k)"),
            "CREATE INDEX trials_kernel");
  EXPECT_EQ(cache_file::sql_operation("PRAGMA journal_mode = WAL"), "PRAGMA journal_mode");
  EXPECT_EQ(cache_file::sql_operation("DELETE FROM best WHERE 'FROM x' = 1"), "DELETE FROM best");
  EXPECT_EQ(cache_file::sql_operation("-- only a comment"), "an SQL statement");
}

}  // namespace
}  // namespace tiletune::testing
