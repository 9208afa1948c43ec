// The stored trials as JSON (see query/trials.hpp). The field names are those of `tiletune show
// --format json`, the measurements those of the column table (tiletune/trial_record.hpp); a missing
// measurement is left out of its object rather than written as null. Text goes through the
// escaping layer (common/text_out.hpp): valid UTF-8 whatever the cache holds, so json.loads never
// fails; a library prints nothing, so a trial whose text had bytes that are not UTF-8 says how many
// were written as U+FFFD in "invalid_utf8_bytes" (absent when none).
#include "query/trials.hpp"

#include "common/kernel_version.hpp"
#include "common/text_out.hpp"
#include "tiletune/trial_record.hpp"

namespace tiletune::query_detail {

std::string trials_json(const QueryCache& cache, const TrialsFilter& filter) {
  Connection conn(cache.path().string(), checked_read_only_uri(cache.path()), 5000);
  // The rule of the engine and of lookups (common/kernel_version.hpp).
  const std::string current_sql = kernel_version::is_current_sql("k");
  std::string sql =
      "SELECT t.id, k.name, d.name, d.uuid, t.problem, t.params, t.status, t.detail, t.created_at, "
      "b.trial_id IS NOT NULL, ";
  sql += current_sql;
  sql += ", k.source_hash, ";
  sql += trial_columns_select("t", cache.schema_version());
  sql +=
      " FROM trials t JOIN devices d ON d.id = t.device_id JOIN kernels k ON k.id = t.kernel_id "
      "LEFT JOIN best b ON b.trial_id = t.id "
      "WHERE (?1 = '' OR k.name = ?1) AND (?2 = '' OR d.uuid = ?2 OR d.name = ?2) AND (?3 = '' OR t.status = ?3) "
      "AND (?4 = 1 OR ";
  sql += current_sql;
  sql += ") ORDER BY k.name, d.uuid, t.problem, t.time_ms IS NULL, t.time_ms, t.id";
  Statement q(conn.get(), sql, conn.path());
  Statement::Use use(q);
  q.bind(1, filter.kernel.value_or(""));
  q.bind(2, filter.device.value_or(""));
  q.bind(3, filter.status.value_or(""));
  q.bind(4, std::int64_t{filter.all_versions ? 1 : 0});

  std::string out = "[";
  bool first = true;
  while (q.step()) {
    out += first ? "\n  {" : ",\n  {";
    first = false;
    out += "\"id\": " + std::to_string(q.int64(0));
    std::size_t replaced = 0;
    const auto append_string = [&out, &replaced](std::string_view text) {
      text_out::append_json_string(out, text, &replaced);
    };
    constexpr const char* texts[] = {"kernel", "device", "device_uuid", "problem",
                                     "params", "status", "detail",      "created_at"};
    for (int i = 0; i < 8; ++i) {
      out += ", ";
      append_string(texts[i]);
      out += ": ";
      append_string(q.text(1 + i));
    }
    out += q.int64(9) ? ", \"best\": true" : ", \"best\": false";
    out += q.int64(10) ? ", \"current\": true" : ", \"current\": false";
    out += ", \"source_hash\": ";
    append_string(q.text(11));
    TrialRecord t;
    read_trial_columns(q, 12, t);
    for (const TrialColumn& c : trial_columns) {
      const TrialValue v = c.get(t);
      if (std::holds_alternative<std::monostate>(v)) continue;
      out += ", ";
      append_string(c.name);
      out += ": ";
      if (const auto* i = std::get_if<std::int64_t>(&v))
        out += std::to_string(*i);
      else if (const auto* text = std::get_if<std::string>(&v))
        append_string(*text);
      else
        text_out::append_json_number(out, std::get<double>(v));
    }
    if (replaced > 0) out += ", \"invalid_utf8_bytes\": " + std::to_string(replaced);
    out += '}';
  }
  out += first ? "]" : "\n]";
  return out;
}

}  // namespace tiletune::query_detail
