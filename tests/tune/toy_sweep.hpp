// The toy space of the sweep tests against tests/process/fake_worker: a kernel whose configs
// compile in tens of milliseconds, its recording (the landscape the fake worker answers from),
// a fake H200, and a fixture that writes them to a temp directory and builds SweepOptions.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "tiletune/cache_db.hpp"
#include "tiletune/sweep.hpp"

namespace tiletune {
namespace {

using testing::TempDir;

// A toy kernel whose configs compile in a few tens of milliseconds; A=8 with C=2 does not
// compile (the recording says so too); B=5 compiles with a warning (#177-D, an unused variable).
constexpr const char* kToyKernel = R"(
#if A == 8 && C == 2
#error "toy: A=8 with C=2 is a planted compile failure"
#endif
extern "C" __global__ void toy(float* x, int n) {
#if B == 5
  int toy_unused = 0;
#endif
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = A * B + C;
}
)";

constexpr const char* kToySpace = R"yaml(kernel: toy
source: toy.cu
entry: toy
problem:
  N: [1024, 4096]
params:
  A: [1, 2, 3, 4, 5, 6, 7, 8]
  B: [1, 2, 3, 4, 5, 6]
  C: [0, 1, 2]
launch:
  grid: ["ceil_div(N, 128)"]
  block: [128]
buffers:
  x: {type: float, count: N, output: true}
args: [x, N]
verify: VERIFY
default: {A: 2, B: 3, C: 0}
)yaml";

constexpr std::size_t kConfigs = 8 * 6 * 3;
constexpr std::size_t kCompileFailures = 6;  // A=8, C=2, every B
constexpr std::size_t kWrongResults = 3;     // A=1, B=6, every C

/// The recording the fake worker answers from and the replay reads: a smooth landscape with its
/// optimum at A=6 B=2 C=1 (N=4096: twice the times), the planted compile failures, and A=1 B=6
/// recorded as wrong results.
std::string toy_recording() {
  std::string text =
      "# tiletune landscape 1\n# kernel: toy\n# device: Fake H200\n"
      "problem,params,status,time_ms,compile_ms,measure_ms,registers,shared_bytes,occupancy,detail\n";
  for (const int n : {1024, 4096})
    for (int a = 1; a <= 8; ++a)
      for (int b = 1; b <= 6; ++b)
        for (int c = 0; c <= 2; ++c) {
          const std::string row = fmt::format("N={},A={};B={};C={}", n, a, b, c);
          const double t = (n / 1024.0) * (1.0 + 0.3 * std::abs(a - 6) + 0.2 * std::abs(b - 2) + 0.1 * std::abs(c - 1) +
                                           0.05 * std::abs((a - 6) * (b - 2)));
          if (a == 8 && c == 2)
            text += row + ",compile_failed,,50,0,,,,planted\n";
          else if (a == 1 && b == 6)
            text += row + ",wrong_result,,50,2,8,0,1,max error 1\n";
          else
            text += row + fmt::format(",ok,{:.6f},50,2,8,0,1,\n", t);
        }
  return text;
}

/// An H200 as list_devices() would describe it, with no H200 in sight.
DeviceInfo fake_h200() {
  DeviceInfo d = testing::h200_device_info();
  d.name = "Fake H200";
  d.uuid = "GPU-00000000-0000-0000-0000-000000000013";
  return d;
}

/// The compiled toys, shared by every test (content-addressed, so a hit is exactly what a compile
/// would give). On disk in the build tree: ctest runs each case in its own process, and a cache
/// of the process alone would compile the toys again for every case.
const CubinCache& shared_cubins() {
  static const CubinCache cache{std::filesystem::path(TILETUNE_TOY_CUBIN_CACHE)};
  return cache;
}

struct ToySweep {
  TempDir dir;
  std::filesystem::path space_path, recording, db, log;
  Space space;

  explicit ToySweep(const std::string& verify = "none") {
    dir.write("toy.cu", kToyKernel);
    std::string yaml = kToySpace;
    yaml.replace(yaml.find("VERIFY"), 6, verify);
    space_path = dir.write("toy.yaml", yaml);
    recording = dir.write("toy.csv", toy_recording());
    db = dir.path() / "cache.db";
    log = dir.path() / "worker.log";
    space = load_space(space_path);
  }

  /// Options for a sweep of one problem (N=1024 unless told) against the fake worker, without
  /// the finalists' confirmation.
  SweepOptions options(const std::string& mode = "ok", std::vector<std::string> worker_flags = {}) const {
    SweepOptions o;
    o.device = fake_h200();
    o.problems = {select_problem(space, {"N=1024"})};
    o.compile_threads = 2;
    o.cubin_cache = &shared_cubins();
    o.db_path = db;
    o.strategy = "exhaustive";
    o.deadline_seconds = 1;
    o.copy_bytes = 1 << 20;
    o.confirm_finalists = 0;  // the search's trials alone; the FakeSweep.Finalists* tests confirm
    o.worker_argv = {TILETUNE_FAKE_WORKER, mode, "--recording", recording.string(), "--log", log.string()};
    for (std::string& f : worker_flags) o.worker_argv.push_back(std::move(f));
    return o;
  }

  [[nodiscard]] std::vector<TrialRow> rows(const std::string& problem = "N=1024") const {
    CacheDb::Options read_only;
    read_only.mode = CacheDb::Mode::read_only;
    CacheDb cache = CacheDb::open(db, read_only);
    TrialFilter f;
    f.problem = problem;
    return cache.trials(f);
  }
};

std::map<TrialStatus, std::size_t> statuses(const std::vector<TrialRow>& rows) {
  std::map<TrialStatus, std::size_t> m;
  for (const TrialRow& r : rows) ++m[r.trial.status];
  return m;
}

std::vector<std::string> configs_of(const Space& space, const SweepReport& r) {
  std::vector<std::string> v;
  for (const SweepTrial& t : r.trials) v.push_back(canonical_config(space, t.config));
  return v;
}

}  // namespace
}  // namespace tiletune
