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
#include "tiletune/timing.hpp"

namespace tiletune {

/// How one buffer or module global is filled, its InitSpec evaluated for one problem and config.
struct InitPlan {
  BufferInit kind = BufferInit::zero;
  double a = 0;               ///< constant: the value; uniform: the low bound; normal: the mean
  double b = 0;               ///< uniform: the high bound (excluded); normal: the standard deviation
  std::uint64_t rows = 0;     ///< csr_offsets, csr_columns: rows of the matrix
  std::uint64_t columns = 0;  ///< csr_offsets, csr_columns: columns of the matrix
  std::uint64_t nnz = 0;      ///< csr_offsets, csr_columns: stored entries
  int source = -1;            ///< copy, csr_columns: index into TrialRequest::buffers of `of`
  std::string file;           ///< file: the absolute path, `{NAME}` expanded
  friend bool operator==(const InitPlan&, const InitPlan&) = default;
};

/// True for the kinds whose contents are generated, read or copied (everything but zero and none).
[[nodiscard]] constexpr bool carries_data(BufferInit kind) noexcept {
  return kind != BufferInit::zero && kind != BufferInit::none;
}

/// A buffer with its type and element count evaluated for one problem and config.
struct BufferPlan {
  std::string name;
  ElementType type = ElementType::f32;
  std::uint64_t count = 0;
  InitPlan init;
  bool output = false;
  /// An output with data (any init but zero and none): an in/out buffer, restored to its
  /// initial contents before every launch. An output with zero or none is poisoned (0xFF bytes)
  /// before the checked launch, so that an element never written fails.
  [[nodiscard]] bool in_out() const noexcept { return output && carries_data(init.kind); }
  friend bool operator==(const BufferPlan&, const BufferPlan&) = default;
};

/// A __constant__ or __device__ variable of the module, filled before every launch.
struct GlobalPlan {
  std::string name;    ///< as the space writes it ("conv::weights"), for messages
  std::string symbol;  ///< as cuModuleGetGlobal finds it ("_ZN4conv7weightsE")
  ElementType type = ElementType::f32;
  std::uint64_t count = 0;  ///< the symbol must be count x element size bytes
  InitPlan init;            ///< `source` indexes TrialRequest::buffers
  friend bool operator==(const GlobalPlan&, const GlobalPlan&) = default;
};

/// One kernel argument, evaluated: a buffer index or a scalar of a given type.
struct ArgPlan {
  bool is_buffer = false;
  int buffer = -1;                      ///< index into TrialRequest::buffers
  ElementType type = ElementType::i32;  ///< scalar type: any element type
  std::int64_t int_value = 0;
  double float_value = 0;
  friend bool operator==(const ArgPlan&, const ArgPlan&) = default;
};

/// How one output buffer is checked (an OutputCheck evaluated for one run).
struct CheckPlan {
  int buffer = -1;  ///< index into TrialRequest::buffers (an output)
  OutputCheck::Compare compare = OutputCheck::Compare::elements;
  /// Elements compared or summed, from the start of the buffer; for the run that produces the
  /// reference (is_reference) the reference's own count.
  std::uint64_t count = 0;
  double rtol = 0;
  double atol = 0;
  std::string expected_file;  ///< Mode::files: the expected outputs (absolute path)
  friend bool operator==(const CheckPlan&, const CheckPlan&) = default;
};

/// How outputs are checked before timing, and against what.
struct VerifySettings {
  enum class Mode {
    none,           ///< nothing is checked
    cpu,            ///< a built-in CPU reference (cpu_reference)
    reference_run,  ///< the outputs of the request marked is_reference (a config or another kernel)
    library,        ///< a CPU reference in a shared library (library, function)
    files,          ///< expected outputs read from CheckPlan::expected_file
  };
  Mode mode = Mode::cpu;
  std::string cpu_reference;      ///< Mode::cpu: the built-in reference's name
  std::string library;            ///< Mode::library: absolute path of the shared library
  std::string function;           ///< Mode::library: the function (tiletune/reference.h)
  std::vector<CheckPlan> checks;  ///< one per output buffer
  /// The host check (`verify: {command: ...}`): after the checks above passed, every buffer is
  /// written as an .npy file and the program, started at the first trial that needs it and kept
  /// for the worker's life, answers ok or not (tiletune/host_check.hpp). Empty: none. A reference
  /// run (is_reference) is never host-checked.
  HostCommand command;
  friend bool operator==(const VerifySettings&, const VerifySettings&) = default;
};

/// One param of a trial's config, as the host check's request shows it.
struct ParamValue {
  std::string name;
  AxisKind kind = AxisKind::integer;
  std::string label;  ///< Axis::text_of: "32", "0.5", "float"
  friend bool operator==(const ParamValue&, const ParamValue&) = default;
};

/// Everything a worker needs to run, verify and time one config.
struct TrialRequest {
  std::uint64_t id = 0;
  std::string kernel;       ///< family name, for messages
  std::string config_text;  ///< "TILE=32 BLOCK_ROWS=8 PAD=1", for messages
  /// The problem and the types its buffers follow: inputs and reference outputs are reused
  /// while it, the seed, the verify settings and the buffers' descriptions are unchanged (a
  /// buffer whose count alone changes, a scratch sized by the grid, is rebuilt on its own).
  std::string problem_key;
  std::map<std::string, std::int64_t> sizes;  ///< problem sizes by name (CPU references read them)
  std::vector<ParamValue> params;             ///< the config, in params order (the host check sends it)
  std::string cubin;
  std::string function;  ///< lowered name
  long long grid[3] = {1, 1, 1};
  long long block[3] = {1, 1, 1};
  long long shared_bytes = 0;       ///< dynamic
  std::vector<BufferPlan> buffers;  ///< generated in an order where `source` comes first
  std::vector<GlobalPlan> globals;
  std::vector<ArgPlan> args;
  VerifySettings verify;
  TimingSettings timing;
  std::uint64_t seed = 1;  ///< for generated inputs
  /// This run produces the reference outputs (verify mode reference_run): its outputs are
  /// kept as the reference for the problem, and it is timed like any other. A module global
  /// its module lacks is skipped (a reference kernel of another file need not have them).
  bool is_reference = false;
  double deadline_seconds = 10;  ///< the parent kills the worker after this
  EnergySettings energy;         ///< measure power and energy after timing
  friend bool operator==(const TrialRequest&, const TrialRequest&) = default;
};

/// What a worker reports for one trial.
struct TrialResult {
  std::uint64_t id = 0;
  TrialStatus status = TrialStatus::ok;
  std::string detail;  ///< error name, max error and first bad index, ...
  double median_ms = 0, mean_ms = 0, min_ms = 0, stddev_ms = 0;
  int samples = 0;  ///< samples kept (taken while the GPU did not throttle)
  /// Samples discarded because the GPU throttled (timing.hpp: is_throttled); when every sample
  /// was, they are the ones reported and `detail` says so.
  int throttled_samples = 0;
  double sm_clock_mhz = 0;       ///< mean SM clock over the kept samples (NVML); 0: not read
  double memory_clock_mhz = 0;   ///< memory clock right after the last sample (NVML); 0: not read
  double temperature_c = 0;      ///< GPU temperature right after the last sample (NVML); 0: not read
  double cpu_mean_ms = 0;        ///< mean host wall time of a sample: launch + synchronize
  int driver_blocks_per_sm = 0;  ///< cuOccupancyMaxActiveBlocksPerMultiprocessor
  double max_error = 0;          ///< largest error found by verification (0 when exact)
  long long first_bad_index = -1;
  double load_ms = 0;   ///< module load + setup
  double setup_ms = 0;  ///< of load_ms: buffers allocated and filled, reference computed (0 when reused)
  double verify_ms = 0;
  double measure_ms = 0;    ///< wall time of the timing loop
  double energy_mj = 0;     ///< energy per run (NVML); 0: not measured
  double power_w = 0;       ///< mean power while it ran back to back; 0: not measured
  std::string energy_note;  ///< why energy was asked for and not measured (NVML absent, ...)
  /// The samples the statistics above were taken over (ms, in the order taken), at most
  /// trial_times_max_samples of them: the first ones.
  std::vector<double> times_ms;
  /// The host check failed, not the candidate: its program could not start, exited, closed its
  /// stdout, answered something that is not a verdict, or nothing within the trial's deadline.
  /// The status is runtime_fault and `detail` says what the program did; the sweep stops there
  /// (sweep_detail::WorkerSession::run) rather than record such a failure for every config.
  bool host_check_failed = false;
  /// The failure is not the candidate's, and every config of the problem would share it: the
  /// host check failed (host_check_failed), a module global is missing from the module or larger
  /// than its symbol, or the problem's globals or expected outputs cannot be set up
  /// (ProblemSetupError). The sweep stops there with `detail`, recording nothing for the trial,
  /// rather than record the same failure once per config.
  bool shared_failure = false;
  friend bool operator==(const TrialResult&, const TrialResult&) = default;
};

/// A device-to-device copy: the bandwidth ceiling a sweep compares kernels with.
struct CopyCeiling {
  std::uint64_t bytes = 0;  ///< size of the copy
  double median_ms = 0;
  double gbps = 0;            ///< (bytes read + bytes written) / median time
  int samples = 0;            ///< kept, under the same stopping rule as a kernel
  int throttled_samples = 0;  ///< discarded because the GPU throttled
  friend bool operator==(const CopyCeiling&, const CopyCeiling&) = default;
};

}  // namespace tiletune
