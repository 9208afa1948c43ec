// The device pool of one model and its Evaluator (device_pool.hpp says what each is for). Only
// the search's thread touches the database: the device threads measure, the evaluator records.
#include "tune/device_pool.hpp"

#include <fmt/format.h>

namespace tiletune::sweep_detail {

namespace {

using Clock = std::chrono::steady_clock;

// A device whose fresh worker fails this many times in a row (cannot start, or cannot measure
// the copy ceiling) has left the pool: one bad start is a hiccup, three are a broken GPU.
constexpr int kStartTries = 3;
// A device leaves after losing its worker on this many trials in a row that another device then
// measured without a fault: its GPU, not the configs, is what fails.
constexpr int kLostInARow = 3;

std::string device_name(const DeviceInfo& d) { return fmt::format("device {} ({}, {})", d.ordinal, d.name, d.uuid); }

}  // namespace

DevicePool::DevicePool(std::vector<PoolDevice> devices, const WorkerSettings& settings, std::uint64_t copy_bytes,
                       const Space& space, const DeviceLimits& limits, CompileAhead& compile)
    : space_(space), limits_(limits), compile_(compile), copy_bytes_(copy_bytes) {
  for (PoolDevice& d : devices) {
    auto m = std::make_unique<Member>();
    m->session = std::make_unique<WorkerSession>(d.argv, settings);
    m->device = std::move(d);
    members_.push_back(std::move(m));
  }
  for (std::size_t d = 0; d < members_.size(); ++d) members_[d]->thread = std::thread([this, d] { serve(d); });
}

DevicePool::~DevicePool() { stop(); }

void DevicePool::stop() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (const auto& m : members_)
    if (m->thread.joinable()) m->thread.join();
}

std::shared_future<PoolResult> DevicePool::run(const ProblemWork& work, std::size_t problem_index, PendingTrial trial,
                                               std::optional<std::size_t> device) {
  auto job = std::make_shared<Job>();
  job->work = &work;
  job->problem_index = problem_index;
  job->trial = std::move(trial);
  job->device = device;
  std::shared_future<PoolResult> result = job->done.get_future().share();
  {
    const std::lock_guard lock(mutex_);
    queue_.push_back(std::move(job));
    if (active_locked().empty())
      fail_all_queued_locked();
    else if (device && !members_.at(*device)->left.empty())
      skip_device_jobs_locked(*device);
  }
  changed_.notify_all();
  return result;
}

std::vector<std::size_t> DevicePool::active_locked() const {
  std::vector<std::size_t> v;
  for (std::size_t d = 0; d < members_.size(); ++d)
    if (members_[d]->left.empty()) v.push_back(d);
  return v;
}

bool DevicePool::another_active_locked(std::size_t d) const {
  for (std::size_t other = 0; other < members_.size(); ++other)
    if (other != d && members_[other]->left.empty()) return true;
  return false;
}

std::vector<std::size_t> DevicePool::active() const {
  const std::lock_guard lock(mutex_);
  return active_locked();
}

std::string DevicePool::left(std::size_t d) const {
  const std::lock_guard lock(mutex_);
  return members_.at(d)->left;
}

CopyCeiling DevicePool::copy(std::size_t d) const {
  const std::lock_guard lock(mutex_);
  return members_.at(d)->copy.value_or(CopyCeiling{});
}

void DevicePool::drop_queued() {
  std::unique_lock lock(mutex_);
  for (const std::shared_ptr<Job>& job : queue_) job->done.set_value(PoolResult{{}, 0, 0, true});
  queue_.clear();
  changed_.wait(lock, [this] {
    for (const auto& m : members_)
      if (m->running) return false;
    return true;
  });
}

// A device's thread: start the worker, then measure one queued trial after another.
void DevicePool::serve(std::size_t d) {
  Member& m = *members_[d];
  if (std::string why = start_failure(d); !why.empty()) return leave(d, why, nullptr);
  const DeviceStages stages{space_, limits_, compile_, *m.session};
  while (const std::shared_ptr<Job> job = take(d)) {
    PoolResult r;
    r.device = d;
    r.trial.problem = job->problem_index;
    r.trial.config = job->trial.config;
    try {
      r.waited_for_compile = measure_trial(stages, *job->work, job->trial, r.trial);
    } catch (...) {
      // The reference failed (the space's error) or no worker could be started (the device's):
      // a fresh worker that answers tells them apart.
      const std::exception_ptr error = std::current_exception();
      if (std::string why = start_failure(d); !why.empty()) return leave(d, why, job);
      finish(d);
      job->done.set_exception(error);
      continue;
    }
    // A lost worker: when a fresh one fails too, the GPU is at fault and the trial goes to
    // another device; else it is measured again on another device, once, and only a fault
    // there too is recorded (the config's: an illegal address).
    const bool lost = worker_lost(r.trial.status);
    if (lost) {
      if (std::string why = start_failure(d); !why.empty())
        return leave(d, fmt::format("{} (after {} on {})", why, status_name(r.trial.status), r.trial.detail), job);
      if (retry_elsewhere(d, job)) continue;
    }
    count_losses(d, *job, lost);
    finish(d);
    job->done.set_value(std::move(r));
  }
}

// Starts the device's worker and measures the copy ceiling in it: "" when it answered.
std::string DevicePool::start_failure(std::size_t d) {
  Member& m = *members_[d];
  std::string why;
  for (int attempt = 0; attempt < kStartTries; ++attempt) {
    try {
      m.session->start_copy(copy_bytes_);
      const CopyCeiling c = m.session->copy();
      const std::lock_guard lock(mutex_);
      if (!m.copy) m.copy = c;
      return {};
    } catch (const std::exception& e) { why = e.what(); }
  }
  return fmt::format("its worker failed {} starts in a row: {}", kStartTries, why);
}

std::shared_ptr<DevicePool::Job> DevicePool::take(std::size_t d) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (stopping_ || !members_[d]->left.empty()) return nullptr;
    const bool others = another_active_locked(d);
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if ((*it)->device && *(*it)->device != d) continue;
      if ((*it)->lost_on == d && others) continue;  // for another device
      std::shared_ptr<Job> job = *it;
      queue_.erase(it);
      ++members_[d]->running;
      return job;
    }
    changed_.wait(lock);
  }
}

void DevicePool::finish(std::size_t d) {
  {
    const std::lock_guard lock(mutex_);
    --members_[d]->running;
  }
  changed_.notify_all();
}

void DevicePool::leave(std::size_t d, const std::string& why, std::shared_ptr<Job> held) {
  {
    const std::lock_guard lock(mutex_);
    Member& m = *members_[d];
    m.left = why;
    if (held) {
      --m.running;
      queue_.push_front(std::move(held));  // the oldest again, for another device
    }
    skip_device_jobs_locked(d);
    if (active_locked().empty()) fail_all_queued_locked();
  }
  changed_.notify_all();
}

bool DevicePool::retry_elsewhere(std::size_t d, const std::shared_ptr<Job>& job) {
  {
    const std::lock_guard lock(mutex_);
    if (job->lost_on || job->device || !another_active_locked(d)) return false;
    job->lost_on = d;
    --members_[d]->running;
    queue_.push_front(job);
  }
  changed_.notify_all();
  return true;
}

void DevicePool::count_losses(std::size_t d, const Job& job, bool lost) {
  {
    const std::lock_guard lock(mutex_);
    if (!lost) members_[d]->lost_in_a_row = 0;
    if (lost || !job.lost_on) return;
    Member& other = *members_[*job.lost_on];
    if (++other.lost_in_a_row < kLostInARow || !other.left.empty()) return;
    other.left = fmt::format("it lost its worker on {} trials in a row that {} then measured without a fault",
                             kLostInARow, device_name(members_[d]->device.device));
    skip_device_jobs_locked(*job.lost_on);
  }
  changed_.notify_all();
}

void DevicePool::skip_device_jobs_locked(std::size_t d) {
  for (auto it = queue_.begin(); it != queue_.end();) {
    if ((*it)->device == d) {
      (*it)->done.set_value(PoolResult{{}, d, 0, true});
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
}

void DevicePool::fail_all_queued_locked() {
  std::string why;
  for (const auto& m : members_)
    why += fmt::format("{}{}: {}", why.empty() ? "" : "; ", device_name(m->device.device), m->left);
  for (const std::shared_ptr<Job>& job : queue_)
    job->done.set_exception(std::make_exception_ptr(PoolLost("every device of the pool left it: " + why)));
  queue_.clear();
}

// --- the evaluator ------------------------------------------------------------------------------

PoolEvaluator::PoolEvaluator(DevicePool& pool, const PoolStages& stages, const ProblemWork& work,
                             std::size_t problem_index)
    : pool_(pool), stages_(stages), work_(work), problem_index_(problem_index), start_(Clock::now()) {}

double PoolEvaluator::elapsed_seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

std::optional<Evaluation> PoolEvaluator::recall(std::size_t point) { return recall_known(stages_.space, work_, point); }

void PoolEvaluator::submit(std::size_t point) {
  PendingTrial w = plan_trial(stages_.space, stages_.limits, stages_.compile, work_, point);
  std::shared_future<PoolResult> result = pool_.run(work_, problem_index_, w);
  pending_.push_back({std::move(w), std::move(result)});
}

Evaluation PoolEvaluator::next() {
  if (pending_.empty()) throw Error("PoolEvaluator::next: nothing was submitted");
  const Submitted s = std::move(pending_.front());
  pending_.pop_front();
  PoolResult r = s.result.get();  // rethrows PoolLost, or the reference's failure
  if (r.skipped) throw Error("PoolEvaluator::next: a trial for any device was skipped");
  waited_for_compile_ += r.waited_for_compile;
  return record_pool_result(stages_, work_, s.trial, r);
}

void PoolEvaluator::cancel() {
  pending_.clear();
  pool_.drop_queued();
}

Evaluation record_pool_result(const PoolStages& stages, const ProblemWork& work, const PendingTrial& w,
                              PoolResult& result) {
  SweepTrial& t = result.trial;
  const TrialRecord row = stages.recorders.at(result.device)->record(work.canonical, w.launch, t);
  const Evaluation e = evaluation_of(stages.objective, w.point, row, t);  // before on_trial may move from t
  t.device = stages.report_index.at(result.device);
  if (stages.on_trial) stages.on_trial(t);
  return e;
}

}  // namespace tiletune::sweep_detail
