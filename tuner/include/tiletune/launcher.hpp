// The launcher (issue 5, item 5): runs a tuned kernel from any program. It asks the tuning cache
// for the best config of the space's kernel on this device and problem (QueryCache, falling back
// to the space's `default:` config), evaluates the launch geometry from the YAML, gets the cubin
// from the cache database (compiling it with NVRTC and storing it there on a miss, so a second
// process starts without compiling), loads it once and launches it with the caller's arguments.
//
// With capture on (TILETUNE_CAPTURE in the environment or Options::capture; tiletune/capture.hpp),
// launch() also writes matching launches to disk as spaces `tiletune tune` takes; a capture never
// changes a launch's result, and a capture that fails says so in one line and stops.
//
// prepare() needs no GPU when a device is given in Launcher::Options (it only reads the cache and
// compiles); the module is loaded on the first launch() of a plan. One Launcher may be used from
// several threads (prepare and launch are serialized where they touch shared state).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tiletune/capture.hpp"
#include "tiletune/online.hpp"
#include "tiletune/plan.hpp"
#include "tiletune/query.hpp"
#include "tiletune/space.hpp"

// As cuda.h declares them, so that this header does not need the toolkit's headers.
struct CUstream_st;
typedef struct CUstream_st* CUstream;  // NOLINT(modernize-use-using): identical to cuda.h

namespace tiletune {

/// Where a plan's cubin came from.
enum class CubinOrigin {
  memory,    ///< this Launcher already had it (an earlier prepare with the same key)
  database,  ///< the cache database (get_cubin): no NVRTC call
  compiled,  ///< compiled with NVRTC now (and stored in the database when it is writable)
};
/// "memory", "database", "compiled".
[[nodiscard]] const char* cubin_origin_name(CubinOrigin origin) noexcept;

class DeviceWorkbench;
namespace detail {
struct LoadedKernel;
struct TrialOutput;
}  // namespace detail

/// What prepare() chose for one problem: everything launch() needs.
struct LaunchPlan {
  std::string kernel;                   ///< the space's kernel name
  Problem problem;                      ///< sizes in the space's order
  std::string problem_text;             ///< canonical, "N=1000"
  Config config;                        ///< params in the space's order
  std::string config_text;              ///< canonical, "TILE=32;BLOCK_ROWS=8;PAD=1"
  std::vector<QueryParam> params;       ///< the same config by name
  MatchLevel match = MatchLevel::none;  ///< none: the space's default config was used
  std::string query_message;            ///< why the cache gave nothing usable (empty when found)
  QueryResult query;                    ///< the full answer of the cache
  LaunchGeometry geometry;
  std::string arch;       ///< "sm_90"
  std::string cubin_key;  ///< CubinCache::key of the compile request
  CubinOrigin cubin_origin = CubinOrigin::compiled;
  bool compiled = false;     ///< NVRTC ran in this prepare()
  double compile_ms = 0.0;   ///< NVRTC wall time (0 unless compiled)
  bool stored = false;       ///< the compiled cubin was written to the database
  std::string store_error;   ///< why it was not (read-only database, ...)
  std::string lowered_name;  ///< the entry point's symbol in the cubin
  std::size_t cubin_bytes = 0;

  /// The value of one param of the chosen config.
  [[nodiscard]] std::optional<std::int64_t> param(std::string_view name) const;

 private:
  friend class Launcher;
  std::shared_ptr<detail::LoadedKernel> loaded_;
};

class Launcher {
 public:
  struct Options {
    /// The tuning cache (and cubin store). Empty: default_cache_path().
    std::filesystem::path db_path;
    /// The CUDA device launches go to (its primary context).
    int ordinal = 0;
    /// The device the lookup is for. Unset: read from device `ordinal` through the driver.
    std::optional<QueryDevice> device;
    /// The NVRTC target, e.g. "sm_90". Empty: from the device's compute capability.
    std::string arch;
    /// Do not write compiled cubins to the database (they are still read from it).
    bool read_only = false;
    /// What launch() captures. Unset: CaptureOptions::from_environment (TILETUNE_CAPTURE...).
    std::optional<CaptureOptions> capture;
    /// Online tuning (tiletune/online.hpp). Unset: OnlineOptions::from_environment (TILETUNE_ONLINE...).
    std::optional<OnlineOptions> online;
  };

  /// Loads the space and its kernel source and opens the cache: read-write when possible (to store
  /// cubins), else read-only; a missing or unusable cache leaves every lookup at the default
  /// config and every cubin compiled. Throws SpaceError / Error (source, device, arch).
  [[nodiscard]] static Launcher open(const std::filesystem::path& space_yaml, Options options);
  [[nodiscard]] static Launcher open(const std::filesystem::path& space_yaml, const std::filesystem::path& db_path = {},
                                     int ordinal = 0);

  Launcher(Launcher&&) noexcept;
  Launcher& operator=(Launcher&&) noexcept;
  ~Launcher();

  /// Chooses the config for these sizes (every problem size of the space, by name), evaluates its
  /// launch geometry and gets its cubin. Needs no GPU. Throws Error naming the kernel, the config
  /// and what failed (an unknown or missing size, a compile error with its log, ...).
  [[nodiscard]] LaunchPlan prepare(const std::map<std::string, std::int64_t>& sizes);

  /// Launches a prepared plan: `args` holds the address of each kernel argument, in the order of
  /// the space's `args:` (as cuLaunchKernel's kernelParams; a buffer argument is the address of a
  /// CUdeviceptr / device pointer variable). Loads the module on the first launch of its cubin and
  /// raises the dynamic shared memory limit above 48 KiB. Asynchronous on `stream`. Throws
  /// cu::DriverError / Error naming the kernel, the config and the driver call.
  void launch(const LaunchPlan& plan, std::span<void* const> args, CUstream stream = nullptr);

  /// prepare() then launch().
  void launch(const std::map<std::string, std::int64_t>& sizes, std::span<void* const> args, CUstream stream = nullptr);

  [[nodiscard]] const Space& space() const noexcept;
  [[nodiscard]] const QueryDevice& device() const noexcept;
  [[nodiscard]] const std::string& arch() const noexcept;
  /// The cache path in use (empty when none could be opened).
  [[nodiscard]] const std::filesystem::path& db_path() const noexcept;
  /// Whether compiled cubins are written to the database.
  [[nodiscard]] bool db_writable() const noexcept;
  /// Why the cache is not used, or is used read-only (empty when opened read-write).
  [[nodiscard]] const std::string& db_message() const noexcept;
  /// The capture of this kernel's launches, or nullptr when capture is off for it.
  [[nodiscard]] const CaptureWriter* capture() const noexcept;
  /// What capture did with the last launch() of this Launcher (off when capture is off).
  [[nodiscard]] CaptureOutcome last_capture() const noexcept;
  /// Online tuning's schedule for this kernel, or nullptr when it is off.
  [[nodiscard]] const OnlineSchedule* online() const noexcept;
  /// How the last online trial of this Launcher ended (nullopt before the first).
  [[nodiscard]] std::optional<OnlineVerdict> last_online() const;

 private:
  struct Impl;
  struct OnlineTrial;
  explicit Launcher(std::unique_ptr<Impl> impl) noexcept;
  /// A plan for a given config (online tuning's candidates and kept configs).
  [[nodiscard]] LaunchPlan plan_for(const Problem& problem, const Config& config);
  /// Geometry and cubin of a plan whose config is chosen.
  void complete(LaunchPlan& plan);
  void launch_checked(const LaunchPlan& plan, std::span<void* const> args, CUstream stream);
  void launch_online(const LaunchPlan& plan, std::span<void* const> args, CUstream stream);
  void run_online_trial(const LaunchPlan& use, std::span<void* const> args, CUstream stream, OnlineTrial& trial);
  void prepare_trial_outputs(const LaunchPlan& use, std::span<void* const> args, DeviceWorkbench& bench,
                             std::vector<detail::TrialOutput>& outputs);
  void finish_trial(const LaunchPlan& use, const LaunchPlan& tried, std::span<void* const> args, CUstream stream,
                    DeviceWorkbench& bench, const std::vector<detail::TrialOutput>& outputs, OnlineTrial& trial);
  void record_online_trial(const LaunchPlan& use, const OnlineTrial& trial);
  /// Configs the cache has trials of for this kernel version, device and problem.
  [[nodiscard]] std::vector<Config> tried_before(const LaunchPlan& plan);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tiletune
