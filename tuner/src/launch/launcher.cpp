// The launcher: best config from the cache, cubin from the database or NVRTC, launch through the
// driver (see launcher.hpp).
#include "tiletune/launcher.hpp"

#include <fmt/format.h>

#include <atomic>
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
  std::atomic<CaptureOutcome> last_capture{CaptureOutcome::off};

  void open_db();

  std::string describe(const std::string& config_text) const {
    return fmt::format("kernel '{}' config {} ({})", space.kernel, config_text.empty() ? "?" : config_text, arch);
  }
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
    } catch (const std::exception& e) {
      rw_error = e.what();
    }
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
    impl.db_message += fmt::format("{}lookups disabled: {} ({})", impl.db_message.empty() ? "" : "; ",
                                   error.message, query_status_name(error.status));
}

namespace {

Problem make_problem(const Space& space, const std::map<std::string, std::int64_t>& sizes) {
  for (const auto& [name, value] : sizes) {
    if (space.problem_index(name) < 0)
      throw Error(fmt::format("Launcher::prepare: kernel '{}' has no problem size '{}'", space.kernel, name));
    if (value <= 0)
      throw Error(fmt::format("Launcher::prepare: kernel '{}': size {}={} is not positive", space.kernel, name,
                              value));
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
std::optional<Config> config_from(const Space& space, const Problem& problem, const QueryResult& r,
                                  std::string& why) {
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
  throw Error(fmt::format("Launcher::prepare: kernel '{}' has no `default:` config and no config passes its "
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
      throw Error(fmt::format("Launcher::open: kernel '{}': cannot read CUDA device {}: {} (give "
                              "Launcher::Options::device to prepare without a GPU)",
                              impl->space.kernel, impl->options.ordinal, why));
    impl->device = std::move(*detected);
  }
  if (!impl->options.arch.empty()) {
    impl->arch = normalize_arch(impl->options.arch);
  } else if (impl->device.cc_major > 0) {
    impl->arch = fmt::format("sm_{}{}", impl->device.cc_major, impl->device.cc_minor);
  } else {
    throw Error(fmt::format("Launcher::open: kernel '{}': the device gives no compute capability; set "
                            "Launcher::Options::arch (e.g. \"sm_90\")",
                            impl->space.kernel));
  }
  impl->open_db();
  CaptureOptions capture =
      impl->options.capture ? *impl->options.capture : CaptureOptions::from_environment(std::cerr);
  if (capture.enabled() && capture.matches(impl->space.kernel))
    impl->capture = std::make_unique<CaptureWriter>(impl->space, std::move(capture), std::cerr);
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
  plan.config_text = canonical_config(space, plan.config);
  for (std::size_t i = 0; i < space.params.size(); ++i)
    plan.params.push_back(QueryParam{space.params[i].name, plan.config.values[i]});
  const std::string what = impl.describe(plan.config_text);

  // 2. The launch geometry for these sizes and params.
  try {
    plan.geometry = evaluate_launch(space, plan.problem, plan.config);
  } catch (const std::exception& e) {
    throw Error(fmt::format("Launcher::prepare: {} problem {}: evaluate_launch: {}", what, plan.problem_text,
                            e.what()));
  }

  // 3. The cubin: this Launcher's, the database's, or NVRTC's.
  std::lock_guard lock(impl.mutex);
  CompileRequest request;
  try {
    request.options = compile_options(space, plan.problem, plan.config);
  } catch (const EvalError& e) {
    throw Error(fmt::format("Launcher::prepare: {} problem {}: compile_options: {}", what, plan.problem_text,
                            e.what()));
  }
  request.source = &impl.sources->for_options(request.options);
  request.arch = impl.arch;
  request.entry = space.entry;
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
        throw Error(fmt::format("Launcher::prepare: {}: compile_nvrtc failed: {}\n{}", what, result.error,
                                result.log));
      plan.cubin_origin = CubinOrigin::compiled;
      plan.compiled = true;
      plan.compile_ms = result.seconds * 1e3;
      loaded->cubin = std::move(result.kernel->cubin);
      loaded->lowered_name = std::move(result.kernel->lowered_name);
      if (impl.db && impl.writable) {
        try {
          impl.db->put_cubin(CubinRecord{plan.cubin_key, impl.arch, loaded->cubin, loaded->lowered_name});
          plan.stored = true;
        } catch (const std::exception& e) {
          plan.store_error = fmt::format("put_cubin: {}", e.what());
        }
      } else {
        plan.store_error = impl.db ? "the cache is read-only" : impl.db_message;
      }
    }
    impl.kernels.emplace(plan.cubin_key, loaded);
    plan.loaded_ = std::move(loaded);
  }
  plan.lowered_name = plan.loaded_->lowered_name;
  plan.cubin_bytes = plan.loaded_->cubin.size();
  return plan;
}

void Launcher::launch(const LaunchPlan& plan, std::span<void* const> args, CUstream stream) {
  Impl& impl = *impl_;
  const std::string what = impl.describe(plan.config_text);
  if (!plan.loaded_)
    throw Error(fmt::format("Launcher::launch: kernel '{}': the plan was not made by Launcher::prepare",
                            impl.space.kernel));
  if (args.size() != impl.space.args.size())
    throw Error(fmt::format("Launcher::launch: {}: {} arguments given, the kernel takes {} (the space's args:)",
                            what, args.size(), impl.space.args.size()));
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i] == nullptr)
      throw Error(fmt::format("Launcher::launch: {}: argument {} is a null address", what, i));

  detail::LoadedKernel& k = *plan.loaded_;
  std::call_once(k.load_once, [&] { k.kernel.emplace(impl.options.ordinal, k.cubin, k.lowered_name, k.what); });
  const LaunchGeometry& g = plan.geometry;
  // Capture reads the inputs before and the outputs after; it never throws into the launch.
  DeviceCaptureMemory memory(impl.options.ordinal, stream);
  CaptureWriter::PendingCapture pending;
  CaptureOutcome outcome = CaptureOutcome::off;
  if (impl.capture) pending = impl.capture->before({plan.problem, plan.config, args}, memory, outcome);
  k.kernel->launch({g.grid[0], g.grid[1], g.grid[2]}, {g.block[0], g.block[1], g.block[2]}, g.shared_bytes, stream,
                   const_cast<void**>(args.data()),
                   fmt::format("{} problem {} grid [{},{},{}] block [{},{},{}] shared {}", what, plan.problem_text,
                               g.grid[0], g.grid[1], g.grid[2], g.block[0], g.block[1], g.block[2], g.shared_bytes));
  if (pending) outcome = impl.capture->after(std::move(pending), memory);
  impl.last_capture = outcome;
}

void Launcher::launch(const std::map<std::string, std::int64_t>& sizes, std::span<void* const> args,
                      CUstream stream) {
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

}  // namespace tiletune
