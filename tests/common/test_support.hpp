// Helpers shared by the tests: temporary directories, running the CLI, paths to data.
#pragma once

#include <filesystem>
#include <string>

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

/// The project's root (where configs/ and kernels/ are).
[[nodiscard]] std::filesystem::path source_dir();
/// tests/ in the source tree.
[[nodiscard]] std::filesystem::path test_data_dir();
/// The built `tiletune` executable.
[[nodiscard]] std::filesystem::path cli_path();

/// Output and exit status of a command run through /bin/sh.
struct CommandResult {
  int exit_code = -1;      ///< -1 when killed by a signal
  int signal = 0;
  std::string output;      ///< stdout and stderr together
};
[[nodiscard]] CommandResult run_command(const std::string& command);

/// Reads a whole file.
[[nodiscard]] std::string read_file(const std::filesystem::path& path);

}  // namespace tiletune::testing
