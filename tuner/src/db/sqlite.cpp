// Implementation of the SQLite RAII wrappers (see sqlite.hpp).
#include "db/sqlite.hpp"

#include <fmt/format.h>

#include <cctype>

#include "common/cache_file.hpp"

namespace tiletune::db_detail {

void throw_sqlite(sqlite3* db, int rc, std::string_view call, std::string_view sql, const std::filesystem::path& path) {
  // The operation, never the statement's whole text: a migration's comments or a long query
  // would bury the reason.
  const std::string what =
      sql.empty() ? std::string(call) : fmt::format("{} ({})", cache_file::sql_operation(sql), call);
  std::string message = fmt::format("{} failed on {}: {} (SQLite code {})", what, path.string(),
                                    db ? sqlite3_errmsg(db) : sqlite3_errstr(rc), rc);
  throw DbError(std::move(message), std::string(call), std::string(sql), path, rc);
}

// --- Statement -------------------------------------------------------------------------------

Statement::Statement(sqlite3* db, std::string_view sql, const std::filesystem::path& path, bool persistent)
    : db_(db), sql_(sql), path_(path) {
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v3(db, sql_.data(), static_cast<int>(sql_.size()),
                              persistent ? SQLITE_PREPARE_PERSISTENT : 0, &raw, &tail);
  stmt_.reset(raw);
  if (rc != SQLITE_OK) throw_sqlite(db_, rc, "sqlite3_prepare_v3", sql_, path_);
  if (!raw) throw_sqlite(nullptr, SQLITE_MISUSE, "sqlite3_prepare_v3 (empty statement)", sql_, path_);
}

void Statement::check_bind(int rc, int index) {
  if (rc != SQLITE_OK) throw_sqlite(db_, rc, fmt::format("sqlite3_bind (parameter {})", index), sql_, path_);
}

void Statement::bind(int index, std::int64_t value) {
  check_bind(sqlite3_bind_int64(stmt_.get(), index, value), index);
}
void Statement::bind(int index, double value) { check_bind(sqlite3_bind_double(stmt_.get(), index, value), index); }
void Statement::bind(int index, std::string_view text) {
  check_bind(sqlite3_bind_text64(stmt_.get(), index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8), index);
}
void Statement::bind_blob(int index, std::string_view bytes) {
  // A zero-length blob, not NULL: sqlite3_bind_blob64 with a null pointer would bind NULL.
  static const char empty = 0;
  check_bind(
      sqlite3_bind_blob64(stmt_.get(), index, bytes.empty() ? &empty : bytes.data(), bytes.size(), SQLITE_TRANSIENT),
      index);
}
void Statement::bind_null(int index) { check_bind(sqlite3_bind_null(stmt_.get(), index), index); }

bool Statement::step() {
  int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // Build the message before reset() can replace SQLite's.
  try {
    throw_sqlite(db_, rc, "sqlite3_step", sql_, path_);
  } catch (...) {
    sqlite3_reset(stmt_.get());
    throw;
  }
}

void Statement::run() {
  while (step()) {}
}

bool Statement::is_null(int column) const { return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL; }
std::int64_t Statement::int64(int column) const { return sqlite3_column_int64(stmt_.get(), column); }
double Statement::real(int column) const { return sqlite3_column_double(stmt_.get(), column); }
std::string Statement::text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_.get(), column);
  int n = sqlite3_column_bytes(stmt_.get(), column);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n)) : std::string();
}
std::string Statement::blob(int column) const {
  const void* p = sqlite3_column_blob(stmt_.get(), column);
  int n = sqlite3_column_bytes(stmt_.get(), column);
  return p ? std::string(static_cast<const char*>(p), static_cast<std::size_t>(n)) : std::string();
}
std::optional<std::int64_t> Statement::opt_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return int64(column);
}
std::optional<double> Statement::opt_real(int column) const {
  if (is_null(column)) return std::nullopt;
  return real(column);
}

void Statement::reset() noexcept {
  // The result of sqlite3_reset repeats the last step's error, already reported by step().
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
}

// --- Connection ------------------------------------------------------------------------------

Connection::Connection(const std::filesystem::path& path, int flags, const std::string& uri) : path_(path) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(uri.empty() ? path.c_str() : uri.c_str(), &raw,
                           uri.empty() ? flags : flags | SQLITE_OPEN_URI, nullptr);
  db_.reset(raw);  // owned even on failure: sqlite3_open_v2 may allocate a handle anyway
  if (rc != SQLITE_OK) throw_sqlite(raw, rc, "sqlite3_open_v2", {}, path_);
  rc = sqlite3_extended_result_codes(raw, 1);
  if (rc != SQLITE_OK) throw_sqlite(raw, rc, "sqlite3_extended_result_codes", {}, path_);
}

Connection::~Connection() {
  statements_.clear();  // finalize first; sqlite3_close_v2 would defer the close otherwise
}

void Connection::exec(std::string_view script, std::string_view origin) {
  std::string call =
      origin.empty() ? std::string("sqlite3_prepare_v2") : fmt::format("sqlite3_prepare_v2 in {}", origin);
  const char* p = script.data();
  const char* end = script.data() + script.size();
  while (p < end) {
    sqlite3_stmt* raw = nullptr;
    const char* tail = nullptr;
    int rc = sqlite3_prepare_v2(db_.get(), p, static_cast<int>(end - p), &raw, &tail);
    std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> stmt(raw, &sqlite3_finalize);
    std::string_view text(p, static_cast<std::size_t>((tail ? tail : end) - p));
    if (rc != SQLITE_OK) throw_sqlite(db_.get(), rc, call, text, path_);
    if (raw) {  // null for whitespace and comments
      while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {}
      if (rc != SQLITE_DONE) {
        std::string step_call =
            origin.empty() ? std::string("sqlite3_step") : fmt::format("sqlite3_step in {}", origin);
        throw_sqlite(db_.get(), rc, step_call, text, path_);
      }
    }
    if (!tail || tail == p) break;
    p = tail;
  }
}

StatementUse Connection::cached(std::string_view sql) {
  auto it = statements_.find(std::string(sql));
  if (it == statements_.end()) {
    auto stmt = std::make_unique<Statement>(db_.get(), sql, path_, /*persistent=*/true);
    it = statements_.emplace(std::string(sql), std::move(stmt)).first;
  }
  return StatementUse(*it->second);
}

std::int64_t Connection::query_int(std::string_view sql) {
  Statement s(db_.get(), sql, path_, false);
  if (!s.step()) throw_sqlite(nullptr, SQLITE_DONE, "sqlite3_step (no row)", sql, path_);
  return s.int64(0);
}

std::string Connection::query_text(std::string_view sql) {
  Statement s(db_.get(), sql, path_, false);
  if (!s.step()) throw_sqlite(nullptr, SQLITE_DONE, "sqlite3_step (no row)", sql, path_);
  return s.text(0);
}

// --- Transaction -----------------------------------------------------------------------------

Transaction::Transaction(Connection& conn) : conn_(&conn), nested_(sqlite3_get_autocommit(conn.get()) == 0) {
  conn_->exec(nested_ ? "SAVEPOINT tiletune_nested" : "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (!open_) return;
  // Best effort: after a failed statement SQLite may already have rolled back on its own.
  sqlite3_exec(conn_->get(), nested_ ? "ROLLBACK TO tiletune_nested; RELEASE tiletune_nested" : "ROLLBACK", nullptr,
               nullptr, nullptr);
}

void Transaction::commit() {
  conn_->exec(nested_ ? "RELEASE tiletune_nested" : "COMMIT");
  open_ = false;
}

}  // namespace tiletune::db_detail
