// bench_launcher (issue 5): what Launcher::prepare costs for transpose, on the CPU parts only (a
// fictional device and arch sm_90, so no GPU is needed): the cubin from NVRTC (a miss), from the
// cache database (what a second process pays), and from the Launcher's memory. Prints, asserts
// nothing.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tiletune/cache_db.hpp"
#include "tiletune/launcher.hpp"

namespace fs = std::filesystem;
using namespace tiletune;
using clock_type = std::chrono::steady_clock;

namespace {

const std::string uuid = "GPU-be4c1000-0000-4000-8000-000000000001";

Launcher::Options options(const fs::path& db, bool read_only) {
  Launcher::Options o;
  o.db_path = db;
  o.device = QueryDevice{uuid, "Fictional H200", 9, 0};
  o.arch = "sm_90";
  o.read_only = read_only;
  return o;
}

double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

struct Stats {
  double median = 0, min = 0;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front()};
}

}  // namespace

int main() {
  const fs::path yaml = fs::path(TILETUNE_SOURCE_DIR) / "configs" / "transpose.yaml";
  const fs::path dir = fs::temp_directory_path() / ("bench_launcher_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path db_path = dir / "cache.db";
  {
    auto db = CacheDb::open(db_path);
    DeviceRecord d;
    d.uuid = uuid;
    d.name = "Fictional H200";
    d.cc_major = 9;
    const auto dev = db.upsert_device(d);
    const auto k = db.upsert_kernel(KernelRecord{"transpose", "bench", "--gpu-architecture=sm_90", "13.0"});
    TrialRecord t;
    t.key = TrialKey{dev, k, "N=8192", "TILE=32;BLOCK_ROWS=8;PAD=1;VEC=1"};
    t.time_ms = 0.5;
    (void)db.record_trial(t);
  }
  const std::map<std::string, std::int64_t> sizes{{"N", 8192}};

  // NVRTC: read-only launchers never store the cubin, so each one compiles.
  std::vector<double> compile, compile_nvrtc_ms, open_ms;
  for (int i = 0; i < 5; ++i) {
    auto t0 = clock_type::now();
    auto l = Launcher::open(yaml, options(db_path, true));
    open_ms.push_back(ms_since(t0));
    t0 = clock_type::now();
    const LaunchPlan p = l.prepare(sizes);
    compile.push_back(ms_since(t0));
    compile_nvrtc_ms.push_back(p.compile_ms);
    if (!p.compiled) std::fprintf(stderr, "expected a compile\n");
  }
  // Store it once, then every new Launcher reads it from the database.
  (void)Launcher::open(yaml, options(db_path, false)).prepare(sizes);
  std::vector<double> hit;
  std::string config;
  for (int i = 0; i < 50; ++i) {
    auto l = Launcher::open(yaml, options(db_path, false));
    const auto t0 = clock_type::now();
    const LaunchPlan p = l.prepare(sizes);
    hit.push_back(ms_since(t0));
    config = p.config_text + " (" + std::string(match_level_name(p.match)) + ")";
    if (p.cubin_origin != CubinOrigin::database) std::fprintf(stderr, "expected a database hit\n");
  }
  // The same Launcher: from memory.
  std::vector<double> mem;
  {
    auto l = Launcher::open(yaml, options(db_path, false));
    (void)l.prepare(sizes);
    for (int i = 0; i < 2000; ++i) {
      const auto t0 = clock_type::now();
      const LaunchPlan p = l.prepare(sizes);
      mem.push_back(ms_since(t0));
    }
  }
  fs::remove_all(dir);

  const Stats c = stats(compile), n = stats(compile_nvrtc_ms), h = stats(hit), m = stats(mem), o = stats(open_ms);
  std::printf("transpose N=8192, config %s, arch sm_90\n", config.c_str());
  std::printf("Launcher::open (load YAML + source, open cache)  median %9.3f ms  min %9.3f ms  (n=%zu)\n", o.median,
              o.min, open_ms.size());
  std::printf(
      "prepare, NVRTC compile (miss)                     median %9.3f ms  min %9.3f ms  (n=%zu; NVRTC alone %.3f ms)\n",
      c.median, c.min, compile.size(), n.median);
  std::printf("prepare, cubin from the database (new Launcher)   median %9.3f ms  min %9.3f ms  (n=%zu)\n", h.median,
              h.min, hit.size());
  std::printf("prepare, cubin in the Launcher's memory           median %9.3f us  min %9.3f us  (n=%zu)\n",
              m.median * 1e3, m.min * 1e3, mem.size());
  std::printf("compile / database hit: %.0fx\n", c.median / h.median);
  return 0;
}
