// GpuRunner: one trial on one GPU, inside the worker process. The order is fixed by what can
// go wrong: load the cubin (a bad image is launch_failed), fill the module globals, launch once
// on poisoned outputs and synchronize (a fault is runtime_fault and kills the context), check
// each output against the reference on the GPU (wrong_result), then, when the space has one,
// hand every buffer to the host check (worker/host_check.hpp; wrong_result too), and only then
// time it. Inputs and expected outputs are built once per problem (worker/problem_setup.hpp) and
// reused by every config of that problem.
#include "worker/generators.hpp"
#include "tiletune/runner.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <limits>
#include <optional>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "device/driver.hpp"
#include "worker/host_check.hpp"
#include "worker/problem_setup.hpp"
#include "worker/worker_kernels.hpp"
#include "tiletune/device.hpp"
#include "tiletune/energy.hpp"
#include "tiletune/reference.hpp"
#include "tiletune/trial_record.hpp"

namespace tiletune {
namespace {

// Shared memory a block gets without opting in; above it the kernel must ask for more.
constexpr long long kDefaultSharedLimit = 48 * 1024;
constexpr int kCopyMinSamples = 20;
constexpr int kCopyWarmup = 3;

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Of a trial's deadline, what the host check may wait for its answer: the rest, less a margin for
// the result to reach the parent before it kills the worker (infinity: no deadline).
constexpr double kHostCheckMarginSeconds = 0.5;
double host_check_seconds(const TrialRequest& request, Clock::time_point trial_start) {
  if (std::isinf(request.deadline_seconds)) return request.deadline_seconds;
  const double left = request.deadline_seconds - ms_since(trial_start) / 1000 - kHostCheckMarginSeconds;
  return std::max(left, 0.05);
}

// One element of a buffer, as text for a mismatch message ("0.5", "nan", "-1").
std::string format_element(ElementType type, const unsigned char* bytes) {
  auto load = [bytes]<class T>(T) {
    T v;
    std::memcpy(&v, bytes, sizeof v);
    return v;
  };
  // The poison is a NaN with the sign bit set; "-nan" would only confuse.
  auto real = [](double v) { return std::isnan(v) ? std::string("nan") : fmt::format("{}", v); };
  switch (type) {
    case ElementType::f32: return std::isnan(load(float{})) ? "nan" : fmt::format("{}", load(float{}));
    case ElementType::f64: return real(load(double{}));
    case ElementType::f16: return real(half_bits_to_float(load(std::uint16_t{})));
    case ElementType::i32: return fmt::format("{}", load(std::int32_t{}));
    case ElementType::u32: return fmt::format("{}", load(std::uint32_t{}));
    case ElementType::i64: return fmt::format("{}", load(std::int64_t{}));
    case ElementType::u8: return fmt::format("{}", load(std::uint8_t{}));
    case ElementType::i8: return fmt::format("{}", load(std::int8_t{}));
    case ElementType::i16: return fmt::format("{}", load(std::int16_t{}));
    case ElementType::u16: return fmt::format("{}", load(std::uint16_t{}));
    case ElementType::u64: return fmt::format("{}", load(std::uint64_t{}));
  }
  return "?";
}

// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)"
std::string describe(CUresult r) {
  const std::string description = cu::result_description(r);
  return description.empty() ? cu::result_name(r) : fmt::format("{} ({})", cu::result_name(r), description);
}

// A kernel argument as cuLaunchKernel reads it: a pointer to storage of the argument's size.
union ArgSlot {
  CUdeviceptr pointer;
  std::int32_t i32;
  std::uint32_t u32;
  std::int64_t i64;
  float f32;
  double f64;
  std::uint16_t f16;  // IEEE half bits
  std::uint8_t u8;
  std::int8_t i8;
  std::int16_t i16;
  std::uint16_t u16;
  std::uint64_t u64;
};

// A failure the candidate is responsible for: it ends the trial with this status.
struct TrialFailure {
  TrialStatus status;
  std::string detail;
};

// What one sampling loop took: the kept samples, those discarded while the GPU throttled, and
// the host wall time and SM clock of the kept ones.
struct SampleSet {
  std::vector<double> gpu_ms;
  std::vector<double> throttled_ms;
  double cpu_ms_sum = 0;
  double clock_mhz_sum = 0;
  int clock_readings = 0;
  int gate_timeouts = 0;  // samples the stream blocker gave up on (discarded)
  StopReason reason = StopReason::keep_going;
};

// How long the stream blocker of a sample waits for the host: the host's part of a sample is
// microseconds (two event records and a launch); a host descheduled for a second loses the
// sample, not the sweep.
constexpr double kGateTimeoutSeconds = 1.0;

// Batches of launches kept queued on a stream, so that the GPU does not idle while the host does
// something slow between batches (measure_energy: a NVML poll takes milliseconds, about 5 on an
// H200 under load, longer than a batch). A ring of events, one per queued batch.
class BatchQueue {
 public:
  explicit BatchQueue(std::size_t depth) {
    for (std::size_t i = 0; i < depth; ++i) done_.emplace_back(CU_EVENT_DISABLE_TIMING);
  }

  /// Forgets the batches that have finished, waits for the oldest only when every slot is still
  /// queued, then calls enqueue_batch() until the queue is full again; returns how many it called.
  template <class EnqueueBatch>
  std::size_t top_up(CUstream stream, EnqueueBatch&& enqueue_batch) {
    while (queued_ > 0 && done_[oldest_].done()) pop();
    if (queued_ == done_.size()) {
      done_[oldest_].synchronize();
      pop();
    }
    std::size_t added = 0;
    for (; queued_ < done_.size(); ++added, ++queued_) {
      enqueue_batch();
      done_[(oldest_ + queued_) % done_.size()].record(stream);
    }
    return added;
  }

 private:
  void pop() {
    oldest_ = (oldest_ + 1) % done_.size();
    --queued_;
  }

  std::vector<cu::Event> done_;
  std::size_t oldest_ = 0;
  std::size_t queued_ = 0;
};

}  // namespace

struct GpuRunner::Impl {
  Impl(int device_ordinal, std::filesystem::path cubin_cache);

  [[nodiscard]] std::vector<ArgSlot> build_args(const TrialRequest& request);
  [[nodiscard]] std::optional<TrialFailure> find_globals(const cu::Module& module, const TrialRequest& request,
                                                         const std::string& where, TrialResult& result);
  [[nodiscard]] CUresult launch(CUfunction f, const TrialRequest& request, void** params) const;
  [[nodiscard]] std::optional<TrialFailure> launch_checked(CUfunction f, const TrialRequest& request, void** params,
                                                           const std::string& where);
  [[nodiscard]] std::optional<TrialFailure> verify(const TrialRequest& request, TrialResult& result);
  [[nodiscard]] std::optional<TrialFailure> check_elements(const TrialRequest& request, const CheckPlan& check,
                                                           TrialResult& result);
  [[nodiscard]] std::optional<TrialFailure> check_sum(const TrialRequest& request, const CheckPlan& check,
                                                      TrialResult& result);
  [[nodiscard]] std::optional<TrialFailure> check_on_host(const TrialRequest& request, TrialResult& result,
                                                          double timeout_seconds);
  [[nodiscard]] SampleSet take_samples(const TimingSettings& settings, const std::function<void()>& prepare,
                                       const std::function<void()>& op);
  [[nodiscard]] NvmlEnergySource* nvml();
  void read_conditions(TrialResult& result);
  void time(CUfunction f, const TrialRequest& request, void** params, TrialResult& result);
  void measure_energy(CUfunction f, const TrialRequest& request, void** params, TrialResult& result);
  [[nodiscard]] bool context_healthy() const;

  int ordinal;
  int arch = 0;  // compute capability x 10 (needs no context)
  // The worker's kernels: the build's image for the arch, or else a compile (NVRTC, the CPU)
  // started before the context, so that the two longest parts of such a start overlap.
  std::future<std::string> kernels_image;
  cu::PrimaryContext context;  // every member below needs it current
  int sm_count = 0;
  std::size_t l2 = 0;
  unsigned max_sm_mhz = 0;  // CU_DEVICE_ATTRIBUTE_CLOCK_RATE: the throttle check's reference
  cu::Stream stream;
  cu::Event start;
  cu::Event stop;
  cu::DeviceBuffer flush;  // 1 x L2 (nvbench's l2flush), overwritten before each cold sample
  cu::MappedFlags gate;    // the release and timed-out flags of a sample's stream blocker
  std::optional<WorkerKernels> kernels;
  ProblemSetup problem;
  std::vector<CUdeviceptr> symbols;  // where each module global of the loaded candidate is (0: skipped)
  bool lost = false;
  // NVML for this device, opened at the first timing (clock checks) and used for energy too, or
  // why it is not there.
  std::unique_ptr<NvmlEnergySource> nvml_source;
  std::optional<std::string> nvml_unavailable;
  // The host check of verify.command, started at the first trial that asks for it and kept.
  std::unique_ptr<HostCheck> host_check;
};

namespace {

int device_attribute(CUdevice device, CUdevice_attribute which, const char* what, int ordinal) {
  int value = 0;
  TILETUNE_CU_CTX(cuDeviceGetAttribute(&value, which, device), fmt::format("{} of device {}", what, ordinal));
  return value;
}

const char* producing_prefix = "reference run: ";

// Compute capability x 10 of device `ordinal`.
int device_arch(int ordinal) {
  CUdevice device = 0;
  TILETUNE_CU_CTX(cuDeviceGet(&device, ordinal), fmt::format("device {}", ordinal));
  return 10 * device_attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability", ordinal) +
         device_attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability", ordinal);
}

// The worker's kernels for device `ordinal` (worker_kernels_cubin), on a thread of its own: a
// compile, when the build made no image for the arch, runs while the context is made.
std::future<std::string> worker_kernels_image(int arch, int ordinal, std::filesystem::path cubin_cache) {
  return std::async(std::launch::async, [arch, ordinal, dir = std::move(cubin_cache)] {
    const CubinCache cache(dir);
    return worker_kernels_cubin(arch, ordinal, dir.empty() ? nullptr : &cache);
  });
}

}  // namespace

GpuRunner::Impl::Impl(int device_ordinal, std::filesystem::path cubin_cache)
    : ordinal(device_ordinal),
      arch(device_arch(device_ordinal)),
      kernels_image(worker_kernels_image(arch, device_ordinal, std::move(cubin_cache))),
      context(device_ordinal) {
  const CUdevice device = context.device();
  sm_count = device_attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count", ordinal);
  l2 = static_cast<std::size_t>(device_attribute(device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size", ordinal));
  max_sm_mhz =
      static_cast<unsigned>(device_attribute(device, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "SM clock", ordinal) / 1000);
  // One L2's worth, as nvbench's l2flush: writing it replaces whatever the kernel left there.
  flush = cu::DeviceBuffer(std::max<std::size_t>(l2, std::size_t{1} << 20));
  kernels.emplace(kernels_image.get(), sm_count);
}

bool GpuRunner::Impl::context_healthy() const {
  // A sticky error (illegal address, trap, ...) is returned by every later synchronize.
  return cu::detail::require().cuCtxSynchronize() == CUDA_SUCCESS;
}

std::vector<ArgSlot> GpuRunner::Impl::build_args(const TrialRequest& request) {
  std::vector<ArgSlot> slots(request.args.size());
  for (std::size_t i = 0; i < request.args.size(); ++i) {
    const ArgPlan& arg = request.args[i];
    ArgSlot& slot = slots[i];
    if (arg.is_buffer) {
      if (arg.buffer < 0 || static_cast<std::size_t>(arg.buffer) >= problem.buffers().size()) {
        throw Error(fmt::format("{}: argument {} names buffer {}, but the request has {} buffers", request.kernel, i,
                                arg.buffer, problem.buffers().size()));
      }
      slot.pointer = problem.buffers()[static_cast<std::size_t>(arg.buffer)].device.ptr();
      continue;
    }
    switch (arg.type) {
      case ElementType::i32: slot.i32 = static_cast<std::int32_t>(arg.int_value); break;
      case ElementType::u32: slot.u32 = static_cast<std::uint32_t>(arg.int_value); break;
      case ElementType::i64: slot.i64 = arg.int_value; break;
      case ElementType::u8: slot.u8 = static_cast<std::uint8_t>(arg.int_value); break;
      case ElementType::f32: slot.f32 = static_cast<float>(arg.float_value); break;
      case ElementType::f64: slot.f64 = arg.float_value; break;
      case ElementType::f16: slot.f16 = float_to_half_bits(static_cast<float>(arg.float_value)); break;
      // make_trial_request checked that the value fits the type.
      case ElementType::i8: slot.i8 = static_cast<std::int8_t>(arg.int_value); break;
      case ElementType::i16: slot.i16 = static_cast<std::int16_t>(arg.int_value); break;
      case ElementType::u16: slot.u16 = static_cast<std::uint16_t>(arg.int_value); break;
      case ElementType::u64: slot.u64 = static_cast<std::uint64_t>(arg.int_value); break;
    }
  }
  return slots;
}

// Where each module global lives in the candidate's module. The space's data fills the start of
// the symbol (Kernel Tuner's cmem_args copy a filter smaller than its __constant__ array the same
// way). A symbol the module lacks, or smaller than the data, is a failure every config would
// share (shared_failure: the sweep stops, naming both names and sizes); a reference run skips a
// symbol its module lacks (another file need not have them).
std::optional<TrialFailure> GpuRunner::Impl::find_globals(const cu::Module& module, const TrialRequest& request,
                                                          const std::string& where, TrialResult& result) {
  symbols.assign(request.globals.size(), 0);
  for (std::size_t i = 0; i < request.globals.size(); ++i) {
    const GlobalPlan& g = request.globals[i];
    CUdeviceptr pointer = 0;
    std::size_t bytes = 0;
    const CUresult r = cu::detail::require().cuModuleGetGlobal(&pointer, &bytes, module.get(), g.symbol.c_str());
    if (r == CUDA_ERROR_NOT_FOUND) {
      if (request.is_reference) continue;
      result.shared_failure = true;
      return TrialFailure{TrialStatus::launch_failed,
                          fmt::format("module global '{}' (symbol {}) is not in the module of {}: declare it "
                                      "__constant__ or __device__ at namespace scope, or fix its name in globals",
                                      g.name, g.symbol, where)};
    }
    if (r != CUDA_SUCCESS) throw cu::DriverError(r, fmt::format("cuModuleGetGlobal({}) for {}", g.symbol, where));
    const std::size_t declared = g.count * element_size(g.type);
    if (declared > bytes) {
      result.shared_failure = true;
      return TrialFailure{TrialStatus::launch_failed,
                          fmt::format("module global '{}' is {} bytes in the module of {}, smaller than the {} x {} "
                                      "= {} bytes the space fills it with",
                                      g.name, bytes, where, g.count, element_type_name(g.type), declared)};
    }
    symbols[i] = pointer;
  }
  return std::nullopt;
}

CUresult GpuRunner::Impl::launch(CUfunction f, const TrialRequest& request, void** params) const {
  return cu::detail::require().cuLaunchKernel(
      f, static_cast<unsigned>(request.grid[0]), static_cast<unsigned>(request.grid[1]),
      static_cast<unsigned>(request.grid[2]), static_cast<unsigned>(request.block[0]),
      static_cast<unsigned>(request.block[1]), static_cast<unsigned>(request.block[2]),
      static_cast<unsigned>(request.shared_bytes), stream.get(), params, nullptr);
}

std::optional<TrialFailure> GpuRunner::Impl::launch_checked(CUfunction f, const TrialRequest& request, void** params,
                                                            const std::string& where) {
  const CUresult r = launch(f, request, params);
  if (r == CUDA_SUCCESS) return std::nullopt;
  // Launch errors (bad dimensions, too many resources) normally leave the context usable;
  // make sure before the next trial trusts it.
  if (!context_healthy()) lost = true;
  return TrialFailure{lost ? TrialStatus::runtime_fault : TrialStatus::launch_failed,
                      fmt::format("{}: cuLaunchKernel failed for {}", describe(r), where)};
}

std::optional<TrialFailure> GpuRunner::Impl::check_elements(const TrialRequest& request, const CheckPlan& check,
                                                            TrialResult& result) {
  HeldBuffer& b = problem.buffers()[static_cast<std::size_t>(check.buffer)];
  ExpectedOutput& expected = problem.expected()[static_cast<std::size_t>(check.buffer)];
  const bool producing = request.is_reference && request.verify.mode == VerifySettings::Mode::reference_run;
  if (!producing && check.count > expected.count) {
    throw Error(fmt::format("{} [{}]: the check of '{}' compares {} elements, the reference produced {}",
                            request.kernel, request.config_text, b.plan.name, check.count, expected.count));
  }
  // A reference run is checked against itself: a poisoned (NaN) element never passes, so an
  // element the reference left unwritten is found before it can fail every candidate.
  const CUdeviceptr want = producing ? b.device.ptr() : expected.data.ptr();
  const double atol = producing ? 0.0 : check.atol;
  const double rtol = producing ? 0.0 : check.rtol;
  const Comparison c = kernels->compare(b.plan.type, b.device.ptr(), want, check.count, atol, rtol, stream.get());
  result.max_error = std::max(result.max_error, c.max_error);
  if (c.bad == 0) {
    if (producing) {
      expected.data = cu::DeviceBuffer(check.count * element_size(b.plan.type));
      if (check.count != 0)
        TILETUNE_CU_CTX(cuMemcpyDtoD(expected.data.ptr(), b.device.ptr(), expected.data.size()),
                        fmt::format("keeping reference buffer '{}'", b.plan.name));
      expected.count = check.count;
      expected.ready = true;
    }
    return std::nullopt;
  }
  const std::size_t size = element_size(b.plan.type);
  unsigned char got[8] = {};
  unsigned char wanted[8] = {};
  TILETUNE_CU_CTX(cuMemcpyDtoH(got, b.device.ptr() + c.first_bad * size, size), "reading a mismatch");
  TILETUNE_CU_CTX(cuMemcpyDtoH(wanted, want + c.first_bad * size, size), "reading a mismatch");
  result.first_bad_index = static_cast<long long>(c.first_bad);
  std::string detail = producing
                           ? fmt::format("{}{}[{}] = {} ({} of {} elements unwritten or NaN)", producing_prefix,
                                         b.plan.name, c.first_bad, format_element(b.plan.type, got), c.bad, check.count)
                           : fmt::format("{}[{}]: got {}, want {} (max abs error {}; {} of {} elements wrong)",
                                         b.plan.name, c.first_bad, format_element(b.plan.type, got),
                                         format_element(b.plan.type, wanted), c.max_error, c.bad, check.count);
  return TrialFailure{TrialStatus::wrong_result, std::move(detail)};
}

std::optional<TrialFailure> GpuRunner::Impl::check_sum(const TrialRequest& request, const CheckPlan& check,
                                                       TrialResult& result) {
  HeldBuffer& b = problem.buffers()[static_cast<std::size_t>(check.buffer)];
  ExpectedOutput& expected = problem.expected()[static_cast<std::size_t>(check.buffer)];
  const bool producing = request.is_reference && request.verify.mode == VerifySettings::Mode::reference_run;
  const double got = kernels->sum(b.plan.type, b.device.ptr(), check.count, stream.get());
  if (producing) {
    if (std::isnan(got)) {
      return TrialFailure{TrialStatus::wrong_result,
                          fmt::format("{}the sum of {}[0, {}) is NaN (an element unwritten or NaN)", producing_prefix,
                                      b.plan.name, check.count)};
    }
    expected.sum = got;
    expected.count = check.count;
    expected.ready = true;
    return std::nullopt;
  }
  const double want = expected.sum;
  const double error = std::isnan(got) ? std::numeric_limits<double>::infinity() : std::abs(got - want);
  const double allowed = check.atol + check.rtol * std::abs(want);
  result.max_error = std::max(result.max_error, error);
  if (!std::isnan(got) && error <= allowed) return std::nullopt;
  return TrialFailure{TrialStatus::wrong_result, fmt::format("sum of {}[0, {}): got {}, want {} (error {}, allowed {})",
                                                             b.plan.name, check.count, got, want, error, allowed)};
}

std::optional<TrialFailure> GpuRunner::Impl::verify(const TrialRequest& request, TrialResult& result) {
  const VerifySettings& settings = request.verify;
  if (settings.mode == VerifySettings::Mode::none) return std::nullopt;
  for (const CheckPlan& check : settings.checks) {
    if (check.compare == OutputCheck::Compare::none) continue;
    if (check.buffer < 0 || static_cast<std::size_t>(check.buffer) >= problem.buffers().size() ||
        !problem.buffers()[static_cast<std::size_t>(check.buffer)].plan.output)
      throw Error(fmt::format("{}: a check names buffer #{}, which is not an output of the request", request.kernel,
                              check.buffer));
    const HeldBuffer& b = problem.buffers()[static_cast<std::size_t>(check.buffer)];
    if (check.count > b.plan.count)
      throw Error(fmt::format("{} [{}]: the check of '{}' covers {} elements, the buffer holds {}", request.kernel,
                              request.config_text, b.plan.name, check.count, b.plan.count));
    auto failure = check.compare == OutputCheck::Compare::sum ? check_sum(request, check, result)
                                                              : check_elements(request, check, result);
    if (failure) return failure;
  }
  if (request.is_reference && settings.mode == VerifySettings::Mode::reference_run) problem.set_reference_ready();
  return std::nullopt;
}

// The host check of a trial whose outputs passed the comparisons: every buffer the command reads
// (command_buffers; all by default) as the checked launch left it, written as an .npy file into
// the check's directory (in memory where it fits: HostCheck::directory), one request line, one
// verdict; the files go once it answered. Not ok is the candidate's wrong_result. A check that
// fails (HostCheckError), or files that cannot be written, are not the candidate's: the trial
// comes back runtime_fault with host_check_failed, and the parent stops the sweep.
std::optional<TrialFailure> GpuRunner::Impl::check_on_host(const TrialRequest& request, TrialResult& result,
                                                           double timeout_seconds) {
  if (!host_check || host_check->command() != request.verify.command)
    host_check = std::make_unique<HostCheck>(request.verify.command);
  std::vector<HostCheckFile> files;
  auto remove_files = [&files] {
    for (const HostCheckFile& f : files) {
      std::error_code ignored;
      std::filesystem::remove(f.path, ignored);
    }
  };
  try {
    stream.synchronize();  // the comparisons ran on the worker's stream; the downloads do not wait for it
    const HostCommand& command = request.verify.command;
    std::uint64_t total = 0;
    for (const HeldBuffer& b : problem.buffers())
      if (command.reads(b.plan.name)) total += b.bytes();
    const std::filesystem::path& dir = host_check->directory(total);
    std::vector<std::byte> bytes;
    for (const HeldBuffer& b : problem.buffers()) {
      if (!command.reads(b.plan.name)) continue;  // only what the check reads leaves the GPU
      bytes.resize(b.bytes());
      if (!bytes.empty()) b.device.download(bytes.data(), bytes.size());
      files.push_back(write_host_check_file(dir, b.plan, bytes));
    }
    const HostCheckVerdict verdict = host_check->check(host_check_request(request, files), timeout_seconds);
    remove_files();
    if (verdict.ok) return std::nullopt;
    return TrialFailure{
        TrialStatus::wrong_result,
        "host check: " + (verdict.detail.empty() ? std::string("not ok (no detail given)") : verdict.detail)};
  } catch (const cu::DriverError&) {
    remove_files();
    throw;  // a download that failed: run_trial's catch asks whether the context survived
  } catch (const Error& e) {
    remove_files();
    result.host_check_failed = true;
    result.shared_failure = true;
    return TrialFailure{TrialStatus::runtime_fault, e.what()};
  }
}

// The memory clock and the temperature, read once right after the samples (they move over seconds,
// not over one sample, and a read costs tens of microseconds): Kernel Tuner's NVMLObserver
// mem_freq and temperature beside the SM clock the samples read.
void GpuRunner::Impl::read_conditions(TrialResult& result) {
  NvmlEnergySource* source = nvml();
  if (source == nullptr) return;
  if (const auto mhz = source->memory_clock_mhz()) result.memory_clock_mhz = *mhz;
  if (const auto celsius = source->temperature_c()) result.temperature_c = *celsius;
}

NvmlEnergySource* GpuRunner::Impl::nvml() {
  if (!nvml_source && !nvml_unavailable) {
    CUuuid uuid{};
    TILETUNE_CU_CTX(cuDeviceGetUuid(&uuid, context.device()), fmt::format("UUID of device {}", ordinal));
    std::array<unsigned char, 16> bytes{};
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(uuid.bytes[i]);
    std::string why;
    nvml_source = NvmlEnergySource::open(format_gpu_uuid(bytes), why);
    if (!nvml_source) nvml_unavailable = why;
  }
  return nvml_source.get();
}

// Samples `op` until StdrelCriterion stops (timing.hpp). Each sample: `prepare` (the restore of
// in/out buffers and globals) and then, when cold, the L2 flush -- in that order, so that the
// flush evicts the restored data too and a cold sample is cold for everything the kernel reads --
// then a synchronize, so that the host wall time of the sample is its launch and synchronize
// alone. CUDA events around `op` give its GPU time, queued behind a stream blocker (as
// nvbench's blocking_kernel): the start event, `op` and the stop event are all queued before
// the host releases the stream, so the events time the GPU's work, not the host's launch
// latency between the start event and the kernel (a few microseconds, and more when the compile
// workers load the CPU: on the H200 a 9 us reduction's samples moved by 3.5 % between sweeps). A
// sample whose blocker timed out is discarded and counted. After each sample NVML's SM clock is read:
// a sample taken while the GPU throttled (is_throttled) is counted and not given to the
// criterion, as nvbench's measure_cold discards it. nvbench measures the clock across the sample
// with device timestamps and pauses after a throttled one for the GPU to recover; here the clock
// is read once, right after, and sampling goes on at once (the time limit bounds the loop).
SampleSet GpuRunner::Impl::take_samples(const TimingSettings& settings, const std::function<void()>& prepare,
                                        const std::function<void()>& op) {
  NvmlEnergySource* clocks = nvml();
  StdrelCriterion criterion(settings);
  SampleSet set;
  set.gpu_ms.reserve(static_cast<std::size_t>(std::max(settings.min_samples, 16)));
  const auto sampling_start = Clock::now();
  while (set.reason == StopReason::keep_going) {
    prepare();
    if (settings.cold) flush.fill_async(static_cast<unsigned char>(set.gpu_ms.size()), stream.get());
    stream.synchronize();
    gate.store(0, 0);
    gate.store(1, 0);
    kernels->block_stream(gate, kGateTimeoutSeconds, stream.get());
    const auto cpu_start = Clock::now();
    try {
      start.record(stream.get());
      op();
      stop.record(stream.get());
    } catch (...) {
      gate.store(0, 1);  // the stream goes on for whoever synchronizes it next
      throw;
    }
    gate.store(0, 1);  // release: everything of the sample is queued
    stop.synchronize();
    const double cpu_ms = ms_since(cpu_start);
    const double ms = cu::Event::elapsed_ms(start, stop);
    if (gate.load(1) != 0) {
      ++set.gate_timeouts;
      set.reason = criterion.verdict(ms_since(sampling_start) * 1e-3);
      continue;
    }
    const std::optional<ClockReading> clock = clocks ? clocks->sm_clock() : std::nullopt;
    if (clock && is_throttled(*clock, max_sm_mhz)) {
      set.throttled_ms.push_back(ms);
    } else {
      criterion.add_sample(ms);
      set.gpu_ms.push_back(ms);
      set.cpu_ms_sum += cpu_ms;
      if (clock && clock->sm_mhz > 0) {
        set.clock_mhz_sum += clock->sm_mhz;
        ++set.clock_readings;
      }
    }
    set.reason = criterion.verdict(ms_since(sampling_start) * 1e-3);
  }
  return set;
}

void GpuRunner::Impl::time(CUfunction f, const TrialRequest& request, void** params, TrialResult& result) {
  const TimingSettings& settings = request.timing;
  const std::string where = fmt::format("timing {} [{}]", request.kernel, request.config_text);
  // In/out buffers and module globals are restored before every run (and before the L2 flush:
  // take_samples). A plain output may keep what the checked launch wrote.
  const bool restores = problem.has_inputs_to_restore();
  auto restore = [&] {
    if (restores) problem.restore_inputs(symbols, stream.get());
  };
  auto checked_launch = [&] {
    const CUresult r = launch(f, request, params);
    if (r != CUDA_SUCCESS) throw cu::DriverError(r, fmt::format("cuLaunchKernel failed: {} [{}]", describe(r), where));
  };

  const auto loop_start = Clock::now();
  for (int i = 0; i < settings.warmup_runs; ++i) {
    restore();
    checked_launch();
  }
  stream.synchronize();
  SampleSet set = take_samples(settings, restore, checked_launch);
  result.throttled_samples = static_cast<int>(set.throttled_ms.size());
  if (set.gate_timeouts > 0)
    result.detail = fmt::format("{} samples discarded: the host did not release the stream within {:.0f} s",
                                set.gate_timeouts, kGateTimeoutSeconds);
  if (set.gpu_ms.empty() && !set.throttled_ms.empty()) {
    // Every sample was taken while the GPU throttled: report them rather than nothing, and say so.
    result.detail = fmt::format(
        "all {} samples were taken while the GPU throttled (SM clock under {:.0f} % of {} "
        "MHz or a thermal/power slowdown)",
        set.throttled_ms.size(), 100 * kThrottleClockFraction, max_sm_mhz);
    set.gpu_ms = std::move(set.throttled_ms);
  } else if (!set.gpu_ms.empty()) {
    result.cpu_mean_ms = set.cpu_ms_sum / static_cast<double>(set.gpu_ms.size());
    if (set.clock_readings > 0) result.sm_clock_mhz = set.clock_mhz_sum / set.clock_readings;
  }
  read_conditions(result);
  const std::size_t kept = std::min(set.gpu_ms.size(), trial_times_max_samples);
  result.times_ms.assign(set.gpu_ms.begin(), set.gpu_ms.begin() + static_cast<std::ptrdiff_t>(kept));
  const TimingStats stats = summarize(std::move(set.gpu_ms));
  result.samples = stats.samples;
  result.median_ms = stats.median_ms;
  result.mean_ms = stats.mean_ms;
  result.min_ms = stats.min_ms;
  result.stddev_ms = stats.stddev_ms;
  result.measure_ms = ms_since(loop_start);
}

void GpuRunner::Impl::measure_energy(CUfunction f, const TrialRequest& request, void** params, TrialResult& result) {
  NvmlEnergySource* energy_source = nvml();
  if (!energy_source) {
    result.energy_note = *nvml_unavailable;
    return;
  }
  const bool restores = problem.has_inputs_to_restore();
  const std::string where = fmt::format("energy of {} [{}]", request.kernel, request.config_text);
  // The GPU must not idle inside the energy window: every call tops the queue up to 8 batches
  // (about 24 ms of work). The runs counted at a counter edge then exceed those finished by about
  // the queue's depth, the same at both edges of the window, which cancels in their difference.
  BatchQueue queue(8);
  auto run_batch = [&](std::int64_t runs) -> std::int64_t {
    const std::size_t batches = queue.top_up(stream.get(), [&] {
      for (std::int64_t i = 0; i < runs; ++i) {
        if (restores) problem.restore_inputs(symbols, stream.get());  // counted in the energy, as in the times
        if (const CUresult r = launch(f, request, params); r != CUDA_SUCCESS)
          throw cu::DriverError(r, fmt::format("cuLaunchKernel failed: {} [{}]", describe(r), where));
      }
    });
    return static_cast<std::int64_t>(batches) * runs;
  };
  std::string why;
  try {
    std::optional<EnergyMeasurement> measured =
        tiletune::measure_energy(*energy_source, run_batch, result.median_ms, request.energy, &why);
    stream.synchronize();  // the batches still queued
    if (auto& m = measured) {
      result.energy_mj = m->energy_mj;
      result.power_w = m->power_w;
    } else {
      result.energy_note = why;
    }
  } catch (const cu::DriverError&) {
    throw;  // the kernel's failure: run_trial gives it its status
  } catch (const Error& e) {
    result.energy_note = e.what();  // NVML's failure costs the energy, not the trial
  }
}

GpuRunner::GpuRunner(int ordinal, std::filesystem::path cubin_cache)
    : impl_(std::make_unique<Impl>(ordinal, std::move(cubin_cache))) {}

GpuRunner::~GpuRunner() {
  // On a lost context every cuMemFree, cuModuleUnload, ... fails (and warns): the handles
  // are left to the process exit that must follow, which frees them all at once. The host
  // check needs no context: it ends and its directory goes in any case.
  if (impl_ && impl_->lost) {
    impl_->host_check.reset();
    (void)impl_.release();
  }
}

bool GpuRunner::context_lost() const noexcept { return impl_->lost; }
int GpuRunner::ordinal() const noexcept { return impl_->ordinal; }
int GpuRunner::arch() const noexcept { return impl_->arch; }
std::size_t GpuRunner::l2_bytes() const noexcept { return impl_->l2; }

namespace {

std::optional<TrialFailure> invalid_geometry(const TrialRequest& request, const std::string& where) {
  for (int d = 0; d < 3; ++d) {
    if (request.grid[d] < 1 || request.grid[d] > UINT_MAX || request.block[d] < 1 || request.block[d] > UINT_MAX) {
      return TrialFailure{
          TrialStatus::launch_failed,
          fmt::format("invalid launch configuration: grid ({}, {}, {}), block ({}, {}, {}) for {}", request.grid[0],
                      request.grid[1], request.grid[2], request.block[0], request.block[1], request.block[2], where)};
    }
  }
  if (request.shared_bytes < 0 || request.shared_bytes > INT_MAX) {
    return TrialFailure{TrialStatus::launch_failed,
                        fmt::format("invalid dynamic shared memory size {} for {}", request.shared_bytes, where)};
  }
  return std::nullopt;
}

}  // namespace

TrialResult GpuRunner::run_trial(const TrialRequest& request) {
  const auto trial_start = Clock::now();
  Impl& s = *impl_;
  TrialResult result;
  result.id = request.id;
  const std::string where = fmt::format("{} [{}]", request.kernel, request.config_text);
  auto fail = [&result](TrialFailure failure) {
    result.status = failure.status;
    result.detail = std::move(failure.detail);
    return result;
  };
  if (s.lost) {
    return fail({TrialStatus::runtime_fault,
                 fmt::format("the CUDA context of device {} was lost by an earlier trial; the worker must "
                             "restart before running {}",
                             s.ordinal, where)});
  }

  if (request.verify.mode != VerifySettings::Mode::none && request.verify.checks.empty())
    throw Error(fmt::format("{}: the request verifies against a reference but has no checks", where));
  const auto load_start = Clock::now();
  s.context.make_current();
  try {
    if (s.problem.prepare(request, *s.kernels, s.stream.get())) result.setup_ms = ms_since(load_start);
  } catch (const ProblemSetupError& e) {  // what no config could pass: the sweep stops
    result.shared_failure = true;
    return fail({TrialStatus::runtime_fault, e.what()});
  }
  if (request.verify.mode == VerifySettings::Mode::reference_run && !request.is_reference &&
      !s.problem.reference_ready()) {
    throw Error(
        fmt::format("{}: no reference outputs for problem '{}' on this worker: the reference "
                    "(is_reference) must run first",
                    where, request.problem_key));
  }
  std::vector<ArgSlot> slots = s.build_args(request);
  std::vector<void*> params(slots.size());
  for (std::size_t i = 0; i < slots.size(); ++i) params[i] = &slots[i];
  if (auto failure = invalid_geometry(request, where)) return fail(std::move(*failure));

  try {
    // 1. Load. A bad image is the candidate's fault: launch_failed with the CUresult name.
    std::optional<cu::Module> module;
    CUfunction function = nullptr;
    try {
      module.emplace(request.cubin, where);
      function = module->get_function(request.function);
      const int static_shared = cu::function_attribute(function, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
      if (request.shared_bytes + static_shared > kDefaultSharedLimit) {
        cu::set_max_dynamic_shared_bytes(function, static_cast<int>(request.shared_bytes));
      }
    } catch (const cu::DriverError& e) {
      return fail({TrialStatus::launch_failed, fmt::format("{}: {}", cu::result_name(e.result()), e.what())});
    } catch (const Error& e) {  // an empty image
      return fail({TrialStatus::launch_failed, e.what()});
    }
    if (auto failure = s.find_globals(*module, request, where, result)) return fail(std::move(*failure));
    const long long threads = request.block[0] * request.block[1] * request.block[2];
    try {
      result.driver_blocks_per_sm =
          cu::max_active_blocks_per_sm(function, static_cast<int>(std::min<long long>(threads, INT_MAX)),
                                       static_cast<std::size_t>(request.shared_bytes));
    } catch (const cu::DriverError&) {
      // A block the device cannot run (too many threads): 0 blocks per SM, and the launch
      // below reports the real error.
      result.driver_blocks_per_sm = 0;
    }
    result.load_ms = ms_since(load_start);

    // 2.-3. Poison the outputs, restore in/out buffers and globals, launch once, synchronize.
    const auto verify_start = Clock::now();
    s.problem.reset_for_launch(s.symbols, s.stream.get());
    if (auto failure = s.launch_checked(function, request, params.data(), where)) return fail(std::move(*failure));
    if (const CUresult r = cu::detail::require().cuStreamSynchronize(s.stream.get()); r != CUDA_SUCCESS) {
      // The kernel faulted: the context is unusable from here on, whatever the error.
      s.lost = true;
      return fail({TrialStatus::runtime_fault,
                   fmt::format("{}: the kernel faulted in {} (reported by cuStreamSynchronize); the CUDA "
                               "context is lost",
                               describe(r), where)});
    }

    // 4. Verify: only verified configs are timed. The host check sees only outputs that
    // passed the comparisons (it costs nothing for a config already wrong), and never a
    // reference run (it judges candidates).
    auto failure = s.verify(request, result);
    if (!failure && !request.verify.command.empty() && !request.is_reference)
      failure = s.check_on_host(request, result, host_check_seconds(request, trial_start));
    result.verify_ms = ms_since(verify_start);
    if (failure) return fail(std::move(*failure));

    // 5. Time; 6. energy, when asked for (worker/energy.cpp).
    s.time(function, request, params.data(), result);
    if (request.energy.enabled) s.measure_energy(function, request, params.data(), result);
    result.status = TrialStatus::ok;
    return result;
  } catch (const cu::DriverError& e) {
    // A failure after the first launch succeeded: a fault in a later run (a race, say) or
    // a driver call of our own. Whether the context survived decides the status.
    if (!s.context_healthy()) {
      s.lost = true;
      return fail({TrialStatus::runtime_fault, fmt::format("{}: {} in {}; the CUDA context is lost",
                                                           cu::result_name(e.result()), e.what(), where)});
    }
    return fail({TrialStatus::launch_failed, fmt::format("{}: {}", cu::result_name(e.result()), e.what())});
  }
}

CopyCeiling GpuRunner::measure_copy(std::uint64_t bytes) {
  Impl& s = *impl_;
  if (s.lost) throw Error(fmt::format("measure_copy: the CUDA context of device {} is lost", s.ordinal));
  if (bytes == 0) throw Error("measure_copy: the copy needs at least one byte");
  s.context.make_current();
  const std::string where = fmt::format("device-to-device copy of {} bytes on device {}", bytes, s.ordinal);
  cu::DeviceBuffer source(bytes);
  cu::DeviceBuffer destination(bytes);
  source.fill_async(0x5A, s.stream.get());
  auto copy = [&] {
    TILETUNE_CU_CTX(cuMemcpyDtoDAsync(destination.ptr(), source.ptr(), bytes, s.stream.get()), where);
  };
  for (int i = 0; i < kCopyWarmup; ++i) copy();
  s.stream.synchronize();
  // The same rule as a kernel's samples (cold, the stdrel criterion, throttled samples
  // discarded), with at least kCopyMinSamples samples.
  TimingSettings settings;
  settings.min_samples = kCopyMinSamples;
  SampleSet set = s.take_samples(
      settings, [] {}, copy);
  CopyCeiling ceiling;
  ceiling.throttled_samples = static_cast<int>(set.throttled_ms.size());
  if (set.gpu_ms.empty()) set.gpu_ms = std::move(set.throttled_ms);
  const TimingStats stats = summarize(std::move(set.gpu_ms));
  ceiling.bytes = bytes;
  ceiling.median_ms = stats.median_ms;
  ceiling.samples = stats.samples;
  // Bytes read plus bytes written, per second.
  ceiling.gbps = stats.median_ms > 0 ? 2.0 * static_cast<double>(bytes) / (stats.median_ms * 1e-3) / 1e9 : 0.0;
  return ceiling;
}

}  // namespace tiletune
