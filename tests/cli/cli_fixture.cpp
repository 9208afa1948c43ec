// The CLI tests' result cache (see cli_fixture.hpp).
#include "cli_fixture.hpp"

#include "cache_builder.hpp"

namespace tiletune::testing {

std::filesystem::path write_cache(const std::filesystem::path& path, const std::string& uuid, double fast_ms,
                                  bool wal) {
  DeviceRecord d = h200_record(uuid);
  d.copy_gbps = 4000;
  return CacheBuilder()
      .wal(wal)
      .device(d)
      .kernel("transpose", "hash1", "--gpu-architecture=sm_90", "13.0")
      .trial("N=8192", "TILE=64;BLOCK_ROWS=2;PAD=1", fast_ms,
             [&](TrialRecord& t) {
               t.samples = 20;
               t.gbps = 537.0 / fast_ms;
             })
      .failed("N=8192", "TILE=32;BLOCK_ROWS=8;PAD=0", TrialStatus::wrong_result, "out[12]: got nan, want 0.5")
      .build(path);
}

}  // namespace tiletune::testing
