// The parent's side of the worker boundary: starting a worker (fork + exec, with two
// dedicated pipes whose fd numbers travel in $TILETUNE_WORKER_FDS), sending it one framed
// request and waiting for the answer under a deadline, and turning whatever goes wrong into
// a trial status: a hang is `timeout` (the worker is killed), a death, an early exit or
// garbage is `runtime_fault` naming the signal, the exit code or the decode error. A dead
// worker is reaped at once and the next request starts a fresh one, so no zombie outlives
// the trial that made it. Nothing here is global: SIGPIPE is blocked only around our own
// writes, on the calling thread, and a pending one that we caused is consumed.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/process_io.hpp"
#include "tiletune/error.hpp"
#include "tiletune/worker.hpp"

extern char** environ;  // NOLINT: POSIX; copied into the worker's environment

namespace tiletune {
namespace {

using namespace process_io;  // NOLINT: the pipes, deadlines and reaping of a child
constexpr const char* kPeer = "the worker";

// How long a worker may take to exit on its own (EOF on its pipe, or after dying) before it
// is killed.
constexpr auto kExitGrace = std::chrono::seconds(2);

// One running worker: its process and the parent's ends of the two pipes. Destroying it closes
// the request pipe (the worker sees EOF and exits), waits a little, then kills; it is always
// reaped.
class Child : public ChildProcess {
 public:
  Child(pid_t pid, UniqueFd requests, UniqueFd results) noexcept
      : ChildProcess(pid), requests_(std::move(requests)), results_(std::move(results)) {}
  ~Child() {
    requests_.reset();
    if (pid() > 0) (void)reap_within(kExitGrace);
  }

  [[nodiscard]] int request_fd() const noexcept { return requests_.get(); }
  [[nodiscard]] int result_fd() const noexcept { return results_.get(); }

 private:
  UniqueFd requests_;
  UniqueFd results_;
};

// The steps of exec_child that may fail, as it reports them on the status pipe.
constexpr const char* kChildSteps[] = {"sigprocmask",    "dup2(stdin)", "dup2(stdout)",
                                       "fcntl(F_SETFD)", "execve",      "setpgid"};

// Everything the child needs, prepared before fork: in a multithreaded parent, the child may
// only make async-signal-safe calls until exec (no allocation).
struct ChildSetup {
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  int devnull = -1;
  int in_fd = -1;
  int out_fd = -1;
  int status_fd = -1;
  sigset_t empty_mask{};
};

[[noreturn]] void exec_child(const ChildSetup& s) noexcept {
  auto fail = [&](int step) { report_exec_failure(s.status_fd, step); };
  // A process group of its own: a Ctrl-C at the terminal reaches tiletune alone, which ends the
  // sweep between trials and then its workers; a worker the terminal killed mid-trial would
  // record a fault that is not the config's.
  if (::setpgid(0, 0) != 0) fail(5);
  if (::sigprocmask(SIG_SETMASK, &s.empty_mask, nullptr) != 0) fail(0);
  if (::dup2(s.devnull, 0) < 0) fail(1);
  // The worker's stdout (driver chatter, kernel printf) joins its stderr, so that it never
  // mixes into the parent's stdout, which may be a table or CSV.
  if (::dup2(2, 1) < 0) fail(2);
  if (::fcntl(s.in_fd, F_SETFD, 0) < 0 || ::fcntl(s.out_fd, F_SETFD, 0) < 0) fail(3);
  ::execve(s.path, s.argv, s.envp);
  fail(4);
  ::_exit(127);  // not reached
}

std::unique_ptr<Child> spawn(const std::vector<std::string>& argv) {
  auto [requests, results, status] = make_child_pipes("worker");
  UniqueFd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (devnull.get() < 0) throw Error(fmt::format("open /dev/null: {}", errno_text(errno)));

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::string fds_var = fmt::format("{}={},{}", worker_fds_env, requests.read.get(), results.write.get());
  std::string prefix = std::string(worker_fds_env) + "=";
  std::vector<char*> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e)
    if (std::strncmp(*e, prefix.c_str(), prefix.size()) != 0) env.push_back(*e);
  env.push_back(fds_var.data());
  env.push_back(nullptr);

  ChildSetup setup;
  setup.path = argv[0].c_str();
  setup.argv = args.data();
  setup.envp = env.data();
  setup.devnull = devnull.get();
  setup.in_fd = requests.read.get();
  setup.out_fd = results.write.get();
  setup.status_fd = status.write.get();
  ::sigemptyset(&setup.empty_mask);

  pid_t pid = ::fork();
  if (pid < 0) throw Error(fmt::format("fork (starting the worker {}): {}", argv[0], errno_text(errno)));
  if (pid == 0) exec_child(setup);

  auto child = std::make_unique<Child>(pid, std::move(requests.write), std::move(results.read));
  // Our copies of the child's ends must go, or we would never see EOF when it dies.
  requests.read.reset();
  results.write.reset();
  status.write.reset();

  // The status pipe closes on a successful exec; otherwise it carries why not.
  std::optional<ExecFailure> failure;
  try {
    failure = read_exec_failure(status.read.get());
  } catch (const Error& e) {
    (void)child->kill_and_reap();
    throw Error(fmt::format("the worker {}: {}", argv[0], e.what()));
  }
  if (!failure) return child;
  (void)child->kill_and_reap();
  if (failure->step < 0 || failure->step >= static_cast<int>(std::size(kChildSteps)))
    throw Error(fmt::format("cannot start the worker {}: it failed before exec", argv[0]));
  throw Error(fmt::format("cannot start the worker {}: {}: {}", argv[0], kChildSteps[failure->step],
                          errno_text(failure->error)));
}

TrialResult failed(std::uint64_t id, TrialStatus status, std::string detail) {
  TrialResult r;
  r.id = id;
  r.status = status;
  r.detail = std::move(detail);
  return r;
}

void check_deadline(double seconds) {
  if (!(seconds > 0))
    throw Error(fmt::format("worker deadline of {} s: expected a positive number of seconds (or infinity)", seconds));
}

}  // namespace

struct WorkerProcess::Impl {
  // What one request came to: an answer, or what went wrong instead.
  struct Exchange {
    std::optional<WorkerMessage> answer;
    TrialStatus status = TrialStatus::ok;  ///< timeout or runtime_fault when no answer
    std::string detail;
  };

  std::vector<std::string> argv;
  std::unique_ptr<Child> child;
  int starts = 0;

  void ensure_started() {
    // A worker that died between requests (OOM killer, ...) is replaced before the next
    // trial, which would otherwise be blamed for it.
    if (std::optional<int> status; child && child->try_reap(status)) child.reset();
    if (!child) {
      child = spawn(argv);
      ++starts;
    }
  }

  // A worker whose CUDA context was lost answers its trial and then exits. Wait briefly for
  // that exit, so that the next request goes to a fresh worker instead of racing the dying
  // one (and being blamed for its death). A worker that lives on (the handler only threw)
  // costs this wait and is kept.
  void settle_after_fault() {
    if (!child) return;
    const auto until = Clock::now() + std::chrono::milliseconds(1000);
    std::optional<int> status;
    while (Clock::now() < until) {
      if (child->try_reap(status)) {
        child.reset();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  // The worker is gone or useless: kill it (if needed), reap it, forget it.
  void discard() noexcept {
    if (child) {
      (void)child->kill_and_reap();
      child.reset();
    }
  }

  // "worker died: killed by signal 11 (...)" / "worker exited with status 3 before answering"
  std::string death_detail() {
    bool killed = false;
    std::optional<int> status = child->reap_within(kExitGrace, &killed);
    child.reset();
    if (killed) return "worker closed its pipe without exiting: worker killed";
    if (status && WIFEXITED(*status))
      return fmt::format("worker exited with status {} before answering", WEXITSTATUS(*status));
    return "worker died: " + describe_status(status);
  }

  Exchange exchange(const std::string& payload, double deadline_seconds) {
    check_deadline(deadline_seconds);
    ensure_started();
    try {
      Deadline deadline(deadline_seconds);
      Exchange out;
      auto timed_out = [&] {
        discard();
        out.status = TrialStatus::timeout;
        out.detail = fmt::format("no answer within {:.1f} s: worker killed", deadline_seconds);
        return out;
      };
      auto died = [&] {
        out.status = TrialStatus::runtime_fault;
        out.detail = death_detail();
        return out;
      };
      auto garbage = [&](const std::string& why) {
        discard();
        out.status = TrialStatus::runtime_fault;
        out.detail = "worker sent a malformed answer: " + why;
        return out;
      };

      switch (write_all(child->request_fd(), frame(payload), deadline, kPeer)) {
        case IoOutcome::ok: break;
        case IoOutcome::closed: return died();
        case IoOutcome::timeout: return timed_out();
      }
      unsigned char header[4];
      switch (read_exact(child->result_fd(), reinterpret_cast<char*>(header), sizeof header, deadline, kPeer)) {
        case IoOutcome::ok: break;
        case IoOutcome::closed: return died();
        case IoOutcome::timeout: return timed_out();
      }
      std::uint32_t size = 0;
      try {
        size = frame_payload_size(header);
      } catch (const Error& e) { return garbage(e.what()); }
      // Grown as bytes arrive: a lying header must not make the parent allocate a gigabyte.
      std::string answer;
      constexpr std::size_t kChunk = 1 << 20;
      while (answer.size() < size) {
        std::size_t old = answer.size();
        answer.resize(old + std::min<std::size_t>(kChunk, size - old));
        switch (read_exact(child->result_fd(), answer.data() + old, answer.size() - old, deadline, kPeer)) {
          case IoOutcome::ok: break;
          case IoOutcome::closed: return died();
          case IoOutcome::timeout: return timed_out();
        }
      }
      try {
        out.answer = decode_message(answer);
      } catch (const Error& e) { return garbage(e.what()); }
      if (out.answer->type == WorkerMessage::Type::error) {
        // The worker found our request malformed and is exiting (status 2).
        std::string message = std::move(out.answer->error);
        out.answer.reset();
        (void)child->reap_within(kExitGrace);
        child.reset();
        out.status = TrialStatus::runtime_fault;
        out.detail = "worker rejected the request: " + message;
      }
      return out;
    } catch (...) {
      discard();  // a half-done exchange leaves the pipe out of step
      throw;
    }
  }
};

WorkerProcess::WorkerProcess(std::vector<std::string> argv) : impl_(std::make_unique<Impl>()) {
  if (argv.empty() || argv[0].empty()) throw Error("WorkerProcess: no program to start (empty argv)");
  impl_->argv = std::move(argv);
}

WorkerProcess::~WorkerProcess() = default;  // ~Child: close, wait kExitGrace, kill, reap

TrialResult WorkerProcess::run(const TrialRequest& request) {
  Impl::Exchange x = impl_->exchange(encode_request(request), request.deadline_seconds);
  if (!x.answer) return failed(request.id, x.status, std::move(x.detail));
  WorkerMessage& m = *x.answer;
  if (m.type != WorkerMessage::Type::result) {
    impl_->discard();
    return failed(request.id, TrialStatus::runtime_fault, "worker sent a malformed answer: a copy result for a trial");
  }
  if (m.result.id != request.id) {
    impl_->discard();
    return failed(
        request.id, TrialStatus::runtime_fault,
        fmt::format("worker sent a malformed answer: the result of trial {} for trial {}", m.result.id, request.id));
  }
  // A failure that is not the candidate's (a failed host check, a global that cannot be filled)
  // leaves the worker's context alone: it lives on.
  if (m.result.status == TrialStatus::runtime_fault && !m.result.shared_failure) impl_->settle_after_fault();
  return std::move(m.result);
}

CopyCeiling WorkerProcess::measure_copy(std::uint64_t bytes, double deadline_seconds) {
  Impl::Exchange x = impl_->exchange(encode_copy_request(bytes), deadline_seconds);
  if (!x.answer) throw Error("measure_copy: " + x.detail);
  WorkerMessage& m = *x.answer;
  if (m.type == WorkerMessage::Type::copy_result) return m.copy;
  if (m.type == WorkerMessage::Type::result && m.result.status != TrialStatus::ok)
    throw Error("worker: " + m.result.detail);  // the handler threw; the worker lives on
  impl_->discard();
  throw Error("measure_copy: worker sent a malformed answer: a trial result for a copy");
}

namespace {

// A compile the worker could not answer: the worker's fate, not the kernel's, so transient (not
// cached, tried again next run), with the options that were asked for.
CompileResult failed_compile(const CompileRequest& request, const std::string& detail) {
  CompileResult r;
  r.error = "compile worker: " + detail;
  r.options = nvrtc_options(request);
  r.transient = true;
  return r;
}

}  // namespace

CompileResult WorkerProcess::compile(const CompileRequest& request, double deadline_seconds) {
  Impl::Exchange x = impl_->exchange(encode_compile_request(request), deadline_seconds);
  if (!x.answer) return failed_compile(request, x.detail);
  if (x.answer->type != WorkerMessage::Type::compile_result) {
    impl_->discard();
    return failed_compile(request, "sent a malformed answer: not a compile result");
  }
  return std::move(x.answer->compiled);
}

int WorkerProcess::starts() const noexcept { return impl_->starts; }

pid_t WorkerProcess::pid() const noexcept { return impl_->child ? impl_->child->pid() : 0; }

namespace {

// $TILETUNE_WORKER, else this executable.
std::string worker_program() {
  std::string program;
  if (const char* env = std::getenv("TILETUNE_WORKER"); env != nullptr && *env != '\0') {
    program = env;
  } else {
    std::vector<char> buf(256);
    for (;;) {
      ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size());
      if (n < 0) throw Error(fmt::format("readlink /proc/self/exe: {}", errno_text(errno)));
      if (static_cast<std::size_t>(n) < buf.size()) {
        program.assign(buf.data(), static_cast<std::size_t>(n));
        break;
      }
      buf.resize(buf.size() * 2);  // possibly truncated: try again with more room
    }
  }
  return program;
}

class WorkerCompiler final : public Compiler {
 public:
  WorkerCompiler(std::vector<std::string> argv, double deadline_seconds)
      : process_(std::move(argv)), deadline_seconds_(deadline_seconds) {}
  CompileResult compile(const CompileRequest& request) override {
    try {
      return process_.compile(request, deadline_seconds_);
    } catch (const Error& e) {  // no worker could be started: this compile fails, the pool goes on
      return failed_compile(request, e.what());
    }
  }

 private:
  WorkerProcess process_;
  double deadline_seconds_;
};

}  // namespace

std::vector<std::string> default_worker_argv(int device_ordinal, const std::filesystem::path& cubin_cache) {
  std::vector<std::string> argv{worker_program(), "__worker", "--device", std::to_string(device_ordinal)};
  if (!cubin_cache.empty()) argv.insert(argv.end(), {"--cubin-cache", cubin_cache.string()});
  return argv;
}

std::vector<std::string> default_compile_worker_argv() { return {worker_program(), "__worker", "--compile-only"}; }

std::unique_ptr<Compiler> make_worker_compiler(std::vector<std::string> argv, double deadline_seconds) {
  return std::make_unique<WorkerCompiler>(std::move(argv), deadline_seconds);
}

}  // namespace tiletune
