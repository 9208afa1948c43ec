// The checks both readers of a cache file make before SQLite sees it (the query library, and the
// engine's CacheDb for every mode), and how a cache is opened read-only. Header-only, because the
// query library links nothing of the engine and the engine must apply the same rules.
//
// Before SQLite: the file must be a regular file (a FIFO or a device is refused without reading
// it, so nothing blocks), start with the SQLite magic, and its header (bytes 60 and 68) must not
// name another program's application_id or a schema version tiletune never writes. A refused file
// is never opened by SQLite, so neither it nor its -wal/-shm/-journal can change.
//
// Read-only opens (SQLite URI, always mode=ro):
//  - a rollback-journal file, or a WAL file whose -shm exists or whose directory is writable:
//    SQLite's ordinary shared-cache reader, correct while a writer is active (in a writable
//    directory SQLite itself creates the -shm and an empty -wal beside the file, as every reader
//    of a WAL database does; they hold no data).
//  - a WAL file with no -shm in a directory this process cannot write: no connection has it open
//    (every WAL connection keeps a -shm), and SQLite could not create the -shm it needs, so the
//    main file is read as it is with immutable=1. Such a connection sees later commits of a writer
//    that another user starts there only after it is opened again.
//  - the same, but with a non-empty -wal: those commits are not in the main file and cannot be
//    read without a -shm, so the file is refused rather than served stale.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tiletune::cache_file {

enum class Verdict {
  ok,
  missing,  ///< no file there
  directory,
  not_regular,     ///< a FIFO, a device, a socket
  unreadable,      ///< open or read failed (reason says why)
  not_sqlite,      ///< the first bytes are not SQLite's
  foreign,         ///< another program's database (reason names its application_id)
  bad_version,     ///< our application_id with a schema version below 1
  newer,           ///< our application_id with a schema version this build does not know
  unreadable_wal,  ///< WAL commits that a read-only open cannot see (see above)
};

/// What the first 100 bytes say.
struct Header {
  bool empty = false;               ///< a zero-length file: SQLite treats it as a new database
  bool wal = false;                 ///< file format 2 (bytes 18 and 19)
  std::int64_t application_id = 0;  ///< as PRAGMA application_id reads it (signed 32 bits)
  std::int64_t user_version = 0;    ///< as PRAGMA user_version reads it (signed 32 bits)
  std::int64_t objects = -1;        ///< tables, indexes, ... in sqlite_master; -1: not known yet
};

struct Inspection {
  Verdict verdict = Verdict::ok;
  std::string reason;  ///< one line, for the refusal message
  Header header;
};

inline std::string hex32(std::int64_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", static_cast<unsigned>(static_cast<std::uint32_t>(v)));
  return buf;
}

inline std::int64_t big_endian_i32(const unsigned char* p) {
  const std::uint32_t u = (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
  return static_cast<std::int32_t>(u);
}

/// Reads the header of path without blocking: a missing file, a directory, a FIFO or device, an
/// unreadable file or one that is not SQLite gets its verdict; otherwise the header's fields.
[[nodiscard]] inline Inspection read_header(const std::filesystem::path& path) {
  Inspection r;
  auto refuse = [&r](Verdict v, std::string why) {
    r.verdict = v;
    r.reason = std::move(why);
    return r;
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return refuse(Verdict::missing, "no such file");
    return refuse(Verdict::unreadable, std::string("cannot open it: ") + std::strerror(errno));
  }
  struct stat st {};
  unsigned char head[100] = {};
  std::size_t n = 0;
  const int stat_rc = ::fstat(fd, &st);
  const int stat_errno = errno;
  if (stat_rc == 0 && S_ISREG(st.st_mode)) {
    while (n < sizeof head) {
      const ssize_t got = ::read(fd, head + n, sizeof head - n);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      n += static_cast<std::size_t>(got);
    }
  }
  ::close(fd);
  if (stat_rc != 0) return refuse(Verdict::unreadable, std::string("cannot stat it: ") + std::strerror(stat_errno));
  if (S_ISDIR(st.st_mode)) return refuse(Verdict::directory, "a directory");
  if (!S_ISREG(st.st_mode))
    return refuse(Verdict::not_regular, S_ISFIFO(st.st_mode)   ? "a FIFO, not a regular file"
                                        : S_ISSOCK(st.st_mode) ? "a socket, not a regular file"
                                                               : "a device, not a regular file");
  if (n == 0) {
    r.header.empty = true;
    return r;
  }
  // A header still being written by another process is a prefix of the magic; SQLite reads it
  // again under a lock.
  constexpr std::string_view magic{"SQLite format 3\0", 16};
  const std::size_t m = std::min<std::size_t>(n, magic.size());
  if (std::string_view(reinterpret_cast<const char*>(head), m) != magic.substr(0, m))
    return refuse(Verdict::not_sqlite, "not an SQLite database");
  if (n < sizeof head) return r;
  // The fields SQLite itself insists on: a page size that is a power of two from 512 to 65536
  // (1 stands for 65536) and the fixed payload fractions 64, 32, 32.
  const unsigned page_size = (unsigned{head[16]} << 8) | head[17];
  const bool page_size_ok =
      page_size == 1 || (page_size >= 512 && page_size <= 32768 && (page_size & (page_size - 1)) == 0);
  if (!page_size_ok || head[21] != 64 || head[22] != 32 || head[23] != 32)
    return refuse(Verdict::not_sqlite, "not an SQLite database");
  r.header.wal = head[18] == 2 && head[19] == 2;
  r.header.user_version = big_endian_i32(head + 60);
  r.header.application_id = big_endian_i32(head + 68);
  return r;
}

/// Judges a header (read from the file, or through SQLite with objects known) against our
/// application_id and the schema versions 1..newest_version. All zeros is ok: a new database, or
/// one whose first commit is still in its -wal (SQLite's view is judged again after opening).
[[nodiscard]] inline Inspection judge(const Header& h, std::int64_t application_id, std::int64_t newest_version) {
  Inspection r;
  r.header = h;
  auto refuse = [&r](Verdict v, std::string why) {
    r.verdict = v;
    r.reason = std::move(why);
    return r;
  };
  // tiletune sets the application_id and the schema version in one transaction, so a version or
  // tables without our id belong to another program.
  if (h.application_id != application_id && (h.application_id != 0 || h.user_version != 0 || h.objects > 0))
    return refuse(Verdict::foreign, "application_id " + hex32(h.application_id));
  if (h.application_id == application_id && h.user_version < 1)
    return refuse(Verdict::bad_version,
                  "schema version " + std::to_string(h.user_version) + ", which no tiletune writes");
  if (h.application_id == application_id && h.user_version > newest_version)
    return refuse(Verdict::newer, "schema version " + std::to_string(h.user_version));
  return r;
}

/// read_header, then judge.
[[nodiscard]] inline Inspection inspect(const std::filesystem::path& path, std::int64_t application_id,
                                        std::int64_t newest_version) {
  Inspection r = read_header(path);
  return r.verdict == Verdict::ok ? judge(r.header, application_id, newest_version) : r;
}

/// path as an SQLite URI ("file:" with '?', '#' and '%' escaped), with the query appended.
[[nodiscard]] inline std::string uri(const std::filesystem::path& path, std::string_view query) {
  std::string u = path.is_absolute() ? "file://" : "file:";
  for (const char c : path.string()) {
    if (c == '%')
      u += "%25";
    else if (c == '?')
      u += "%3f";
    else if (c == '#')
      u += "%23";
    else
      u += c;
  }
  u += '?';
  u += query;
  return u;
}

/// The URI to open path read-only with (see the top of this file); Verdict::unreadable_wal with
/// its reason when its WAL cannot be read.
[[nodiscard]] inline Inspection read_only_uri(const std::filesystem::path& path, const Header& header,
                                              std::string& out) {
  Inspection r;
  r.header = header;
  out = uri(path, "mode=ro");
  if (!header.wal) return r;
  std::error_code ec;
  const std::filesystem::path shm = path.string() + "-shm";
  if (std::filesystem::exists(shm, ec)) return r;
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  if (::access(dir.c_str(), W_OK) == 0) return r;
  const std::filesystem::path wal = path.string() + "-wal";
  const auto wal_size = std::filesystem::file_size(wal, ec);
  if (!ec && wal_size > 0) {
    r.verdict = Verdict::unreadable_wal;
    r.reason =
        "its -wal holds commits not yet in the file, and without a -shm they cannot be read in a directory "
        "this process cannot write: read it once where the directory is writable, or checkpoint it";
    return r;
  }
  out = uri(path, "mode=ro&immutable=1");
  return r;
}

/// A short name for the statement sql, for error messages ("INSERT INTO trials", "PRAGMA
/// user_version", "CREATE TABLE cubins"): a few of its words, never its whole text or comments.
[[nodiscard]] inline std::string sql_operation(std::string_view sql) {
  std::vector<std::string> words;  // identifiers and keywords, outside comments and strings
  for (std::size_t i = 0; i < sql.size() && words.size() < 200;) {
    const char c = sql[i];
    if (sql.substr(i, 2) == "--") {
      const auto end = sql.find('\n', i);
      i = end == std::string_view::npos ? sql.size() : end + 1;
    } else if (sql.substr(i, 2) == "/*") {
      const auto end = sql.find("*/", i + 2);
      i = end == std::string_view::npos ? sql.size() : end + 2;
    } else if (c == '\'') {
      const auto end = sql.find('\'', i + 1);
      i = end == std::string_view::npos ? sql.size() : end + 1;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = i;
      while (i < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[i])) || sql[i] == '_')) ++i;
      words.emplace_back(sql.substr(start, std::min<std::size_t>(i - start, 40)));
    } else {
      ++i;
    }
  }
  if (words.empty()) return "an SQL statement";
  auto upper = [](std::string w) {
    for (char& ch : w) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return w;
  };
  const std::string kw = upper(words[0]);
  auto after = [&](std::string_view key) -> std::string {
    for (std::size_t i = 1; i + 1 < words.size(); ++i)
      if (upper(words[i]) == key) return " " + std::string(key) + " " + words[i + 1];
    return "";
  };
  if (kw == "INSERT" || kw == "REPLACE") return kw + after("INTO");
  if (kw == "SELECT" || kw == "DELETE") return kw + after("FROM");
  if ((kw == "UPDATE" || kw == "PRAGMA") && words.size() > 1) return kw + " " + words[1];
  if (kw == "CREATE" || kw == "DROP" || kw == "ALTER") {
    std::string out = kw;
    for (std::size_t i = 1, kept = 0; i < words.size() && kept < 2; ++i) {
      const std::string w = upper(words[i]);
      if (w == "IF" || w == "NOT" || w == "EXISTS" || w == "UNIQUE" || w == "TEMP") continue;
      out += " " + words[i];
      ++kept;
    }
    return out;
  }
  return kw;
}

/// Where the cache lives by default: $TILETUNE_DB, else $XDG_CACHE_HOME/tiletune/tiletune.db
/// (an absolute XDG_CACHE_HOME only: the XDG spec says a relative one is invalid), else
/// ~/.cache/tiletune/tiletune.db; empty when none is set. The query library's
/// QueryCache::default_path and the engine's default_cache_path are this rule.
inline std::filesystem::path default_path() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
  };
  if (auto p = env("TILETUNE_DB"); !p.empty()) return p;
  if (auto p = env("XDG_CACHE_HOME"); !p.empty() && std::filesystem::path(p).is_absolute())
    return std::filesystem::path(p) / "tiletune" / "tiletune.db";
  if (auto home = env("HOME"); !home.empty())
    return std::filesystem::path(home) / ".cache" / "tiletune" / "tiletune.db";
  return {};
}

}  // namespace tiletune::cache_file
