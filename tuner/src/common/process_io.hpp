// The POSIX pieces of talking to a child process over pipes under a deadline, shared by the
// parent's side of a GPU worker (worker_process.cpp) and the worker's host check
// (host_check.cpp): owned file descriptors, close-on-exec pipes, writes that meet EPIPE rather
// than SIGPIPE, reads bounded by a deadline, and a child that is reaped exactly once (killed
// when it does not end in time) with its wait status in words.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>

namespace tiletune::process_io {

using Clock = std::chrono::steady_clock;

/// strerror's text for an errno value.
[[nodiscard]] std::string errno_text(int err);

/// Owns one file descriptor.
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
  /// Linux releases the fd even when close fails (EINTR included), so it is never retried.
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

/// A pipe whose ends are close-on-exec. Throws Error naming `purpose`.
[[nodiscard]] Pipe make_pipe(const char* purpose);
/// A child dup2s its pipe ends onto 0 and 1; an end must not already sit there (it could when
/// this process runs with stdin or stdout closed): moves it to an fd above 2.
void move_above_stdio(UniqueFd& fd);
void set_nonblocking(int fd);

/// The pipes of a child started with fork and exec: one it reads (`input`), one it writes
/// (`output`), and `status`, on which it reports an exec that failed (report_exec_failure). The
/// child's ends sit above stdio; this process's ends of input and output are non-blocking.
struct ChildPipes {
  Pipe input;
  Pipe output;
  Pipe status;
};
/// Throws Error naming `who` ("worker", "host check").
[[nodiscard]] ChildPipes make_child_pipes(const std::string& who);

/// "killed by signal 11 (Segmentation fault)" or "exited with status 3"; for nullopt (the status
/// was lost: SIGCHLD ignored by the embedding program reaps children behind our back) "ended
/// (its exit status is unavailable)".
[[nodiscard]] std::string describe_status(std::optional<int> status);

/// Blocks SIGPIPE on this thread while we write to a child that may be dead, so that the write
/// fails with EPIPE instead of killing this process; a SIGPIPE raised meanwhile is consumed
/// before the old mask comes back. No process-wide disposition is touched.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock();
  ~ScopedSigpipeBlock();
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t pipe_only_{};
  sigset_t old_{};
  bool was_pending_ = false;
};

/// A point in time after which we stop waiting (none: wait for ever).
class Deadline {
 public:
  /// `seconds` from now; infinity: none.
  explicit Deadline(double seconds) {
    if (!std::isinf(seconds))
      at_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }
  /// For poll(): rounded up so that we never wake before the deadline; -1 for none.
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

/// Waits until fd is ready for `events` (or has an error or hang-up, which the next read or
/// write reports). False when the deadline passes first. Throws Error naming `peer` ("the
/// worker") when poll fails.
[[nodiscard]] bool wait_ready(int fd, short events, const Deadline& deadline, const char* peer);

enum class IoOutcome { ok, closed, timeout };

/// Writes all of data to a non-blocking pipe. `closed`: the reader is gone (EPIPE).
[[nodiscard]] IoOutcome write_all(int fd, const std::string& data, const Deadline& deadline, const char* peer);
/// Reads exactly n bytes from a non-blocking pipe. `closed`: EOF before n bytes (the writer
/// closed its end: it died, most likely).
[[nodiscard]] IoOutcome read_exact(int fd, char* out, std::size_t n, const Deadline& deadline, const char* peer);
/// Reads what is there, at most n bytes, waiting for some until the deadline; `got` is how many.
/// `closed`: EOF.
[[nodiscard]] IoOutcome read_some(int fd, char* out, std::size_t n, std::size_t& got, const Deadline& deadline,
                                  const char* peer);

/// Why a child could not exec, as it reports on a close-on-exec status pipe: the step that
/// failed (an index into the caller's list of steps) and its errno.
struct ExecFailure {
  int step = 0;
  int error = 0;
};
/// In the child, between fork and exec (async-signal-safe): writes `step` and errno to
/// `status_fd` and exits with status 127.
[[noreturn]] void report_exec_failure(int status_fd, int step) noexcept;
/// In the parent, once its own copy of the status pipe's write end is closed: nullopt when the
/// pipe closed empty (the exec happened), else the failure (step -1 when it came garbled).
/// Throws Error when the read fails.
[[nodiscard]] std::optional<ExecFailure> read_exec_failure(int status_fd);

/// A child process started with fork: reaped exactly once, by these calls. `own_group`: the
/// child leads a process group of its own (setpgid), and a kill is for the whole group, so that
/// what it started itself ends with it.
class ChildProcess {
 public:
  explicit ChildProcess(pid_t pid, bool own_group = false) noexcept : pid_(pid), own_group_(own_group) {}
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  /// True when the child has ended and is now reaped; `status` gets its wait status (none when
  /// the embedding program reaped it behind our back, e.g. with SIGCHLD ignored).
  [[nodiscard]] bool try_reap(std::optional<int>& status) noexcept;
  /// Kills the child (SIGKILL; its group when it leads one) and reaps it; returns its wait status.
  std::optional<int> kill_and_reap() noexcept;
  /// Gives the child `grace` to end by itself, then kills it; returns its wait status. `killed`
  /// says whether it had to be killed.
  std::optional<int> reap_within(Clock::duration grace, bool* killed = nullptr) noexcept;

 private:
  pid_t pid_;  // 0 once reaped
  bool own_group_;
};

}  // namespace tiletune::process_io
