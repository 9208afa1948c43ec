// The GPUs of one model on one host as a pool for one search (one GPU is a pool of one): a thread and a WorkerSession
// per device, each measuring one trial at a time (never two on one GPU), taking the oldest queued trial when it is
// free; and the Evaluator run_search drives over it, which returns the trials in submission order and records each
// under the device that measured it. A device whose worker cannot start (three tries in a row) leaves the pool; the
// trial it held goes back to the queue for another device. A trial that loses a worker is measured again on another
// device of the model, once: a fault there too is the config's; a device whose lost trials
// another device then measures fine three times in a row leaves the pool.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tune/sweep_stages.hpp"

namespace tiletune::sweep_detail {

/// What a pool trial came back with: the trial (status, result) and who measured it.
struct PoolResult {
  SweepTrial trial;
  std::size_t device = 0;  ///< index into the pool's devices
  double waited_for_compile = 0;
  bool skipped = false;  ///< a trial for one device that left before measuring it
};

/// Thrown by a pool whose every device has left: the model's search cannot go on.
class PoolLost : public Error {
 public:
  using Error::Error;
};

/// One device of a pool.
struct PoolDevice {
  DeviceInfo device;
  std::vector<std::string> argv;  ///< its worker
};

class DevicePool {
 public:
  /// Starts a thread per device; each starts its worker (and measures the copy ceiling in it)
  /// at once, beside the first compiles.
  DevicePool(std::vector<PoolDevice> devices, const WorkerSettings& settings, std::uint64_t copy_bytes,
             const Space& space, const DeviceLimits& limits, CompileAhead& compile);
  ~DevicePool();  ///< stops the threads after the trial each is measuring
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  /// Queues a planned trial of a problem for any device (or only `device`: a finalist).
  [[nodiscard]] std::shared_future<PoolResult> run(const ProblemWork& work, std::size_t problem_index,
                                                   PendingTrial trial, std::optional<std::size_t> device = {});
  /// Drops the queued trials (their results are skipped) and waits for those being measured.
  void drop_queued();
  [[nodiscard]] std::size_t size() const noexcept { return members_.size(); }
  [[nodiscard]] const DeviceInfo& device(std::size_t d) const { return members_.at(d)->device.device; }
  /// Devices still in the pool.
  [[nodiscard]] std::vector<std::size_t> active() const;
  /// Why device d left the pool ("" when it did not).
  [[nodiscard]] std::string left(std::size_t d) const;
  /// The copy ceiling its worker measured (bytes 0 when none was).
  [[nodiscard]] CopyCeiling copy(std::size_t d) const;
  /// Stops every thread (after its trial); the sessions stay readable.
  void stop();
  [[nodiscard]] const WorkerSession& session(std::size_t d) const { return *members_.at(d)->session; }

 private:
  struct Job {
    const ProblemWork* work = nullptr;
    std::size_t problem_index = 0;
    PendingTrial trial;
    std::optional<std::size_t> device;
    std::optional<std::size_t> lost_on;  ///< the device whose worker it lost, once: retried on another
    std::promise<PoolResult> done;
  };
  struct Member {
    PoolDevice device;
    std::unique_ptr<WorkerSession> session;
    std::string left;
    std::optional<CopyCeiling> copy;
    std::size_t running = 0;  ///< jobs it is measuring (0 or 1)
    int lost_in_a_row = 0;    ///< trials whose worker it lost and another device then measured fine
    std::thread thread;
  };

  void serve(std::size_t d);
  [[nodiscard]] std::string start_failure(std::size_t d);
  [[nodiscard]] std::shared_ptr<Job> take(std::size_t d);
  void finish(std::size_t d);
  void leave(std::size_t d, const std::string& why, std::shared_ptr<Job> held);
  /// Requeues a trial that lost d's worker for another device, once; false when there is none.
  [[nodiscard]] bool retry_elsewhere(std::size_t d, const std::shared_ptr<Job>& job);
  /// After a trial: d lost no worker (its count starts again), or it measured fine what lost
  /// another device's worker (that device's count goes up; at 3 it leaves the pool).
  void count_losses(std::size_t d, const Job& job, bool lost);
  // The *_locked functions expect mutex_ held.
  [[nodiscard]] std::vector<std::size_t> active_locked() const;
  [[nodiscard]] bool another_active_locked(std::size_t d) const;  ///< a device other than d is active
  void skip_device_jobs_locked(std::size_t d);
  void fail_all_queued_locked();

  const Space& space_;
  const DeviceLimits& limits_;
  CompileAhead& compile_;
  std::uint64_t copy_bytes_;
  std::vector<std::unique_ptr<Member>> members_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stopping_ = false;
};

/// What every problem's evaluator over a pool shares in one model's search.
struct PoolStages {
  const Space& space;
  const DeviceLimits& limits;
  Objective objective;
  CompileAhead& compile;
  std::vector<TrialRecorder*> recorders;  ///< one per device of the pool, in its order
  std::vector<std::size_t> report_index;  ///< per device of the pool: its SweepTrial::device
  /// Each trial once it is recorded; may move from it.
  std::function<void(SweepTrial&)> on_trial;
};

/// The Evaluator of one problem over a pool: recall from what any device of the model knows,
/// submit plans the trial and queues it, next waits for the oldest and records it under the
/// device that measured it. The clock is wall time since it was made.
class PoolEvaluator final : public Evaluator {
 public:
  PoolEvaluator(DevicePool& pool, const PoolStages& stages, const ProblemWork& work, std::size_t problem_index);
  [[nodiscard]] std::optional<Evaluation> recall(std::size_t point) override;
  void submit(std::size_t point) override;
  [[nodiscard]] Evaluation next() override;
  void cancel() override;
  [[nodiscard]] double elapsed_seconds() const override;
  [[nodiscard]] double waited_for_compile_seconds() const noexcept { return waited_for_compile_; }

 private:
  struct Submitted {
    PendingTrial trial;
    std::shared_future<PoolResult> result;
  };

  DevicePool& pool_;
  const PoolStages& stages_;
  const ProblemWork& work_;
  std::size_t problem_index_;
  std::chrono::steady_clock::time_point start_;
  std::deque<Submitted> pending_;
  double waited_for_compile_ = 0;
};

/// Records a pool's result under the device that measured it and hands the trial on
/// (PoolStages::on_trial); returns what the search sees of it.
Evaluation record_pool_result(const PoolStages& stages, const ProblemWork& work, const PendingTrial& w,
                              PoolResult& result);

// --- the confirmation of a problem's finalists (confirm.cpp) ----------------------------------

/// The finalists of a problem on a pool's model: the domain points of its top `count` configs by
/// the objective, each scored by the best any device of the pool has in the cache (ok trials of
/// the current kernel version, this run's and earlier ones), best first, ties by params
/// (top_points: replay_sweep's rule too). Configs outside the work's domain (another shard's)
/// are not among them.
[[nodiscard]] std::vector<std::size_t> finalist_points(const PoolStages& stages, const DevicePool& pool,
                                                       const CacheDb& db, const ProblemWork& work, std::size_t count);

/// The tie candidates of a problem on a pool's model (tie_candidate_points: the configs near the
/// best score, scored as finalist_points does, and the standing answers of the pool's devices);
/// none unless the objective is time.
[[nodiscard]] std::vector<std::size_t> tie_candidates(const PoolStages& stages, const DevicePool& pool,
                                                      const CacheDb& db, const ProblemWork& work, std::size_t count);

/// The confirmation of finalists on every device still in the pool, the devices at once: each
/// device measures each point `rounds` more times, a round of all of them after another (each
/// round starting one finalist later), so that every finalist meets the same moments: what a
/// config measures drifts over seconds (on the H200, a 9 us reduction ran 10 % faster for 2 s of
/// one sweep; the GPU's clocks and temperature drift too), and a config measured once, in its
/// moment, can win by its moment alone. On each device a finalist is recorded as its median
/// round by the objective, or as its first failed round when one fails (a kernel that fails once
/// is no winner), and reported once through stages.on_trial with SweepTrial::finalist set; so
/// each device's best is its own, confirmed measurement. Returns the trials measured.
std::uint64_t confirm_finalists(DevicePool& pool, const PoolStages& stages, const ProblemWork& work,
                                std::size_t problem_index, const std::vector<std::size_t>& points, int rounds);

/// Confirms the problem's top plan.finalists (finalist_points) until every one of the top was
/// confirmed: a config that a drift made look fast in the search falls back when it is
/// confirmed, and what comes up in its place is confirmed next, the top each time in one set of
/// rounds (run_confirmation: at most kMaxConfirmPasses passes, and none that would take a
/// device's confirmation past max_trials); then its tie candidates (tie_candidates) together in
/// one more. Confirmation::trials counts every device's.
[[nodiscard]] Confirmation confirm_problem(DevicePool& pool, const PoolStages& stages, const CacheDb& db,
                                           const ProblemWork& work, std::size_t problem_index, const ConfirmPlan& plan,
                                           std::uint64_t max_trials);

}  // namespace tiletune::sweep_detail
