// The "current kernel version" rule, declared once for every reader and writer of a cache: the
// engine's CacheDb (best, show, problems, the order in which merge copies versions) and the query
// library (lookups and tiletune_trials_json). Header-only and SQL-only, because the query library
// links nothing of the engine and both must decide alike (tests/query/test_schema_range.cpp
// checks that they do).
//
// The rule: of the versions of one kernel name (rows of `kernels`), the current one is the one
// tuned last: the highest used_seq, ties (a hand-edited cache) to the highest id. Writing a
// version (a sweep, an online trial, a merge) raises its used_seq to one more than any version
// has, which makes it the current one. Only the current version's results answer.
#pragma once

#include <string>
#include <string_view>

namespace tiletune::kernel_version {

/// The id of the current version of the kernel named ?1: one row, or none when the cache has no
/// version of that name.
inline constexpr char current_id_sql[] =
    "SELECT id FROM kernels WHERE name = ?1 ORDER BY used_seq DESC, id DESC LIMIT 1";

/// The used_seq that makes a version written now the current one (an SQL expression).
inline constexpr char next_used_seq_sql[] = "(SELECT coalesce(max(used_seq), 0) + 1 FROM kernels)";

/// An SQL condition, true when the kernels row of `alias` (as in "kernels k") is the current
/// version of its name: current_id_sql with the row's name for ?1.
[[nodiscard]] inline std::string is_current_sql(std::string_view alias) {
  const std::string a(alias);
  std::string current(current_id_sql);
  current.replace(current.find("?1"), 2, a + ".name");
  return "(" + a + ".id = (" + current + "))";
}

}  // namespace tiletune::kernel_version
