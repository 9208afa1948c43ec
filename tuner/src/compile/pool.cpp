// A fixed pool of compile threads. NVRTC programs are independent, so configs compile in
// parallel; each request becomes a task whose future carries the result or the exception. A
// thread given a CompilerFactory compiles through its own Compiler (a worker process), made
// at its first task so that idle threads start nothing. The destructor lets the threads
// finish what is queued, then joins them.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include "tiletune/compile.hpp"

namespace tiletune {

namespace {
struct ThrowingCompiler final : Compiler {
  explicit ThrowingCompiler(std::exception_ptr e) : error(std::move(e)) {}
  CompileResult compile(const CompileRequest&) override { std::rethrow_exception(error); }
  std::exception_ptr error;
};
}  // namespace

struct CompilePool::Impl {
  using Task = std::packaged_task<CompileResult(Compiler*)>;

  Impl(CubinCache cache_in, CompilerFactory factory) : cache(std::move(cache_in)), make_compiler(std::move(factory)) {}

  CubinCache cache;  // a copy: the pool must not depend on the caller's object
  CompilerFactory make_compiler;
  std::mutex mutex;
  std::condition_variable_any ready;
  std::deque<Task> queue;
  std::vector<std::jthread> workers;  // last member: joined before the rest is destroyed

  void work(std::stop_token stop) {
    std::unique_ptr<Compiler> compiler;
    for (;;) {
      Task task;
      {
        std::unique_lock lock(mutex);
        // Wakes on a new task or on a stop request; a stop only ends the loop once the
        // queue is empty, so destruction drains the work already submitted.
        ready.wait(lock, stop, [this] { return !queue.empty(); });
        if (queue.empty()) return;
        task = std::move(queue.front());
        queue.pop_front();
      }
      if (!compiler && make_compiler) {
        try {
          compiler = make_compiler();
        } catch (...) {
          // The factory's error is the task's (a cache hit is still answered): its future
          // rethrows it, and the next task tries the factory again.
          ThrowingCompiler thrower(std::current_exception());
          task(&thrower);
          continue;
        }
      }
      task(compiler.get());  // exceptions are stored in the future by packaged_task
    }
  }
};

CompilePool::CompilePool(unsigned threads, const CubinCache& cache, CompilerFactory make_compiler)
    : impl_(std::make_unique<Impl>(cache, std::move(make_compiler))) {
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
  Impl::Task task([request = std::move(request), impl = impl_.get()](Compiler* compiler) {
    return compile_cached(request, impl->cache, compiler);
  });
  auto future = task.get_future();
  {
    std::lock_guard lock(impl_->mutex);
    impl_->queue.push_back(std::move(task));
  }
  impl_->ready.notify_one();
  return future;
}

unsigned CompilePool::threads() const noexcept { return static_cast<unsigned>(impl_->workers.size()); }

}  // namespace tiletune
