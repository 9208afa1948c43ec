// The launcher: best config from the cache, cubin from the database or NVRTC, launch through the
// driver (see launcher.hpp).
#include "tiletune/launcher.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <chrono>
#include <iostream>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "tiletune/cache_db.hpp"
#include "tiletune/cuda_kernel.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/enumerate.hpp"
#include "tiletune/error.hpp"
#include "tiletune/trial.hpp"
#include "tiletune/plan.hpp"
#include "tiletune/sweep.hpp"

namespace tiletune {

const char* cubin_origin_name(CubinOrigin origin) noexcept {
  switch (origin) {
    case CubinOrigin::memory: return "memory";
    case CubinOrigin::database: return "database";
    case CubinOrigin::compiled: return "compiled";
  }
  return "?";
}

namespace detail {
/// One cubin of this Launcher; its module is loaded on the first launch.
struct LoadedKernel {
  std::string key;
  std::string cubin;
  std::string lowered_name;
  std::string what;  ///< "transpose TILE=32;BLOCK_ROWS=8;PAD=0 (sm_90)", for errors
  std::once_flag load_once;
  std::optional<CudaKernel> kernel;  ///< loaded on the first launch
};
/// An output buffer of the launch, as an online trial handles it.
struct TrialOutput {
  std::size_t arg = 0;
  const BufferSpec* buffer = nullptr;
  const OutputCheck* check = nullptr;
  ElementType type = ElementType::f32;
  std::size_t bytes = 0;
  bool in_out = false;
  std::uint64_t address = 0;  ///< the application's
  std::uint64_t scratch = 0;  ///< where the trial's launches write
  std::uint64_t saved = 0;    ///< in/out: the contents before the call's launch
};

}  // namespace detail

std::optional<std::int64_t> LaunchPlan::param(std::string_view name) const {
  for (const QueryParam& p : params)
    if (p.name == name) return p.value;
  return std::nullopt;
}

struct Launcher::Impl {
  Space space;
  std::optional<KernelSources> sources;  // guarded by mutex
  Options options;
  QueryDevice device;
  std::string arch;
  std::filesystem::path db_path;
  std::string db_message;
  std::optional<CacheDb> db;        // cubins (one connection: guarded by mutex)
  std::optional<QueryCache> query;  // best configs (thread-safe itself)
  bool writable = false;
  CubinCache keyer{std::filesystem::path{}};  // only for key(): no directory
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<detail::LoadedKernel>> kernels;
  std::unique_ptr<CaptureWriter> capture;  // null: capture is off for this kernel
  std::optional<OnlineSchedule> online;    // unset: online tuning is off for this kernel
  std::chrono::steady_clock::time_point opened = std::chrono::steady_clock::now();
  std::mutex online_mutex;                                       // one trial at a time; guards online and online_plans
  std::map<std::vector<std::int64_t>, LaunchPlan> online_plans;  // plans of the configs online tuning kept
  std::optional<OnlineVerdict> last_online;
  std::optional<std::int64_t> online_device_id, online_kernel_id;  // rows of its trials (guarded by mutex)
  std::set<std::vector<std::int64_t>> online_seeded;               // problems whose earlier trials were read
  std::atomic<CaptureOutcome> last_capture{CaptureOutcome::off};

  void open_db();

  std::string describe(const std::string& config_text) const {
    return fmt::format("kernel '{}' config {} ({})", space.kernel, config_text.empty() ? "?" : config_text, arch);
  }

  // The kernel version of this Launcher's space on its arch, as a sweep records it (with mutex held).
  KernelRecord kernel_version() {
    return kernel_record(space, sources->for_options(space_options(space)), parse_arch(arch));
  }
};

/// One online trial: the candidate and the config in use, each timed `samples` times on scratch
/// copies of the outputs, and the candidate's outputs checked against the call's own.
struct Launcher::OnlineTrial {
  Config candidate;
  OnlineVerdict verdict = OnlineVerdict::failed;
  TrialStatus status = TrialStatus::launch_failed;
  std::string detail;
  std::optional<double> candidate_ms;  ///< medians
  std::optional<double> current_ms;
  std::int64_t samples = 0;
};

void Launcher::Impl::open_db() {
  Impl& impl = *this;
  const std::filesystem::path path = impl.options.db_path.empty() ? default_cache_path() : impl.options.db_path;
  if (path.empty()) {
    impl.db_message = "no cache path (TILETUNE_DB, XDG_CACHE_HOME and HOME are unset)";
    return;
  }
  std::string rw_error;
  if (!impl.options.read_only) {
    try {
      impl.db = CacheDb::open(path, CacheDb::Mode::read_write);
      impl.writable = true;
    } catch (const std::exception& e) { rw_error = e.what(); }
  }
  if (!impl.db) {
    try {
      impl.db = CacheDb::open(path, CacheDb::Mode::read_only);
      impl.db_message = impl.options.read_only ? "opened read-only (Options::read_only)"
                                               : fmt::format("opened read-only: {}", rw_error);
    } catch (const std::exception& e) {
      impl.db_message = fmt::format("cache {} not used: {}", path.string(), e.what());
      return;
    }
  }
  impl.db_path = path;
  QueryError error;
  impl.query = QueryCache::try_open(path, &error);
  if (!impl.query)
    impl.db_message += fmt::format("{}lookups disabled: {} ({})", impl.db_message.empty() ? "" : "; ", error.message,
                                   query_status_name(error.status));
}

namespace {

Problem make_problem(const Space& space, const std::map<std::string, std::int64_t>& sizes) {
  for (const auto& [name, value] : sizes) {
    if (space.problem_index(name) < 0)
      throw Error(fmt::format("Launcher::prepare: kernel '{}' has no problem size '{}'", space.kernel, name));
    if (value <= 0)
      throw Error(fmt::format("Launcher::prepare: kernel '{}': size {}={} is not positive", space.kernel, name, value));
  }
  Problem problem;
  for (const Axis& axis : space.problem) {
    auto it = sizes.find(axis.name);
    if (it == sizes.end())
      throw Error(fmt::format("Launcher::prepare: kernel '{}' needs the problem size '{}'", space.kernel, axis.name));
    problem.sizes.push_back(it->second);
  }
  return problem;
}

/// The cache's params as a config of this space, or nullopt (with the reason) when they do not fit.
std::optional<Config> config_from(const Space& space, const Problem& problem, const QueryResult& r, std::string& why) {
  Config c;
  c.values.resize(space.params.size());
  std::vector<bool> seen(space.params.size(), false);
  for (const QueryParam& p : r.params) {
    const int i = space.param_index(p.name);
    if (i < 0) {
      why = fmt::format("cached config {} names '{}', not a param of the space", r.params_text, p.name);
      return std::nullopt;
    }
    c.values[static_cast<std::size_t>(i)] = p.value;
    seen[static_cast<std::size_t>(i)] = true;
  }
  for (std::size_t i = 0; i < seen.size(); ++i)
    if (!seen[i]) {
      why = fmt::format("cached config {} lacks '{}'", r.params_text, space.params[i].name);
      return std::nullopt;
    }
  if (auto rejected = Enumerator(space, problem).check(c)) {
    why = fmt::format("cached config {} fails a constraint: {}", r.params_text, rejected->reason);
    return std::nullopt;
  }
  return c;
}

/// The launch's memory on the GPU: its buffers are device pointers of the Launcher's device, and
/// the launch's stream orders the work that writes them.
class DeviceCaptureMemory final : public CaptureMemory {
 public:
  DeviceCaptureMemory(int ordinal, CUstream stream) : ordinal_(ordinal), stream_(stream) {}
  void synchronize() override { copy_from_device_after(ordinal_, stream_, 0, nullptr, 0); }
  void read(std::uint64_t address, std::span<std::byte> into) override {
    copy_from_device_after(ordinal_, stream_, address, into.data(), into.size());
  }

 private:
  int ordinal_;
  CUstream stream_;
};

Config default_config(const Space& space, const Problem& problem) {
  if (space.default_config) return Config{*space.default_config};
  Enumerator e(space, problem);
  if (auto c = e.next()) return *c;
  throw Error(
      fmt::format("Launcher::prepare: kernel '{}' has no `default:` config and no config passes its "
                  "constraints for this problem",
                  space.kernel));
}

}  // namespace

Launcher::Launcher(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
Launcher::Launcher(Launcher&&) noexcept = default;
Launcher& Launcher::operator=(Launcher&&) noexcept = default;
Launcher::~Launcher() = default;

Launcher Launcher::open(const std::filesystem::path& space_yaml, const std::filesystem::path& db_path, int ordinal) {
  Options o;
  o.db_path = db_path;
  o.ordinal = ordinal;
  return open(space_yaml, std::move(o));
}

Launcher Launcher::open(const std::filesystem::path& space_yaml, Options options) {
  auto impl = std::make_unique<Impl>();
  impl->space = load_space(space_yaml);
  impl->sources.emplace(impl->space.source);
  (void)impl->sources->for_options(space_options(impl->space));  // an unreadable source fails here
  impl->options = std::move(options);
  if (impl->options.device) {
    impl->device = *impl->options.device;
  } else {
    std::string why;
    auto detected = QueryDevice::detect(impl->options.ordinal, &why);
    if (!detected)
      throw Error(
          fmt::format("Launcher::open: kernel '{}': cannot read CUDA device {}: {} (give "
                      "Launcher::Options::device to prepare without a GPU)",
                      impl->space.kernel, impl->options.ordinal, why));
    impl->device = std::move(*detected);
  }
  if (!impl->options.arch.empty()) {
    impl->arch = normalize_arch(impl->options.arch);
  } else if (impl->device.cc_major > 0) {
    impl->arch = fmt::format("sm_{}{}", impl->device.cc_major, impl->device.cc_minor);
  } else {
    throw Error(
        fmt::format("Launcher::open: kernel '{}': the device gives no compute capability; set "
                    "Launcher::Options::arch (e.g. \"sm_90\")",
                    impl->space.kernel));
  }
  impl->open_db();
  CaptureOptions capture = impl->options.capture ? *impl->options.capture : CaptureOptions::from_environment(std::cerr);
  if (capture.enabled() && capture.matches(impl->space.kernel))
    impl->capture = std::make_unique<CaptureWriter>(impl->space, std::move(capture), std::cerr);
  OnlineOptions online = impl->options.online ? *impl->options.online : OnlineOptions::from_environment(std::cerr);
  if (online.enabled() && online.matches(impl->space.kernel)) {
    if (auto why = capture_refusal(impl->space))  // the same limits: one size per buffer, no globals
      std::cerr << "tiletune: online tuning off: " << *why << '\n';
    else
      impl->online.emplace(impl->space, std::move(online), 0.0);
  }
  return Launcher(std::move(impl));
}

LaunchPlan Launcher::prepare(const std::map<std::string, std::int64_t>& sizes) {
  Impl& impl = *impl_;
  const Space& space = impl.space;
  LaunchPlan plan;
  plan.kernel = space.kernel;
  plan.arch = impl.arch;
  plan.problem = make_problem(space, sizes);
  plan.problem_text = canonical_problem(space, plan.problem);

  // 1. The config: the cache's best, else the space's default.
  std::optional<Config> chosen;
  if (impl.query) {
    QueryRequest request{space.kernel, impl.device, sizes};
    plan.query = impl.query->lookup(request);
    if (!plan.query.ok()) {
      plan.query_message = fmt::format("{}: {}", query_status_name(plan.query.status), plan.query.message);
    } else if (plan.query.match == MatchLevel::none) {
      plan.query_message = "no tuned config in the cache";
    } else if ((chosen = config_from(space, plan.problem, plan.query, plan.query_message))) {
      plan.match = plan.query.match;
    }
  } else {
    plan.query_message = impl.db_message;
  }
  if (!chosen) {
    plan.match = MatchLevel::none;
    chosen = default_config(space, plan.problem);
  }
  plan.config = std::move(*chosen);
  complete(plan);
  return plan;
}

LaunchPlan Launcher::plan_for(const Problem& problem, const Config& config) {
  LaunchPlan plan;
  plan.kernel = impl_->space.kernel;
  plan.arch = impl_->arch;
  plan.problem = problem;
  plan.problem_text = canonical_problem(impl_->space, problem);
  plan.config = config;
  plan.query_message = "a config tried by online tuning";
  complete(plan);
  return plan;
}

void Launcher::complete(LaunchPlan& plan) {
  Impl& impl = *impl_;
  const Space& space = impl.space;
  plan.config_text = canonical_config(space, plan.config);
  for (std::size_t i = 0; i < space.params.size(); ++i)
    plan.params.push_back(QueryParam{space.params[i].name, plan.config.values[i]});
  const std::string what = impl.describe(plan.config_text);

  // 2. The launch geometry for these sizes and params.
  try {
    plan.geometry = evaluate_launch(space, plan.problem, plan.config);
  } catch (const std::exception& e) {
    throw Error(
        fmt::format("Launcher::prepare: {} problem {}: evaluate_launch: {}", what, plan.problem_text, e.what()));
  }

  // 3. The cubin: this Launcher's, the database's, or NVRTC's.
  std::lock_guard lock(impl.mutex);
  CompileRequest request;
  try {
    request = config_compile_request(space, plan.problem, plan.config, *impl.sources, impl.arch);
  } catch (const EvalError& e) {
    throw Error(
        fmt::format("Launcher::prepare: {} problem {}: compile_options: {}", what, plan.problem_text, e.what()));
  }
  plan.cubin_key = impl.keyer.key(request);

  if (auto it = impl.kernels.find(plan.cubin_key); it != impl.kernels.end()) {
    plan.cubin_origin = CubinOrigin::memory;
    plan.loaded_ = it->second;
  } else {
    auto loaded = std::make_shared<detail::LoadedKernel>();
    loaded->key = plan.cubin_key;
    loaded->what = what;
    std::optional<CubinRecord> hit;
    if (impl.db) {
      try {
        hit = impl.db->get_cubin(plan.cubin_key);
      } catch (const std::exception&) {
        hit.reset();  // an unreadable row is a miss
      }
    }
    if (hit && !hit->cubin.empty() && !hit->lowered_name.empty()) {
      plan.cubin_origin = CubinOrigin::database;
      loaded->cubin = std::move(hit->cubin);
      loaded->lowered_name = std::move(hit->lowered_name);
    } else {
      CompileResult result = compile_nvrtc(request);
      if (!result.ok())
        throw Error(fmt::format("Launcher::prepare: {}: compile_nvrtc failed: {}\n{}", what, result.error, result.log));
      plan.cubin_origin = CubinOrigin::compiled;
      plan.compiled = true;
      plan.compile_ms = result.seconds * 1e3;
      loaded->cubin = std::move(result.kernel->cubin);
      loaded->lowered_name = std::move(result.kernel->lowered_name);
      if (impl.db && impl.writable) {
        try {
          impl.db->put_cubin(CubinRecord{plan.cubin_key, impl.arch, loaded->cubin, loaded->lowered_name});
          plan.stored = true;
        } catch (const std::exception& e) { plan.store_error = fmt::format("put_cubin: {}", e.what()); }
      } else {
        plan.store_error = impl.db ? "the cache is read-only" : impl.db_message;
      }
    }
    impl.kernels.emplace(plan.cubin_key, loaded);
    plan.loaded_ = std::move(loaded);
  }
  plan.lowered_name = plan.loaded_->lowered_name;
  plan.cubin_bytes = plan.loaded_->cubin.size();
}

namespace {

/// Loads the plan's module on its first launch, then launches it.
void launch_loaded(detail::LoadedKernel& k, int ordinal, const LaunchPlan& plan, void** args, CUstream stream) {
  std::call_once(k.load_once, [&] { k.kernel.emplace(ordinal, k.cubin, k.lowered_name, k.what); });
  const LaunchGeometry& g = plan.geometry;
  k.kernel->launch({g.grid[0], g.grid[1], g.grid[2]}, {g.block[0], g.block[1], g.block[2]}, g.shared_bytes, stream,
                   args,
                   fmt::format("{} problem {} grid [{},{},{}] block [{},{},{}] shared {}", k.what, plan.problem_text,
                               g.grid[0], g.grid[1], g.grid[2], g.block[0], g.block[1], g.block[2], g.shared_bytes));
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

void Launcher::launch(const LaunchPlan& plan, std::span<void* const> args, CUstream stream) {
  Impl& impl = *impl_;
  const std::string what = impl.describe(plan.config_text);
  if (!plan.loaded_)
    throw Error(
        fmt::format("Launcher::launch: kernel '{}': the plan was not made by Launcher::prepare", impl.space.kernel));
  if (args.size() != impl.space.args.size())
    throw Error(fmt::format("Launcher::launch: {}: {} arguments given, the kernel takes {} (the space's args:)", what,
                            args.size(), impl.space.args.size()));
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i] == nullptr) throw Error(fmt::format("Launcher::launch: {}: argument {} is a null address", what, i));
  if (impl.online) {
    launch_online(plan, args, stream);
    return;
  }
  launch_checked(plan, args, stream);
}

void Launcher::launch_checked(const LaunchPlan& plan, std::span<void* const> args, CUstream stream) {
  Impl& impl = *impl_;
  // Capture reads the inputs before and the outputs after; it never throws into the launch.
  DeviceCaptureMemory memory(impl.options.ordinal, stream);
  CaptureWriter::PendingCapture pending;
  CaptureOutcome outcome = CaptureOutcome::off;
  if (impl.capture) pending = impl.capture->before({plan.problem, plan.config, args}, memory, outcome);
  launch_loaded(*plan.loaded_, impl.options.ordinal, plan, const_cast<void**>(args.data()), stream);
  if (pending) outcome = impl.capture->after(std::move(pending), memory);
  impl.last_capture = outcome;
}

void Launcher::launch_online(const LaunchPlan& plan, std::span<void* const> args, CUstream stream) {
  Impl& impl = *impl_;
  std::lock_guard lock(impl.online_mutex);
  // The config in use: the one online tuning kept for this problem, else the plan's.
  const LaunchPlan* use = &plan;
  if (auto best = impl.online->best(plan.problem); best && *best != plan.config) {
    auto it = impl.online_plans.find(plan.problem.sizes);
    if (it == impl.online_plans.end() || it->second.config != *best)
      it = impl.online_plans.insert_or_assign(plan.problem.sizes, plan_for(plan.problem, *best)).first;
    use = &it->second;
  }
  if (impl.online_seeded.insert(plan.problem.sizes).second) impl.online->skip(plan.problem, tried_before(plan));
  const std::optional<Config> candidate = impl.online->next(plan.problem, use->config, seconds_since(impl.opened));
  if (!candidate) {
    launch_checked(*use, args, stream);
    return;
  }
  const auto started = std::chrono::steady_clock::now();
  OnlineTrial trial;
  trial.candidate = *candidate;
  run_online_trial(*use, args, stream, trial);
  impl.online->record(plan.problem, *candidate, trial.verdict, seconds_since(started));
  record_online_trial(*use, trial);
  impl.last_online = trial.verdict;
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  if (exponent == 0) {  // zero or subnormal
    const float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -v : v;
  }
  std::uint32_t bits = sign | ((exponent == 31 ? 255u : exponent + 112u) << 23) | (mantissa << 13);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// Element i of a host copy of a buffer, as a double.
double element(const std::vector<std::byte>& bytes, ElementType type, std::size_t i) {
  auto as = [&]<typename T>(T) {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    return static_cast<double>(v);
  };
  switch (type) {
    case ElementType::f32: return as(float{});
    case ElementType::f64: return as(double{});
    case ElementType::i32: return as(std::int32_t{});
    case ElementType::u32: return as(std::uint32_t{});
    case ElementType::i64: return as(std::int64_t{});
    case ElementType::u8: return as(std::uint8_t{});
    case ElementType::i8: return as(std::int8_t{});
    case ElementType::i16: return as(std::int16_t{});
    case ElementType::u16: return as(std::uint16_t{});
    case ElementType::u64: return as(std::uint64_t{});
    case ElementType::f16: {
      std::uint16_t h;
      std::memcpy(&h, bytes.data() + i * 2, 2);
      return half_to_float(h);
    }
  }
  return 0;
}

bool close_enough(double got, double want, double rtol, double atol) {
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);  // NaN never passes
}

/// Why the candidate's output differs from the call's (empty when it matches), by the space's check.
std::string compare_output(const OutputCheck& check, ElementType type, const std::vector<std::byte>& want,
                           std::int64_t want_count, const std::vector<std::byte>& got, std::int64_t got_count) {
  switch (check.compare) {
    case OutputCheck::Compare::none: return {};
    case OutputCheck::Compare::sum: {
      double a = 0, b = 0;
      for (std::int64_t i = 0; i < want_count; ++i) a += element(want, type, std::size_t(i));
      for (std::int64_t i = 0; i < got_count; ++i) b += element(got, type, std::size_t(i));
      return close_enough(b, a, check.rtol, check.atol) ? std::string{}
                                                        : fmt::format("{}: sum {} against {}", check.buffer, b, a);
    }
    case OutputCheck::Compare::elements: {
      std::int64_t wrong = 0, first = -1;
      for (std::int64_t i = 0; i < std::min(want_count, got_count); ++i)
        if (!close_enough(element(got, type, std::size_t(i)), element(want, type, std::size_t(i)), check.rtol,
                          check.atol) &&
            wrong++ == 0)
          first = i;
      if (wrong == 0) return {};
      return fmt::format("{}: {} elements differ, the first at {}: {} against {}", check.buffer, wrong, first,
                         element(got, type, std::size_t(first)), element(want, type, std::size_t(first)));
    }
  }
  return {};
}

}  // namespace

void Launcher::run_online_trial(const LaunchPlan& use, std::span<void* const> args, CUstream stream,
                                OnlineTrial& trial) {
  Impl& impl = *impl_;
  const Config& candidate = trial.candidate;
  // Before the call's launch: the candidate's cubin, scratch copies of the outputs, the in/out
  // buffers saved. A failure here leaves the call to the config in use, untouched.
  LaunchPlan tried;
  std::optional<DeviceWorkbench> bench_holder;
  std::vector<detail::TrialOutput> outputs;
  try {
    tried = plan_for(use.problem, candidate);
  } catch (const std::exception& e) {
    trial.status = TrialStatus::compile_failed;
    trial.detail = e.what();
    launch_checked(use, args, stream);
    return;
  }
  try {
    bench_holder.emplace(impl.options.ordinal, stream);
    prepare_trial_outputs(use, args, *bench_holder, outputs);
  } catch (const std::exception& e) {
    trial.status = TrialStatus::launch_failed;
    trial.detail = fmt::format("online: preparing the trial: {}", e.what());
    launch_checked(use, args, stream);
    return;
  }
  DeviceWorkbench& bench = *bench_holder;
  launch_checked(use, args, stream);  // the call's own launch: its result is the application's
  try {
    finish_trial(use, tried, args, stream, bench, outputs, trial);
  } catch (const std::exception& e) {
    trial.verdict = OnlineVerdict::failed;
    trial.status = TrialStatus::launch_failed;
    trial.detail = fmt::format("online: {}", e.what());
  }
}

void Launcher::prepare_trial_outputs(const LaunchPlan& use, std::span<void* const> args, DeviceWorkbench& bench,
                                     std::vector<detail::TrialOutput>& outputs) {
  const Space& space = impl_->space;
  const std::vector<std::int64_t> slots = slot_values(use.problem, use.config);
  for (std::size_t a = 0; a < space.args.size(); ++a) {
    if (space.args[a].kind != ArgSpec::Kind::buffer) continue;
    const int b = space.buffer_index(space.args[a].buffer);
    if (b < 0 || !space.buffers[std::size_t(b)].output) continue;
    detail::TrialOutput o;
    o.arg = a;
    o.buffer = &space.buffers[std::size_t(b)];
    for (const OutputCheck& c : space.verify.outputs)
      if (c.buffer == o.buffer->name) o.check = &c;
    o.type = resolved_type(space, o.buffer->type, o.buffer->type_param, use.config);
    o.bytes = std::size_t(eval_located(o.buffer->count, slots, "count")) * element_size(o.type);
    o.in_out = !(o.buffer->init.kind == BufferInit::zero || o.buffer->init.kind == BufferInit::none);
    std::memcpy(&o.address, args[a], sizeof o.address);
    o.scratch = bench.allocate(o.bytes);
    if (o.in_out) {
      o.saved = bench.allocate(o.bytes);
      bench.copy(o.saved, o.address, o.bytes);  // before the call's launch changes it
    }
    outputs.push_back(o);
  }
}

void Launcher::finish_trial(const LaunchPlan& use, const LaunchPlan& tried, std::span<void* const> args,
                            CUstream stream, DeviceWorkbench& bench, const std::vector<detail::TrialOutput>& outputs,
                            OnlineTrial& trial) {
  Impl& impl = *impl_;
  const Config& candidate = trial.candidate;
  const std::vector<std::int64_t> slots = slot_values(use.problem, use.config);
  // The trial's launches: the same inputs, the outputs redirected to scratch copies.
  std::vector<std::uint64_t> scratch_values(args.size());
  std::vector<void*> scratch_args(args.begin(), args.end());
  for (const detail::TrialOutput& o : outputs) {
    scratch_values[o.arg] = o.scratch;
    scratch_args[o.arg] = &scratch_values[o.arg];
  }
  auto restore = [&] {
    for (const detail::TrialOutput& o : outputs)
      o.in_out ? bench.copy(o.scratch, o.saved, o.bytes) : bench.fill(o.scratch, 0xFF, o.bytes);
  };
  std::vector<double> current_ms, candidate_ms;
  const int ordinal = impl.options.ordinal;
  for (std::uint64_t i = 0; i < impl.online->options().samples; ++i) {
    restore();
    current_ms.push_back(
        bench.time_ms([&] { launch_loaded(*use.loaded_, ordinal, use, scratch_args.data(), stream); }));
    restore();
    candidate_ms.push_back(
        bench.time_ms([&] { launch_loaded(*tried.loaded_, ordinal, tried, scratch_args.data(), stream); }));
  }
  trial.samples = std::int64_t(candidate_ms.size());
  trial.current_ms = median(current_ms);
  trial.candidate_ms = median(candidate_ms);

  // The candidate's outputs (its last run) against the call's, by the space's check.
  const std::vector<std::int64_t> tried_slots = slot_values(use.problem, candidate);
  for (const detail::TrialOutput& o : outputs) {
    if (!o.check) continue;
    std::vector<std::byte> want(o.bytes), got(o.bytes);
    bench.download(o.address, want.data(), o.bytes);
    bench.download(o.scratch, got.data(), o.bytes);
    const std::int64_t count = std::int64_t(o.bytes / element_size(o.type));
    const std::int64_t want_count = o.check->count ? eval_located(*o.check->count, slots, "count") : count;
    const std::int64_t got_count = o.check->count ? eval_located(*o.check->count, tried_slots, "count") : count;
    std::string why =
        compare_output(*o.check, o.type, want, std::min(want_count, count), got, std::min(got_count, count));
    if (!why.empty()) {
      trial.verdict = OnlineVerdict::wrong;
      trial.status = TrialStatus::wrong_result;
      trial.detail = "online: " + why;
      return;
    }
  }
  trial.status = TrialStatus::ok;
  trial.verdict = *trial.candidate_ms < *trial.current_ms ? OnlineVerdict::faster : OnlineVerdict::slower;
}

std::vector<Config> Launcher::tried_before(const LaunchPlan& plan) {
  Impl& impl = *impl_;
  std::lock_guard lock(impl.mutex);
  std::vector<Config> configs;
  if (!impl.db) return configs;
  try {
    const auto device = impl.db->device(impl.device.uuid);
    const auto kernel = impl.db->find_kernel(impl.kernel_version());
    if (!device || !kernel) return configs;
    for (const std::string& params : impl.db->existing_trials(device->id, *kernel, plan.problem_text))
      if (auto c = parse_canonical_config(impl.space, params)) configs.push_back(std::move(*c));
  } catch (const std::exception&) {
    configs.clear();  // an unreadable cache: everything is untried
  }
  return configs;
}

void Launcher::record_online_trial(const LaunchPlan& use, const OnlineTrial& trial) {
  Impl& impl = *impl_;
  std::lock_guard lock(impl.mutex);
  if (!impl.db || !impl.writable) return;
  try {
    if (!impl.online_kernel_id) {
      DeviceRecord d;
      d.uuid = impl.device.uuid;
      d.name = impl.device.name;
      d.cc_major = impl.device.cc_major;
      d.cc_minor = impl.device.cc_minor;
      impl.online_device_id = impl.db->upsert_device(d);
      impl.online_kernel_id = impl.db->upsert_kernel(impl.kernel_version());
    }
    auto record = [&](const Config& config, TrialStatus status, std::optional<double> ms, const std::string& detail) {
      TrialRecord t;
      t.key = TrialKey{*impl.online_device_id, *impl.online_kernel_id, use.problem_text,
                       canonical_config(impl.space, config)};
      t.status = status;
      t.time_ms = status == TrialStatus::ok ? ms : std::nullopt;
      t.samples = trial.samples;
      t.detail = detail;
      (void)impl.db->record_trial(t);
    };
    record(trial.candidate, trial.status, trial.candidate_ms,
           trial.status == TrialStatus::ok ? "online: timed on the application's calls" : trial.detail);
    if (trial.current_ms)
      record(use.config, TrialStatus::ok, trial.current_ms, "online: timed on the application's calls");
  } catch (const std::exception& e) {
    impl.db_message = fmt::format("online tuning could not record a trial: {}", e.what());
  }
}

void Launcher::launch(const std::map<std::string, std::int64_t>& sizes, std::span<void* const> args, CUstream stream) {
  launch(prepare(sizes), args, stream);
}

const Space& Launcher::space() const noexcept { return impl_->space; }
const QueryDevice& Launcher::device() const noexcept { return impl_->device; }
const std::string& Launcher::arch() const noexcept { return impl_->arch; }
const std::filesystem::path& Launcher::db_path() const noexcept { return impl_->db_path; }
bool Launcher::db_writable() const noexcept { return impl_->writable; }
const std::string& Launcher::db_message() const noexcept { return impl_->db_message; }
const CaptureWriter* Launcher::capture() const noexcept { return impl_->capture.get(); }
CaptureOutcome Launcher::last_capture() const noexcept { return impl_->last_capture; }
const OnlineSchedule* Launcher::online() const noexcept { return impl_->online ? &*impl_->online : nullptr; }
std::optional<OnlineVerdict> Launcher::last_online() const {
  std::lock_guard lock(impl_->online_mutex);
  return impl_->last_online;
}

}  // namespace tiletune
