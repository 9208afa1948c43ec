// Private to the query library: minimal RAII over the SQLite C API for a read-only connection
// (the db stage's wrappers need the engine's error types and fmt, which this library must not
// link), the internal error that carries a QueryStatus up to the noexcept boundary, and the
// parsers of sizes and canonical "A=1;B=2" texts shared by the C++ and C front ends.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tiletune/query.hpp"

namespace tiletune::query_detail {

/// Thrown inside the library and turned into a QueryResult / QueryError at the API boundary.
class Failure : public std::runtime_error {
 public:
  Failure(QueryStatus status, const std::string& message) : std::runtime_error(message), status_(status) {}
  [[nodiscard]] QueryStatus status() const noexcept { return status_; }

 private:
  QueryStatus status_;
};

/// The QueryStatus of a SQLite result code (NOTADB → not_a_cache, everything else io_error).
[[nodiscard]] QueryStatus status_of_sqlite(int rc) noexcept;
/// Throws Failure: "OPERATION failed on PATH: REASON (SQLite code N)", one line, where the
/// operation is call, or a few words of sql when there is one (never the whole statement).
[[noreturn]] void throw_sqlite(sqlite3* db, int rc, std::string_view call, std::string_view sql,
                               const std::string& path);

/// One prepared statement, reset (releasing its read snapshot) by Use at the end of each use.
class Statement {
 public:
  Statement(sqlite3* db, std::string sql, std::string path);
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind(int index, std::int64_t value);
  void bind_real(int index, double value);
  void bind(int index, std::string_view text);
  /// True while rows come; false when done; an error throws Failure.
  [[nodiscard]] bool step();
  [[nodiscard]] std::int64_t int64(int column) const { return sqlite3_column_int64(stmt_.get(), column); }
  [[nodiscard]] double real(int column) const { return sqlite3_column_double(stmt_.get(), column); }
  [[nodiscard]] bool is_null(int column) const { return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL; }
  [[nodiscard]] std::string_view text(int column) const;
  void reset() noexcept {
    sqlite3_reset(stmt_.get());
    sqlite3_clear_bindings(stmt_.get());
  }

  /// Scope guard: resets the statement when the use ends (also on an exception).
  class Use {
   public:
    explicit Use(Statement& s) noexcept : s_(&s) {}
    ~Use() { s_->reset(); }
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;
    Statement* operator->() const noexcept { return s_; }

   private:
    Statement* s_;
  };

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const noexcept { sqlite3_finalize(s); }
  };
  sqlite3* db_;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  std::string sql_;
  std::string path_;
};

/// The URI to open the cache file at path read-only by (cache_file.hpp's read_only_uri), after
/// cache_file.hpp's checks of its header: a refused file is a Failure with its status and one line.
[[nodiscard]] std::string checked_read_only_uri(const std::filesystem::path& path);

/// A read-only connection (SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX; the caller
/// serializes) to the file path, opened through uri (see cache_file.hpp's read_only_uri).
class Connection {
 public:
  Connection(const std::string& path, const std::string& uri, int busy_timeout_ms);
  [[nodiscard]] sqlite3* get() const noexcept { return db_.get(); }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// Runs a statement without rows (BEGIN, COMMIT).
  void exec(const char* sql);

 private:
  struct Closer {
    void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
  };
  std::unique_ptr<sqlite3, Closer> db_;
  std::string path_;
};

/// A read transaction: steps the prepared BEGIN DEFERRED now and the prepared COMMIT on scope
/// exit, so the statements of one lookup see one snapshot (and take the locks once).
class ReadTransaction {
 public:
  ReadTransaction(Statement& begin, Statement& commit);
  ~ReadTransaction();
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;

 private:
  Statement* commit_;
};

/// Problem sizes or params as sorted (name, value) pairs.
using Sizes = std::vector<std::pair<std::string, std::int64_t>>;

/// Parses "N=8192;R=3" (separators ';' or ','; spaces around items allowed). nullopt, with the
/// reason in *error, for an item without '=', an empty name, a value that is not an integer,
/// or a name given twice. The pairs keep the text's order.
[[nodiscard]] std::optional<Sizes> parse_assignments(std::string_view text, std::string* error = nullptr);

/// The pairs sorted by name (the order of a std::map), for comparing problems.
[[nodiscard]] Sizes sorted(Sizes sizes);

/// "N=8192;R=3" in map order.
[[nodiscard]] std::string format_sizes(const std::map<std::string, std::int64_t>& sizes);

}  // namespace tiletune::query_detail
