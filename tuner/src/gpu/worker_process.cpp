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

#include "tiletune/error.hpp"
#include "tiletune/worker.hpp"

extern char** environ;  // NOLINT: POSIX; copied into the worker's environment

namespace tiletune {
namespace {

using Clock = std::chrono::steady_clock;

// How long a worker may take to exit on its own (EOF on its pipe, or after dying) before it
// is killed.
constexpr auto kExitGrace = std::chrono::seconds(2);

std::string errno_text(int err = errno) { return std::strerror(err); }

// Owns one file descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  [[nodiscard]] int get() const noexcept { return fd_; }
  // Linux releases the fd even when close fails (EINTR included), so it is never retried.
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

Pipe make_pipe(const char* purpose) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(fmt::format("pipe2 ({}): {}", purpose, errno_text()));
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// The child dup2s onto 0 and 1; an inherited pipe end must not sit there (it could when the
// parent runs with stdin or stdout closed).
void move_above_stdio(UniqueFd& fd) {
  if (fd.get() > 2) return;
  int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, 3);
  if (moved < 0) throw Error(fmt::format("fcntl(F_DUPFD_CLOEXEC): {}", errno_text()));
  fd.reset(moved);
}

void set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) throw Error(fmt::format("fcntl(F_GETFL): {}", errno_text()));
  if (::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) throw Error(fmt::format("fcntl(F_SETFL): {}", errno_text()));
}

// glibc's descriptions, fixed here: strsignal is translated by the locale and sigdescr_np is
// missing from older C libraries.
const char* signal_description(int sig) {
  switch (sig) {
    case SIGSEGV: return "Segmentation fault";
    case SIGBUS: return "Bus error";
    case SIGFPE: return "Floating point exception";
    case SIGILL: return "Illegal instruction";
    case SIGABRT: return "Aborted";
    case SIGKILL: return "Killed";
    case SIGTERM: return "Terminated";
    case SIGINT: return "Interrupt";
    case SIGHUP: return "Hangup";
    case SIGQUIT: return "Quit";
    case SIGTRAP: return "Trace/breakpoint trap";
    case SIGPIPE: return "Broken pipe";
    case SIGALRM: return "Alarm clock";
    case SIGXCPU: return "CPU time limit exceeded";
    case SIGXFSZ: return "File size limit exceeded";
    case SIGSYS: return "Bad system call";
    case SIGUSR1: return "User defined signal 1";
    case SIGUSR2: return "User defined signal 2";
    default: return "unknown signal";
  }
}

// "killed by signal 11 (Segmentation fault)" or "exited with status 3"; nullopt when the
// status was lost (SIGCHLD ignored by the embedding program reaps children behind our back).
std::string describe_status(std::optional<int> status) {
  if (!status) return "ended (its exit status is unavailable)";
  if (WIFEXITED(*status)) return fmt::format("exited with status {}", WEXITSTATUS(*status));
  if (WIFSIGNALED(*status)) {
    int sig = WTERMSIG(*status);
    return fmt::format("killed by signal {} ({})", sig, signal_description(sig));
  }
  return fmt::format("stopped with wait status {:#x}", *status);
}

// Blocks SIGPIPE on this thread while we write to a worker that may be dead, so that the
// write fails with EPIPE instead of killing the parent; a SIGPIPE raised meanwhile is
// consumed before the old mask comes back. No process-wide disposition is touched.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    ::sigemptyset(&pipe_only_);
    ::sigaddset(&pipe_only_, SIGPIPE);
    if (int rc = ::pthread_sigmask(SIG_BLOCK, &pipe_only_, &old_); rc != 0)
      throw Error(fmt::format("pthread_sigmask: {}", errno_text(rc)));
    sigset_t pending;
    was_pending_ = ::sigpending(&pending) == 0 && ::sigismember(&pending, SIGPIPE) == 1;
  }
  ~ScopedSigpipeBlock() {
    sigset_t pending;
    if (!was_pending_ && ::sigpending(&pending) == 0 && ::sigismember(&pending, SIGPIPE) == 1) {
      timespec zero{};
      while (::sigtimedwait(&pipe_only_, nullptr, &zero) < 0 && errno == EINTR) {
      }
    }
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t pipe_only_{};
  sigset_t old_{};
  bool was_pending_ = false;
};

// A point in time after which we stop waiting (none: wait for ever).
class Deadline {
 public:
  explicit Deadline(double seconds) {
    if (!std::isinf(seconds))
      at_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }
  // For poll(): rounded up so that we never wake before the deadline; -1 for none.
  [[nodiscard]] int poll_timeout_ms() const {
    if (!at_) return -1;
    auto left = *at_ - Clock::now();
    if (left <= Clock::duration::zero()) return 0;
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    return ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
  }
  [[nodiscard]] bool passed() const { return at_ && Clock::now() >= *at_; }

 private:
  std::optional<Clock::time_point> at_;
};

// Waits until fd is ready for `events` (or has an error or hang-up, which the next read or
// write reports). False when the deadline passes first.
bool wait_ready(int fd, short events, const Deadline& deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, deadline.poll_timeout_ms());
    if (rc < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("poll on the worker pipe: {}", errno_text()));
    }
    if (rc > 0) return true;
    if (deadline.passed()) return false;
  }
}

enum class IoOutcome { ok, closed, timeout };

// Writes all of data to the worker's (non-blocking) request pipe. `closed`: the worker is
// gone (EPIPE).
IoOutcome write_all(int fd, const std::string& data, const Deadline& deadline) {
  ScopedSigpipeBlock no_sigpipe;
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t put = ::write(fd, data.data() + done, data.size() - done);
    if (put >= 0) {
      done += static_cast<std::size_t>(put);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EPIPE) return IoOutcome::closed;
    if (errno != EAGAIN && errno != EWOULDBLOCK) throw Error(fmt::format("write to the worker: {}", errno_text()));
    if (!wait_ready(fd, POLLOUT, deadline)) return IoOutcome::timeout;
  }
  return IoOutcome::ok;
}

// Reads exactly n bytes from the worker's (non-blocking) result pipe. `closed`: EOF before
// n bytes, the worker closed its end (it died, most likely).
IoOutcome read_exact(int fd, char* out, std::size_t n, const Deadline& deadline) {
  std::size_t done = 0;
  while (done < n) {
    ssize_t got = ::read(fd, out + done, n - done);
    if (got > 0) {
      done += static_cast<std::size_t>(got);
      continue;
    }
    if (got == 0) return IoOutcome::closed;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) throw Error(fmt::format("read from the worker: {}", errno_text()));
    if (!wait_ready(fd, POLLIN, deadline)) return IoOutcome::timeout;
  }
  return IoOutcome::ok;
}

// One running worker: its pid and the parent's ends of the two pipes. Destroying it closes
// the request pipe (the worker sees EOF and exits), waits a little, then kills; it is always
// reaped.
class Child {
 public:
  Child(pid_t pid, UniqueFd requests, UniqueFd results) noexcept
      : pid_(pid), requests_(std::move(requests)), results_(std::move(results)) {}
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    requests_.reset();
    if (pid_ > 0) (void)reap_within(kExitGrace);
  }

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  [[nodiscard]] int request_fd() const noexcept { return requests_.get(); }
  [[nodiscard]] int result_fd() const noexcept { return results_.get(); }

  // True when the worker has ended and is now reaped; `status` gets its wait status (none
  // when the embedding program reaped it behind our back, e.g. with SIGCHLD ignored).
  [[nodiscard]] bool try_reap(std::optional<int>& status) noexcept {
    for (;;) {
      int raw = 0;
      pid_t r = ::waitpid(pid_, &raw, WNOHANG);
      if (r == pid_) {
        pid_ = 0;
        status = raw;
        return true;
      }
      if (r == 0) return false;
      if (errno == EINTR) continue;
      pid_ = 0;  // ECHILD
      status.reset();
      return true;
    }
  }

  // Kills the worker and reaps it; returns its wait status.
  std::optional<int> kill_and_reap() noexcept {
    if (::kill(pid_, SIGKILL) != 0 && errno != ESRCH)
      std::fprintf(stderr, "tiletune: kill(%d, SIGKILL): %s\n", static_cast<int>(pid_), std::strerror(errno));
    for (;;) {
      int status = 0;
      pid_t r = ::waitpid(pid_, &status, 0);
      if (r == pid_) {
        pid_ = 0;
        return status;
      }
      if (r < 0 && errno == EINTR) continue;
      pid_ = 0;
      return std::nullopt;
    }
  }

  // Gives the worker `grace` to end by itself, then kills it; returns its wait status.
  // `killed` says whether it had to be killed.
  std::optional<int> reap_within(Clock::duration grace, bool* killed = nullptr) noexcept {
    auto until = Clock::now() + grace;
    if (killed != nullptr) *killed = false;
    for (;;) {
      if (std::optional<int> status; try_reap(status)) return status;
      if (Clock::now() >= until) {
        if (killed != nullptr) *killed = true;
        return kill_and_reap();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

 private:
  pid_t pid_;
  UniqueFd requests_;
  UniqueFd results_;
};

// What the child reports on the status pipe when it cannot exec the worker.
struct ChildFailure {
  int step = 0;
  int error = 0;
};
constexpr const char* kChildSteps[] = {"sigprocmask", "dup2(stdin)", "dup2(stdout)", "fcntl(F_SETFD)", "execve"};

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
  auto fail = [&](int step) {
    ChildFailure f{step, errno};
    ssize_t ignored = ::write(s.status_fd, &f, sizeof f);
    (void)ignored;
    ::_exit(127);
  };
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
  Pipe requests = make_pipe("worker requests");
  Pipe results = make_pipe("worker results");
  Pipe status = make_pipe("worker exec status");
  move_above_stdio(requests.read);
  move_above_stdio(results.write);
  set_nonblocking(requests.write.get());
  set_nonblocking(results.read.get());
  UniqueFd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (devnull.get() < 0) throw Error(fmt::format("open /dev/null: {}", errno_text()));

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
  if (pid < 0) throw Error(fmt::format("fork (starting the worker {}): {}", argv[0], errno_text()));
  if (pid == 0) exec_child(setup);

  auto child = std::make_unique<Child>(pid, std::move(requests.write), std::move(results.read));
  // Our copies of the child's ends must go, or we would never see EOF when it dies.
  requests.read.reset();
  results.write.reset();
  status.write.reset();

  // The status pipe closes on a successful exec; otherwise it carries why not.
  ChildFailure failure;
  std::size_t got = 0;
  auto* bytes = reinterpret_cast<char*>(&failure);
  while (got < sizeof failure) {
    ssize_t n = ::read(status.read.get(), bytes + got, sizeof failure - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      (void)child->kill_and_reap();
      throw Error(fmt::format("read (exec status of the worker {}): {}", argv[0], errno_text(err)));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got == 0) return child;
  (void)child->kill_and_reap();
  if (got < sizeof failure || failure.step < 0 || failure.step >= static_cast<int>(std::size(kChildSteps)))
    throw Error(fmt::format("cannot start the worker {}: it failed before exec", argv[0]));
  throw Error(fmt::format("cannot start the worker {}: {}: {}", argv[0], kChildSteps[failure.step],
                          errno_text(failure.error)));
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

      switch (write_all(child->request_fd(), frame(payload), deadline)) {
        case IoOutcome::ok: break;
        case IoOutcome::closed: return died();
        case IoOutcome::timeout: return timed_out();
      }
      unsigned char header[4];
      switch (read_exact(child->result_fd(), reinterpret_cast<char*>(header), sizeof header, deadline)) {
        case IoOutcome::ok: break;
        case IoOutcome::closed: return died();
        case IoOutcome::timeout: return timed_out();
      }
      std::uint32_t size = 0;
      try {
        size = frame_payload_size(header);
      } catch (const Error& e) {
        return garbage(e.what());
      }
      // Grown as bytes arrive: a lying header must not make the parent allocate a gigabyte.
      std::string answer;
      constexpr std::size_t kChunk = 1 << 20;
      while (answer.size() < size) {
        std::size_t old = answer.size();
        answer.resize(old + std::min<std::size_t>(kChunk, size - old));
        switch (read_exact(child->result_fd(), answer.data() + old, answer.size() - old, deadline)) {
          case IoOutcome::ok: break;
          case IoOutcome::closed: return died();
          case IoOutcome::timeout: return timed_out();
        }
      }
      try {
        out.answer = decode_message(answer);
      } catch (const Error& e) {
        return garbage(e.what());
      }
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
    return failed(request.id, TrialStatus::runtime_fault,
                  "worker sent a malformed answer: a copy result for a trial");
  }
  if (m.result.id != request.id) {
    impl_->discard();
    return failed(request.id, TrialStatus::runtime_fault,
                  fmt::format("worker sent a malformed answer: the result of trial {} for trial {}",
                              m.result.id, request.id));
  }
  if (m.result.status == TrialStatus::runtime_fault) impl_->settle_after_fault();
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
      if (n < 0) throw Error(fmt::format("readlink /proc/self/exe: {}", errno_text()));
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
