// The POSIX helpers of process_io.hpp: pipes, SIGPIPE kept off writes, reads and writes under a
// deadline, reaping.
#include "common/process_io.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "tiletune/error.hpp"

namespace tiletune::process_io {
namespace {

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

}  // namespace

std::string errno_text(int err) { return std::strerror(err); }

void UniqueFd::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

Pipe make_pipe(const char* purpose) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(fmt::format("pipe2 ({}): {}", purpose, errno_text(errno)));
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

void move_above_stdio(UniqueFd& fd) {
  if (fd.get() > 2) return;
  int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, 3);
  if (moved < 0) throw Error(fmt::format("fcntl(F_DUPFD_CLOEXEC): {}", errno_text(errno)));
  fd.reset(moved);
}

void set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) throw Error(fmt::format("fcntl(F_GETFL): {}", errno_text(errno)));
  if (::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) throw Error(fmt::format("fcntl(F_SETFL): {}", errno_text(errno)));
}

ChildPipes make_child_pipes(const std::string& who) {
  ChildPipes p{make_pipe((who + " input").c_str()), make_pipe((who + " output").c_str()),
               make_pipe((who + " exec status").c_str())};
  move_above_stdio(p.input.read);
  move_above_stdio(p.output.write);
  set_nonblocking(p.input.write.get());
  set_nonblocking(p.output.read.get());
  return p;
}

std::string describe_status(std::optional<int> status) {
  if (!status) return "ended (its exit status is unavailable)";
  if (WIFEXITED(*status)) return fmt::format("exited with status {}", WEXITSTATUS(*status));
  if (WIFSIGNALED(*status)) {
    int sig = WTERMSIG(*status);
    return fmt::format("killed by signal {} ({})", sig, signal_description(sig));
  }
  return fmt::format("stopped with wait status {:#x}", *status);
}

ScopedSigpipeBlock::ScopedSigpipeBlock() {
  ::sigemptyset(&pipe_only_);
  ::sigaddset(&pipe_only_, SIGPIPE);
  if (int rc = ::pthread_sigmask(SIG_BLOCK, &pipe_only_, &old_); rc != 0)
    throw Error(fmt::format("pthread_sigmask: {}", errno_text(rc)));
  sigset_t pending;
  was_pending_ = ::sigpending(&pending) == 0 && ::sigismember(&pending, SIGPIPE) == 1;
}

ScopedSigpipeBlock::~ScopedSigpipeBlock() {
  sigset_t pending;
  if (!was_pending_ && ::sigpending(&pending) == 0 && ::sigismember(&pending, SIGPIPE) == 1) {
    timespec zero{};
    while (::sigtimedwait(&pipe_only_, nullptr, &zero) < 0 && errno == EINTR) {}
  }
  ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

bool wait_ready(int fd, short events, const Deadline& deadline, const char* peer) {
  for (;;) {
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, deadline.poll_timeout_ms());
    if (rc < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("poll on the pipe of {}: {}", peer, errno_text(errno)));
    }
    if (rc > 0) return true;
    if (deadline.passed()) return false;
  }
}

IoOutcome write_all(int fd, const std::string& data, const Deadline& deadline, const char* peer) {
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
    if (errno != EAGAIN && errno != EWOULDBLOCK) throw Error(fmt::format("write to {}: {}", peer, errno_text(errno)));
    if (!wait_ready(fd, POLLOUT, deadline, peer)) return IoOutcome::timeout;
  }
  return IoOutcome::ok;
}

IoOutcome read_some(int fd, char* out, std::size_t n, std::size_t& got, const Deadline& deadline, const char* peer) {
  got = 0;
  for (;;) {
    ssize_t r = ::read(fd, out, n);
    if (r > 0) {
      got = static_cast<std::size_t>(r);
      return IoOutcome::ok;
    }
    if (r == 0) return IoOutcome::closed;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) throw Error(fmt::format("read from {}: {}", peer, errno_text(errno)));
    if (!wait_ready(fd, POLLIN, deadline, peer)) return IoOutcome::timeout;
  }
}

IoOutcome read_exact(int fd, char* out, std::size_t n, const Deadline& deadline, const char* peer) {
  std::size_t done = 0;
  while (done < n) {
    std::size_t got = 0;
    if (const IoOutcome o = read_some(fd, out + done, n - done, got, deadline, peer); o != IoOutcome::ok) return o;
    done += got;
  }
  return IoOutcome::ok;
}

void report_exec_failure(int status_fd, int step) noexcept {
  const ExecFailure f{step, errno};
  ssize_t ignored = ::write(status_fd, &f, sizeof f);
  (void)ignored;
  ::_exit(127);
}

std::optional<ExecFailure> read_exec_failure(int status_fd) {
  ExecFailure failure;
  std::size_t got = 0;
  auto* bytes = reinterpret_cast<char*>(&failure);
  while (got < sizeof failure) {
    ssize_t n = ::read(status_fd, bytes + got, sizeof failure - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(fmt::format("read (exec status): {}", errno_text(errno)));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got == 0) return std::nullopt;
  if (got < sizeof failure) failure.step = -1;
  return failure;
}

bool ChildProcess::try_reap(std::optional<int>& status) noexcept {
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

std::optional<int> ChildProcess::kill_and_reap() noexcept {
  if (::kill(own_group_ ? -pid_ : pid_, SIGKILL) != 0 && errno != ESRCH)
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

std::optional<int> ChildProcess::reap_within(Clock::duration grace, bool* killed) noexcept {
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

}  // namespace tiletune::process_io
