// A file for harnesses whose parser reads a path, not bytes (SQLite, the recording reader): one
// fixed path per process in a private directory under $TMPDIR, rewritten with each input. The
// directory is removed at exit.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace tiletune::fuzz {

class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/tiletune-fuzz-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

  /// Writes data to name in the directory (replacing it) and returns its path; a write that fails
  /// aborts, since every later input would test nothing.
  std::filesystem::path write(const std::string& name, const std::uint8_t* data, std::size_t size) const {
    const std::filesystem::path p = path_ / name;
    std::FILE* f = std::fopen(p.c_str(), "wb");
    if (f == nullptr) std::abort();
    if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
    if (std::fclose(f) != 0) std::abort();
    return p;
  }

  /// Removes name and the side files SQLite may leave beside it.
  void clear(const std::string& name) const {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      std::filesystem::remove(path_ / (name + suffix), ec);
  }

 private:
  std::filesystem::path path_;
};

}  // namespace tiletune::fuzz
