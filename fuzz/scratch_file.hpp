// A file for harnesses whose parser reads a path, not bytes (SQLite, the recording reader, .npy
// files): one fixed name per process in a private directory (common/scratch_dir.hpp), rewritten
// with each input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/scratch_dir.hpp"

namespace tiletune::fuzz {

class ScratchFiles {
 public:
  ScratchFiles() : dir_("tiletune-fuzz") {}

  /// Writes data to name in the directory (replacing it) and returns its path; a write that fails
  /// aborts, since every later input would test nothing.
  std::filesystem::path write(const std::string& name, const std::uint8_t* data, std::size_t size) const {
    const std::filesystem::path p = dir_.path() / name;
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
      std::filesystem::remove(dir_.path() / (name + suffix), ec);
  }

 private:
  ScratchDir dir_;
};

}  // namespace tiletune::fuzz
