// Shards of a space: a partition of its configs among N cooperating runs (Slurm array tasks,
// MPI ranks, hosts) that needs no communication and does not move when anything but the config
// changes. A config's shard is XXH3-64 of its shard key modulo N; the key is the config's
// params as NAME=VALUE, sorted by name and joined with ';' ("BLOCK_ROWS=8;PAD=0;TILE=32"), so
// it does not depend on the order of the params or of their values in the YAML, on the problem
// sizes, on the constraints (which only drop configs), on enumeration order or on what a cache
// already holds: a rerun or a resume of shard i/N takes exactly the same configs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "tiletune/enumerate.hpp"

namespace tiletune {

/// Shard `index` of `count` (0 <= index < count); the default, 0/1, is the whole space.
struct Shard {
  std::uint32_t index = 0;
  std::uint32_t count = 1;
  [[nodiscard]] bool whole() const noexcept { return count == 1; }
  friend bool operator==(const Shard&, const Shard&) = default;
};

/// The most shards a space is split into.
inline constexpr std::uint32_t max_shards = 65536;

/// "i/N" -> {i, N}. Throws Error naming the text when it is not two integers with 0 <= i < N <= max_shards.
[[nodiscard]] Shard parse_shard(std::string_view text);

/// Reads a variable of the environment: nullptr when unset.
using EnvironmentLookup = std::function<const char*(const char*)>;

/// The shard of this process from its launcher, the first that is set of: a Slurm job array
/// (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT), Open MPI
/// (OMPI_COMM_WORLD_RANK of OMPI_COMM_WORLD_SIZE), PMIx (PMIX_RANK of PMIX_SIZE, else of
/// SLURM_NTASKS), a Slurm job step (SLURM_PROCID of SLURM_NTASKS). nullopt when none is set;
/// throws Error naming the variables when they are set but malformed or inconsistent.
[[nodiscard]] std::optional<Shard> shard_from_environment(const EnvironmentLookup& env);

/// The shard key of a config: "NAME=VALUE" of each param, sorted by name, joined with ';'.
[[nodiscard]] std::string shard_key(const Space& space, const Config& config);

/// The shard (0 .. count-1) a shard key belongs to: XXH3-64 of the key, modulo count.
[[nodiscard]] std::uint32_t shard_of(std::string_view key, std::uint32_t count);

/// Whether a config belongs to a shard.
[[nodiscard]] bool in_shard(const Space& space, const Config& config, const Shard& shard);

/// "3/8", or "whole" for 0/1.
[[nodiscard]] std::string format_shard(const Shard& shard);

}  // namespace tiletune
