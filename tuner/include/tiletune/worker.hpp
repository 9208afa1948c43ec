// The process boundary between the parent (space, compile pool, database) and a GPU.
// A worker owns one device's CUDA context; the parent sends it one trial at a time over a
// pipe and gives each a deadline. A worker that hangs is killed, one that dies (an illegal
// address poisons a CUDA context for good) is restarted, and the trial in flight gets its
// status (`timeout` or `runtime_fault`); the sweep goes on.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tiletune/compile.hpp"
#include "tiletune/measure.hpp"
#include "tiletune/runner.hpp"

namespace tiletune {

/// Frames on the pipe: a 4-byte little-endian length, then a CBOR-encoded message (a map
/// with a "type": "trial", "copy", "compile", "result", "copy_result", "compile_result" or
/// "error").
/// Exposed for tests; a frame over 1 GiB or that does not decode is a protocol error.
/// encode_* return the CBOR payload (without the length); decode_* take it and throw Error
/// on anything malformed: not CBOR, another type, a missing field, a wrong type, an unknown
/// status or enum.
[[nodiscard]] std::string encode_request(const TrialRequest& request);
[[nodiscard]] TrialRequest decode_request(const std::string& payload);
[[nodiscard]] std::string encode_result(const TrialResult& result);
[[nodiscard]] TrialResult decode_result(const std::string& payload);

/// The largest payload a frame may carry.
inline constexpr std::uint32_t max_frame_bytes = 1u << 30;

/// The 4-byte length prefixed to `payload`. Throws Error over max_frame_bytes.
[[nodiscard]] std::string frame(const std::string& payload);
/// The payload length a 4-byte frame header announces. Throws Error over max_frame_bytes.
[[nodiscard]] std::uint32_t frame_payload_size(const unsigned char (&header)[4]);

/// The other messages, for the worker loop and tests.
[[nodiscard]] std::string encode_copy_request(std::uint64_t bytes);
[[nodiscard]] std::string encode_copy_result(const CopyCeiling& copy);
[[nodiscard]] std::string encode_error(const std::string& message);

/// A compile request as a compile worker receives it: the source travels by value.
struct CompileJob {
  KernelSource source;
  std::vector<std::string> options;
  std::string arch;
  std::string entry;
  /// The request over this job's source (valid while the job lives).
  [[nodiscard]] CompileRequest request() const { return CompileRequest{&source, options, arch, entry}; }
};
/// A compile request and a compile's outcome (cache_hit and cache_key are the parent's, not
/// sent).
[[nodiscard]] std::string encode_compile_request(const CompileRequest& request);
[[nodiscard]] std::string encode_compile_result(const CompileResult& result);

/// Any message, decoded and validated: `type` says which member holds it.
struct WorkerMessage {
  enum class Type { trial, copy, compile, result, copy_result, compile_result, error };
  Type type = Type::error;
  TrialRequest trial;            ///< Type::trial
  std::uint64_t copy_bytes = 0;  ///< Type::copy
  CompileJob compile;            ///< Type::compile
  TrialResult result;            ///< Type::result
  CopyCeiling copy;              ///< Type::copy_result
  CompileResult compiled;        ///< Type::compile_result
  std::string error;             ///< Type::error: what the worker found wrong
};
[[nodiscard]] WorkerMessage decode_message(const std::string& payload);

/// The worker's main loop: reads requests from in_fd, writes results to out_fd, until EOF, and
/// hands each trial to `handler` (TrialHandler, runner.hpp: the GPU measurement, or a fake in tests).
/// A "compile" request is compiled with compile_nvrtc in the worker (no GPU needed), whatever
/// the handler.
/// Returns the process exit code: 0 at EOF, 2 after a malformed frame (answered with an
/// "error" frame), 1 when a pipe fails. A handler that throws answers `runtime_fault` with
/// the message and the loop goes on. SIGPIPE is ignored from here on.
int serve_worker(TrialHandler& handler, int in_fd, int out_fd);

/// How a WorkerProcess hands its pipes to the worker: the child inherits two dedicated fds
/// (not stdin/stdout, so that driver messages and kernel printf cannot corrupt the
/// protocol) and finds their numbers in this environment variable as "IN,OUT": it reads
/// requests from IN and writes results to OUT. The worker's stdout and stderr both go to
/// the parent's stderr; its stdin is /dev/null.
inline constexpr const char* worker_fds_env = "TILETUNE_WORKER_FDS";

struct WorkerFds {
  int in_fd = -1;
  int out_fd = -1;
};

/// Reads $TILETUNE_WORKER_FDS, checks both fds are open and marks them close-on-exec.
/// Throws Error when it is unset or malformed. A worker's main does:
///   auto fds = worker_fds_from_env(); return serve_worker(handler, fds.in_fd, fds.out_fd);
[[nodiscard]] WorkerFds worker_fds_from_env();

/// The parent's handle on one worker process, started from `argv` (argv[0] is the program's
/// path, used as is: no PATH search). Not thread-safe: one caller at a time.
class WorkerProcess {
 public:
  explicit WorkerProcess(std::vector<std::string> argv);
  ~WorkerProcess();  ///< closes the pipe, then kills the worker if it does not exit
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  /// Runs one trial with request.deadline_seconds (infinity: no deadline; zero, negative or
  /// NaN: Error), counted from the request's write. Never throws for what the worker does:
  /// a hang is `timeout`, a death or garbage is `runtime_fault` (with the signal or exit
  /// code), and the next call starts a fresh worker. Throws Error only when no worker can
  /// be started at all.
  [[nodiscard]] TrialResult run(const TrialRequest& request);

  /// Measures a device-to-device copy of `bytes` in the worker. Throws Error when the
  /// worker fails it (the handler threw, it hung or died; the next call restarts it).
  [[nodiscard]] CopyCeiling measure_copy(std::uint64_t bytes, double deadline_seconds);

  /// Compiles one request in the worker (NVRTC there, no cache), under a deadline counted
  /// from the request's write. Never throws for what the worker does: a hang, a death or
  /// garbage is a transient failure naming it (not cached; the next call starts a fresh
  /// worker). Throws Error only when no worker can be started at all.
  [[nodiscard]] CompileResult compile(const CompileRequest& request, double deadline_seconds);

  /// Workers started so far (1 after the first trial; more after restarts).
  [[nodiscard]] int starts() const noexcept;
  [[nodiscard]] pid_t pid() const noexcept;  ///< 0 when none is running

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The argv that starts a tiletune GPU worker for a device: this executable (or
/// $TILETUNE_WORKER when set) with the hidden subcommand `__worker --device K`, and
/// `--cubin-cache DIR` (where the worker's own kernels are cached) unless `cubin_cache` is empty.
[[nodiscard]] std::vector<std::string> default_worker_argv(int device_ordinal,
                                                           const std::filesystem::path& cubin_cache = {});

/// The argv of a compile worker: this executable (or $TILETUNE_WORKER) with the hidden
/// subcommand `__worker --compile-only` (no CUDA context, compiles only).
[[nodiscard]] std::vector<std::string> default_compile_worker_argv();

/// How long one compile may take in a compile worker before it is killed (bounded work on
/// any kernel, a template bomb included): 300 s.
inline constexpr double compile_deadline_seconds = 300;

/// A Compiler that compiles in its own worker process started from `argv` (a CompilePool
/// factory: `[&] { return make_worker_compiler(argv); }`).
[[nodiscard]] std::unique_ptr<Compiler> make_worker_compiler(std::vector<std::string> argv,
                                                             double deadline_seconds = compile_deadline_seconds);

}  // namespace tiletune
