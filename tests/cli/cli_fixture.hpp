// A result cache for the CLI tests, as a sweep would leave it.
#pragma once

#include <filesystem>
#include <string>

namespace tiletune::testing {

/// Writes a cache at path with one H200 (uuid) and two transpose trials at N=8192: TILE=64
/// BLOCK_ROWS=2 PAD=1 ok at fast_ms, TILE=32 BLOCK_ROWS=8 PAD=0 wrong_result. Closed when it
/// returns (so no -wal or -shm is left); in WAL mode unless wal is false. Returns path.
std::filesystem::path write_cache(const std::filesystem::path& path, const std::string& uuid, double fast_ms = 0.15,
                                  bool wal = true);

}  // namespace tiletune::testing
