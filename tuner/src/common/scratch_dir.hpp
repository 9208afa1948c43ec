// A private directory for a command's temporary files (a PNG being rendered, a Kernel Tuner
// cache's space checked before it is written, a fuzz input), so that none of them lands beside a
// user's file: made with mkdtemp under the system's temp directory ($TMPDIR, else /tmp) and
// removed with everything in it when the owner goes. Header-only: the fuzz harnesses use it too.
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "tiletune/error.hpp"

namespace tiletune {

class ScratchDir {
 public:
  /// `prefix` names it for whoever lists the temp directory ("tiletune-png"). Throws Error when
  /// it cannot be made.
  explicit ScratchDir(std::string_view prefix) : ScratchDir(prefix, system_temp()) {}
  /// The same under `base` (/dev/shm, say) instead of the system's temp directory.
  ScratchDir(std::string_view prefix, const std::filesystem::path& base) {
    std::string pattern = (base / (std::string(prefix) + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw Error(pattern + ": cannot make a temporary directory: " + std::strerror(errno));
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  static std::filesystem::path system_temp() {
    std::error_code ec;
    std::filesystem::path base = std::filesystem::temp_directory_path(ec);
    return ec ? std::filesystem::path("/tmp") : base;
  }
  std::filesystem::path path_;
};

}  // namespace tiletune
