// capture_app: an application with two kernels launched through tiletune's Launcher, to show the
// capture round trip (docs/guides/capture.md):
//
//   TILETUNE_CAPTURE='app_*' capture_app        # runs with the configs the cache has (none yet:
//                                               # the spaces' defaults) and captures each launch
//   tiletune tune tiletune-captures/*/space.yaml   (one at a time; see round_trip.sh)
//   capture_app                                 # the tuned configs, found at match level exact
//
//   capture_app [--spaces DIR] [--db PATH] [--n N] [--m M] [--iterations K]
//     --spaces      the folder of scale_add.yaml and tile_transpose.yaml (default: the source tree's)
//     --db          the tuning cache (default: $TILETUNE_DB, else ~/.cache/tiletune/tiletune.db)
//     --n           elements of scale_add (default 16777216)
//     --m           rows and columns of the transpose (default 4096)
//     --iterations  launches timed per kernel (default 50)
//
// Prints one line per kernel: the config used, where it came from, what capture did, the mean
// time of a launch and whether the result was right; with TILETUNE_ONLINE, a second line: the
// configs online tuning tried, the time its trials took against the kernel's wall time since its
// Launcher opened, and the config it kept. Exit status 0, 1 on an error or a wrong result.
#include <cuda.h>  // CUdeviceptr (the Launcher takes driver-style pointers)
#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <filesystem>
#include <string>
#include <vector>

#include "tiletune/launcher.hpp"

#ifndef CAPTURE_APP_SPACES
#define CAPTURE_APP_SPACES "spaces"
#endif

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

/// A device array of floats, freed at scope exit.
struct DeviceFloats {
  float* ptr = nullptr;
  std::size_t count = 0;
  explicit DeviceFloats(std::size_t n) : count(n) {
    check(cudaMalloc(reinterpret_cast<void**>(&ptr), n * sizeof(float)), "cudaMalloc");
  }
  ~DeviceFloats() { cudaFree(ptr); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  void upload(const std::vector<float>& v) {
    check(cudaMemcpy(ptr, v.data(), count * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy to the device");
  }
  std::vector<float> download() const {
    std::vector<float> v(count);
    check(cudaMemcpy(v.data(), ptr, count * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
    return v;
  }
};

/// Mean milliseconds of one launch over `iterations` launches on the default stream.
template <typename Launch>
double time_launches(int iterations, Launch launch) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  check(cudaEventRecord(start, nullptr), "cudaEventRecord");
  for (int i = 0; i < iterations; ++i) launch();
  check(cudaEventRecord(stop, nullptr), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / iterations;
}

void report(const tiletune::Launcher& launcher, const tiletune::LaunchPlan& plan, double ms, bool ok,
            double elapsed_s) {
  std::printf("%-20s %-12s config %-32s match=%-16s cubin=%-8s capture=%-9s %9.4f ms/launch  %s\n", plan.kernel.c_str(),
              plan.problem_text.c_str(), plan.config_text.c_str(),
              std::string(tiletune::match_level_name(plan.match)).c_str(),
              tiletune::cubin_origin_name(plan.cubin_origin), tiletune::capture_outcome_name(launcher.last_capture()),
              ms, ok ? "ok" : "WRONG");
  if (const tiletune::OnlineSchedule* online = launcher.online()) {
    const std::optional<tiletune::Config> best = online->best(plan.problem);
    std::printf("%-20s online: %llu configs tried, %.3f s in trials over %.3f s (%.1f %%), kept %s\n",
                plan.kernel.c_str(), static_cast<unsigned long long>(online->tried(plan.problem)), online->spent_s(),
                elapsed_s, elapsed_s > 0 ? 100.0 * online->spent_s() / elapsed_s : 0.0,
                best ? tiletune::format_config(launcher.space(), *best).c_str() : "the plan's config");
  }
}

std::vector<float> pattern(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 1000) - 500);
  return v;
}

/// y = a * x + y, launched once (the launch capture sees) and checked, then timed.
bool run_scale_add(const std::filesystem::path& spaces, const std::filesystem::path& db, int n, int iterations) {
  const auto opened = std::chrono::steady_clock::now();
  auto launcher = tiletune::Launcher::open(spaces / "scale_add.yaml", db);
  const tiletune::LaunchPlan plan = launcher.prepare({{"N", n}});
  const std::vector<float> x = pattern(std::size_t(n), 0.001f), y = pattern(std::size_t(n), 0.002f);
  DeviceFloats dx(x.size()), dy(y.size());
  dx.upload(x);
  dy.upload(y);
  CUdeviceptr px = reinterpret_cast<CUdeviceptr>(dx.ptr), py = reinterpret_cast<CUdeviceptr>(dy.ptr);
  float a = 0.5f;
  void* args[] = {&px, &py, &a, &n};
  launcher.launch(plan, args);
  const std::vector<float> got = dy.download();
  bool ok = true;
  for (std::size_t i = 0; i < got.size() && ok; ++i) ok = std::fabs(got[i] - (a * x[i] + y[i])) <= 1e-6f;
  const double ms = time_launches(iterations, [&] { launcher.launch(plan, args); });
  report(launcher, plan, ms, ok, std::chrono::duration<double>(std::chrono::steady_clock::now() - opened).count());
  return ok;
}

/// out = transpose(in), launched once and checked, then timed.
bool run_transpose(const std::filesystem::path& spaces, const std::filesystem::path& db, int m, int iterations) {
  const auto opened = std::chrono::steady_clock::now();
  auto launcher = tiletune::Launcher::open(spaces / "tile_transpose.yaml", db);
  const tiletune::LaunchPlan plan = launcher.prepare({{"N", m}});
  const std::vector<float> in = pattern(std::size_t(m) * m, 1.0f);
  DeviceFloats din(in.size()), dout(in.size());
  din.upload(in);
  CUdeviceptr pin = reinterpret_cast<CUdeviceptr>(din.ptr), pout = reinterpret_cast<CUdeviceptr>(dout.ptr);
  void* args[] = {&pin, &pout, &m};
  launcher.launch(plan, args);
  const std::vector<float> got = dout.download();
  bool ok = true;
  for (int r = 0; r < m && ok; ++r)
    for (int c = 0; c < m && ok; ++c) ok = got[std::size_t(c) * m + r] == in[std::size_t(r) * m + c];
  const double ms = time_launches(iterations, [&] { launcher.launch(plan, args); });
  report(launcher, plan, ms, ok, std::chrono::duration<double>(std::chrono::steady_clock::now() - opened).count());
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path spaces = CAPTURE_APP_SPACES, db;
  int n = 1 << 24, m = 4096, iterations = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--spaces")
      spaces = value;
    else if (flag == "--db")
      db = value;
    else if (flag == "--n")
      n = std::atoi(value.c_str());
    else if (flag == "--m")
      m = std::atoi(value.c_str());
    else if (flag == "--iterations")
      iterations = std::atoi(value.c_str());
    else {
      std::fprintf(stderr, "capture_app: unknown option %s\n", flag.c_str());
      return 1;
    }
  }
  if (argc % 2 == 0 || n <= 0 || m <= 0 || iterations <= 0) {
    std::fprintf(stderr, "usage: capture_app [--spaces DIR] [--db PATH] [--n N] [--m M] [--iterations K]\n");
    return 1;
  }
  try {
    check(cudaFree(nullptr), "CUDA initialisation");  // the runtime's context is the Launcher's (primary)
    const bool ok = run_scale_add(spaces, db, n, iterations) & run_transpose(spaces, db, m, iterations);
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "capture_app: %s\n", e.what());
    return 1;
  }
}
