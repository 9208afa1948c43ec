// Test fixtures of the report, Python and interchange tests: a result cache filled from recorded
// landscapes (tests/data/landscapes/, real H200 sweeps), in a seeded random order so that the
// progress plot shows a search. Energy, when asked for, is synthetic (a model of power over
// occupancy) and says so in the cache's meta: it exercises the energy paths, it is no measurement.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace tiletune::testing {

struct FixtureOptions {
  std::vector<std::filesystem::path> landscapes;
  bool synthetic_energy = false;
  std::uint64_t seed = 1;
};

/// Creates (or adds to) the cache at db_path. The space's `default:` of configs/KERNEL.yaml is
/// recorded as the sweeps do. Returns the number of trials written.
std::size_t write_fixture_cache(const std::filesystem::path& db_path, const FixtureOptions& options);

}  // namespace tiletune::testing
