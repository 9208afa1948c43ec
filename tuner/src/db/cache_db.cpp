// The SQLite cache (see tiletune/cache_db.hpp): opening with the checks that keep us from
// touching a file that is not ours, schema creation and migration, and the reads and writes.
#include "tiletune/cache_db.hpp"

#include <fmt/format.h>
#include <sys/statfs.h>

#include <cmath>
#include <cstdlib>
#include <limits>

#include "db/embedded_sql.hpp"
#include "tiletune/answers.hpp"
#include "db/records.hpp"
#include "common/cache_file.hpp"
#include "common/kernel_version.hpp"
#include "db/sqlite.hpp"

#ifndef TILETUNE_VERSION
#define TILETUNE_VERSION "unknown"
#endif

namespace tiletune {

namespace fs = std::filesystem;
using db_detail::Connection;
using db_detail::Statement;
using db_detail::Transaction;

DbError::DbError(std::string message, std::string call, std::string sql, fs::path path, int sqlite_code)
    : Error(std::move(message)),
      call_(std::move(call)),
      sql_(std::move(sql)),
      path_(std::move(path)),
      sqlite_code_(sqlite_code) {}

fs::path default_cache_path() {
  // One rule for the engine and the query library, which programs link alone.
  fs::path p = cache_file::default_path();
  if (p.empty()) throw Error("no default cache path: none of TILETUNE_DB, XDG_CACHE_HOME and HOME is set (use --db)");
  return p;
}

namespace {

[[noreturn]] void refuse(const fs::path& path, const std::string& why, int code = 0) {
  throw DbError(fmt::format("{} is not a tiletune cache ({}): refusing to touch it", path.string(), why),
                "application_id", {}, path, code);
}

// A refusal by cache_file.hpp's checks, as the DbError of this stage.
[[noreturn]] void refuse(const fs::path& path, const cache_file::Inspection& seen) {
  using cache_file::Verdict;
  switch (seen.verdict) {
    case Verdict::newer:
      throw DbError(fmt::format("{} was written by a newer tiletune ({}; this build knows versions up to {}): "
                                "upgrade tiletune or use another cache file",
                                path.string(), seen.reason, db_detail::latest_schema_version()),
                    "user_version", {}, path);
    case Verdict::bad_version:
      throw DbError(fmt::format("{} has {}: refusing to touch it", path.string(), seen.reason), "user_version", {},
                    path);
    case Verdict::not_sqlite: refuse(path, seen.reason, SQLITE_NOTADB);
    case Verdict::directory:
    case Verdict::not_regular:
    case Verdict::foreign: refuse(path, seen.reason);
    case Verdict::missing:
      throw DbError(fmt::format("{}: no tiletune cache there (opened read-only, so none is created)", path.string()),
                    "open", {}, path, SQLITE_CANTOPEN);
    case Verdict::ok:
    case Verdict::unreadable:
    case Verdict::unreadable_wal: break;
  }
  throw DbError(fmt::format("{}: {}", path.string(), seen.reason), "open", {}, path, SQLITE_CANTOPEN);
}

// WAL needs shared memory between processes, which network file systems do not provide; SQLite
// does not detect them, so we do. Unknown file systems count as local.
bool on_local_disk(const fs::path& path) {
  fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  struct statfs st {};
  if (::statfs(dir.c_str(), &st) != 0) return true;
  switch (static_cast<unsigned long>(st.f_type)) {
    case 0x6969UL:      // NFS
    case 0x517BUL:      // SMB
    case 0xFF534D42UL:  // CIFS
    case 0xFE534D42UL:  // SMB2
    case 0x01021997UL:  // 9P (v9fs)
    case 0x65735546UL:  // FUSE (sshfs, object-store mounts)
    case 0x5346414FUL:  // AFS
    case 0x00C36400UL:  // Ceph
    case 0x0BD00BD0UL:  // Lustre
    case 0x47504653UL:  // GPFS
      return false;
    default: return true;
  }
}

// The file as SQLite sees it (the header fields may still be only in the -wal), judged by the
// same rules as the bytes on disk; NOTADB becomes the refusal it is.
cache_file::Header read_state(Connection& conn) {
  try {
    // One statement, so one snapshot: read separately, the three could straddle another
    // process's commit of a new schema and look like a foreign file.
    auto q = conn.cached(
        "SELECT (SELECT application_id FROM pragma_application_id), "
        "(SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master)");
    if (!q->step())
      db_detail::throw_sqlite(conn.get(), SQLITE_INTERNAL, "sqlite3_step (no row)", q->sql(), conn.path());
    cache_file::Header h;
    h.application_id = q->int64(0);
    h.user_version = q->int64(1);
    h.objects = q->int64(2);
    const cache_file::Inspection seen = cache_file::judge(h, cache_application_id, db_detail::latest_schema_version());
    if (seen.verdict != cache_file::Verdict::ok) refuse(conn.path(), seen);
    return h;
  } catch (const DbError& e) {
    if ((e.sqlite_code() & 0xff) == SQLITE_NOTADB) refuse(conn.path(), "not an SQLite database", e.sqlite_code());
    throw;
  }
}

// No version, no id, no tables: a new database that we initialize (read-write) or refuse to read.
bool is_blank(const cache_file::Header& h) { return h.application_id == 0 && h.user_version == 0 && h.objects == 0; }

std::string now_iso(Connection& conn) { return conn.query_text("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"); }

// Creates the schema in a new file or brings an older one up to date, in one BEGIN IMMEDIATE.
// The state is read again inside the transaction: another process may have done it meanwhile.
void create_or_migrate(Connection& conn) {
  const int latest = db_detail::latest_schema_version();
  Transaction tx(conn);
  const cache_file::Header s = read_state(conn);
  if (is_blank(s)) {
    conn.exec(db_detail::schema_sql(), "db/schema.sql");
    conn.exec(fmt::format("PRAGMA application_id = {}", cache_application_id));
    conn.exec(fmt::format("PRAGMA user_version = {}", latest));
    auto put = conn.cached("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)");
    put->bind(1, std::string_view("created_by"));
    put->bind(2, std::string_view("tiletune " TILETUNE_VERSION));
    put->run();
    put->reset();
    put->bind(1, std::string_view("created_at"));
    put->bind(2, now_iso(conn));
    put->run();
  } else if (s.user_version < latest) {
    for (const auto& m : db_detail::migrations()) {
      if (m.version <= s.user_version) continue;
      conn.exec(m.sql, fmt::format("db/migrations/{}", m.file));
      conn.exec(fmt::format("PRAGMA user_version = {}", m.version));
    }
    auto put = conn.cached("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)");
    put->bind(1, std::string_view("upgraded"));
    put->bind(2, fmt::format("from schema {} to {} by tiletune {} at {}", s.user_version, latest, TILETUNE_VERSION,
                             now_iso(conn)));
    put->run();
  }
  tx.commit();
}

// --- column lists and row readers, shared by the queries ------------------------------------

// The key, status and detail, then the measurements of trial_columns (tiletune/trial_record.hpp);
// a column that an older cache opened read-only lacks reads as NULL.
constexpr std::string_view trial_fixed_columns = "t.device_id, t.kernel_id, t.problem, t.params, t.status, t.detail";
constexpr int trial_fixed_column_count = 6;
constexpr int trial_select_count = trial_fixed_column_count + static_cast<int>(trial_column_count);

std::string trial_select(int version) {
  return fmt::format("{}, {}", trial_fixed_columns, trial_columns_select("t", version));
}

// The upsert of record_trial: the fixed columns, then one bound parameter per measurement column.
// An upsert rather than INSERT OR REPLACE: the row keeps its id, so best never points at a deleted
// row in between.
std::string trial_upsert_sql() {
  std::string names = "device_id, kernel_id, problem, params, status, detail";
  std::string values = "?1, ?2, ?3, ?4, ?5, ?6";
  std::string updates = "status = excluded.status, detail = excluded.detail";
  int parameter = trial_fixed_column_count;
  for (const TrialColumn& c : trial_columns) {
    names += fmt::format(", {}", c.name);
    values += fmt::format(", ?{}", ++parameter);
    updates += fmt::format(", {0} = excluded.{0}", c.name);
  }
  return fmt::format(
      "INSERT INTO trials({}) VALUES ({}) ON CONFLICT(device_id, kernel_id, problem, params) "
      "DO UPDATE SET {}, created_at = excluded.created_at",
      names, values, updates);
}

// Binds a column's value (a trial's measurement, a device's field) to parameter `index`.
void bind_value(Statement& s, int index, const TrialValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v))
    s.bind(index, *i);
  else if (const auto* d = std::get_if<double>(&v))
    s.bind(index, *d);
  else if (const auto* text = std::get_if<std::string>(&v))
    s.bind(index, std::string_view(*text));
  else
    s.bind_null(index);
}

void bind_trial(Statement& s, const TrialRecord& t) {
  s.bind(1, t.key.device_id);
  s.bind(2, t.key.kernel_id);
  s.bind(3, t.key.problem);
  s.bind(4, t.key.params);
  s.bind(5, status_name(t.status));
  s.bind(6, t.detail);
  int parameter = trial_fixed_column_count;
  for (const TrialColumn& c : trial_columns) bind_value(s, ++parameter, c.get(t));
}

constexpr std::string_view kernel_columns = "k.id, k.name, k.source_hash, k.options, k.nvrtc_version";
constexpr int kernel_column_count = 5;

// Whether the kernels row k is its name's current version (common/kernel_version.hpp).
const std::string kernel_is_current = kernel_version::is_current_sql("k");

TrialRecord read_trial(const Statement& s, int c, const fs::path& path) {
  TrialRecord t;
  t.key.device_id = s.int64(c + 0);
  t.key.kernel_id = s.int64(c + 1);
  t.key.problem = s.text(c + 2);
  t.key.params = s.text(c + 3);
  std::string status = s.text(c + 4);
  auto parsed = parse_status(status);
  if (!parsed)
    throw DbError(fmt::format("{}: unknown trial status '{}' in trials", path.string(), status), "sqlite3_column_text",
                  std::string(s.sql()), path);
  t.status = *parsed;
  t.detail = s.text(c + 5);
  read_trial_columns(s, c + trial_fixed_column_count, t);
  return t;
}

std::int64_t read_kernel(const Statement& s, int c, KernelRecord& k) {
  k.name = s.text(c + 1);
  k.source_hash = s.text(c + 2);
  k.options = s.text(c + 3);
  k.nvrtc_version = s.text(c + 4);
  return s.int64(c);
}

// A device as a row reads it: its id, the device_columns (NULL where the cache's schema predates
// one), its last_seen.
std::string device_select(int version) {
  std::string out = "d.id";
  for (const DeviceColumn& c : device_columns)
    out += version >= c.since_schema ? ", d." + std::string(c.name) : ", NULL";
  return out + ", d.last_seen";
}
constexpr int device_column_count = 2 + static_cast<int>(std::size(device_columns));

DeviceRow read_device(const Statement& s, int c) {
  DeviceRow r;
  r.id = s.int64(c++);
  for (const DeviceColumn& column : device_columns) {
    const int at = c++;
    if (s.is_null(at))
      column.set(r.device, TrialValue());
    else if (column.type == DeviceColumn::Type::integer)
      column.set(r.device, TrialValue(s.int64(at)));
    else if (column.type == DeviceColumn::Type::real)
      column.set(r.device, TrialValue(s.real(at)));
    else
      column.set(r.device, TrialValue(s.text(at)));
  }
  r.last_seen = s.text(c);
  return r;
}

// Inserts a device or refreshes it by UUID; a description keeps its stored value when the record
// does not know it.
std::string upsert_device_sql() {
  std::string columns, values, updates;
  int parameter = 0;
  for (const DeviceColumn& c : device_columns) {
    const std::string name(c.name);
    const std::string separator = parameter++ > 0 ? ", " : "";
    columns += separator + name;
    values += separator + "?" + std::to_string(parameter);
    if (name == "uuid") continue;  // the key
    updates += c.description ? fmt::format("{0} = coalesce(excluded.{0}, devices.{0}), ", name)
                             : fmt::format("{0} = excluded.{0}, ", name);
  }
  return fmt::format(
      "INSERT INTO devices({}) VALUES ({}) ON CONFLICT(uuid) DO UPDATE SET {}last_seen = excluded.last_seen", columns,
      values, updates);
}

// "N=8192;R=3" → {"N":8192,"R":3}; a value that is not a plain number becomes a JSON string.
std::string sizes_to_json(std::string_view sizes) {
  auto escape = [](std::string_view s) {
    std::string out = "\"";
    for (char ch : s) {
      if (ch == '"' || ch == '\\') {
        out += '\\';
        out += ch;
      } else if (static_cast<unsigned char>(ch) < 0x20) {
        out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(ch)));
      } else {
        out += ch;
      }
    }
    return out + '"';
  };
  // A JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?
  auto is_number = [](std::string_view v) {
    std::size_t i = 0;
    if (i < v.size() && v[i] == '-') ++i;
    auto digits = [&] {
      std::size_t from = i;
      while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
      return i - from;
    };
    std::size_t int_start = i;
    std::size_t n = digits();
    if (n == 0 || (n > 1 && v[int_start] == '0')) return false;
    if (i < v.size() && v[i] == '.') {
      ++i;
      if (digits() == 0) return false;
    }
    return i == v.size();
  };
  std::string out = "{";
  bool first = true;
  while (!sizes.empty()) {
    auto semi = sizes.find(';');
    std::string_view part = sizes.substr(0, semi);
    sizes = semi == std::string_view::npos ? std::string_view() : sizes.substr(semi + 1);
    if (part.empty()) continue;
    auto eq = part.find('=');
    std::string_view name = part.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? std::string_view() : part.substr(eq + 1);
    if (!first) out += ',';
    first = false;
    out += escape(name) + ':' + (is_number(value) ? std::string(value) : escape(value));
  }
  return out + '}';
}

// What the tie test and the pick rule read of a stored trial.
TieTrial tie_trial_of(const TrialRecord& t) {
  TieTrial tie;
  tie.params = t.key.params;
  tie.time_ms = t.time_ms.value_or(0.0);
  tie.stddev_ms = t.stddev_ms;
  tie.samples = t.samples;
  tie.occupancy = t.occupancy_driver ? t.occupancy_driver : t.occupancy_offline;
  tie.registers = t.registers;
  return tie;
}

// The ok trials of a key that can tie with a fastest time of fastest_ms, and their tie set.
struct StoredTies {
  std::vector<std::int64_t> ids;
  std::vector<TrialRecord> trials;
  TieSet set;
};

}  // namespace

std::string_view pin_scope_name(PinScope scope) noexcept {
  switch (scope) {
    case PinScope::device: return "device";
    case PinScope::model: return "model";
    case PinScope::architecture: return "architecture";
  }
  return "device";
}

std::optional<PinScope> parse_pin_scope(std::string_view name) noexcept {
  for (PinScope s : {PinScope::device, PinScope::model, PinScope::architecture})
    if (pin_scope_name(s) == name) return s;
  return std::nullopt;
}

std::string architecture_name(int cc_major, int cc_minor) { return fmt::format("sm_{}{}", cc_major, cc_minor); }

bool pin_applies(const PinRecord& pin, const DeviceRecord& device) {
  switch (pin.scope) {
    case PinScope::device: return pin.target == device.uuid;
    case PinScope::model: return pin.target == device.name;
    case PinScope::architecture: return pin.target == architecture_name(device.cc_major, device.cc_minor);
  }
  return false;
}

// --- CacheDb ---------------------------------------------------------------------------------

struct CacheDb::Impl {
  Connection conn;
  Options options;
  int version = 0;
  // SQL that depends on the schema version: an older cache opened read-only lacks some columns.
  std::string device_select_list;
  std::string trials_sql;
  std::string best_sql;
  std::string best_objective_sql[3];  // by Objective; empty: not available in this schema
  std::string best_for_sql;
  std::string device_sql;
  std::string devices_sql;
  std::string ties_sql;
  std::string trial_by_key_sql;

  Impl(Connection c, Options o, int v) : conn(std::move(c)), options(o), version(v) {
    const std::string trial_cols = trial_select(version);
    device_select_list = device_select(version);
    device_sql = fmt::format("SELECT {} FROM devices d WHERE d.uuid = ?1", device_select_list);
    devices_sql = fmt::format("SELECT {} FROM devices d ORDER BY d.id", device_select_list);
    trials_sql = fmt::format(
        "SELECT t.id, {0}, d.uuid, d.name, {1}, t.created_at, b.trial_id IS NOT NULL, {2} "
        "FROM trials t JOIN devices d ON d.id = t.device_id JOIN kernels k ON k.id = t.kernel_id "
        "LEFT JOIN best b ON b.trial_id = t.id "
        "WHERE (?1 IS NULL OR k.name = ?1) AND (?2 IS NULL OR d.uuid = ?2 OR d.name = ?2) "
        "AND (?3 IS NULL OR t.status = ?3) AND (?4 IS NULL OR t.problem = ?4) AND (?5 = 0 OR {2}) "
        "ORDER BY k.name, d.uuid, t.problem, t.time_ms IS NULL, t.time_ms, t.id LIMIT ?6",
        trial_cols, kernel_columns, kernel_is_current);
    auto best_select = [&](std::string_view best_rows) {
      return fmt::format(
          "SELECT b.trial_id, {0}, {1}, {2}, {3} "
          "FROM {4} b JOIN trials t ON t.id = b.trial_id JOIN devices d ON d.id = b.device_id "
          "JOIN kernels k ON k.id = b.kernel_id ",
          device_select_list, kernel_columns, trial_cols, kernel_is_current, best_rows);
    };
    const std::string best_where = fmt::format(
        "WHERE (?1 IS NULL OR k.name = ?1) AND (?2 IS NULL OR d.uuid = ?2 OR d.name = ?2) "
        "AND (?3 IS NULL OR b.problem = ?3) AND (?4 = 0 OR {}) "
        "ORDER BY k.name, d.uuid, b.problem, k.id",
        kernel_is_current);
    best_sql = best_select("best") + best_where;
    if (version >= trial_column("energy_mj").since_schema) {
      // The best table keeps the fastest trial; another objective ranks the ok trials with a
      // measured energy instead, per (device, kernel version, problem).
      for (Objective o : {Objective::energy, Objective::edp}) {
        const std::string rows = fmt::format(
            "(SELECT id AS trial_id, device_id, kernel_id, problem FROM (SELECT id, device_id, kernel_id, "
            "problem, row_number() OVER (PARTITION BY device_id, kernel_id, problem ORDER BY {}, id) AS rn "
            "FROM trials WHERE status = 'ok' AND energy_mj > 0 AND time_ms > 0) WHERE rn = 1)",
            o == Objective::energy ? "energy_mj" : "energy_mj * time_ms");
        best_objective_sql[static_cast<int>(o)] = best_select(rows) + best_where;
      }
    }
    ties_sql = fmt::format(
        "SELECT t.id, {} FROM trials t WHERE t.device_id = ?1 AND t.kernel_id = ?2 AND t.problem = ?3 "
        "AND t.status = 'ok' AND t.time_ms > 0 AND t.time_ms <= ?4 ORDER BY t.id",
        trial_cols);
    trial_by_key_sql = fmt::format(
        "SELECT {} FROM trials t WHERE t.device_id = ?1 AND t.kernel_id = ?2 AND t.problem = ?3 AND t.params = ?4",
        trial_cols);
    best_for_sql = best_select("best") +
                   "WHERE k.name = ?1 AND k.source_hash = ?2 AND k.options = ?3 "
                   "AND k.nvrtc_version = ?4 AND d.uuid = ?5 AND b.problem = ?6";
  }

  BestEntry read_best(const Statement& s) const {
    BestEntry e;
    int c = 0;
    e.trial_id = s.int64(c++);
    e.device = read_device(s, c);
    c += device_column_count;
    e.kernel_id = read_kernel(s, c, e.kernel);
    c += kernel_column_count;
    e.trial = read_trial(s, c, conn.path());
    c += trial_select_count;
    e.current = s.int64(c) != 0;
    return e;
  }

  // The standing answer of a key (answers.hpp): its latest answer_history row before run
  // `before`; empty when it has none (or the cache predates the history).
  std::string standing_answer(std::int64_t device_id, std::int64_t kernel_id, std::string_view problem,
                              std::int64_t before = std::numeric_limits<std::int64_t>::max()) {
    if (version < cache_pins_schema) return {};
    auto q = conn.cached(standing_answer_sql);
    q->bind(1, device_id);
    q->bind(2, kernel_id);
    q->bind(3, problem);
    q->bind(4, before);
    return q->step() ? q->text(0) : std::string();
  }

  // The tie set of a key whose fastest ok trial takes fastest_ms (answers.hpp), keeping `standing`.
  StoredTies ties(std::int64_t device_id, std::int64_t kernel_id, std::string_view problem, double fastest_ms,
                  std::string_view standing) {
    StoredTies out;
    auto q = conn.cached(ties_sql);
    q->bind(1, device_id);
    q->bind(2, kernel_id);
    q->bind(3, problem);
    q->bind(4, tie_time_bound(fastest_ms));
    std::vector<TieTrial> tie_trials;
    while (q->step()) {
      out.ids.push_back(q->int64(0));
      out.trials.push_back(read_trial(*q, 1, conn.path()));
      tie_trials.push_back(tie_trial_of(out.trials.back()));
    }
    if (!tie_trials.empty()) out.set = tie_set(tie_trials, standing);
    return out;
  }

  // The answer of a time-objective entry: the tie set's pick instead of the fastest trial.
  void settle_ties(BestEntry& e) {
    e.fastest_params = e.trial.key.params;
    e.fastest_ms = e.trial.time_ms.value_or(0.0);
    const std::string standing = standing_answer(e.device.id, e.kernel_id, e.trial.key.problem);
    const StoredTies t = ties(e.device.id, e.kernel_id, e.trial.key.problem, e.fastest_ms, standing);
    if (t.trials.empty()) return;
    for (const std::size_t i : t.set.members) e.tie_params.push_back(t.trials[i].key.params);
    for (const std::size_t i : t.set.holdable) e.holdable_params.push_back(t.trials[i].key.params);
    e.fastest_params = t.trials[t.set.fastest].key.params;  // equal times: the first in config order
    e.tie_spread = t.set.spread;
    e.trial_id = t.ids[t.set.pick];
    e.trial = t.trials[t.set.pick];
  }

  // runs and winner_changes of an entry, from answer_history (schema 9).
  void read_history(BestEntry& e) {
    if (version < cache_pins_schema) return;
    auto q = conn.cached(
        "SELECT params FROM answer_history WHERE device_id = ?1 AND kernel_id = ?2 AND problem = ?3 ORDER BY run_seq");
    q->bind(1, e.device.id);
    q->bind(2, e.kernel_id);
    q->bind(3, e.trial.key.problem);
    std::string previous;
    while (q->step()) {
      std::string params = q->text(0);
      if (e.runs > 0 && params != previous) ++e.winner_changes;
      ++e.runs;
      previous = std::move(params);
    }
  }

  // The run a write to a kernel version belongs to: the version's used_seq.
  std::int64_t run_of(std::int64_t kernel_id) {
    auto q = conn.cached("SELECT used_seq FROM kernels WHERE id = ?1");
    q->bind(1, kernel_id);
    return q->step() ? q->int64(0) : std::numeric_limits<std::int64_t>::max();
  }

  // After a write to a key: its answer as this run (the version's used_seq) leaves it.
  void record_answer(const TrialKey& key) {
    std::optional<double> fastest;
    {
      auto q = conn.cached("SELECT time_ms FROM best WHERE device_id = ?1 AND kernel_id = ?2 AND problem = ?3");
      q->bind(1, key.device_id);
      q->bind(2, key.kernel_id);
      q->bind(3, key.problem);
      if (q->step()) fastest = q->real(0);
    }
    if (!fastest) return;
    // The answer this run leaves: the previous runs' answer while it is still held.
    const StoredTies t = ties(key.device_id, key.kernel_id, key.problem, *fastest,
                              standing_answer(key.device_id, key.kernel_id, key.problem, run_of(key.kernel_id)));
    if (t.trials.empty()) return;
    const TrialRecord& pick = t.trials[t.set.pick];
    auto up = conn.cached(
        "INSERT INTO answer_history(device_id, kernel_id, problem, run_seq, params, time_ms, ties) "
        "SELECT ?1, ?2, ?3, used_seq, ?4, ?5, ?6 FROM kernels WHERE id = ?2 "
        "ON CONFLICT(device_id, kernel_id, problem, run_seq) DO UPDATE SET params = excluded.params, "
        "time_ms = excluded.time_ms, ties = excluded.ties");
    up->bind(1, key.device_id);
    up->bind(2, key.kernel_id);
    up->bind(3, key.problem);
    up->bind(4, pick.key.params);
    up->bind(5, pick.time_ms.value_or(0.0));
    up->bind(6, static_cast<std::int64_t>(t.set.members.size()));
    up->run();
  }

  void require_writable(std::string_view what) const {
    if (options.mode == Mode::read_only)
      throw DbError(fmt::format("{}: {} needs the cache opened read-write", conn.path().string(), what),
                    std::string(what), {}, conn.path());
  }
};

CacheDb::CacheDb(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
CacheDb::CacheDb(CacheDb&&) noexcept = default;
CacheDb& CacheDb::operator=(CacheDb&&) noexcept = default;
CacheDb::~CacheDb() = default;

CacheDb CacheDb::open(const fs::path& path, Mode mode) {
  Options o;
  o.mode = mode;
  return open(path, o);
}

CacheDb CacheDb::open(const fs::path& path, Options options) {
  const bool read_only = options.mode == Mode::read_only;
  const int latest = db_detail::latest_schema_version();
  // The file's own bytes first: what is refused here SQLite never opens, so neither the file nor
  // its -wal, -shm or -journal can change.
  const cache_file::Inspection seen = cache_file::inspect(path, cache_application_id, latest);
  std::string uri;
  if (seen.verdict == cache_file::Verdict::missing && !read_only) {
    std::error_code ec;
    if (options.create_directories && path.has_parent_path()) {
      fs::create_directories(path.parent_path(), ec);
      if (ec)
        throw DbError(
            fmt::format("cannot create the directory {} for the cache: {}", path.parent_path().string(), ec.message()),
            "create_directories", {}, path);
    }
  } else if (seen.verdict != cache_file::Verdict::ok) {
    refuse(path, seen);
  } else if (read_only) {
    const cache_file::Inspection opened = cache_file::read_only_uri(path, seen.header, uri);
    if (opened.verdict != cache_file::Verdict::ok) refuse(path, opened);
  }

  // One connection is used by one thread at a time, so SQLite's own mutexes are not needed.
  int flags = (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX;
  Connection conn(path, flags, uri);
  // busy_timeout first: even reading the header below may have to wait for another writer.
  int rc = sqlite3_busy_timeout(conn.get(), static_cast<int>(options.busy_timeout.count()));
  if (rc != SQLITE_OK) db_detail::throw_sqlite(conn.get(), rc, "sqlite3_busy_timeout", {}, path);

  const cache_file::Header s = read_state(conn);
  if (read_only) {
    if (is_blank(s))
      throw DbError(fmt::format("{} is empty, not a tiletune cache yet (opened read-only, so it is "
                                "not initialized)",
                                path.string()),
                    "user_version", {}, path);
    conn.exec("PRAGMA query_only = ON");  // a second guard beside SQLITE_OPEN_READONLY
    return CacheDb(std::make_unique<Impl>(std::move(conn), options, static_cast<int>(s.user_version)));
  }

  // Only now, with the file known to be ours or empty, is anything written to it: the schema
  // first, in the rollback journal (a migration that fails rolls back to the very bytes there
  // were), then the switch to WAL.
  conn.exec("PRAGMA foreign_keys = ON");
  conn.exec("PRAGMA synchronous = FULL");
  if (is_blank(s) || s.user_version < latest) create_or_migrate(conn);
  bool wal = false;
  if (options.wal && on_local_disk(path)) {
    wal = conn.query_text("PRAGMA journal_mode") == "wal";
    if (!wal) {
      try {
        wal = conn.query_text("PRAGMA journal_mode = WAL") == "wal";
      } catch (const DbError&) {
        // Refused (e.g. busy past the timeout): keep the rollback journal, which still works.
      }
    }
  }
  // NORMAL is durable enough with WAL (a crash loses at most the last commits, never
  // consistency); with a rollback journal only FULL keeps that promise.
  if (wal) conn.exec("PRAGMA synchronous = NORMAL");
  return CacheDb(std::make_unique<Impl>(std::move(conn), options, latest));
}

struct CacheDb::Batch::State {
  explicit State(Connection& conn) : tx(conn) {}
  Transaction tx;
};

CacheDb::Batch::Batch(std::unique_ptr<State> state) noexcept : state_(std::move(state)) {}
CacheDb::Batch::Batch(Batch&&) noexcept = default;
CacheDb::Batch::~Batch() = default;

void CacheDb::Batch::commit() {
  if (state_) state_->tx.commit();
  state_.reset();
}

CacheDb::Batch CacheDb::batch() {
  impl_->require_writable("batch");
  return Batch(std::make_unique<Batch::State>(impl_->conn));
}

const fs::path& CacheDb::path() const noexcept { return impl_->conn.path(); }
CacheDb::Mode CacheDb::mode() const noexcept { return impl_->options.mode; }
int CacheDb::schema_version() const noexcept { return impl_->version; }
int CacheDb::latest_schema_version() noexcept { return db_detail::latest_schema_version(); }
std::string CacheDb::journal_mode() const { return impl_->conn.query_text("PRAGMA journal_mode"); }

// --- devices and kernels ---------------------------------------------------------------------

std::int64_t CacheDb::upsert_device(const DeviceRecord& d) {
  impl_->require_writable("upsert_device");
  if (const std::string defect = db_detail::device_defect(d); !defect.empty())
    throw DbError(fmt::format("upsert_device on {}: {}", path().string(), defect), "upsert_device", {}, path());
  auto& conn = impl_->conn;
  Transaction tx(conn);
  {
    // A description keeps the stored value when not known this time (upsert_device_sql).
    static const std::string upsert_sql = upsert_device_sql();
    auto up = conn.cached(upsert_sql);
    int parameter = 0;
    for (const DeviceColumn& c : device_columns) bind_value(*up, ++parameter, c.get(d));
    up->run();
  }
  std::int64_t id = 0;
  {
    auto q = conn.cached("SELECT id FROM devices WHERE uuid = ?1");
    q->bind(1, d.uuid);
    if (!q->step()) db_detail::throw_sqlite(conn.get(), SQLITE_INTERNAL, "sqlite3_step (no row)", q->sql(), path());
    id = q->int64(0);
  }
  tx.commit();
  return id;
}

std::optional<DeviceRow> CacheDb::device(std::string_view uuid) const {
  auto q = impl_->conn.cached(impl_->device_sql);
  q->bind(1, uuid);
  if (!q->step()) return std::nullopt;
  return read_device(*q, 0);
}

std::vector<DeviceRow> CacheDb::devices() const {
  auto q = impl_->conn.cached(impl_->devices_sql);
  std::vector<DeviceRow> out;
  while (q->step()) out.push_back(read_device(*q, 0));
  return out;
}

std::int64_t CacheDb::upsert_kernel(const KernelRecord& k) {
  impl_->require_writable("upsert_kernel");
  if (const std::string defect = db_detail::kernel_defect(k); !defect.empty())
    throw DbError(fmt::format("upsert_kernel on {}: {}", path().string(), defect), "upsert_kernel", {}, path());
  auto& conn = impl_->conn;
  Transaction tx(conn);
  {
    // used_seq: one more than any version so far, which makes this version the current one
    // (common/kernel_version.hpp).
    static const std::string upsert_sql = fmt::format(
        "INSERT INTO kernels(name, source_hash, options, nvrtc_version, used_seq) "
        "VALUES (?1, ?2, ?3, ?4, {}) "
        "ON CONFLICT(name, source_hash, options, nvrtc_version) DO UPDATE SET "
        "used_seq = excluded.used_seq",
        kernel_version::next_used_seq_sql);
    auto up = conn.cached(upsert_sql);
    up->bind(1, k.name);
    up->bind(2, k.source_hash);
    up->bind(3, k.options);
    up->bind(4, k.nvrtc_version);
    up->run();
  }
  std::optional<std::int64_t> id = find_kernel(k);
  if (!id) db_detail::throw_sqlite(conn.get(), SQLITE_INTERNAL, "upsert_kernel (row missing after insert)", {}, path());
  tx.commit();
  return *id;
}

std::optional<std::int64_t> CacheDb::find_kernel(const KernelRecord& k) const {
  auto q = impl_->conn.cached(
      "SELECT id FROM kernels WHERE name = ?1 AND source_hash = ?2 AND options = ?3 "
      "AND nvrtc_version = ?4");
  q->bind(1, k.name);
  q->bind(2, k.source_hash);
  q->bind(3, k.options);
  q->bind(4, k.nvrtc_version);
  if (!q->step()) return std::nullopt;
  return q->int64(0);
}

// --- trials and best -------------------------------------------------------------------------

RecordResult CacheDb::record_trial(const TrialRecord& t) {
  impl_->require_writable("record_trial");
  auto& conn = impl_->conn;
  if (const std::string defect = db_detail::trial_defect(t); !defect.empty())
    throw DbError(fmt::format("record_trial on {}: {}", path().string(), defect), "record_trial", {}, path());

  RecordResult result;
  Transaction tx(conn);
  std::optional<std::int64_t> existing;
  {
    auto q = conn.cached(
        "SELECT id FROM trials WHERE device_id = ?1 AND kernel_id = ?2 AND problem = ?3 "
        "AND params = ?4");
    q->bind(1, t.key.device_id);
    q->bind(2, t.key.kernel_id);
    q->bind(3, t.key.problem);
    q->bind(4, t.key.params);
    if (q->step()) existing = q->int64(0);
  }
  {
    static const std::string upsert = trial_upsert_sql();
    auto up = conn.cached(upsert);
    bind_trial(*up, t);
    up->run();
  }
  result.replaced = existing.has_value();
  result.trial_id = existing ? *existing : sqlite3_last_insert_rowid(conn.get());
  {
    auto p = conn.cached("INSERT OR IGNORE INTO problems(kernel_id, sizes, sizes_json) VALUES (?1, ?2, ?3)");
    p->bind(1, t.key.kernel_id);
    p->bind(2, t.key.problem);
    p->bind(3, sizes_to_json(t.key.problem));
    p->run();
  }
  if (existing) {
    // A re-measured trial may have been the best and may now be slower (or failed): the minimum
    // cannot be updated incrementally, so recompute it from the ok trials of the key.
    auto del = conn.cached("DELETE FROM best WHERE device_id = ?1 AND kernel_id = ?2 AND problem = ?3");
    del->bind(1, t.key.device_id);
    del->bind(2, t.key.kernel_id);
    del->bind(3, t.key.problem);
    del->run();
    auto ins = conn.cached(
        "INSERT INTO best(device_id, kernel_id, problem, trial_id, time_ms) "
        "SELECT device_id, kernel_id, problem, id, time_ms FROM trials "
        "WHERE device_id = ?1 AND kernel_id = ?2 AND problem = ?3 AND status = 'ok' "
        "ORDER BY time_ms, id LIMIT 1");
    ins->bind(1, t.key.device_id);
    ins->bind(2, t.key.kernel_id);
    ins->bind(3, t.key.problem);
    ins->run();
  } else if (t.status == TrialStatus::ok) {
    // The upsert that keeps the minimum: an existing best is only replaced by a faster trial.
    auto up = conn.cached(
        "INSERT INTO best(device_id, kernel_id, problem, trial_id, time_ms) "
        "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(device_id, kernel_id, problem) DO UPDATE SET "
        "trial_id = excluded.trial_id, time_ms = excluded.time_ms "
        "WHERE excluded.time_ms < best.time_ms");
    up->bind(1, t.key.device_id);
    up->bind(2, t.key.kernel_id);
    up->bind(3, t.key.problem);
    up->bind(4, result.trial_id);
    up->bind(5, *t.time_ms);
    up->run();
  }
  if (t.status == TrialStatus::ok) {
    auto q = conn.cached("SELECT trial_id FROM best WHERE device_id = ?1 AND kernel_id = ?2 AND problem = ?3");
    q->bind(1, t.key.device_id);
    q->bind(2, t.key.kernel_id);
    q->bind(3, t.key.problem);
    result.is_best = q->step() && q->int64(0) == result.trial_id;
  }
  if (t.status == TrialStatus::ok || existing) impl_->record_answer(t.key);
  tx.commit();
  return result;
}

bool CacheDb::has_trial(const TrialKey& key) const {
  auto q = impl_->conn.cached(
      "SELECT 1 FROM trials WHERE device_id = ?1 AND kernel_id = ?2 AND problem = ?3 AND params = ?4");
  q->bind(1, key.device_id);
  q->bind(2, key.kernel_id);
  q->bind(3, key.problem);
  q->bind(4, key.params);
  return q->step();
}

std::unordered_set<std::string> CacheDb::existing_trials(std::int64_t device_id, std::int64_t kernel_id,
                                                         std::string_view problem) const {
  auto q = impl_->conn.cached("SELECT params FROM trials WHERE device_id = ?1 AND kernel_id = ?2 AND problem = ?3");
  q->bind(1, device_id);
  q->bind(2, kernel_id);
  q->bind(3, problem);
  std::unordered_set<std::string> out;
  while (q->step()) out.insert(q->text(0));
  return out;
}

std::vector<TrialRow> CacheDb::trials(const TrialFilter& f) const {
  auto q = impl_->conn.cached(impl_->trials_sql);
  q->bind(1, f.kernel);
  q->bind(2, f.device);
  if (f.status)
    q->bind(3, status_name(*f.status));
  else
    q->bind_null(3);
  q->bind(4, f.problem);
  q->bind(5, f.current_only ? 1 : 0);
  q->bind(6, f.limit.value_or(-1));  // a negative LIMIT means none
  std::vector<TrialRow> out;
  while (q->step()) {
    TrialRow r;
    int c = 0;
    r.id = q->int64(c++);
    r.trial = read_trial(*q, c, path());
    c += trial_select_count;
    r.device_uuid = q->text(c++);
    r.device_name = q->text(c++);
    read_kernel(*q, c, r.kernel);
    c += kernel_column_count;
    r.created_at = q->text(c++);
    r.is_best = q->int64(c++) != 0;
    r.current = q->int64(c++) != 0;
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<BestEntry> CacheDb::best(const BestFilter& f) const {
  if (f.objective != Objective::time && impl_->best_objective_sql[static_cast<int>(f.objective)].empty())
    return {};  // a cache older than schema 4 has no energy
  auto q = impl_->conn.cached(
      f.objective == Objective::time ? impl_->best_sql : impl_->best_objective_sql[static_cast<int>(f.objective)]);
  q->bind(1, f.kernel);
  q->bind(2, f.device);
  q->bind(3, f.problem);
  q->bind(4, f.current_only ? 1 : 0);
  std::vector<BestEntry> out;
  while (q->step()) out.push_back(impl_->read_best(*q));
  q->reset();
  const std::vector<PinRecord> all_pins = pins(f.kernel.value_or(""));
  for (BestEntry& e : out) {
    if (f.objective == Objective::time)
      impl_->settle_ties(e);
    else {
      e.fastest_params = e.trial.key.params;
      e.fastest_ms = e.trial.time_ms.value_or(0.0);
    }
    impl_->read_history(e);
    // The most specific pin: device, then model, then architecture (PinScope's order).
    for (const PinRecord& p : all_pins)
      if (p.kernel == e.kernel.name && p.problem == sorted_assignments(e.trial.key.problem) &&
          pin_applies(p, e.device.device) && (!e.pin || p.scope < e.pin->scope))
        e.pin = p;
    if (e.pin) {
      auto t = impl_->conn.cached(impl_->trial_by_key_sql);
      t->bind(1, e.device.id);
      t->bind(2, e.kernel_id);
      t->bind(3, e.trial.key.problem);
      t->bind(4, e.pin->params);
      if (t->step()) e.pinned_trial = read_trial(*t, 0, path());
    }
  }
  return out;
}

std::optional<BestEntry> CacheDb::best_for(const KernelRecord& k, std::string_view device_uuid,
                                           std::string_view problem) const {
  auto q = impl_->conn.cached(impl_->best_for_sql);
  q->bind(1, k.name);
  q->bind(2, k.source_hash);
  q->bind(3, k.options);
  q->bind(4, k.nvrtc_version);
  q->bind(5, device_uuid);
  q->bind(6, problem);
  if (!q->step()) return std::nullopt;
  return impl_->read_best(*q);
}

std::vector<std::string> CacheDb::problems(std::string_view kernel_name) const {
  auto q =
      impl_->conn.cached(fmt::format("SELECT p.sizes FROM problems p JOIN kernels k ON k.id = p.kernel_id "
                                     "WHERE k.name = ?1 AND {} ORDER BY p.sizes",
                                     kernel_is_current));
  q->bind(1, kernel_name);
  std::vector<std::string> out;
  while (q->step()) out.push_back(q->text(0));
  return out;
}

// --- pins ------------------------------------------------------------------------------------

void CacheDb::pin(const PinRecord& p) {
  impl_->require_writable("pin");
  if (p.target.empty() || p.kernel.empty() || p.params.empty())
    throw DbError(fmt::format("pin on {}: a pin needs a target, a kernel and params", path().string()), "pin", {},
                  path());
  auto& conn = impl_->conn;
  Transaction tx(conn);
  {
    auto up = conn.cached(
        "INSERT OR REPLACE INTO pins(scope, target, kernel, problem, params, reason, created_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, coalesce(nullif(?7, ''), strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))");
    up->bind(1, pin_scope_name(p.scope));
    up->bind(2, p.target);
    up->bind(3, p.kernel);
    up->bind(4, sorted_assignments(p.problem));
    up->bind(5, p.params);
    up->bind(6, p.reason);
    up->bind(7, p.created_at);
    up->run();
  }
  tx.commit();
}

bool CacheDb::unpin(PinScope scope, std::string_view target, std::string_view kernel, std::string_view problem) {
  impl_->require_writable("unpin");
  auto& conn = impl_->conn;
  Transaction tx(conn);
  {
    auto del = conn.cached("DELETE FROM pins WHERE scope = ?1 AND target = ?2 AND kernel = ?3 AND problem = ?4");
    del->bind(1, pin_scope_name(scope));
    del->bind(2, target);
    del->bind(3, kernel);
    del->bind(4, sorted_assignments(problem));
    del->run();
  }
  const bool removed = sqlite3_changes(conn.get()) > 0;
  tx.commit();
  return removed;
}

std::vector<PinRecord> CacheDb::pins(std::string_view kernel) const {
  if (impl_->version < cache_pins_schema) return {};
  auto q = impl_->conn.cached(
      "SELECT scope, target, kernel, problem, params, reason, created_at FROM pins WHERE coalesce(?1, '') = '' "
      "OR kernel = ?1 "
      "ORDER BY kernel, problem, scope, target");
  q->bind(1, kernel);
  std::vector<PinRecord> out;
  while (q->step()) {
    const std::string scope = q->text(0);
    const auto parsed = parse_pin_scope(scope);
    if (!parsed)
      throw DbError(fmt::format("{}: unknown pin scope '{}' in pins", path().string(), scope), "sqlite3_column_text",
                    std::string(q->sql()), path());
    out.push_back(PinRecord{*parsed, q->text(1), q->text(2), q->text(3), q->text(4), q->text(5), q->text(6)});
  }
  return out;
}

std::string CacheDb::standing_answer(const TrialKey& key) const {
  return impl_->standing_answer(key.device_id, key.kernel_id, key.problem, impl_->run_of(key.kernel_id));
}

std::vector<AnswerRecord> CacheDb::answer_history() const {
  if (impl_->version < cache_pins_schema) return {};
  auto q = impl_->conn.cached(
      fmt::format("SELECT d.uuid, {}, {}, h.problem, h.run_seq, h.params, h.time_ms, h.ties FROM answer_history h "
                  "JOIN devices d ON d.id = h.device_id JOIN kernels k ON k.id = h.kernel_id "
                  "ORDER BY k.id, h.run_seq, d.uuid, h.problem",
                  kernel_columns, kernel_is_current));
  std::vector<AnswerRecord> out;
  while (q->step()) {
    AnswerRecord a;
    a.device_uuid = q->text(0);
    (void)read_kernel(*q, 1, a.kernel);
    int c = 1 + kernel_column_count;
    a.current = q->int64(c++) != 0;
    a.problem = q->text(c++);
    a.run_seq = q->int64(c++);
    a.params = q->text(c++);
    a.time_ms = q->real(c++);
    a.ties = q->int64(c++);
    out.push_back(std::move(a));
  }
  return out;
}

void CacheDb::append_answer_run(std::int64_t kernel_id, const std::vector<AnswerRecord>& answers) {
  impl_->require_writable("append_answer_run");
  if (impl_->version < cache_pins_schema || answers.empty()) return;
  auto& conn = impl_->conn;
  Transaction tx(conn);
  {
    auto bump = conn.cached("UPDATE kernels SET used_seq = (SELECT max(used_seq) + 1 FROM kernels) WHERE id = ?1");
    bump->bind(1, kernel_id);
    bump->run();
  }
  for (const AnswerRecord& a : answers) {
    auto up = conn.cached(
        "INSERT INTO answer_history(device_id, kernel_id, problem, run_seq, params, time_ms, ties) "
        "SELECT d.id, k.id, ?3, k.used_seq, ?4, ?5, ?6 FROM devices d, kernels k WHERE d.uuid = ?1 AND k.id = ?2 "
        "ON CONFLICT(device_id, kernel_id, problem, run_seq) DO UPDATE SET params = excluded.params, "
        "time_ms = excluded.time_ms, ties = excluded.ties");
    up->bind(1, a.device_uuid);
    up->bind(2, kernel_id);
    up->bind(3, a.problem);
    up->bind(4, a.params);
    up->bind(5, a.time_ms);
    up->bind(6, a.ties);
    up->run();
  }
  tx.commit();
}

// --- cubins and meta -------------------------------------------------------------------------

void CacheDb::put_cubin(const CubinRecord& c) {
  impl_->require_writable("put_cubin");
  auto& conn = impl_->conn;
  Transaction tx(conn);
  {
    auto up = conn.cached(
        "INSERT INTO cubins(key, arch, cubin, lowered_name) VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT(key) DO UPDATE SET arch = excluded.arch, cubin = excluded.cubin, "
        "lowered_name = excluded.lowered_name, created_at = excluded.created_at");
    up->bind(1, c.key);
    up->bind(2, c.arch);
    up->bind_blob(3, c.cubin);
    up->bind(4, c.lowered_name);
    up->run();
  }
  tx.commit();
}

std::optional<CubinRecord> CacheDb::get_cubin(std::string_view key) const {
  if (impl_->version < 2) return std::nullopt;  // an old cache opened read-only: no cubins table
  auto q = impl_->conn.cached("SELECT key, arch, cubin, lowered_name FROM cubins WHERE key = ?1");
  q->bind(1, key);
  if (!q->step()) return std::nullopt;
  return CubinRecord{q->text(0), q->text(1), q->blob(2), q->text(3)};
}

std::optional<std::string> CacheDb::meta(std::string_view key) const {
  auto q = impl_->conn.cached("SELECT value FROM meta WHERE key = ?1");
  q->bind(1, key);
  if (!q->step() || q->is_null(0)) return std::nullopt;
  return q->text(0);
}

void CacheDb::set_meta(std::string_view key, std::string_view value) {
  impl_->require_writable("set_meta");
  auto& conn = impl_->conn;
  Transaction tx(conn);
  {
    auto up = conn.cached("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)");
    up->bind(1, key);
    up->bind(2, value);
    up->run();
  }
  tx.commit();
}

}  // namespace tiletune
