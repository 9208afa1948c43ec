// The worker's side of the pipe: a loop that reads one framed request at a time, hands it to
// the TrialHandler (the GPU measurement, or a fake in tests) or, for a compile, to NVRTC, and
// writes the answer. The
// worker is disposable, the parent is not: a handler that throws still gets an answer
// (`runtime_fault` with the message) and the loop goes on; a frame that does not decode
// means the two sides disagree, so the worker says so in an "error" frame and exits.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "tiletune/error.hpp"
#include "tiletune/worker.hpp"

namespace tiletune {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitPipeFailed = 1;
constexpr int kExitMalformed = 2;
constexpr int kExitContextLost = 3;  // after answering the trial whose kernel faulted

enum class ReadOutcome { ok, eof, truncated, failed };

// Reads exactly n bytes (blocking fd), retrying partial reads and EINTR. `eof` only when
// nothing at all was read; an EOF part-way is `truncated`.
ReadOutcome read_exact(int fd, char* out, std::size_t n, std::string& error) {
  std::size_t done = 0;
  while (done < n) {
    ssize_t got = ::read(fd, out + done, n - done);
    if (got < 0) {
      if (errno == EINTR) continue;
      error = fmt::format("read: {}", std::strerror(errno));
      return ReadOutcome::failed;
    }
    if (got == 0) return done == 0 ? ReadOutcome::eof : ReadOutcome::truncated;
    done += static_cast<std::size_t>(got);
  }
  return ReadOutcome::ok;
}

// Writes all of `data`, retrying partial writes and EINTR. False (with the reason) on error;
// with SIGPIPE ignored, a parent that is gone shows up here as EPIPE.
bool write_all(int fd, const std::string& data, std::string& error) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t put = ::write(fd, data.data() + done, data.size() - done);
    if (put < 0) {
      if (errno == EINTR) continue;
      error = fmt::format("write: {}", std::strerror(errno));
      return false;
    }
    done += static_cast<std::size_t>(put);
  }
  return true;
}

void report(const std::string& what) { std::fprintf(stderr, "tiletune worker: %s\n", what.c_str()); }

// Tells the parent what was wrong with its frame, then the loop exits with kExitMalformed.
int reject(int out_fd, const std::string& why) {
  report(why);
  std::string error;
  if (!write_all(out_fd, frame(encode_error(why)), error)) report(error);
  return kExitMalformed;
}

TrialResult fault(std::uint64_t id, std::string detail) {
  TrialResult r;
  r.id = id;
  r.status = TrialStatus::runtime_fault;
  r.detail = std::move(detail);
  return r;
}

// Runs fn, turning an exception into its message.
template <class Fn>
std::optional<std::string> run_guarded(Fn&& fn) {
  try {
    fn();
    return std::nullopt;
  } catch (const std::exception& e) { return std::string(e.what()); } catch (...) {
    return std::string("unknown exception");
  }
}

std::optional<int> parse_fd(std::string_view s) {
  int fd = -1;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), fd);
  if (ec != std::errc() || end != s.data() + s.size() || fd < 0) return std::nullopt;
  return fd;
}

}  // namespace

int serve_worker(TrialHandler& handler, int in_fd, int out_fd) {
  // A parent that died must not kill us silently mid-write: we see EPIPE and exit.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigemptyset(&ignore.sa_mask);
  if (::sigaction(SIGPIPE, &ignore, nullptr) != 0) report(fmt::format("sigaction(SIGPIPE): {}", std::strerror(errno)));

  std::string error;
  for (;;) {
    unsigned char header[4];
    switch (read_exact(in_fd, reinterpret_cast<char*>(header), sizeof header, error)) {
      case ReadOutcome::ok: break;
      case ReadOutcome::eof: return kExitOk;
      case ReadOutcome::truncated: return reject(out_fd, "truncated frame header");
      case ReadOutcome::failed: report(error); return kExitPipeFailed;
    }
    std::uint32_t size = 0;
    if (auto why = run_guarded([&] { size = frame_payload_size(header); })) return reject(out_fd, *why);
    // Grown as bytes arrive, so that a lying header cannot make us allocate a gigabyte.
    std::string payload;
    constexpr std::size_t kChunk = 1 << 20;
    while (payload.size() < size) {
      std::size_t old = payload.size();
      std::size_t step = std::min<std::size_t>(kChunk, size - old);
      payload.resize(old + step);
      switch (read_exact(in_fd, payload.data() + old, step, error)) {
        case ReadOutcome::ok: break;
        case ReadOutcome::eof:
        case ReadOutcome::truncated:
          return reject(out_fd, fmt::format("truncated frame: EOF before its {} bytes", size));
        case ReadOutcome::failed: report(error); return kExitPipeFailed;
      }
    }

    WorkerMessage message;
    if (auto why = run_guarded([&] { message = decode_message(payload); })) return reject(out_fd, *why);

    std::string answer;
    switch (message.type) {
      case WorkerMessage::Type::trial: {
        const TrialRequest& request = message.trial;
        TrialResult result;
        if (auto why = run_guarded([&] { result = handler.run_trial(request); }))
          result = fault(request.id, std::move(*why));
        result.id = request.id;  // the parent pairs answers with requests by id
        answer = encode_result(result);
        break;
      }
      case WorkerMessage::Type::copy: {
        CopyCeiling copy;
        // A failed copy answers like a failed trial (id 0): the parent raises it as an Error.
        if (auto why = run_guarded([&] { copy = handler.measure_copy(message.copy_bytes); }))
          answer = encode_result(fault(0, "measure_copy: " + *why));
        else
          answer = encode_copy_result(copy);
        break;
      }
      case WorkerMessage::Type::compile: {
        CompileResult compiled;
        // NVRTC that cannot be used at all (compile_nvrtc throws) is a failure of this compile
        // that may not repeat elsewhere: transient, so that it is not cached.
        if (auto why = run_guarded([&] { compiled = compile_nvrtc(message.compile.request()); })) {
          compiled = CompileResult{};
          compiled.error = "compile worker: " + *why;
          compiled.transient = true;
        }
        answer = encode_compile_result(compiled);
        break;
      }
      case WorkerMessage::Type::result:
      case WorkerMessage::Type::copy_result:
      case WorkerMessage::Type::compile_result:
      case WorkerMessage::Type::error:
        return reject(out_fd, "a worker accepts only 'trial', 'copy' and 'compile' messages");
    }
    if (!write_all(out_fd, frame(answer), error)) {
      report(error);
      return kExitPipeFailed;
    }
    // A faulted kernel poisons the CUDA context for good: only a new process recovers.
    if (handler.context_lost()) return kExitContextLost;
  }
}

WorkerFds worker_fds_from_env() {
  const char* value = std::getenv(worker_fds_env);
  if (value == nullptr)
    throw Error(fmt::format("{} is not set: a worker is started by tiletune, not by hand", worker_fds_env));
  std::string_view s(value);
  std::size_t comma = s.find(',');
  std::optional<int> in = comma == std::string_view::npos ? std::nullopt : parse_fd(s.substr(0, comma));
  std::optional<int> out = comma == std::string_view::npos ? std::nullopt : parse_fd(s.substr(comma + 1));
  if (!in || !out || *in == *out)
    throw Error(fmt::format("{}='{}': expected two different fd numbers \"IN,OUT\"", worker_fds_env, s));
  for (int fd : {*in, *out}) {
    int flags = ::fcntl(fd, F_GETFD);
    if (flags < 0)
      throw Error(fmt::format("{}: fcntl(F_GETFD) on fd {}: {}", worker_fds_env, fd, std::strerror(errno)));
    // Whatever the worker starts itself must not hold our pipes open.
    if (::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0)
      throw Error(fmt::format("{}: fcntl(F_SETFD) on fd {}: {}", worker_fds_env, fd, std::strerror(errno)));
  }
  return WorkerFds{*in, *out};
}

}  // namespace tiletune
