// A fixed pool of compile threads. NVRTC programs are independent, so configs compile in
// parallel; each request becomes a packaged task whose future carries the result or the
// exception. The destructor lets the workers finish what is queued, then joins them.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include "tiletune/compile.hpp"

namespace tiletune {

struct CompilePool::Impl {
  explicit Impl(CubinCache cache_in) : cache(std::move(cache_in)) {}

  CubinCache cache;  // a copy: the pool must not depend on the caller's object
  std::mutex mutex;
  std::condition_variable_any ready;
  std::deque<std::packaged_task<CompileResult()>> queue;
  std::vector<std::jthread> workers;  // last member: joined before the rest is destroyed

  void work(std::stop_token stop) {
    for (;;) {
      std::packaged_task<CompileResult()> task;
      {
        std::unique_lock lock(mutex);
        // Wakes on a new task or on a stop request; a stop only ends the loop once the
        // queue is empty, so destruction drains the work already submitted.
        ready.wait(lock, stop, [this] { return !queue.empty(); });
        if (queue.empty()) return;
        task = std::move(queue.front());
        queue.pop_front();
      }
      task();  // exceptions are stored in the future by packaged_task
    }
  }
};

CompilePool::CompilePool(unsigned threads, const CubinCache& cache)
    : impl_(std::make_unique<Impl>(cache)) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  impl_->workers.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) {
    impl_->workers.emplace_back([impl = impl_.get()](std::stop_token stop) { impl->work(stop); });
  }
}

CompilePool::~CompilePool() {
  for (auto& worker : impl_->workers) worker.request_stop();
  impl_->workers.clear();  // joins
}

std::future<CompileResult> CompilePool::submit(CompileRequest request) {
  std::packaged_task<CompileResult()> task(
      [request = std::move(request), impl = impl_.get()] { return compile_cached(request, impl->cache); });
  auto future = task.get_future();
  {
    std::lock_guard lock(impl_->mutex);
    impl_->queue.push_back(std::move(task));
  }
  impl_->ready.notify_one();
  return future;
}

unsigned CompilePool::threads() const noexcept {
  return static_cast<unsigned>(impl_->workers.size());
}

}  // namespace tiletune
