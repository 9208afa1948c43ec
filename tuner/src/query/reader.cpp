// The read-only SQLite wrappers and text parsers of the query library (see reader.hpp).
#include "query/reader.hpp"

#include "common/cache_file.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace tiletune::query_detail {

QueryStatus status_of_sqlite(int rc) noexcept {
  switch (rc & 0xff) {
    case SQLITE_NOTADB: return QueryStatus::not_a_cache;
    case SQLITE_NOMEM: return QueryStatus::internal_error;
    default: return QueryStatus::io_error;
  }
}

void throw_sqlite(sqlite3* db, int rc, std::string_view call, std::string_view sql, const std::string& path) {
  const std::string what = sql.empty() ? std::string(call) : cache_file::sql_operation(sql);
  throw Failure(status_of_sqlite(rc), what + " failed on " + path + ": " +
                                          (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)) + " (SQLite code " +
                                          std::to_string(rc) + ")");
}

// --- Statement -------------------------------------------------------------------------------

Statement::Statement(sqlite3* db, std::string sql, std::string path)
    : db_(db), sql_(std::move(sql)), path_(std::move(path)) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql_.c_str(), static_cast<int>(sql_.size() + 1), SQLITE_PREPARE_PERSISTENT, &raw,
                              nullptr);
  stmt_.reset(raw);
  if (rc != SQLITE_OK) throw_sqlite(db_, rc, "sqlite3_prepare_v3", sql_, path_);
}

void Statement::bind(int index, std::int64_t value) {
  int rc = sqlite3_bind_int64(stmt_.get(), index, value);
  if (rc != SQLITE_OK) throw_sqlite(db_, rc, "sqlite3_bind_int64", sql_, path_);
}

void Statement::bind_real(int index, double value) {
  int rc = sqlite3_bind_double(stmt_.get(), index, value);
  if (rc != SQLITE_OK) throw_sqlite(db_, rc, "sqlite3_bind_double", sql_, path_);
}

void Statement::bind(int index, std::string_view text) {
  int rc = sqlite3_bind_text64(stmt_.get(), index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) throw_sqlite(db_, rc, "sqlite3_bind_text64", sql_, path_);
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw_sqlite(db_, rc, "sqlite3_step", sql_, path_);
}

std::string_view Statement::text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_.get(), column);
  int n = sqlite3_column_bytes(stmt_.get(), column);
  if (!p) return {};
  return {reinterpret_cast<const char*>(p), static_cast<std::size_t>(n)};
}

// --- Connection ------------------------------------------------------------------------------

Connection::Connection(const std::string& path, const std::string& uri, int busy_timeout_ms) : path_(path) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(uri.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  db_.reset(raw);  // owned even on failure
  if (rc != SQLITE_OK) throw_sqlite(raw, rc, "sqlite3_open_v2", {}, path_);
  // busy_timeout first: even the first read may have to wait for a writer's commit.
  rc = sqlite3_busy_timeout(raw, busy_timeout_ms);
  if (rc != SQLITE_OK) throw_sqlite(raw, rc, "sqlite3_busy_timeout", {}, path_);
  rc = sqlite3_extended_result_codes(raw, 1);
  if (rc != SQLITE_OK) throw_sqlite(raw, rc, "sqlite3_extended_result_codes", {}, path_);
}

void Connection::exec(const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_.get(), sql, nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) throw_sqlite(db_.get(), rc, "sqlite3_exec", sql, path_);
}

ReadTransaction::ReadTransaction(Statement& begin, Statement& commit) : commit_(&commit) {
  Statement::Use use(begin);
  (void)begin.step();
}

ReadTransaction::~ReadTransaction() {
  // A read transaction has nothing to keep; ending it can only fail if it is already over.
  try {
    Statement::Use use(*commit_);
    (void)commit_->step();
  } catch (...) {}
}

// --- parsers ---------------------------------------------------------------------------------

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}
}  // namespace

std::optional<Sizes> parse_assignments(std::string_view text, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<Sizes> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  Sizes out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find_first_of(";,", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = trim(text.substr(pos, end - pos));
    pos = end + 1;
    if (item.empty()) {
      if (end == text.size()) break;
      continue;
    }
    auto eq = item.find('=');
    if (eq == std::string_view::npos) return fail("'" + std::string(item) + "' is not NAME=VALUE (e.g. N=8192)");
    std::string_view name = trim(item.substr(0, eq));
    std::string_view value = trim(item.substr(eq + 1));
    if (name.empty()) return fail("'" + std::string(item) + "' has no name before '='");
    std::int64_t v = 0;
    const char* first = value.data();
    const char* last = value.data() + value.size();
    if (!value.empty() && *first == '+') ++first;
    auto [p, ec] = std::from_chars(first, last, v);
    if (value.empty() || ec != std::errc() || p != last)
      return fail("the value of " + std::string(name) + " ('" + std::string(value) + "') is not an integer");
    for (const auto& [n, _] : out)
      if (n == name) return fail(std::string(name) + " is given twice");
    out.emplace_back(std::string(name), v);
    if (end == text.size()) break;
  }
  return out;
}

Sizes sorted(Sizes sizes) {
  std::sort(sizes.begin(), sizes.end());
  return sizes;
}

std::string format_sizes(const std::map<std::string, std::int64_t>& sizes) {
  std::string s;
  for (const auto& [name, value] : sizes) {
    if (!s.empty()) s += ';';
    s += name;
    s += '=';
    s += std::to_string(value);
  }
  return s;
}

}  // namespace tiletune::query_detail
