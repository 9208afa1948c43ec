// Implementation of the database test helpers.
#include "db_test_util.hpp"

#include "db/embedded_sql.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>

namespace tiletune::testing {

Fingerprint fingerprint(const std::filesystem::path& file) {
  Fingerprint f;
  std::ifstream in(file, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  f.hash = 1469598103934665603ULL;
  for (unsigned char c : bytes) {
    f.hash ^= c;
    f.hash *= 1099511628211ULL;
  }
  f.size = std::filesystem::file_size(file);
  f.mtime = std::filesystem::last_write_time(file);
  for (const auto& e : std::filesystem::directory_iterator(file.parent_path()))
    f.siblings.push_back(e.path().filename().string());
  std::sort(f.siblings.begin(), f.siblings.end());
  return f;
}

std::string open_error(const std::filesystem::path& p, CacheDb::Mode mode) {
  try {
    auto db = CacheDb::open(p, mode);
  } catch (const DbError& e) { return e.what(); }
  return "<opened>";
}

db_detail::Connection raw_connection(const std::filesystem::path& file) {
  return db_detail::Connection(file, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
}

db_detail::Connection cache_at_version(const std::filesystem::path& file, int version) {
  auto conn = raw_connection(file);
  for (const auto& m : db_detail::migrations())
    if (m.version <= version) conn.exec(m.sql, m.file);
  conn.exec("PRAGMA application_id = " + std::to_string(cache_application_id));
  conn.exec("PRAGMA user_version = " + std::to_string(version));
  return conn;
}

void insert_h200_and_transpose(db_detail::Connection& conn) {
  conn.exec("INSERT INTO devices(id, uuid, name, cc_major, cc_minor) VALUES (1, 'GPU-1', 'NVIDIA H200', 9, 0)");
  conn.exec("INSERT INTO kernels(id, name, source_hash, used_seq) VALUES (1, 'transpose', 'h', 1)");
}

std::string describe_schema(db_detail::Connection& conn) {
  std::string out;
  std::vector<std::string> tables;
  {
    auto q =
        conn.cached("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
    while (q->step()) tables.push_back(q->text(0));
  }
  for (const auto& t : tables) {
    out += "table " + t + "\n";
    {
      auto q = conn.cached("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_xinfo(?1) ORDER BY cid");
      q->bind(1, t);
      while (q->step())
        out += "  column " + q->text(0) + " " + q->text(1) + " notnull=" + q->text(2) + " default=" + q->text(3) +
               " pk=" + q->text(4) + "\n";
    }
    {
      auto q = conn.cached(
          "SELECT \"table\", \"from\", \"to\", on_delete FROM pragma_foreign_key_list(?1) ORDER BY id, seq");
      q->bind(1, t);
      while (q->step())
        out += "  fk " + q->text(1) + " -> " + q->text(0) + "(" + q->text(2) + ") on delete " + q->text(3) + "\n";
    }
    std::vector<std::pair<std::string, std::string>> indexes;
    {
      auto q = conn.cached("SELECT name, \"unique\", origin FROM pragma_index_list(?1)");
      q->bind(1, t);
      while (q->step()) {
        // Auto-index names number the constraints; describe them by their columns instead.
        std::string name = q->text(0).rfind("sqlite_autoindex_", 0) == 0 ? std::string("auto") : q->text(0);
        indexes.emplace_back(q->text(0), name + " unique=" + q->text(1) + " origin=" + q->text(2));
      }
    }
    std::vector<std::string> lines;
    for (auto& [real_name, label] : indexes) {
      std::string cols;
      auto q = conn.cached("SELECT name FROM pragma_index_info(?1) ORDER BY seqno");
      q->bind(1, real_name);
      while (q->step()) cols += q->text(0) + ",";
      lines.push_back("  index " + label + " (" + cols + ")\n");
    }
    std::sort(lines.begin(), lines.end());
    for (auto& l : lines) out += l;
  }
  {
    // CHECK constraints live only in the CREATE text: compare it with whitespace and comments gone.
    auto q = conn.cached("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name = 'trials'");
    if (q->step()) {
      std::string sql = q->text(1), squeezed;
      bool in_comment = false;
      for (std::size_t i = 0; i < sql.size(); ++i) {
        if (!in_comment && sql.compare(i, 2, "--") == 0) in_comment = true;
        if (in_comment) {
          if (sql[i] == '\n') in_comment = false;
          continue;
        }
        if (!std::isspace(static_cast<unsigned char>(sql[i]))) squeezed += sql[i];
      }
      auto check = squeezed.find("CHECK(status<>");
      out += "trials check: " + (check == std::string::npos ? std::string("none") : squeezed.substr(check, 80)) + "\n";
    }
  }
  return out;
}

}  // namespace tiletune::testing
