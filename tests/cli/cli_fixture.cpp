// The CLI tests' result cache (see cli_fixture.hpp).
#include "cli_fixture.hpp"

#include "tiletune/cache_db.hpp"

namespace tiletune::testing {

std::filesystem::path write_cache(const std::filesystem::path& path, const std::string& uuid, double fast_ms,
                                  bool wal) {
  CacheDb::Options o;
  o.wal = wal;
  CacheDb db = CacheDb::open(path, o);
  DeviceRecord d;
  d.uuid = uuid;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.copy_gbps = 4000;
  const auto device = db.upsert_device(d);
  const auto kernel = db.upsert_kernel(KernelRecord{"transpose", "hash1", "--gpu-architecture=sm_90", "13.0"});
  TrialRecord ok;
  ok.key = TrialKey{device, kernel, "N=8192", "TILE=64;BLOCK_ROWS=2;PAD=1"};
  ok.time_ms = fast_ms;
  ok.samples = 20;
  ok.gbps = 537.0 / fast_ms;
  (void)db.record_trial(ok);
  TrialRecord bad;
  bad.key = TrialKey{device, kernel, "N=8192", "TILE=32;BLOCK_ROWS=8;PAD=0"};
  bad.status = TrialStatus::wrong_result;
  bad.detail = "out[12]: got nan, want 0.5";
  (void)db.record_trial(bad);
  return path;
}

}  // namespace tiletune::testing
