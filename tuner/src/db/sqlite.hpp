// Small RAII wrappers over the SQLite C API for the db stage: a Connection owns the sqlite3
// handle and a per-connection cache of prepared statements; a Statement owns one sqlite3_stmt;
// a Transaction is a BEGIN IMMEDIATE (a SAVEPOINT inside another one) that rolls back unless
// committed. Every call is checked and a failure throws DbError whose message names the operation
// (a few words of the SQL, never all of it) and the database file. Private to the stage.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tiletune/cache_db.hpp"

namespace tiletune::db_detail {

/// Throws DbError for a failed call on db (reason from sqlite3_errmsg when db is given): one line,
/// "OPERATION (CALL) failed on FILE: REASON (SQLite code N)"; the SQL is kept in DbError::sql().
[[noreturn]] void throw_sqlite(sqlite3* db, int rc, std::string_view call, std::string_view sql,
                               const std::filesystem::path& path);

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql, const std::filesystem::path& path, bool persistent);
  Statement(Statement&&) noexcept = default;
  Statement& operator=(Statement&&) noexcept = default;

  // Parameters are 1-based, as in sqlite3_bind_*; a nullopt binds NULL.
  void bind(int index, std::int64_t value);
  void bind(int index, int value) { bind(index, static_cast<std::int64_t>(value)); }
  void bind(int index, double value);
  void bind(int index, std::string_view text);
  void bind_blob(int index, std::string_view bytes);
  void bind_null(int index);
  template <class T>
  void bind(int index, const std::optional<T>& value) {
    if (value)
      bind(index, *value);
    else
      bind_null(index);
  }

  /// True when a row is ready, false when done; any other result throws.
  [[nodiscard]] bool step();
  /// Steps a statement that returns no rows.
  void run();

  // Columns are 0-based, as in sqlite3_column_*.
  [[nodiscard]] bool is_null(int column) const;
  [[nodiscard]] std::int64_t int64(int column) const;
  [[nodiscard]] double real(int column) const;
  [[nodiscard]] std::string text(int column) const;
  [[nodiscard]] std::string blob(int column) const;
  [[nodiscard]] std::optional<std::int64_t> opt_int64(int column) const;
  [[nodiscard]] std::optional<double> opt_real(int column) const;

  /// Ends the statement (releasing its read snapshot) and clears its bindings.
  void reset() noexcept;
  [[nodiscard]] std::string_view sql() const noexcept { return sql_; }

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const noexcept { sqlite3_finalize(s); }
  };
  void check_bind(int rc, int index);

  sqlite3* db_;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  std::string sql_;
  std::filesystem::path path_;
};

/// A cached statement in use: resets it when it goes out of scope, so no cached statement keeps a
/// read snapshot open (which would make a later BEGIN IMMEDIATE fail with SQLITE_BUSY_SNAPSHOT).
class StatementUse {
 public:
  explicit StatementUse(Statement& s) noexcept : s_(&s) {}
  ~StatementUse() { s_->reset(); }
  StatementUse(const StatementUse&) = delete;
  StatementUse& operator=(const StatementUse&) = delete;
  Statement* operator->() const noexcept { return s_; }
  Statement& operator*() const noexcept { return *s_; }

 private:
  Statement* s_;
};

class Connection {
 public:
  /// sqlite3_open_v2 with flags, of uri (SQLITE_OPEN_URI) when one is given, else of path; the
  /// handle is closed again if opening fails. Messages name path.
  Connection(const std::filesystem::path& path, int flags, const std::string& uri = {});
  Connection(Connection&&) noexcept = default;
  Connection& operator=(Connection&&) noexcept = default;
  ~Connection();

  [[nodiscard]] sqlite3* get() const noexcept { return db_.get(); }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

  /// Runs every statement of a script, one at a time, so an error names the statement.
  /// origin names where the script came from (e.g. "db/migrations/002_cubins.sql").
  void exec(std::string_view script, std::string_view origin = {});
  /// The prepared statement for sql, prepared on first use and kept for this connection.
  [[nodiscard]] StatementUse cached(std::string_view sql);
  /// Runs a statement that yields one integer (e.g. PRAGMA user_version).
  [[nodiscard]] std::int64_t query_int(std::string_view sql);
  /// Runs a statement that yields one text value (e.g. PRAGMA journal_mode).
  [[nodiscard]] std::string query_text(std::string_view sql);

 private:
  struct Closer {
    void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
  };
  std::unique_ptr<sqlite3, Closer> db_;
  std::filesystem::path path_;
  // Declared after db_ so the statements are finalized before the connection closes.
  std::unordered_map<std::string, std::unique_ptr<Statement>> statements_;
};

/// BEGIN IMMEDIATE: takes the write lock up front (waiting up to busy_timeout), so a writer
/// never has to upgrade a read snapshot, the case SQLite answers with SQLITE_BUSY at once. Inside
/// an open transaction (a CacheDb::Batch) it is a SAVEPOINT of it instead.
class Transaction {
 public:
  explicit Transaction(Connection& conn);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Connection* conn_;
  bool nested_;
  bool open_ = true;
};

}  // namespace tiletune::db_detail
