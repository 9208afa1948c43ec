// Helpers shared by the tests: temporary directories, running the CLI, paths to data.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "tiletune/device.hpp"
#include "tiletune/space.hpp"

namespace tiletune::testing {

/// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  /// Writes text to path()/name (creating folders) and returns the full path.
  std::filesystem::path write(const std::string& name, const std::string& text) const;

 private:
  std::filesystem::path path_;
};

/// An NVIDIA H200 as list_devices() describes one (sm_90, 132 SMs, its launch and per-SM
/// limits, 141 GiB, 60 MiB of L2, a CUDA 13.0 driver), without a uuid: for tests with no GPU.
[[nodiscard]] DeviceInfo h200_device_info();

/// The project's root (where configs/ and kernels/ are).
[[nodiscard]] std::filesystem::path source_dir();
/// tests/ in the source tree.
[[nodiscard]] std::filesystem::path test_data_dir();
/// The built `tiletune` executable.
[[nodiscard]] std::filesystem::path cli_path();
/// A shipped space, configs/NAME.yaml, loaded.
[[nodiscard]] Space shipped_space(const std::string& name);
/// The H200 recording of a shipped space: tests/data/landscapes/KERNEL.csv.
[[nodiscard]] std::filesystem::path shipped_landscape(const std::string& kernel);
/// A path in single quotes, for a command line (the tests' paths hold no quote).
[[nodiscard]] std::string shell_quoted(const std::filesystem::path& path);

/// Output and exit status of a command run through /bin/sh.
struct CommandResult {
  int exit_code = -1;  ///< -1 when killed by a signal
  int signal = 0;
  std::string output;  ///< stdout and stderr together
};
[[nodiscard]] CommandResult run_command(const std::string& command);

/// Reads a whole file.
[[nodiscard]] std::string read_file(const std::filesystem::path& path);

}  // namespace tiletune::testing

namespace tiletune::testing {

/// The SHA-256 of a file's bytes in hex, or "absent" when there is no such file.
[[nodiscard]] std::string sha256_of_file(const std::filesystem::path& path);

/// sha256_of_file of a cache and each of its side files (-wal, -shm, -journal), one line each:
/// what a command that failed (or only read) must leave exactly as it was.
[[nodiscard]] std::string cache_files_digest(const std::filesystem::path& cache);

/// Every entry under dir (recursively, links not followed), one line each in name order: its
/// relative path, its kind (file, dir, link -> target, fifo, other), its permission bits and, for
/// a regular file, the SHA-256 of its bytes. Two equal digests: a command changed nothing there
/// (no file written, renamed, re-moded or left behind). For hostile tests (issue 22).
[[nodiscard]] std::string tree_digest(const std::filesystem::path& dir);

/// A character device to write to, as /dev/null (minor 3) or /dev/full (minor 7) is: a node of its
/// own at dir/name where this process may make one (root), so that a command that wrongly replaces
/// its output cannot replace the machine's device; otherwise /dev/null or /dev/full itself (which
/// only root could replace).
[[nodiscard]] std::filesystem::path char_device(const std::filesystem::path& dir, const std::string& name,
                                                unsigned minor);

/// Runs fn as a user who cannot write the directories the tests create: as root (whom permissions
/// do not stop) in a child process that becomes nobody (uid and gid 65534), otherwise in a child
/// with dir's write permission taken away for the time. Returns what fn returned, or
/// "child failed: ..." when the child could not run it.
[[nodiscard]] std::string run_without_write_access(const std::filesystem::path& dir,
                                                   const std::function<std::string()>& fn);

/// The prefix of a shell command that runs it like run_without_write_access: "setpriv ..." as
/// root; otherwise empty, with the caller removing dir's write permission (ReadOnly below).
[[nodiscard]] std::string unprivileged_command_prefix();

/// Takes dir's write permission away until the scope ends, unless the tests run as root (who
/// runs the code under test through unprivileged_command_prefix instead).
class ReadOnly {
 public:
  explicit ReadOnly(std::filesystem::path dir);
  ~ReadOnly();
  ReadOnly(const ReadOnly&) = delete;
  ReadOnly& operator=(const ReadOnly&) = delete;

 private:
  std::filesystem::path dir_;
  bool changed_ = false;
};

}  // namespace tiletune::testing
