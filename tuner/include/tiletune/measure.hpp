// What the parent hands a GPU worker for one trial, and what comes back. Plain values:
// they cross a process boundary (see worker.hpp), so nothing here points into the parent.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tiletune/energy.hpp"
#include "tiletune/space.hpp"
#include "tiletune/status.hpp"

namespace tiletune {

/// A buffer with its element count evaluated for one problem and config.
struct BufferPlan {
  std::string name;
  ElementType type = ElementType::f32;
  std::uint64_t count = 0;
  BufferInit init = BufferInit::zero;
  bool output = false;
};

/// One kernel argument, evaluated: a buffer index or a scalar of a given type.
struct ArgPlan {
  bool is_buffer = false;
  int buffer = -1;                         ///< index into TrialRequest::buffers
  ElementType type = ElementType::i32;     ///< scalar type (i32, u32, i64, f32, f64)
  std::int64_t int_value = 0;
  double float_value = 0;
};

/// How samples are taken (nvbench's rules): warm-up, then samples until the relative
/// standard error of the mean is under max_noise after min_samples and min_seconds of
/// kernel time, or until max_seconds.
struct TimingSettings {
  bool cold = true;             ///< flush L2 before each sample (else back-to-back, hot)
  int warmup_runs = 1;
  int min_samples = 10;
  double max_noise = 0.005;     ///< relative standard error of the mean
  double min_seconds = 0.005;   ///< kernel time accumulated before the noise rule may stop
  double max_seconds = 0.5;     ///< stop here whatever the noise
};

/// How outputs are checked before timing.
struct VerifySettings {
  enum class Mode { none, cpu, reference_run };
  Mode mode = Mode::cpu;
  std::string cpu_reference;    ///< registered reference name (the kernel family), for Mode::cpu
  double rtol = 0;
  double atol = 0;
};

/// Everything a worker needs to run, verify and time one config.
struct TrialRequest {
  std::uint64_t id = 0;
  std::string kernel;                        ///< family name, for messages
  std::string config_text;                   ///< "TILE=32 BLOCK_ROWS=8 PAD=1", for messages
  std::string problem_key;                   ///< inputs and references are reused while it is unchanged
  std::map<std::string, std::int64_t> sizes; ///< problem sizes by name (CPU references read them)
  std::string cubin;
  std::string function;                      ///< lowered name
  long long grid[3] = {1, 1, 1};
  long long block[3] = {1, 1, 1};
  long long shared_bytes = 0;                ///< dynamic
  std::vector<BufferPlan> buffers;
  std::vector<ArgPlan> args;
  VerifySettings verify;
  TimingSettings timing;
  std::uint64_t seed = 1;                    ///< for random inputs
  /// This run produces the reference outputs (verify mode reference_run): its outputs are
  /// kept as the reference for the problem, and it is timed like any other.
  bool is_reference = false;
  double deadline_seconds = 10;              ///< the parent kills the worker after this
  EnergySettings energy;                     ///< measure power and energy after timing
};

/// What a worker reports for one trial.
struct TrialResult {
  std::uint64_t id = 0;
  TrialStatus status = TrialStatus::ok;
  std::string detail;            ///< error name, max error and first bad index, ...
  double median_ms = 0, mean_ms = 0, min_ms = 0, stddev_ms = 0;
  int samples = 0;
  int driver_blocks_per_sm = 0;  ///< cuOccupancyMaxActiveBlocksPerMultiprocessor
  double max_error = 0;          ///< largest error found by verification (0 when exact)
  long long first_bad_index = -1;
  double load_ms = 0;            ///< module load + setup
  double verify_ms = 0;
  double measure_ms = 0;         ///< wall time of the timing loop
  double energy_mj = 0;          ///< energy per run (NVML); 0: not measured
  double power_w = 0;            ///< mean power while it ran back to back; 0: not measured
  std::string energy_note;       ///< why energy was asked for and not measured (NVML absent, ...)
};

/// A device-to-device copy: the bandwidth ceiling a sweep compares kernels with.
struct CopyCeiling {
  std::uint64_t bytes = 0;       ///< size of the copy
  double median_ms = 0;
  double gbps = 0;               ///< (bytes read + bytes written) / time
};

}  // namespace tiletune
