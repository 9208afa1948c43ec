// QueryCache: opening a tuning cache read-only, the lookup with its fallback levels, and the
// in-process memory of answers. See tiletune/query.hpp for the contract.
//
// Match rules (only `ok` trials of the kernel's current version count: the kernels row with the
// highest used_seq for the name, ties to the highest id, common/kernel_version.hpp's rule, which
// the engine applies too):
//  0. pinned (schema 9): a pin of the kernel and the exact problem for the request's device UUID,
//     else its model (the request's name, or the name the cache stores for its UUID), else its
//     architecture ("sm_90", from the request or the cache as in 3).
//  1. exact: a best row of this device (the UUID's row; with no UUID, every row of that name)
//     for the same problem (same size names and values, in any order). Several devices of one
//     name: the fastest of them.
//  2. nearest_problem: this device's best row whose problem has the same size names and the
//     smallest distance sum_i |log a_i - log b_i|; ties go to the smaller problem, then the
//     faster time. A size <= 0 only matches itself.
//  3. same_architecture: devices with the request's compute capability (or, when the request
//     has none, the capability the cache stores for its UUID or name), other than those of
//     1-2: an exact problem first, else the nearest; ties prefer a device with the request's
//     name, then the faster time.
//  4. portable_default (CLBlast's rule): over every (device, problem) pair with ok trials, a
//     config's relative time on a pair is its time / the pair's best time; the winner is the
//     config measured on all pairs with the lowest mean relative time. When no config covers
//     every pair (random search, failures), the rule runs over the configs that cover the most
//     pairs. Ties go to the smaller params text.
//  5. none: the caller's defaults.
// At levels 1-3 the winner found is the fastest of its device and problem (the best table); the
// answer is then the pick of its tie set (tiletune/answers.hpp), read from the trials of that
// device and problem no slower than the cap: one indexed range of the trials' unique key.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <unordered_map>

#include "common/cache_file.hpp"
#include "common/kernel_version.hpp"
#include "query/reader.hpp"
#include "tiletune/answers.hpp"
#include "tiletune/physics.hpp"
#include "tiletune/query.hpp"
#include "tiletune/trial_record.hpp"

namespace tiletune {

using query_detail::Failure;
using query_detail::Statement;

namespace {

namespace fs = std::filesystem;

// The file's identity and the schema versions this reader knows are the engine's, declared once
// in tiletune/trial_record.hpp. Versions 1-3 differ only in tables and columns it does not read
// (cubins, an index, devices.copy_gbps), so one set of statements serves them all; version 4 adds
// trials.energy_mj and power_w, read only for the energy objectives; versions 5, 6 and 7 add
// measurement columns, the compile log, the samples (times_ms) and the verification time, which
// only trials_json reads (through the column table); version 8 is the physics guard's trial
// status (only 'ok' trials are read); version 9 adds the pins table, read only from that version
// on, answer_history (not read here) and the index the tie set's statement uses where it exists;
// version 11 adds the trial's NVML readings, which only trials_json reads (the column table).
// A new migration must be checked against the statements below when it raises cache_newest_schema.
constexpr std::int64_t application_id = cache_application_id;
constexpr int oldest_schema = cache_oldest_schema;
constexpr int newest_schema = cache_newest_schema;
constexpr int energy_schema = trial_column("energy_mj").since_schema;
constexpr int pins_schema = cache_pins_schema;
constexpr int ceilings_schema = trial_column("ceiling_gbps").since_schema;
constexpr std::size_t memory_limit = 1 << 16;  // answers kept; all forgotten when full

// A refusal by cache_file.hpp's checks, as a Failure with its status.
[[noreturn]] void refuse(const fs::path& path, const cache_file::Inspection& seen) {
  using cache_file::Verdict;
  const std::string& why = seen.reason;
  switch (seen.verdict) {
    case Verdict::missing:
      throw Failure(QueryStatus::io_error, path.string() +
                                               ": no tiletune cache there (run `tiletune tune` "
                                               "to create one, or set TILETUNE_DB)");
    case Verdict::foreign:
      throw Failure(QueryStatus::not_a_cache, path.string() + " is not a tiletune cache (" + why + ", expected " +
                                                  cache_file::hex32(application_id) + ")");
    case Verdict::directory:
    case Verdict::not_regular:
    case Verdict::not_sqlite:
      throw Failure(QueryStatus::not_a_cache, path.string() + " is not a tiletune cache (" + why + ")");
    case Verdict::bad_version:
      throw Failure(QueryStatus::unsupported_schema, path.string() + " has " + why + ": refusing to read it");
    case Verdict::newer:
      throw Failure(QueryStatus::unsupported_schema, path.string() + " was written by a newer tiletune (" + why +
                                                         "; this query library reads "
                                                         "versions " +
                                                         std::to_string(oldest_schema) + " to " +
                                                         std::to_string(newest_schema) + "): upgrade the library");
    case Verdict::ok:
    case Verdict::unreadable:
    case Verdict::unreadable_wal: break;
  }
  throw Failure(QueryStatus::io_error, path.string() + ": " + why);
}

struct DeviceRow {
  std::int64_t id = 0;
  std::string uuid;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
};

// A candidate answer at levels 1-3. Ordered by `better`.
struct Candidate {
  bool set = false;
  double distance = 0.0;
  int name_rank = 0;                 // 0: the request's device name (or one of the request's own devices)
  std::vector<std::int64_t> values;  // sizes in name order, for the "smaller problem" tie-break
  double time_ms = 0.0;
  double score = 0.0;  // the objective's value (time_ms for the time objective)
  double energy_mj = -1.0;
  std::int64_t device_id = 0;
  std::string problem;
  std::string params;
  std::string device_name;
  std::string device_uuid;
};

bool close(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)}); }

bool better(const Candidate& a, const Candidate& b) {
  if (!b.set) return a.set;
  if (!close(a.distance, b.distance)) return a.distance < b.distance;
  if (a.name_rank != b.name_rank) return a.name_rank < b.name_rank;
  // The names are equal (both matched the request's): compare the values.
  if (a.values != b.values) return a.values < b.values;
  if (a.score != b.score) return a.score < b.score;
  return a.device_id < b.device_id;
}

using SizeViews = std::vector<std::pair<std::string_view, std::int64_t>>;

// Parses a stored problem ("N=8192;R=3") into out, sorted by name, without allocating once out
// has grown. False for a text that is not NAME=INTEGER items (such a problem matches nothing).
bool parse_problem(std::string_view text, SizeViews& out) {
  out.clear();
  while (!text.empty()) {
    auto end = text.find_first_of(";,");
    std::string_view item = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (item.empty()) continue;
    auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) return false;
    std::int64_t v = 0;
    auto value = item.substr(eq + 1);
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || p != value.data() + value.size()) return false;
    out.emplace_back(item.substr(0, eq), v);
  }
  std::sort(out.begin(), out.end());
  return true;
}

// Distance in log space between two problems with the same size names; nullopt when the names
// differ or a non-positive size differs.
std::optional<double> distance(const SizeViews& want, const SizeViews& have) {
  if (want.size() != have.size()) return std::nullopt;
  double d = 0.0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (want[i].first != have[i].first) return std::nullopt;
    std::int64_t a = want[i].second;
    std::int64_t b = have[i].second;
    if (a == b) continue;
    if (a <= 0 || b <= 0) return std::nullopt;
    d += std::fabs(std::log(static_cast<double>(a)) - std::log(static_cast<double>(b)));
  }
  return d;
}

std::string memory_key(const QueryRequest& r) {
  std::string key;
  key.reserve(r.kernel.size() + r.device.uuid.size() + r.device.name.size() + 16 * r.sizes.size() + 16);
  key += r.kernel;
  key += '\x1f';
  key += r.device.uuid;
  key += '\x1f';
  key += r.device.name;
  key += '\x1f';
  key += std::to_string(r.device.cc_major);
  key += '.';
  key += std::to_string(r.device.cc_minor);
  key += '\x1f';
  key += objective_name(r.objective);
  for (const auto& [name, value] : r.sizes) {
    key += '\x1f';
    key += name;
    key += '=';
    key += std::to_string(value);
  }
  return key;
}

std::vector<QueryParam> to_params(std::string_view text) {
  std::string why;
  auto pairs = query_detail::parse_assignments(text, &why);
  if (!pairs)
    throw Failure(QueryStatus::internal_error,
                  "stored params '" + std::string(text) + "' are not NAME=INTEGER;...: " + why);
  std::vector<QueryParam> out;
  out.reserve(pairs->size());
  for (auto& [name, value] : *pairs) out.push_back(QueryParam{std::move(name), value});
  return out;
}

// A result with only a status: what is left to return when even the message cannot be built.
QueryResult bare(QueryStatus status) noexcept {
  QueryResult r;
  r.status = status;
  return r;
}

QueryResult failure_result(QueryStatus status, std::string message) {
  QueryResult r;
  r.status = status;
  r.message = std::move(message);
  return r;
}

}  // namespace

std::string query_detail::checked_read_only_uri(const fs::path& path) {
  const cache_file::Inspection seen = cache_file::inspect(path, application_id, newest_schema);
  if (seen.verdict != cache_file::Verdict::ok) refuse(path, seen);
  std::string uri;
  const cache_file::Inspection opened = cache_file::read_only_uri(path, seen.header, uri);
  if (opened.verdict != cache_file::Verdict::ok) refuse(path, opened);
  return uri;
}

// --- names ------------------------------------------------------------------------------------

std::string_view match_level_name(MatchLevel level) noexcept {
  switch (level) {
    case MatchLevel::exact: return "exact";
    case MatchLevel::nearest_problem: return "nearest_problem";
    case MatchLevel::same_architecture: return "same_architecture";
    case MatchLevel::portable_default: return "portable_default";
    case MatchLevel::none: return "none";
    case MatchLevel::pinned: return "pinned";
  }
  return "unknown";
}

std::string_view query_status_name(QueryStatus status) noexcept {
  switch (status) {
    case QueryStatus::ok: return "ok";
    case QueryStatus::invalid_argument: return "invalid_argument";
    case QueryStatus::unknown_kernel: return "unknown_kernel";
    case QueryStatus::no_device: return "no_device";
    case QueryStatus::not_a_cache: return "not_a_cache";
    case QueryStatus::unsupported_schema: return "unsupported_schema";
    case QueryStatus::io_error: return "io_error";
    case QueryStatus::internal_error: return "internal_error";
  }
  return "unknown";
}

std::optional<std::int64_t> QueryResult::param(std::string_view name) const noexcept {
  for (const auto& p : params)
    if (p.name == name) return p.value;
  return std::nullopt;
}

// --- QueryCache::Impl -------------------------------------------------------------------------

struct QueryCache::Impl {
  // The statements, prepared on first use (an open that answers one exact lookup prepares only
  // what that needs) and kept for the connection's life.
  enum Sql {
    begin_sql,
    commit_sql,
    kernel_sql,
    kernel_names_sql,
    device_by_uuid_sql,
    device_by_name_sql,
    device_by_cc_sql,
    best_sql,
    ok_trials_sql,
    data_version_sql,
    best_energy_sql,
    best_edp_sql,
    ok_trials_energy_sql,
    ok_trials_edp_sql,
    ties_sql,
    pins_sql,
    pin_time_sql,
    standing_sql,
    headroom_sql,
    sql_count
  };
  static constexpr const char* sql_text[sql_count] = {
      "BEGIN DEFERRED",
      "COMMIT",
      kernel_version::current_id_sql,
      "SELECT DISTINCT name FROM kernels ORDER BY name LIMIT 20",
      "SELECT id, uuid, name, cc_major, cc_minor FROM devices WHERE uuid = ?1",
      "SELECT id, uuid, name, cc_major, cc_minor FROM devices WHERE name = ?1 ORDER BY id",
      "SELECT id, uuid, name, cc_major, cc_minor FROM devices WHERE cc_major = ?1 AND cc_minor = ?2 ORDER BY id",
      // best holds only ok trials; the join's conditions check again, for a hand-edited file.
      // (One join is cheaper here than a second statement for the winner's params.)
      "SELECT b.problem, t.time_ms, t.params, t.time_ms, NULL FROM best b JOIN trials t ON t.id = b.trial_id "
      "WHERE b.device_id = ?1 AND b.kernel_id = ?2 AND t.status = 'ok' AND t.kernel_id = ?2",
      "SELECT device_id, problem, params, time_ms FROM trials WHERE kernel_id = ?1 AND status = 'ok' AND time_ms > 0",
      "PRAGMA data_version",
      // Energy objectives (schema 4): per problem, the ok trial with the lowest score among those
      // with a measured energy (SQLite's bare columns of min() come from the row holding it).
      "SELECT problem, time_ms, params, min(energy_mj), energy_mj FROM trials WHERE device_id = ?1 AND "
      "kernel_id = ?2 AND status = 'ok' AND time_ms > 0 AND energy_mj > 0 GROUP BY problem",
      "SELECT problem, time_ms, params, min(energy_mj * time_ms), energy_mj FROM trials WHERE device_id = ?1 AND "
      "kernel_id = ?2 AND status = 'ok' AND time_ms > 0 AND energy_mj > 0 GROUP BY problem",
      "SELECT device_id, problem, params, energy_mj FROM trials WHERE kernel_id = ?1 AND status = 'ok' "
      "AND time_ms > 0 AND energy_mj > 0",
      "SELECT device_id, problem, params, energy_mj * time_ms FROM trials WHERE kernel_id = ?1 AND status = 'ok' "
      "AND time_ms > 0 AND energy_mj > 0",
      // The candidates of a tie set: ?4 is the cap above the fastest time (answers.hpp).
      "SELECT params, time_ms, stddev_ms, samples, coalesce(occupancy_driver, occupancy_offline), registers "
      "FROM trials WHERE device_id = ?1 AND kernel_id = ?2 AND problem = ?3 AND status = 'ok' AND time_ms > 0 "
      "AND time_ms <= ?4",
      "SELECT scope, target, params, reason FROM pins WHERE kernel = ?1 AND problem = ?2",
      "SELECT time_ms FROM trials WHERE device_id = ?1 AND kernel_id = ?2 AND problem = ?3 AND params = ?4 "
      "AND status = 'ok' AND time_ms > 0",
      standing_answer_sql,  // schema 9
      // The answer's rates and the ceilings the guard held it against (schema 8).
      "SELECT gbps, gflops, ceiling_gbps, ceiling_gflops FROM trials WHERE device_id = ?1 AND kernel_id = ?2 "
      "AND problem = ?3 AND params = ?4",
  };

  fs::path path;
  QueryOptions options;
  query_detail::Connection conn;
  int version = 0;
  std::unique_ptr<Statement> statements[sql_count];

  std::mutex mutex;  // guards everything below and the connection
  std::int64_t data_version = 0;
  std::chrono::steady_clock::time_point last_check;
  std::unordered_map<std::string, QueryResult> memory;
  std::map<std::pair<std::int64_t, Objective>, QueryResult> portable;  // by kernel id and objective
  std::vector<std::pair<std::string_view, std::int64_t>> scratch;      // scan's parsed problem

  Impl(fs::path p, const std::string& uri, QueryOptions o)
      : path(std::move(p)),
        options(o),
        conn(path.string(), uri,
             static_cast<int>(std::clamp<std::int64_t>(o.busy_timeout.count(), 0, std::numeric_limits<int>::max()))) {}

  Statement& stmt(Sql which) {
    auto& s = statements[which];
    if (!s) s = std::make_unique<Statement>(conn.get(), sql_text[which], conn.path());
    return *s;
  }

  static std::unique_ptr<Impl> open(const fs::path& path, QueryOptions options) {
    auto impl = std::make_unique<Impl>(path, query_detail::checked_read_only_uri(path), options);
    try {
      // One transaction for the header and data_version: the locks are taken once.
      query_detail::ReadTransaction tx(impl->stmt(begin_sql), impl->stmt(commit_sql));
      // One statement for the header, one snapshot (a writer may be creating the schema now).
      Statement q(impl->conn.get(),
                  "SELECT (SELECT application_id FROM pragma_application_id), "
                  "(SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master)",
                  path.string());
      Statement::Use use(q);
      if (!q.step()) throw Failure(QueryStatus::io_error, path.string() + ": cannot read the header");
      cache_file::Header header;
      header.application_id = q.int64(0);
      header.user_version = q.int64(1);
      header.objects = q.int64(2);
      if (header.application_id == 0 && header.user_version == 0 && header.objects == 0)
        throw Failure(QueryStatus::unsupported_schema,
                      path.string() + " is an empty SQLite database: not a tiletune cache yet");
      const cache_file::Inspection seen = cache_file::judge(header, application_id, newest_schema);
      if (seen.verdict != cache_file::Verdict::ok) refuse(path, seen);
      const std::int64_t user_version = header.user_version;
      impl->version = static_cast<int>(user_version);
      impl->data_version = impl->read_data_version();
    } catch (const Failure& f) {
      if (f.status() == QueryStatus::not_a_cache &&
          std::string_view(f.what()).find("SQLite code") != std::string_view::npos)
        throw Failure(QueryStatus::not_a_cache, path.string() + " is not a tiletune cache (not an SQLite database)");
      throw;
    }
    impl->conn.exec("PRAGMA query_only = ON");  // a second guard beside SQLITE_OPEN_READONLY
    impl->last_check = std::chrono::steady_clock::now();
    return impl;
  }

  std::int64_t read_data_version() {
    Statement& q = stmt(data_version_sql);
    Statement::Use use(q);
    if (!q.step()) throw Failure(QueryStatus::io_error, "PRAGMA data_version returned no row");
    return q.int64(0);
  }

  // Forgets the memory when another connection committed since the last check. Caller holds mutex.
  bool check_changed() {
    last_check = std::chrono::steady_clock::now();
    std::int64_t v = read_data_version();
    if (v == data_version) return false;
    data_version = v;
    memory.clear();
    portable.clear();
    return true;
  }

  std::vector<DeviceRow> devices(Statement& q) {
    std::vector<DeviceRow> out;
    while (q.step())
      out.push_back(DeviceRow{q.int64(0), std::string(q.text(1)), std::string(q.text(2)), static_cast<int>(q.int64(3)),
                              static_cast<int>(q.int64(4))});
    return out;
  }

  // Scans the best rows of one device, keeping the best exact and nearest candidates.
  static Sql best_statement(Objective o) {
    return o == Objective::energy ? best_energy_sql : o == Objective::edp ? best_edp_sql : best_sql;
  }

  void scan(const DeviceRow& d, std::int64_t kernel_id, const SizeViews& want, int name_rank, Objective objective,
            Candidate& exact, Candidate& nearest) {
    Statement& q = stmt(best_statement(objective));
    Statement::Use use(q);
    q.bind(1, d.id);
    q.bind(2, kernel_id);
    while (q.step()) {
      std::string_view problem = q.text(0);
      if (!parse_problem(problem, scratch)) continue;
      auto dist = distance(want, scratch);
      if (!dist) continue;
      Candidate& slot = *dist == 0.0 ? exact : nearest;
      if (slot.set && *dist > slot.distance && !close(*dist, slot.distance)) continue;  // cheap reject
      Candidate c;
      c.set = true;
      c.distance = *dist;
      c.name_rank = name_rank;
      c.values.reserve(scratch.size());
      for (const auto& kv : scratch) c.values.push_back(kv.second);
      c.time_ms = q.real(1);
      c.score = q.real(3);
      if (!q.is_null(4)) c.energy_mj = q.real(4);
      c.device_id = d.id;
      if (!better(c, slot)) continue;
      c.problem = std::string(problem);
      c.params = std::string(q.text(2));
      c.device_name = d.name;
      c.device_uuid = d.uuid;
      slot = std::move(c);
    }
  }

  static QueryResult from_candidate(Candidate c, MatchLevel level) {
    QueryResult r;
    r.match = level;
    r.params = to_params(c.params);
    r.params_text = std::move(c.params);
    r.problem = std::move(c.problem);
    r.time_ms = c.time_ms;
    r.energy_mj = c.energy_mj;
    r.device_name = std::move(c.device_name);
    r.device_uuid = std::move(c.device_uuid);
    return r;
  }

  // The answer at levels 1-3: the pick of the winner's tie set (time objective only; the energy
  // objectives rank by a single measured energy, which has no samples to test), with its headroom.
  QueryResult answer(Candidate c, MatchLevel level, std::int64_t kernel_id, Objective objective) {
    const std::int64_t device_id = c.device_id;
    QueryResult r = from_candidate(std::move(c), level);
    if (objective == Objective::time) settle_ties(r, device_id, kernel_id);
    read_headroom(r, device_id, kernel_id);
    return r;
  }

  // The time objective's answer: the tie set's pick (the standing answer while it is held) in
  // place of the fastest, with the set's size and spread.
  void settle_ties(QueryResult& r, std::int64_t device_id, std::int64_t kernel_id) {
    std::vector<TieTrial> trials;
    {
      Statement& q = stmt(ties_sql);
      Statement::Use use(q);
      q.bind(1, device_id);
      q.bind(2, kernel_id);
      q.bind(3, r.problem);
      q.bind_real(4, tie_time_bound(r.time_ms));
      while (q.step()) {
        TieTrial t;
        t.params = std::string(q.text(0));
        t.time_ms = q.real(1);
        if (!q.is_null(2)) t.stddev_ms = q.real(2);
        if (!q.is_null(3)) t.samples = q.int64(3);
        if (!q.is_null(4)) t.occupancy = q.real(4);
        if (!q.is_null(5)) t.registers = q.int64(5);
        trials.push_back(std::move(t));
      }
    }
    if (trials.empty()) return;  // a hand-edited best row: keep what it says
    const TieSet set = tie_set(trials, standing_answer(device_id, kernel_id, r.problem));
    r.tie_count = set.members.size();
    r.tie_spread = set.spread;
    r.fastest_ms = trials[set.fastest].time_ms;
    TieTrial& pick = trials[set.pick];
    if (pick.params != r.params_text) {
      r.params = to_params(pick.params);
      r.params_text = std::move(pick.params);
      r.time_ms = pick.time_ms;
    }
  }

  // The key's standing answer (answers.hpp): its latest recorded answer; empty before schema 9.
  std::string standing_answer(std::int64_t device_id, std::int64_t kernel_id, const std::string& problem) {
    if (version < pins_schema) return {};
    Statement& q = stmt(standing_sql);
    Statement::Use use(q);
    q.bind(1, device_id);
    q.bind(2, kernel_id);
    q.bind(3, problem);
    q.bind(4, std::numeric_limits<std::int64_t>::max());
    return q.step() ? std::string(q.text(0)) : std::string();
  }

  // The answer's share of its ceiling (tiletune/physics.hpp), where the cache recorded both.
  void read_headroom(QueryResult& r, std::int64_t device_id, std::int64_t kernel_id) {
    if (version < ceilings_schema) return;
    Statement& q = stmt(headroom_sql);
    Statement::Use use(q);
    q.bind(1, device_id);
    q.bind(2, kernel_id);
    q.bind(3, r.problem);
    q.bind(4, r.params_text);
    if (!q.step()) return;
    auto real = [&q](int i) { return q.is_null(i) ? std::optional<double>() : std::optional<double>(q.real(i)); };
    if (const auto share = ceiling_share(real(0), real(1), real(2), real(3))) {
      r.headroom_percent = share->headroom_percent();
      r.ceiling_fraction = share->fraction;
      r.bound = share->compute_bound ? "compute" : "bandwidth";
    }
  }

  // Level 0: the pin of the request's device UUID, else its model, else its architecture.
  // A device pin needs the request's UUID: a name alone may be any GPU of the model.
  std::optional<QueryResult> pinned(const QueryRequest& req, const std::string& model, const std::string& arch) {
    if (version < pins_schema) return std::nullopt;
    Statement& q = stmt(pins_sql);
    Statement::Use use(q);
    q.bind(1, req.kernel);
    q.bind(2, query_detail::format_sizes(req.sizes));
    std::optional<QueryResult> best;
    int best_rank = 3;
    while (q.step()) {
      const std::string_view scope = q.text(0);
      const std::string_view target = q.text(1);
      int rank = 3;
      if (scope == "device" && !target.empty() && target == req.device.uuid)
        rank = 0;
      else if (scope == "model" && !model.empty() && target == model)
        rank = 1;
      else if (scope == "architecture" && !arch.empty() && target == arch)
        rank = 2;
      if (rank >= best_rank) continue;
      best_rank = rank;
      QueryResult r;
      r.match = MatchLevel::pinned;
      r.params_text = std::string(q.text(2));
      r.params = to_params(r.params_text);
      r.problem = query_detail::format_sizes(req.sizes);
      r.pin_scope = std::string(scope);
      r.pin_reason = std::string(q.text(3));
      best = std::move(r);
    }
    return best;
  }

  // A pin's time: its config's ok trial on the request's own device and problem, where there is one.
  void fill_pin_measurement(QueryResult& r, const std::vector<DeviceRow>& self, std::int64_t kernel_id) {
    Statement& q = stmt(pin_time_sql);
    for (const DeviceRow& d : self) {
      Statement::Use use(q);
      q.bind(1, d.id);
      q.bind(2, kernel_id);
      q.bind(3, r.problem);
      q.bind(4, r.params_text);
      if (!q.step()) continue;
      r.time_ms = q.real(0);
      r.device_name = d.name;
      r.device_uuid = d.uuid;
      return;
    }
  }

  QueryResult portable_default(std::int64_t kernel_id, Objective objective) {
    if (options.memory_cache) {
      if (auto it = portable.find({kernel_id, objective}); it != portable.end()) return it->second;
    }
    struct PairKey {
      std::int64_t device;
      std::string problem;
      bool operator==(const PairKey&) const = default;
    };
    struct PairHash {
      std::size_t operator()(const PairKey& k) const noexcept {
        return std::hash<std::string>()(k.problem) ^ (std::hash<std::int64_t>()(k.device) * 0x9e3779b97f4a7c15ULL);
      }
    };
    std::unordered_map<PairKey, std::size_t, PairHash> pairs;
    std::vector<double> pair_best;
    std::unordered_map<std::string, std::vector<std::pair<std::size_t, double>>> configs;
    {
      Statement& q = stmt(objective == Objective::energy ? ok_trials_energy_sql
                          : objective == Objective::edp  ? ok_trials_edp_sql
                                                         : ok_trials_sql);
      Statement::Use use(q);
      q.bind(1, kernel_id);
      while (q.step()) {
        PairKey key{q.int64(0), std::string(q.text(1))};
        double t = q.real(3);
        auto [it, inserted] = pairs.try_emplace(std::move(key), pair_best.size());
        if (inserted)
          pair_best.push_back(t);
        else
          pair_best[it->second] = std::min(pair_best[it->second], t);
        configs[std::string(q.text(2))].emplace_back(it->second, t);
      }
    }
    QueryResult r;
    if (configs.empty()) return r;  // none
    std::size_t coverage = 0;
    for (const auto& [params, times] : configs) coverage = std::max(coverage, times.size());
    const std::string* winner = nullptr;
    double winner_mean = 0.0;
    for (const auto& [params, times] : configs) {
      if (times.size() != coverage) continue;
      double sum = 0.0;
      for (const auto& [pair, t] : times) sum += t / pair_best[pair];
      double mean = sum / static_cast<double>(times.size());
      if (!winner || mean < winner_mean - 1e-12 || (close(mean, winner_mean) && params < *winner)) {
        winner = &params;
        winner_mean = mean;
      }
    }
    r.match = MatchLevel::portable_default;
    r.params = to_params(*winner);
    r.params_text = *winner;
    r.relative_time = winner_mean;
    if (coverage < pair_best.size())
      r.message = "no config was measured on all " + std::to_string(pair_best.size()) +
                  " (device, problem) pairs; chosen among those measured on " + std::to_string(coverage);
    if (options.memory_cache) portable.emplace(std::make_pair(kernel_id, objective), r);
    return r;
  }

  QueryResult compute(const QueryRequest& req) {
    query_detail::ReadTransaction tx(stmt(begin_sql), stmt(commit_sql));
    std::int64_t kernel_id = 0;
    {
      Statement& q = stmt(kernel_sql);
      Statement::Use use(q);
      q.bind(1, req.kernel);
      if (!q.step()) {
        std::string known;
        Statement& names_q = stmt(kernel_names_sql);
        Statement::Use names(names_q);
        while (names_q.step()) known += (known.empty() ? "" : ", ") + std::string(names_q.text(0));
        return failure_result(
            QueryStatus::unknown_kernel,
            "no kernel '" + req.kernel + "' was tuned in " + path.string() +
                (known.empty() ? std::string(" (it holds no kernels)") : " (it holds: " + known + ")"));
      }
      kernel_id = q.int64(0);
    }
    if (req.objective != Objective::time && version < energy_schema) {
      QueryResult none;
      none.message = path.string() + " has schema version " + std::to_string(version) +
                     ": it holds no energy measurements (objective " + std::string(objective_name(req.objective)) + ")";
      return none;
    }

    SizeViews want;  // a map: sorted already
    want.reserve(req.sizes.size());
    for (const auto& [name, value] : req.sizes) want.emplace_back(name, value);
    const QueryDevice& dev = req.device;

    // Levels 1-2: the request's own device (its UUID's row, or every row of its name).
    std::vector<DeviceRow> self;
    if (!dev.uuid.empty()) {
      Statement& q = stmt(device_by_uuid_sql);
      Statement::Use use(q);
      q.bind(1, dev.uuid);
      self = devices(q);
    } else if (!dev.name.empty()) {
      Statement& q = stmt(device_by_name_sql);
      Statement::Use use(q);
      q.bind(1, dev.name);
      self = devices(q);
    }
    // The compute capability of levels 0 and 3: the request's, else the cache's for its device.
    int cc_major = dev.cc_major;
    int cc_minor = dev.cc_minor;
    if (cc_major == 0 && cc_minor == 0) {
      if (!self.empty()) {
        cc_major = self.front().cc_major;
        cc_minor = self.front().cc_minor;
      } else if (!dev.name.empty()) {
        Statement& q = stmt(device_by_name_sql);
        Statement::Use use(q);
        q.bind(1, dev.name);
        auto named = devices(q);
        if (!named.empty()) {
          cc_major = named.front().cc_major;
          cc_minor = named.front().cc_minor;
        }
      }
    }

    // Level 0: a pin.
    const std::string model = !dev.name.empty() ? dev.name : self.empty() ? std::string() : self.front().name;
    const std::string arch =
        cc_major != 0 || cc_minor != 0 ? "sm_" + std::to_string(cc_major) + std::to_string(cc_minor) : std::string();
    if (auto pin = pinned(req, model, arch)) {
      fill_pin_measurement(*pin, self, kernel_id);
      return std::move(*pin);
    }

    // Levels 1-2.
    Candidate exact;
    Candidate nearest;
    for (const auto& d : self) scan(d, kernel_id, want, 0, req.objective, exact, nearest);
    if (exact.set) return answer(std::move(exact), MatchLevel::exact, kernel_id, req.objective);
    if (nearest.set) return answer(std::move(nearest), MatchLevel::nearest_problem, kernel_id, req.objective);

    // Level 3: other devices of the same compute capability.
    if (cc_major != 0 || cc_minor != 0) {
      std::vector<DeviceRow> arch;
      {
        Statement& q = stmt(device_by_cc_sql);
        Statement::Use use(q);
        q.bind(1, cc_major);
        q.bind(2, cc_minor);
        arch = devices(q);
      }
      for (const auto& d : arch) {
        bool mine = std::any_of(self.begin(), self.end(), [&](const DeviceRow& s) { return s.id == d.id; });
        if (mine) continue;
        scan(d, kernel_id, want, !dev.name.empty() && d.name == dev.name ? 0 : 1, req.objective, exact, nearest);
      }
      if (exact.set) return answer(std::move(exact), MatchLevel::same_architecture, kernel_id, req.objective);
      if (nearest.set) return answer(std::move(nearest), MatchLevel::same_architecture, kernel_id, req.objective);
    }

    // Level 4, else 5.
    return portable_default(kernel_id, req.objective);
  }
};

// --- QueryCache -------------------------------------------------------------------------------

QueryCache::QueryCache(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
QueryCache::QueryCache(QueryCache&&) noexcept = default;
QueryCache& QueryCache::operator=(QueryCache&&) noexcept = default;
QueryCache::~QueryCache() = default;

std::optional<QueryCache> QueryCache::try_open(const fs::path& path, QueryError* error, QueryOptions options) noexcept {
  auto fail = [&](QueryStatus status, std::string message) -> std::optional<QueryCache> {
    if (error) {
      try {
        *error = QueryError{status, std::move(message)};
      } catch (...) { error->status = status; }
    }
    return std::nullopt;
  };
  try {
    return QueryCache(Impl::open(path, options));
  } catch (const Failure& f) { return fail(f.status(), f.what()); } catch (const std::bad_alloc&) {
    return fail(QueryStatus::internal_error, "out of memory opening " + path.string());
  } catch (const std::exception& e) {
    return fail(QueryStatus::io_error, std::string("cannot open ") + path.string() + ": " + e.what());
  } catch (...) { return fail(QueryStatus::internal_error, "unknown error opening the cache"); }
}

QueryCache QueryCache::open(const fs::path& path, QueryOptions options) {
  QueryError error;
  auto cache = try_open(path, &error, options);
  if (!cache) throw std::runtime_error(error.message);
  return std::move(*cache);
}

fs::path QueryCache::default_path() { return cache_file::default_path(); }

const fs::path& QueryCache::path() const noexcept { return impl_->path; }
int QueryCache::schema_version() const noexcept { return impl_->version; }

bool QueryCache::refresh() const noexcept {
  try {
    std::lock_guard lock(impl_->mutex);
    return impl_->check_changed();
  } catch (...) {
    std::lock_guard lock(impl_->mutex);
    impl_->memory.clear();
    impl_->portable.clear();
    return true;
  }
}

QueryResult QueryCache::lookup(const QueryRequest& req) const noexcept {
  try {
    if (req.kernel.empty()) return failure_result(QueryStatus::invalid_argument, "the kernel name is empty");
    for (const auto& [name, value] : req.sizes) {
      if (name.empty()) return failure_result(QueryStatus::invalid_argument, "a problem size has no name");
      if (value <= 0)
        return failure_result(QueryStatus::invalid_argument,
                              "problem size " + name + "=" + std::to_string(value) + " is not positive");
    }
    Impl& impl = *impl_;
    std::lock_guard lock(impl.mutex);
    if (!impl.options.memory_cache) return impl.compute(req);

    auto now = std::chrono::steady_clock::now();
    if (now - impl.last_check >= impl.options.recheck_interval) impl.check_changed();
    std::string key = memory_key(req);
    if (auto it = impl.memory.find(key); it != impl.memory.end()) {
      QueryResult r = it->second;
      r.from_memory = true;
      return r;
    }
    QueryResult r = impl.compute(req);
    // Errors of SQLite (a lock held too long, ...) are not remembered; a miss or unknown kernel is,
    // until the file changes.
    if (r.status == QueryStatus::ok || r.status == QueryStatus::unknown_kernel) {
      if (impl.memory.size() >= memory_limit) impl.memory.clear();
      impl.memory.emplace(std::move(key), r);
    }
    return r;
  } catch (const Failure& f) {
    try {
      return failure_result(f.status(), f.what());
    } catch (...) { return bare(QueryStatus::internal_error); }
  } catch (const std::bad_alloc&) { return bare(QueryStatus::internal_error); } catch (const std::exception& e) {
    try {
      return failure_result(QueryStatus::internal_error, e.what());
    } catch (...) { return bare(QueryStatus::internal_error); }
  } catch (...) { return bare(QueryStatus::internal_error); }
}

}  // namespace tiletune
