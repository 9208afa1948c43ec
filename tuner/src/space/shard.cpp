// Shards of a space (tiletune/shard.hpp): the partition rule, its text form and where a
// launcher (Slurm, Open MPI, PMIx) says which shard a process is.
#include "tiletune/shard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "tiletune/error.hpp"

namespace tiletune {
namespace {

std::optional<std::uint64_t> parse_count(std::string_view text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

// A shard from a launcher's rank and size variables (the rank offset by `first`, a job
// array's lowest index).
Shard shard_from(const char* rank_name, const char* rank, const char* size_name, const char* size,
                 std::uint64_t first = 0) {
  const auto r = parse_count(rank);
  const auto n = parse_count(size ? size : "");
  if (!r || !n || *n == 0 || *n > max_shards || *r < first || *r - first >= *n)
    throw Error(fmt::format("--shard auto: {}={} and {}={} are not a rank below a size of 1 to {}", rank_name, rank,
                            size_name, size ? size : "(unset)", max_shards));
  return Shard{static_cast<std::uint32_t>(*r - first), static_cast<std::uint32_t>(*n)};
}

}  // namespace

Shard parse_shard(std::string_view text) {
  const auto slash = text.find('/');
  const auto index = slash == std::string_view::npos ? std::nullopt : parse_count(text.substr(0, slash));
  const auto count = slash == std::string_view::npos ? std::nullopt : parse_count(text.substr(slash + 1));
  if (!index || !count || *count == 0 || *count > max_shards || *index >= *count)
    throw Error(
        fmt::format("--shard '{}': expected I/N with 0 <= I < N <= {} (shard 0/4 is the first of four), or "
                    "auto",
                    text, max_shards));
  return Shard{static_cast<std::uint32_t>(*index), static_cast<std::uint32_t>(*count)};
}

std::optional<Shard> shard_from_environment(const EnvironmentLookup& env) {
  if (const char* id = env("SLURM_ARRAY_TASK_ID")) {
    const char* min = env("SLURM_ARRAY_TASK_MIN");
    const auto first = parse_count(min ? min : "0");
    if (!first) throw Error(fmt::format("--shard auto: SLURM_ARRAY_TASK_MIN={} is not a task index", min));
    return shard_from("SLURM_ARRAY_TASK_ID", id, "SLURM_ARRAY_TASK_COUNT", env("SLURM_ARRAY_TASK_COUNT"), *first);
  }
  if (const char* rank = env("OMPI_COMM_WORLD_RANK"))
    return shard_from("OMPI_COMM_WORLD_RANK", rank, "OMPI_COMM_WORLD_SIZE", env("OMPI_COMM_WORLD_SIZE"));
  if (const char* rank = env("PMIX_RANK")) {
    if (const char* size = env("PMIX_SIZE")) return shard_from("PMIX_RANK", rank, "PMIX_SIZE", size);
    return shard_from("PMIX_RANK", rank, "SLURM_NTASKS", env("SLURM_NTASKS"));
  }
  if (const char* rank = env("SLURM_PROCID"))
    return shard_from("SLURM_PROCID", rank, "SLURM_NTASKS", env("SLURM_NTASKS"));
  return std::nullopt;
}

std::string shard_key(const Space& space, const Config& config) {
  std::vector<std::pair<std::string_view, std::string>> items;  // (name, value text)
  items.reserve(space.params.size());
  for (std::size_t i = 0; i < space.params.size(); ++i)
    items.emplace_back(space.params[i].name, space.params[i].text_of(config.values.at(i)));
  std::sort(items.begin(), items.end());
  std::string key;
  for (const auto& [name, value] : items) key += fmt::format("{}{}={}", key.empty() ? "" : ";", name, value);
  return key;
}

std::uint32_t shard_of(std::string_view key, std::uint32_t count) {
  if (count <= 1) return 0;
  return static_cast<std::uint32_t>(XXH3_64bits(key.data(), key.size()) % count);
}

bool in_shard(const Space& space, const Config& config, const Shard& shard) {
  return shard.whole() || shard_of(shard_key(space, config), shard.count) == shard.index;
}

std::string format_shard(const Shard& shard) {
  return shard.whole() ? "whole" : fmt::format("{}/{}", shard.index, shard.count);
}

}  // namespace tiletune
