// The stages of a sweep around the evaluator: plan a problem's work, compile ahead, the worker
// session, the trial recorder and the ranking (sweep_stages.hpp says what each is for).
#include "tune/sweep_stages.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace tiletune::sweep_detail {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

bool worker_lost(TrialStatus s) { return s == TrialStatus::runtime_fault || s == TrialStatus::timeout; }

TrialFilter current_trials(const Space& space, const std::string& device_uuid, const std::string& canonical) {
  TrialFilter filter;
  filter.kernel = space.kernel;
  filter.device = device_uuid;
  filter.problem = canonical;
  filter.current_only = true;
  return filter;
}

std::optional<double> trial_score(Objective objective, const TrialRecord& trial) {
  if (trial.status != TrialStatus::ok) return std::nullopt;
  return objective_score(objective, trial.time_ms, trial.energy_mj);
}

std::uint64_t unknown_points(const Space& space, const ProblemWork& work) {
  std::uint64_t known = 0;
  for (const auto& [params, score] : work.known) known += work.space.point_of(space, params) ? 1 : 0;
  const std::uint64_t size = work.space.domain.size();
  return size - std::min(size, known);
}

ProblemWork plan_problem(const Space& space, const Problem& problem, const Shard& shard, const CacheDb& db,
                         const std::vector<std::string>& device_uuids, Objective objective, bool force) {
  ProblemWork w;
  w.problem = problem;
  w.canonical = canonical_problem(space, problem);
  w.space = space_domain(space, problem, shard);
  if (!force)
    for (const std::string& uuid : device_uuids)
      for (const TrialRow& row : db.trials(current_trials(space, uuid, w.canonical)))
        w.known.emplace(row.trial.key.params, trial_score(objective, row.trial));  // the first device's stays
  w.unknown = unknown_points(space, w);
  return w;
}

// --- compile ahead -----------------------------------------------------------------------------

CompileAhead::CompileAhead(const Space& space, std::string arch, unsigned threads, const CubinCache& cache,
                           CompilerFactory compiler)
    : space_(space), arch_(std::move(arch)), sources_(space.source), pool_(threads, cache, std::move(compiler)) {
  if (space.verify.kernel) reference_sources_.emplace(space.verify.kernel->source);
}

std::shared_future<CompileResult> CompileAhead::submit(Compiles& compiles, CompileRequest request) {
  if (auto it = compiles.find(request.options); it != compiles.end()) return it->second;
  std::vector<std::string> options = request.options;
  auto future = pool_.submit(std::move(request)).share();
  compiles.emplace(std::move(options), future);
  return future;
}

std::shared_future<CompileResult> CompileAhead::config(const Problem& problem, const Config& config) {
  const std::lock_guard lock(mutex_);
  return submit(compiles_, config_compile_request(space_, problem, config, sources_, arch_));
}

std::shared_future<CompileResult> CompileAhead::reference_kernel(const Problem& problem, const Config& candidate) {
  if (!reference_sources_) throw Error(fmt::format("{}: the space has no reference kernel", space_.yaml_path.string()));
  const std::lock_guard lock(mutex_);
  return submit(reference_compiles_,
                reference_kernel_compile_request(space_, problem, candidate, *reference_sources_, arch_));
}

const KernelSource& CompileAhead::main_source() {
  const std::lock_guard lock(mutex_);
  return space_source(sources_, space_);
}

std::size_t CompileAhead::submitted() const {
  const std::lock_guard lock(mutex_);
  return compiles_.size() + reference_compiles_.size();
}

double CompileAhead::finished_seconds() const {
  const std::lock_guard lock(mutex_);
  double seconds = 0;
  for (const Compiles* compiles : {&compiles_, &reference_compiles_})
    for (const auto& [options, future] : *compiles)
      if (future.wait_for(std::chrono::seconds(0)) == std::future_status::ready) seconds += future.get().seconds;
  return seconds;
}

// --- the worker session ------------------------------------------------------------------------

WorkerSession::WorkerSession(std::vector<std::string> argv, WorkerSettings settings)
    : process_(std::move(argv)), settings_(std::move(settings)) {}

void WorkerSession::start_copy(std::uint64_t bytes) {
  wait_for_copy();
  // The thread is the only user of process_ until the future is ready (wait_for_copy).
  copy_pending_ = std::async(std::launch::async, [this, bytes] {
    const auto t0 = Clock::now();
    CopyCeiling c = process_.measure_copy(bytes, settings_.setup_allowance_seconds);
    times_.copy_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    return c;
  });
}

void WorkerSession::wait_for_copy() {
  if (copy_pending_.valid()) copy_ = copy_pending_.get();  // rethrows the worker's Error
}

const CopyCeiling& WorkerSession::copy() {
  wait_for_copy();
  if (!copy_) throw Error("WorkerSession::copy: no copy was started");
  return *copy_;
}

TrialResult WorkerSession::run(TrialRequest request) {
  wait_for_copy();
  request.id = next_id_++;
  request.timing = settings_.timing;
  request.deadline_seconds = settings_.deadline_seconds;
  if (!request.is_reference) request.energy = settings_.energy;  // the reference run is not recorded
  if (request.energy.enabled) request.deadline_seconds += settings_.energy.max_seconds;
  if (!holds_buffers(request.problem_key)) request.deadline_seconds += settings_.setup_allowance_seconds;
  const auto t0 = Clock::now();
  TrialResult result = process_.run(request);
  times_.round_trip_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
  if (worker_lost(result.status)) {
    buffers_key_.reset();  // the next trial meets a fresh worker
    reference_key_.reset();
  } else {
    if (!holds_buffers(request.problem_key)) reference_key_.reset();  // the worker moved to another problem
    buffers_key_ = request.problem_key;
    if (request.is_reference && result.status == TrialStatus::ok) reference_key_ = request.problem_key;
  }
  times_.load_seconds += result.load_ms / 1000;
  times_.setup_seconds += result.setup_ms / 1000;
  times_.verify_seconds += result.verify_ms / 1000;
  times_.measure_seconds += result.measure_ms / 1000;
  // A host check that fails (exits, answers garbage or nothing), or a module global that cannot
  // be filled, would fail every config after this one the same way, and a failed trial is kept:
  // a rerun would not measure it again. So the sweep stops, with nothing recorded for this
  // trial, rather than record hundreds of failures that are the problem's and not the configs'.
  if (result.shared_failure)
    throw Error(
        fmt::format("{} (trial of {} [{}]); the sweep stops: every config would fail the same way; fix it and run "
                    "tune again (the trials "
                    "recorded so far are kept)",
                    result.detail, request.kernel, request.config_text));
  return result;
}

// --- the trial recorder ------------------------------------------------------------------------

TrialRecorder::TrialRecorder(CacheDb& db, std::int64_t device_id, std::int64_t kernel_id, const Space& space,
                             const DeviceLimits& limits)
    : db_(db), device_id_(device_id), kernel_id_(kernel_id), space_(space), limits_(limits) {}

namespace {

void copy_result(const TrialResult& m, const SweepTrial& t, const DeviceLimits& limits, TrialRecord& r) {
  if (m.samples > 0) {
    r.time_ms = m.median_ms;
    r.mean_ms = m.mean_ms;
    r.min_ms = m.min_ms;
    r.stddev_ms = m.stddev_ms;
    r.samples = m.samples;
    r.throttled_samples = m.throttled_samples;
    if (m.cpu_mean_ms > 0) r.cpu_time_s = m.cpu_mean_ms / 1000;  // the worker's mean per sample
  }
  r.measure_ms = m.measure_ms;
  if (m.samples > 0) r.times_ms = times_ms_of(m.times_ms);
  if (m.verify_ms > 0) r.verify_ms = m.verify_ms;
  if (m.driver_blocks_per_sm > 0 && t.occupancy.threads_per_block > 0 && limits.max_threads_per_sm > 0)
    r.occupancy_driver = double(m.driver_blocks_per_sm) * t.occupancy.threads_per_block / limits.max_threads_per_sm;
  if (t.gbps > 0) r.gbps = t.gbps;
  if (t.gflops > 0) r.gflops = t.gflops;
  r.ceiling_gbps = t.ceilings.gbps;
  r.ceiling_gflops = t.ceilings.gflops;
  if (m.energy_mj > 0) r.energy_mj = m.energy_mj;
  if (m.power_w > 0) r.power_w = m.power_w;
  if (m.sm_clock_mhz > 0) r.sm_clock_mhz = m.sm_clock_mhz;
  if (m.memory_clock_mhz > 0) r.mem_clock_mhz = m.memory_clock_mhz;
  if (m.temperature_c > 0) r.temperature_c = m.temperature_c;
}

}  // namespace

TrialRecord TrialRecorder::record(const std::string& canonical_problem, const std::optional<LaunchGeometry>& launch,
                                  SweepTrial& t) {
  TrialRecord r = make(canonical_problem, launch, t);
  db_.record_trial(r);
  return r;
}

TrialRecord TrialRecorder::make(const std::string& canonical_problem, const std::optional<LaunchGeometry>& launch,
                                SweepTrial& t) const {
  TrialRecord r;
  r.key = TrialKey{device_id_, kernel_id_, canonical_problem, canonical_config(space_, t.config)};
  r.status = t.status;
  r.detail = t.detail;
  if (t.resources) {
    r.registers = t.resources->registers;
    r.shared_bytes = t.resources->static_shared_bytes + (launch ? launch->shared_bytes : 0);
    r.spill_bytes = t.resources->spill_store_bytes + t.resources->spill_load_bytes;
  }
  if (t.occupancy.launchable) r.occupancy_offline = t.occupancy.occupancy;
  if (t.compile_seconds > 0) r.compile_ms = t.compile_seconds * 1000;
  r.compile_log = compile_log_of(t.compile_warnings);
  if (t.result) copy_result(*t.result, t, limits_, r);
  if (r.status == TrialStatus::ok && !(r.time_ms && *r.time_ms > 0)) {
    r.status = TrialStatus::runtime_fault;
    r.detail = "the worker reported success without a time";
    t.status = r.status;
    t.detail = r.detail;
  }
  return r;
}

// --- the ranking -------------------------------------------------------------------------------

void rank_problem(const Space& space, const CacheDb& db, const std::string& device_uuid, Objective objective,
                  ProblemOutcome& outcome) {
  std::optional<std::string> default_key;
  if (space.default_config) default_key = canonical_config(space, Config{*space.default_config});
  for (TrialRow& row : db.trials(current_trials(space, device_uuid, outcome.canonical))) {
    if (row.trial.key.params == default_key) outcome.default_trial = row;
    if (trial_score(objective, row.trial)) outcome.ranked.push_back(std::move(row));
  }
  std::stable_sort(outcome.ranked.begin(), outcome.ranked.end(), [&](const TrialRow& a, const TrialRow& b) {
    return *trial_score(objective, a.trial) < *trial_score(objective, b.trial);
  });
}

}  // namespace tiletune::sweep_detail
