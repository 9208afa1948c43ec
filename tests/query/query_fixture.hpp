// Fixture caches for the query tests, written with the engine's CacheDb: fictional devices (two
// H200s with different UUIDs, an A100 sm_80, an L4 sm_89), an older and a current version of
// "transpose" with planted times whose winners at every match level are known, a "matmul" with
// three sizes, and a "reduce" whose trials all failed.
#pragma once

#include <filesystem>
#include <string>

#include "tiletune/cache_db.hpp"

namespace tiletune::testing {

inline const std::string h200_a = "GPU-aaaaaaaa-0000-4000-8000-000000000001";
inline const std::string h200_b = "GPU-bbbbbbbb-0000-4000-8000-000000000002";
inline const std::string h200_new = "GPU-cccccccc-0000-4000-8000-000000000003";  // not in the cache
inline const std::string a100 = "GPU-a100a100-0000-4000-8000-000000000004";
inline const std::string l4 = "GPU-14141414-0000-4000-8000-000000000005";

// transpose's configs (params in the space's order, as the engine writes them).
inline const std::string c1 = "TILE=16;BLOCK_ROWS=4;PAD=1";
inline const std::string c2 = "TILE=32;BLOCK_ROWS=8;PAD=1";
inline const std::string c3 = "TILE=64;BLOCK_ROWS=8;PAD=1";
inline const std::string old_winner = "TILE=99;BLOCK_ROWS=1;PAD=0";  // only in the old version
inline const std::string failed_fast = "TILE=8;BLOCK_ROWS=8;PAD=1";  // fast, but never ok

DeviceRecord fixture_device(const std::string& uuid);
KernelRecord transpose_version(const std::string& hash);

/// Writes the fixture cache at path (WAL unless wal is false) and returns the path.
std::filesystem::path write_fixture(const std::filesystem::path& path, bool wal = true);

}  // namespace tiletune::testing
