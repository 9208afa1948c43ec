// GpuRunner: one trial on one GPU, inside the worker process. The order is fixed by what can
// go wrong: load the cubin (a bad image is launch_failed), launch once on poisoned outputs
// and synchronize (a fault is runtime_fault and kills the context), compare with the
// reference on the GPU (wrong_result), and only then time it. Inputs and expected outputs
// are built once per problem and reused by every config of that problem.
#include "tiletune/runner.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include <unistd.h>

#include <fmt/format.h>

#include "gpu/driver.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/device.hpp"
#include "tiletune/energy.hpp"
#include "tiletune/reference.hpp"

namespace tiletune {
namespace {

constexpr char kCompareSource[] =
#include "gpu/compare_kernel.cu.inc"
    ;

constexpr int kCompareBlock = 256;
// 0xFF bytes: NaN for f32/f64/f16, -1 for signed and the maximum for unsigned integers.
constexpr unsigned char kPoison = 0xFF;
// Shared memory a block gets without opting in; above it the kernel must ask for more.
constexpr long long kDefaultSharedLimit = 48 * 1024;
constexpr int kCopySamples = 20;
constexpr int kCopyWarmup = 3;

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

const char* type_suffix(ElementType type) {
  switch (type) {
    case ElementType::f32: return "f32";
    case ElementType::f64: return "f64";
    case ElementType::i32: return "i32";
    case ElementType::u32: return "u32";
    case ElementType::i64: return "i64";
    case ElementType::u8: return "u8";
    case ElementType::f16: return "f16";
  }
  return "?";
}

constexpr std::array<ElementType, 7> kAllTypes = {
    ElementType::f32, ElementType::f64, ElementType::i32, ElementType::u32,
    ElementType::i64, ElementType::u8,  ElementType::f16};

// An output that also carries data in (init random or iota) is restored to its initial
// contents before every launch instead of poisoned: the kernel reads it. A plain output
// (init zero or none) is poisoned so that an element the kernel never writes fails.
bool restores_before_launch(const BufferPlan& plan) {
  return plan.output && (plan.init == BufferInit::random || plan.init == BufferInit::iota);
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
    case ElementType::f32:
      return std::isnan(load(float{})) ? "nan" : fmt::format("{}", load(float{}));
    case ElementType::f64: return real(load(double{}));
    case ElementType::f16: return real(half_bits_to_float(load(std::uint16_t{})));
    case ElementType::i32: return fmt::format("{}", load(std::int32_t{}));
    case ElementType::u32: return fmt::format("{}", load(std::uint32_t{}));
    case ElementType::i64: return fmt::format("{}", load(std::int64_t{}));
    case ElementType::u8: return fmt::format("{}", load(std::uint8_t{}));
  }
  return "?";
}

// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)"
std::string describe(CUresult r) {
  const std::string description = cu::result_description(r);
  return description.empty() ? cu::result_name(r)
                             : fmt::format("{} ({})", cu::result_name(r), description);
}

// A kernel argument as cuLaunchKernel reads it: a pointer to storage of the argument's size.
union ArgSlot {
  CUdeviceptr pointer;
  std::int32_t i32;
  std::uint32_t u32;
  std::int64_t i64;
  float f32;
  double f64;
};

// The buffers of one problem on the device.
struct ProblemBuffer {
  BufferPlan plan;
  cu::DeviceBuffer device;    // what the kernel reads and writes
  cu::DeviceBuffer initial;   // pristine contents of an in/out output, restored before each launch
  cu::DeviceBuffer expected;  // the reference outputs (outputs only)
  [[nodiscard]] std::size_t bytes() const { return plan.count * host_element_bytes(plan.type); }
};

struct Problem {
  std::string key;  // empty: nothing cached
  std::vector<ProblemBuffer> buffers;
  bool reference_ready = false;
};

// Everything that decides the inputs and the expected outputs. Buffer counts are part of it
// because a count may depend on the config's params (a scratch buffer sized by the grid).
std::string problem_cache_key(const TrialRequest& request) {
  std::string key =
      fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}", request.kernel, request.problem_key, request.seed,
                  static_cast<int>(request.verify.mode), request.verify.cpu_reference);
  for (const auto& b : request.buffers) {
    key += fmt::format("\x1f{}:{}:{}:{}:{}", b.name, static_cast<int>(b.type), b.count,
                       static_cast<int>(b.init), b.output ? 1 : 0);
  }
  return key;
}

// A failure the candidate is responsible for: it ends the trial with this status.
struct TrialFailure {
  TrialStatus status;
  std::string detail;
};

}  // namespace

struct GpuRunner::Impl {
  explicit Impl(int device_ordinal);

  void prepare_problem(const TrialRequest& request);
  void fill_problem(const TrialRequest& request);
  [[nodiscard]] std::vector<ArgSlot> build_args(const TrialRequest& request) const;
  void reset_outputs();
  [[nodiscard]] CUresult launch(CUfunction f, const TrialRequest& request, void** params) const;
  [[nodiscard]] std::optional<TrialFailure> launch_checked(CUfunction f,
                                                           const TrialRequest& request,
                                                           void** params, const std::string& where);
  struct Comparison {
    std::uint64_t bad = 0;
    std::uint64_t first_bad = 0;
    double max_error = 0;
  };
  [[nodiscard]] Comparison compare(const ProblemBuffer& buffer, CUdeviceptr got, CUdeviceptr want,
                                   double atol, double rtol);
  [[nodiscard]] std::optional<TrialFailure> verify(const TrialRequest& request,
                                                   TrialResult& result);
  void time(CUfunction f, const TrialRequest& request, void** params, TrialResult& result);
  void measure_energy(CUfunction f, const TrialRequest& request, void** params, TrialResult& result);
  [[nodiscard]] bool context_healthy() const;

  int ordinal;
  cu::PrimaryContext context;  // first: every member below needs it current
  int arch = 0;
  int sm_count = 0;
  std::size_t l2 = 0;
  cu::Stream stream;
  cu::Event start;
  cu::Event stop;
  cu::DeviceBuffer flush;  // 2 x L2, overwritten before each cold sample
  std::optional<cu::Module> compare_module;
  std::array<CUfunction, kAllTypes.size()> compare_functions{};
  cu::DeviceBuffer compare_result{3 * sizeof(std::uint64_t)};
  Problem problem;
  bool lost = false;
  // NVML for this device, opened at the first trial that asks for energy (or why it is not there).
  std::unique_ptr<NvmlEnergySource> energy_source;
  std::optional<std::string> energy_unavailable;
};

namespace {

int device_attribute(CUdevice device, CUdevice_attribute which, const char* what, int ordinal) {
  int value = 0;
  TILETUNE_CU_CTX(cuDeviceGetAttribute(&value, which, device),
                  fmt::format("{} of device {}", what, ordinal));
  return value;
}

std::size_t type_index(ElementType type) {
  return static_cast<std::size_t>(std::find(kAllTypes.begin(), kAllTypes.end(), type) -
                                  kAllTypes.begin());
}

}  // namespace

GpuRunner::Impl::Impl(int device_ordinal) : ordinal(device_ordinal), context(device_ordinal) {
  const CUdevice device = context.device();
  arch = 10 * device_attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                               "compute capability", ordinal) +
         device_attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                          "compute capability", ordinal);
  sm_count =
      device_attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count", ordinal);
  l2 = static_cast<std::size_t>(
      device_attribute(device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size", ordinal));
  // Twice the L2 (nvbench's choice): whatever the kernel left there is surely evicted.
  flush = cu::DeviceBuffer(std::max<std::size_t>(2 * l2, std::size_t{1} << 20));

  // NVRTC 12.9+ (with a driver on the machine) serves ptxas from the driver's on-disk
  // compute cache, keyed by the PTX, and a hit comes back without the ptxas report that
  // compile_nvrtc requires: a restarted worker would fail here. A device variable named
  // after this process and moment makes the PTX, and so the compile, new each time; it
  // costs one compile (about 100 ms) per worker start. Drop it once compile_nvrtc copes
  // with cache hits.
  static std::atomic<unsigned> runners{0};
  KernelSource source;
  source.main = {
      "tiletune_compare.cu",
      fmt::format("__device__ unsigned long long tiletune_compile_nonce_{}_{}_{};\n{}", ::getpid(),
                  Clock::now().time_since_epoch().count(), runners++, kCompareSource)};
  CompileRequest request;
  request.source = &source;
  request.arch = std::to_string(arch);
  request.entry = "tiletune_compare_f32";
  const CompileResult compiled = compile_nvrtc(request);
  if (!compiled.ok()) {
    throw Error(fmt::format("compiling the comparison kernels for sm_{} (device {}) failed: {}\n{}",
                            arch, ordinal, compiled.error, compiled.log));
  }
  compare_module.emplace(compiled.kernel->cubin, "tiletune comparison kernels");
  for (const ElementType type : kAllTypes) {
    compare_functions[type_index(type)] =
        compare_module->get_function(fmt::format("tiletune_compare_{}", type_suffix(type)));
  }
}

bool GpuRunner::Impl::context_healthy() const {
  // A sticky error (illegal address, trap, ...) is returned by every later synchronize.
  return cu::detail::require().cuCtxSynchronize() == CUDA_SUCCESS;
}

void GpuRunner::Impl::prepare_problem(const TrialRequest& request) {
  const std::string key = problem_cache_key(request);
  if (key == problem.key) return;
  problem = Problem{};  // free the previous problem's memory before allocating the next
  try {
    fill_problem(request);
    problem.key = key;
  } catch (...) {
    problem = Problem{};
    throw;
  }
}

void GpuRunner::Impl::fill_problem(const TrialRequest& request) {
  const VerifySettings& verify = request.verify;
  const CpuReference* reference = nullptr;
  if (verify.mode == VerifySettings::Mode::cpu) {
    reference = find_cpu_reference(verify.cpu_reference);
    if (reference == nullptr) {
      std::string known;
      for (const auto name : cpu_reference_names())
        known += fmt::format("{}{}", known.empty() ? "" : ", ", name);
      throw Error(fmt::format("{}: no CPU reference named '{}' (registered: {})", request.kernel,
                              verify.cpu_reference, known));
    }
  }

  std::vector<HostBuffer> inputs;
  std::vector<HostBuffer> outputs;
  for (const BufferPlan& plan : request.buffers) {
    ProblemBuffer& b = problem.buffers.emplace_back();
    b.plan = plan;
    const std::string where =
        fmt::format("buffer '{}' of {} ({})", plan.name, request.kernel, request.problem_key);
    try {
      b.device = cu::DeviceBuffer(b.bytes());
      const bool has_data = plan.init == BufferInit::random || plan.init == BufferInit::iota;
      // Host copies only where someone reads them: the device, or the CPU reference.
      const bool need_host = has_data || (reference != nullptr);
      HostBuffer host;
      if (need_host) host = make_host_buffer(plan, request.seed);
      if (plan.output) {
        if (restores_before_launch(plan)) {
          b.initial = cu::DeviceBuffer(b.bytes());
          b.initial.upload(host.bytes.data(), b.bytes());
        }
        if (verify.mode != VerifySettings::Mode::none) b.expected = cu::DeviceBuffer(b.bytes());
        if (reference != nullptr) outputs.push_back(std::move(host));
      } else {
        if (has_data) {
          b.device.upload(host.bytes.data(), b.bytes());
        } else {
          b.device.fill_async(0, stream.get());
        }
        if (reference != nullptr) inputs.push_back(std::move(host));
      }
    } catch (const cu::DriverError& e) {
      throw Error(fmt::format("cannot set up {}: {}", where, e.what()));
    }
  }
  stream.synchronize();

  if (reference != nullptr) {
    try {
      reference->compute(ReferenceArgs(request.sizes, inputs, outputs));
    } catch (const Error& e) {
      throw Error(fmt::format("CPU reference '{}' for {} ({}): {}", reference->name, request.kernel,
                              request.problem_key, e.what()));
    }
    std::size_t next = 0;
    for (ProblemBuffer& b : problem.buffers) {
      if (b.plan.output) b.expected.upload(outputs[next++].bytes.data(), b.bytes());
    }
    problem.reference_ready = true;
  }
}

std::vector<ArgSlot> GpuRunner::Impl::build_args(const TrialRequest& request) const {
  std::vector<ArgSlot> slots(request.args.size());
  for (std::size_t i = 0; i < request.args.size(); ++i) {
    const ArgPlan& arg = request.args[i];
    ArgSlot& slot = slots[i];
    if (arg.is_buffer) {
      if (arg.buffer < 0 || static_cast<std::size_t>(arg.buffer) >= problem.buffers.size()) {
        throw Error(fmt::format("{}: argument {} names buffer {}, but the request has {} buffers",
                                request.kernel, i, arg.buffer, problem.buffers.size()));
      }
      slot.pointer = problem.buffers[static_cast<std::size_t>(arg.buffer)].device.ptr();
      continue;
    }
    switch (arg.type) {
      case ElementType::i32: slot.i32 = static_cast<std::int32_t>(arg.int_value); break;
      case ElementType::u32: slot.u32 = static_cast<std::uint32_t>(arg.int_value); break;
      case ElementType::i64: slot.i64 = arg.int_value; break;
      case ElementType::f32: slot.f32 = static_cast<float>(arg.float_value); break;
      case ElementType::f64: slot.f64 = arg.float_value; break;
      default:
        throw Error(
            fmt::format("{}: argument {} has scalar type {}, which cannot be passed (i32, u32, "
                        "i64, f32 or f64)",
                        request.kernel, i, type_suffix(arg.type)));
    }
  }
  return slots;
}

void GpuRunner::Impl::reset_outputs() {
  for (ProblemBuffer& b : problem.buffers) {
    if (!b.plan.output || b.bytes() == 0) continue;
    if (restores_before_launch(b.plan)) {
      TILETUNE_CU_CTX(cuMemcpyDtoDAsync(b.device.ptr(), b.initial.ptr(), b.bytes(), stream.get()),
                      fmt::format("restoring buffer '{}'", b.plan.name));
    } else {
      b.device.fill_async(kPoison, stream.get());
    }
  }
}

CUresult GpuRunner::Impl::launch(CUfunction f, const TrialRequest& request, void** params) const {
  return cu::detail::require().cuLaunchKernel(
      f, static_cast<unsigned>(request.grid[0]), static_cast<unsigned>(request.grid[1]),
      static_cast<unsigned>(request.grid[2]), static_cast<unsigned>(request.block[0]),
      static_cast<unsigned>(request.block[1]), static_cast<unsigned>(request.block[2]),
      static_cast<unsigned>(request.shared_bytes), stream.get(), params, nullptr);
}

std::optional<TrialFailure> GpuRunner::Impl::launch_checked(CUfunction f,
                                                            const TrialRequest& request,
                                                            void** params,
                                                            const std::string& where) {
  const CUresult r = launch(f, request, params);
  if (r == CUDA_SUCCESS) return std::nullopt;
  // Launch errors (bad dimensions, too many resources) normally leave the context usable;
  // make sure before the next trial trusts it.
  if (!context_healthy()) lost = true;
  return TrialFailure{lost ? TrialStatus::runtime_fault : TrialStatus::launch_failed,
                      fmt::format("{}: cuLaunchKernel failed for {}", describe(r), where)};
}

GpuRunner::Impl::Comparison GpuRunner::Impl::compare(const ProblemBuffer& buffer, CUdeviceptr got,
                                                     CUdeviceptr want, double atol, double rtol) {
  Comparison c;
  const std::uint64_t n = buffer.plan.count;
  if (n == 0) return c;
  // result = {0 bad, ~0 first bad index, 0 max error}
  compare_result.fill_async(0, stream.get());
  TILETUNE_CU_CTX(
      cuMemsetD32Async(compare_result.ptr() + sizeof(std::uint64_t), 0xFFFFFFFFu, 2, stream.get()),
      "comparison result");
  CUdeviceptr result_ptr = compare_result.ptr();
  std::uint64_t count = n;
  void* params[] = {&got, &want, &count, &atol, &rtol, &result_ptr};
  const std::uint64_t blocks_needed = (n + kCompareBlock - 1) / kCompareBlock;
  // A grid-stride loop: enough blocks to fill the device, not one per 256 elements.
  const auto grid = static_cast<unsigned>(
      std::min<std::uint64_t>(blocks_needed, 16ull * static_cast<unsigned>(sm_count)));
  CUfunction f = compare_functions[type_index(buffer.plan.type)];
  TILETUNE_CU_CTX(
      cuLaunchKernel(f, grid, 1, 1, kCompareBlock, 1, 1, 0, stream.get(), params, nullptr),
      fmt::format("comparing buffer '{}'", buffer.plan.name));
  stream.synchronize();
  std::uint64_t host[3] = {};
  compare_result.download(host, sizeof host);
  c.bad = host[0];
  c.first_bad = host[1];
  std::memcpy(&c.max_error, &host[2], sizeof c.max_error);
  return c;
}

std::optional<TrialFailure> GpuRunner::Impl::verify(const TrialRequest& request,
                                                    TrialResult& result) {
  const VerifySettings& settings = request.verify;
  if (settings.mode == VerifySettings::Mode::none) return std::nullopt;
  const bool producing_reference =
      settings.mode == VerifySettings::Mode::reference_run && request.is_reference;

  for (ProblemBuffer& b : problem.buffers) {
    if (!b.plan.output) continue;
    // A reference run is checked against itself: a poisoned (NaN) element never passes, so
    // an element the reference left unwritten is found before it can fail every candidate.
    const CUdeviceptr want = producing_reference ? b.device.ptr() : b.expected.ptr();
    const double atol = producing_reference ? 0.0 : settings.atol;
    const double rtol = producing_reference ? 0.0 : settings.rtol;
    const Comparison c = compare(b, b.device.ptr(), want, atol, rtol);
    result.max_error = std::max(result.max_error, c.max_error);
    if (c.bad == 0) continue;

    const std::size_t size = host_element_bytes(b.plan.type);
    unsigned char got[8] = {};
    unsigned char wanted[8] = {};
    TILETUNE_CU_CTX(cuMemcpyDtoH(got, b.device.ptr() + c.first_bad * size, size),
                    "reading a mismatch");
    TILETUNE_CU_CTX(cuMemcpyDtoH(wanted, want + c.first_bad * size, size), "reading a mismatch");
    result.first_bad_index = static_cast<long long>(c.first_bad);
    std::string detail =
        producing_reference
            ? fmt::format("reference config: {}[{}] = {} ({} of {} elements unwritten or NaN)",
                          b.plan.name, c.first_bad, format_element(b.plan.type, got), c.bad,
                          b.plan.count)
            : fmt::format("{}[{}]: got {}, want {} (max abs error {}; {} of {} elements wrong)",
                          b.plan.name, c.first_bad, format_element(b.plan.type, got),
                          format_element(b.plan.type, wanted), c.max_error, c.bad, b.plan.count);
    return TrialFailure{TrialStatus::wrong_result, std::move(detail)};
  }

  if (producing_reference) {
    for (ProblemBuffer& b : problem.buffers) {
      if (!b.plan.output || b.bytes() == 0) continue;
      TILETUNE_CU_CTX(cuMemcpyDtoDAsync(b.expected.ptr(), b.device.ptr(), b.bytes(), stream.get()),
                      fmt::format("keeping reference buffer '{}'", b.plan.name));
    }
    stream.synchronize();
    problem.reference_ready = true;
  }
  return std::nullopt;
}

void GpuRunner::Impl::time(CUfunction f, const TrialRequest& request, void** params,
                           TrialResult& result) {
  const TimingSettings& settings = request.timing;
  const std::string where = fmt::format("timing {} [{}]", request.kernel, request.config_text);
  bool has_inout = false;
  for (const ProblemBuffer& b : problem.buffers)
    has_inout = has_inout || restores_before_launch(b.plan);
  // Only in/out buffers need resetting between runs: a plain output may keep what the
  // verified launch wrote.
  auto restore = [&] {
    if (has_inout) reset_outputs();
  };
  auto checked_launch = [&] {
    const CUresult r = launch(f, request, params);
    if (r != CUDA_SUCCESS)
      throw cu::DriverError(r, fmt::format("cuLaunchKernel failed: {} [{}]", describe(r), where));
  };

  const auto loop_start = Clock::now();
  for (int i = 0; i < settings.warmup_runs; ++i) {
    restore();
    checked_launch();
  }
  stream.synchronize();

  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(std::max(settings.min_samples, 16)));
  // Running mean and variance (Welford) for the stopping rule; the reported figures come
  // from summarize() over all samples at the end.
  double mean = 0, m2 = 0, kernel_seconds = 0;
  const auto sampling_start = Clock::now();
  for (;;) {
    if (settings.cold) flush.fill_async(static_cast<unsigned char>(samples.size()), stream.get());
    restore();
    start.record(stream.get());
    checked_launch();
    stop.record(stream.get());
    stop.synchronize();
    const double ms = cu::Event::elapsed_ms(start, stop);
    samples.push_back(ms);
    kernel_seconds += ms * 1e-3;
    const double n = static_cast<double>(samples.size());
    const double delta = ms - mean;
    mean += delta / n;
    m2 += delta * (ms - mean);
    const double rel_std_error = (samples.size() >= 2 && mean > 0)
                                     ? std::sqrt(m2 / (n - 1)) / std::sqrt(n) / mean
                                     : std::numeric_limits<double>::infinity();
    const double wall_seconds = ms_since(sampling_start) * 1e-3;
    if (stop_reason(settings, static_cast<int>(samples.size()), kernel_seconds, rel_std_error,
                    wall_seconds) != StopReason::keep_going) {
      break;
    }
  }
  const TimingStats stats = summarize(std::move(samples));
  result.samples = stats.samples;
  result.median_ms = stats.median_ms;
  result.mean_ms = stats.mean_ms;
  result.min_ms = stats.min_ms;
  result.stddev_ms = stats.stddev_ms;
  result.measure_ms = ms_since(loop_start);
}

void GpuRunner::Impl::measure_energy(CUfunction f, const TrialRequest& request, void** params,
                                     TrialResult& result) {
  if (!energy_source && !energy_unavailable) {
    CUuuid uuid{};
    TILETUNE_CU_CTX(cuDeviceGetUuid(&uuid, context.device()), fmt::format("UUID of device {}", ordinal));
    std::array<unsigned char, 16> bytes{};
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(uuid.bytes[i]);
    std::string why;
    energy_source = NvmlEnergySource::open(format_gpu_uuid(bytes), why);
    if (!energy_source) energy_unavailable = why;
  }
  if (!energy_source) {
    result.energy_note = *energy_unavailable;
    return;
  }
  bool has_inout = false;
  for (const ProblemBuffer& b : problem.buffers) has_inout = has_inout || restores_before_launch(b.plan);
  const std::string where = fmt::format("energy of {} [{}]", request.kernel, request.config_text);
  auto run_batch = [&](std::int64_t runs) {
    for (std::int64_t i = 0; i < runs; ++i) {
      if (has_inout) reset_outputs();  // counted in the energy, as in the times
      if (const CUresult r = launch(f, request, params); r != CUDA_SUCCESS)
        throw cu::DriverError(r, fmt::format("cuLaunchKernel failed: {} [{}]", describe(r), where));
    }
    stream.synchronize();
  };
  std::string why;
  try {
    if (auto m = tiletune::measure_energy(*energy_source, run_batch, result.median_ms, request.energy, &why)) {
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

GpuRunner::GpuRunner(int ordinal) : impl_(std::make_unique<Impl>(ordinal)) {}

GpuRunner::~GpuRunner() {
  // On a lost context every cuMemFree, cuModuleUnload, ... fails (and warns): the handles
  // are left to the process exit that must follow, which frees them all at once.
  if (impl_ && impl_->lost) (void)impl_.release();
}

bool GpuRunner::context_lost() const noexcept {
  return impl_->lost;
}
int GpuRunner::ordinal() const noexcept {
  return impl_->ordinal;
}
int GpuRunner::arch() const noexcept {
  return impl_->arch;
}
std::size_t GpuRunner::l2_bytes() const noexcept {
  return impl_->l2;
}

TrialResult GpuRunner::run_trial(const TrialRequest& request) {
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
    return fail(
        {TrialStatus::runtime_fault,
         fmt::format("the CUDA context of device {} was lost by an earlier trial; the worker must "
                     "restart before running {}",
                     s.ordinal, where)});
  }

  const auto load_start = Clock::now();
  s.context.make_current();
  s.prepare_problem(request);  // throws Error for what no config could pass
  if (request.verify.mode == VerifySettings::Mode::reference_run && !request.is_reference &&
      !s.problem.reference_ready) {
    throw Error(fmt::format(
        "{}: no reference outputs for problem '{}' on this worker: the reference config "
        "(is_reference) must run first",
        where, request.problem_key));
  }
  std::vector<ArgSlot> slots = s.build_args(request);
  std::vector<void*> params(slots.size());
  for (std::size_t i = 0; i < slots.size(); ++i) params[i] = &slots[i];

  for (int d = 0; d < 3; ++d) {
    if (request.grid[d] < 1 || request.grid[d] > UINT_MAX || request.block[d] < 1 ||
        request.block[d] > UINT_MAX) {
      return fail(
          {TrialStatus::launch_failed,
           fmt::format("invalid launch configuration: grid ({}, {}, {}), block ({}, {}, {}) for {}",
                       request.grid[0], request.grid[1], request.grid[2], request.block[0],
                       request.block[1], request.block[2], where)});
    }
  }
  if (request.shared_bytes < 0 || request.shared_bytes > INT_MAX) {
    return fail(
        {TrialStatus::launch_failed,
         fmt::format("invalid dynamic shared memory size {} for {}", request.shared_bytes, where)});
  }

  try {
    // 1. Load. A bad image is the candidate's fault: launch_failed with the CUresult name.
    std::optional<cu::Module> module;
    CUfunction function = nullptr;
    try {
      module.emplace(request.cubin, where);
      function = module->get_function(request.function);
      const int static_shared =
          cu::function_attribute(function, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
      if (request.shared_bytes + static_shared > kDefaultSharedLimit) {
        cu::set_max_dynamic_shared_bytes(function, static_cast<int>(request.shared_bytes));
      }
    } catch (const cu::DriverError& e) {
      return fail({TrialStatus::launch_failed,
                   fmt::format("{}: {}", cu::result_name(e.result()), e.what())});
    } catch (const Error& e) {  // an empty image
      return fail({TrialStatus::launch_failed, e.what()});
    }
    const long long threads = request.block[0] * request.block[1] * request.block[2];
    try {
      result.driver_blocks_per_sm = cu::max_active_blocks_per_sm(
          function, static_cast<int>(std::min<long long>(threads, INT_MAX)),
          static_cast<std::size_t>(request.shared_bytes));
    } catch (const cu::DriverError&) {
      // A block the device cannot run (too many threads): 0 blocks per SM, and the launch
      // below reports the real error.
      result.driver_blocks_per_sm = 0;
    }
    result.load_ms = ms_since(load_start);

    // 2.-3. Poison the outputs, launch once, synchronize.
    const auto verify_start = Clock::now();
    s.reset_outputs();
    if (auto failure = s.launch_checked(function, request, params.data(), where))
      return fail(std::move(*failure));
    if (const CUresult r = cu::detail::require().cuStreamSynchronize(s.stream.get());
        r != CUDA_SUCCESS) {
      // The kernel faulted: the context is unusable from here on, whatever the error.
      s.lost = true;
      return fail(
          {TrialStatus::runtime_fault,
           fmt::format("{}: the kernel faulted in {} (reported by cuStreamSynchronize); the CUDA "
                       "context is lost",
                       describe(r), where)});
    }

    // 4. Verify: only verified configs are timed.
    if (auto failure = s.verify(request, result)) {
      result.verify_ms = ms_since(verify_start);
      return fail(std::move(*failure));
    }
    result.verify_ms = ms_since(verify_start);

    // 5. Time; 6. energy, when asked for (gpu/energy.cpp).
    s.time(function, request, params.data(), result);
    if (request.energy.enabled) s.measure_energy(function, request, params.data(), result);
    result.status = TrialStatus::ok;
    return result;
  } catch (const cu::DriverError& e) {
    // A failure after the first launch succeeded: a fault in a later run (a race, say) or
    // a driver call of our own. Whether the context survived decides the status.
    if (!s.context_healthy()) {
      s.lost = true;
      return fail(
          {TrialStatus::runtime_fault, fmt::format("{}: {} in {}; the CUDA context is lost",
                                                   cu::result_name(e.result()), e.what(), where)});
    }
    return fail(
        {TrialStatus::launch_failed, fmt::format("{}: {}", cu::result_name(e.result()), e.what())});
  }
}

CopyCeiling GpuRunner::measure_copy(std::uint64_t bytes) {
  Impl& s = *impl_;
  if (s.lost)
    throw Error(fmt::format("measure_copy: the CUDA context of device {} is lost", s.ordinal));
  if (bytes == 0) throw Error("measure_copy: the copy needs at least one byte");
  s.context.make_current();
  const std::string where =
      fmt::format("device-to-device copy of {} bytes on device {}", bytes, s.ordinal);
  cu::DeviceBuffer source(bytes);
  cu::DeviceBuffer destination(bytes);
  source.fill_async(0x5A, s.stream.get());
  auto copy = [&] {
    TILETUNE_CU_CTX(cuMemcpyDtoDAsync(destination.ptr(), source.ptr(), bytes, s.stream.get()),
                    where);
  };
  for (int i = 0; i < kCopyWarmup; ++i) copy();
  s.stream.synchronize();
  std::vector<double> samples;
  for (int i = 0; i < kCopySamples; ++i) {
    s.start.record(s.stream.get());
    copy();
    s.stop.record(s.stream.get());
    s.stop.synchronize();
    samples.push_back(cu::Event::elapsed_ms(s.start, s.stop));
  }
  const TimingStats stats = summarize(std::move(samples));
  CopyCeiling ceiling;
  ceiling.bytes = bytes;
  ceiling.median_ms = stats.median_ms;
  // Bytes read plus bytes written, per second.
  ceiling.gbps =
      stats.median_ms > 0 ? 2.0 * static_cast<double>(bytes) / (stats.median_ms * 1e-3) / 1e9 : 0.0;
  return ceiling;
}

}  // namespace tiletune
