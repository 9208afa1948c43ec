// Planning one trial (prune what the device cannot launch, else compile ahead in proposal order,
// so the GPU never waits for a compile it could have had earlier) and measuring it on a device
// (what each thread of the device pool runs), and what the search sees of a trial.
#include <fmt/format.h>

#include "tune/sweep_stages.hpp"
#include "tiletune/physics_guard.hpp"
#include "tiletune/trial.hpp"

namespace tiletune::sweep_detail {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string truncate_log(const std::string& log, std::size_t max_bytes = 16384) {
  if (log.size() <= max_bytes) return log;
  return log.substr(0, max_bytes) + fmt::format("\n[... {} more bytes of log]", log.size() - max_bytes);
}

bool runs_a_reference(const Space& space) {
  return space.verify.reference == VerifySpec::Reference::config ||
         space.verify.reference == VerifySpec::Reference::kernel;
}

}  // namespace

PendingTrial plan_trial(const Space& space, const DeviceLimits& limits, CompileAhead& compile, const ProblemWork& work,
                        std::size_t point) {
  PendingTrial w;
  w.point = point;
  w.config = work.space.config(point);
  try {
    w.launch = evaluate_launch(space, work.problem, w.config);
    if (auto reason = unlaunchable_geometry(limits, *w.launch))
      w.pruned_reason = std::move(*reason);
    else if (auto too_big = buffer_size_problem(space, work.problem, w.config))
      w.pruned_reason = std::move(*too_big);
    else
      w.compiled = compile.config(work.problem, w.config);  // an ${} of `options:` may fail here
  } catch (const EvalError& e) { w.pruned_reason = e.what(); }
  return w;
}

namespace {

void run_in_worker(const DeviceStages& stages, const ProblemWork& work, const PendingTrial& w,
                   const CompiledKernel& kernel, SweepTrial& t);
void ensure_reference(const DeviceStages& stages, const ProblemWork& work, const PendingTrial& w,
                      const std::string& problem_key);
void hold_against_physics(const DeviceStages& stages, const ProblemWork& work, const PendingTrial& w, SweepTrial& t);

}  // namespace

// One trial: wait for its compile, check it against the device, verify and time it.
double measure_trial(const DeviceStages& stages, const ProblemWork& work, const PendingTrial& w, SweepTrial& t) {
  if (!w.pruned_reason.empty()) {
    t.status = TrialStatus::pruned;
    t.detail = w.pruned_reason;
    return 0;
  }
  const auto wait_start = Clock::now();
  const CompileResult& compiled = w.compiled.get();
  const double waited = seconds_since(wait_start);
  t.compile_seconds = compiled.seconds;
  t.compile_warnings = compiled.warnings;
  if (!compiled.ok()) {
    t.status = TrialStatus::compile_failed;
    t.detail = compiled.error + "\n" + truncate_log(compiled.log);
    return waited;
  }
  t.resources = compiled.kernel->resources;
  t.occupancy = compute_occupancy(stages.limits, kernel_footprint(*w.launch, &*t.resources));
  if (!t.occupancy.launchable) {
    t.status = TrialStatus::pruned;
    t.detail = t.occupancy.pruned_reason;
    return waited;
  }
  try {
    run_in_worker(stages, work, w, *compiled.kernel, t);
  } catch (const EvalError& e) {
    t.status = TrialStatus::pruned;
    t.detail = e.what();
  }
  return waited;
}

namespace {

void run_in_worker(const DeviceStages& stages, const ProblemWork& work, const PendingTrial& w,
                   const CompiledKernel& kernel, SweepTrial& t) {
  TrialRequest request = make_trial_request(stages.space, work.problem, w.config, *w.launch, kernel);
  if (runs_a_reference(stages.space)) ensure_reference(stages, work, w, request.problem_key);
  TrialResult result = stages.worker.run(std::move(request));
  t.status = result.status;
  t.detail = result.detail;
  if (result.status == TrialStatus::ok && result.median_ms > 0) {
    const RunMetrics metrics = evaluate_metrics(stages.space, work.problem, w.config);
    if (metrics.bytes) t.gbps = *metrics.bytes / (result.median_ms * 1e-3) / 1e9;
    if (metrics.flops) t.gflops = *metrics.flops / (result.median_ms * 1e-3) / 1e9;
    hold_against_physics(stages, work, w, t);
  }
  t.result = std::move(result);
}

// The physics guard: a trial over its ceilings by the margin did not do the work it declares.
// The worker ran the copy before any trial (WorkerSession::run waits for it), so it is known.
void hold_against_physics(const DeviceStages& stages, const ProblemWork& work, const PendingTrial& w, SweepTrial& t) {
  const double copy_gbps = stages.worker.copy().gbps;
  t.ceilings = trial_ceilings(stages.space, work.problem, w.config,
                              ceiling_inputs(stages.limits, copy_gbps > 0 ? std::optional(copy_gbps) : std::nullopt));
  const auto rate = [](double r) { return r > 0 ? std::optional(r) : std::nullopt; };
  if (auto detail = suspect_detail(stages.space, t.ceilings, rate(t.gbps), rate(t.gflops))) {
    t.status = TrialStatus::suspect;
    t.detail = std::move(*detail);
  }
}

// The reference (a config or another kernel) runs first on each problem key the worker meets:
// the worker keeps the reference outputs of one problem, and a restarted worker has none.
void ensure_reference(const DeviceStages& stages, const ProblemWork& work, const PendingTrial& w,
                      const std::string& problem_key) {
  if (stages.worker.holds_reference(problem_key)) return;
  const Space& space = stages.space;
  const Problem& problem = work.problem;
  TrialRequest request;
  std::string what;
  if (space.verify.reference == VerifySpec::Reference::config) {
    const Config rc = reference_config_for(space, w.config);
    what = "the reference config " + format_config(space, rc);
    const CompileResult& ref = stages.compile.config(problem, rc).get();
    if (!ref.ok()) throw Error(fmt::format("{} does not compile: {}", what, ref.error));
    request = make_trial_request(space, problem, rc, evaluate_launch(space, problem, rc), *ref.kernel);
  } else {
    what =
        fmt::format("the reference kernel {} ({})", space.verify.kernel->entry, space.verify.kernel->source.string());
    const CompileResult& ref = stages.compile.reference_kernel(problem, w.config).get();
    if (!ref.ok()) throw Error(fmt::format("{} does not compile: {}\n{}", what, ref.error, truncate_log(ref.log)));
    request = make_reference_kernel_request(space, problem, w.config, *ref.kernel);
  }
  request.is_reference = true;
  const TrialResult result = stages.worker.run(std::move(request));
  if (result.status != TrialStatus::ok)
    throw Error(fmt::format("{} failed on {}: {}: {}", what, format_problem(space, problem), status_name(result.status),
                            result.detail));
}

}  // namespace

std::optional<Evaluation> recall_known(const Space& space, const ProblemWork& work, std::size_t point) {
  const auto it = work.known.find(canonical_config(space, work.space.config(point)));
  if (it == work.known.end()) return std::nullopt;
  return Evaluation{point, it->second, 0, true};
}

Evaluation evaluation_of(Objective objective, std::size_t point, const TrialRecord& record, const SweepTrial& t) {
  const double worker_ms = t.result ? t.result->load_ms + t.result->verify_ms + t.result->measure_ms : 0;
  return Evaluation{point, trial_score(objective, record), t.compile_seconds + worker_ms / 1000, false};
}

}  // namespace tiletune::sweep_detail
