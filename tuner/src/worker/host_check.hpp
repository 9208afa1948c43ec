// The host check of `verify: {command: [...]}` (docs/reference/space.md, "Checks"): a program the GPU worker starts
// at the first trial that needs it and keeps for its life. For each trial whose outputs passed
// the GPU comparisons, the worker writes the buffers it reads (all by default) as .npy files into a private directory
// and sends the program one line of JSON naming them; the program answers one line, ok or not ok
// with a reason. A program that cannot start, exits, closes its stdout, answers something else or
// nothing within the trial's deadline has failed, not the candidate (HostCheckError). Host code
// only (no CUDA): the protocol is tested without a GPU.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tiletune/error.hpp"
#include "tiletune/measure.hpp"

namespace tiletune {

/// The fields of the request and of the reply, declared once:
///   request: {"kernel": K, "problem": {SIZE: int}, "config": {PARAM: int | real | "text"},
///             "buffers": {NAME: {"path": FILE, "type": "float", "count": N}}}   (buffer order)
///   reply:   {"ok": true} or {"ok": false, "detail": "why"} ("detail" optional)
namespace host_check_field {
inline constexpr const char* kernel = "kernel";
inline constexpr const char* problem = "problem";
inline constexpr const char* config = "config";
inline constexpr const char* buffers = "buffers";
inline constexpr const char* path = "path";
inline constexpr const char* type = "type";
inline constexpr const char* count = "count";
inline constexpr const char* ok = "ok";
inline constexpr const char* detail = "detail";
}  // namespace host_check_field

/// The longest reply read, its newline excluded (64 KiB): a longer one is a protocol error.
inline constexpr std::size_t host_check_max_reply_bytes = std::size_t{64} << 10;
/// The most characters of a not-ok reply's detail a trial keeps (escaped).
inline constexpr std::size_t host_check_max_detail_chars = 2000;
/// The most bytes of a bad answer a message quotes (escaped).
inline constexpr std::size_t host_check_quoted_bytes = 200;

/// The environment variable that names the directory a host check's files go under, instead of
/// shared memory or $TMPDIR (HostCheck::directory).
inline constexpr const char* host_check_dir_env = "TILETUNE_HOST_CHECK_DIR";

/// One buffer as the request names it: the .npy file written for it.
struct HostCheckFile {
  std::string name;
  ElementType type = ElementType::f32;
  std::uint64_t count = 0;
  std::filesystem::path path;
};

/// Writes a buffer's elements (`data`, count x element size bytes, as downloaded) as DIR/NAME.npy
/// with the project's .npy writer, and returns its entry. Throws Error for a name that is not a
/// plain file name or data that is not the buffer's size, or when the file cannot be written.
[[nodiscard]] HostCheckFile write_host_check_file(const std::filesystem::path& dir, const BufferPlan& buffer,
                                                  std::span<const std::byte> data);

/// The request line of a trial (one line of JSON and '\n'): its kernel, its problem sizes, its
/// config (integer and real params as numbers, text params as strings) and the files, in order.
[[nodiscard]] std::string host_check_request(const TrialRequest& request, const std::vector<HostCheckFile>& files);

/// The program's verdict on one trial.
struct HostCheckVerdict {
  bool ok = false;
  std::string detail;  ///< why not (escaped, at most host_check_max_detail_chars); may be empty
};

/// Parses one reply line (without its newline): a JSON object with a boolean "ok" and, when
/// present, a string (or null) "detail"; other keys are ignored. Throws Error saying what is
/// wrong with anything else.
[[nodiscard]] HostCheckVerdict parse_host_check_reply(std::string_view line);

/// The host check failed, not the candidate: the message names the command and what it did.
class HostCheckError : public Error {
 public:
  using Error::Error;
};

/// A host check program and the directory its files go to. The program is started at the first
/// check(), its stdin and stdout pipes to this process, its stderr this process's, its working
/// directory the command's, in a process group of its own that every kill here ends whole; it
/// dies with this process (PR_SET_PDEATHSIG: a worker killed for an overrun takes its check
/// along, though not what the check started itself). Not thread-safe; the thread that calls
/// check() first must live as long as the program should (the death signal follows the thread
/// that started it).
class HostCheck {
 public:
  explicit HostCheck(HostCommand command);
  /// Closes the program's stdin, gives it 1 s to exit, then kills it; removes the directory.
  ~HostCheck();
  HostCheck(const HostCheck&) = delete;
  HostCheck& operator=(const HostCheck&) = delete;

  [[nodiscard]] const HostCommand& command() const noexcept;
  /// The private directory for a trial's files of `bytes` bytes in all: one under
  /// $TILETUNE_HOST_CHECK_DIR where that is set; else one in shared memory (/dev/shm, a RAM file
  /// system: the files never reach a disk) when that has room for them and 64 MiB more, else one
  /// under the system temp dir ($TMPDIR). Each is made at its first use and removed with
  /// everything in it by the destructor. Throws Error.
  [[nodiscard]] const std::filesystem::path& directory(std::uint64_t bytes);
  /// Sends one request line (host_check_request) and reads the one line answered, within
  /// `timeout_seconds` (infinity: no limit). Throws HostCheckError, naming the command, when the
  /// program cannot be started, has exited or closed its stdout, wrote more than the answer,
  /// answered a line that is not a verdict or longer than host_check_max_reply_bytes, or
  /// nothing in time; the program is then killed, and every later call throws the same error.
  [[nodiscard]] HostCheckVerdict check(const std::string& request_line, double timeout_seconds);
  /// The program's pid; 0 before the first check and after a failure.
  [[nodiscard]] pid_t pid() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tiletune
