// A file a user named, opened to be read without trusting it: only a regular file is read (it is
// opened with O_NONBLOCK and checked with fstat on the open descriptor, so a FIFO or a device is
// refused at once and never blocks or reads forever), and what is read is bounded by the caller.
// Shared by the readers of recordings (tune) and of Kernel Tuner caches (interchange).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace tiletune {

class InputFile {
 public:
  /// Opens path. `what` names the kind of file in the reasons ("a recording"). Throws Error whose
  /// message is the reason alone (the caller adds the file's name): "cannot open the file: No
  /// such file or directory", "a directory, not a recording", "not a regular file (a FIFO or a
  /// device?)".
  InputFile(const std::filesystem::path& path, std::string_view what);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  /// The size fstat gave when the file was opened.
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }

  /// Up to n bytes into buffer; 0 at the end of the file. Throws Error "cannot read the file: ...".
  [[nodiscard]] std::size_t read(char* buffer, std::size_t n);

  /// The rest of the file, when the file holds at most max_bytes. Throws Error "N bytes, more
  /// than a recording can be (M MiB)" before reading, or "the file grew past the size a recording
  /// can be" when it grew while being read.
  [[nodiscard]] std::string read_all(std::size_t max_bytes);

 private:
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::string what_;
};

}  // namespace tiletune
