// A file a user (or another machine) named, opened to be read without trusting it: only a regular
// file is read (it is opened with O_NONBLOCK and checked with fstat on the open descriptor, so a
// FIFO or a device is refused at once and never blocks or reads forever, and a file swapped in
// between a check and the open cannot slip through), its size is checked against the caller's
// limit before anything is read, and no read goes past that limit, also when the file grows.
// read_input_file is the one way tiletune reads such a file whole; InputFile is for readers that
// take a file in parts (an .npy header, then its data; a gzip stream).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace tiletune {

/// A path as a message shows it: unchanged when it is printable UTF-8; otherwise control bytes
/// and bytes that are not UTF-8 escaped (\x1b, \n), and cut after 200 characters.
[[nodiscard]] std::string shown_path(const std::filesystem::path& path);

/// "64 MiB" for a whole number of MiB, "1000 bytes" otherwise: a limit as a message states it.
[[nodiscard]] std::string size_limit_text(std::size_t bytes);

/// The whole of the regular file at path, of at most max_bytes. `what` names the kind of file
/// ("a T1 file", "a search space"). Throws Error with one line "<shown_path>: <reason>":
/// "no such file", "cannot open the file: Permission denied", "a directory, not a T1 file",
/// "not a regular file (a FIFO)", "10737418240 bytes, more than a T1 file can be (64 MiB)" (before
/// reading), "the file grew past the size a T1 file can be", "cannot read the file: ...".
[[nodiscard]] std::string read_input_file(const std::filesystem::path& path, std::string_view what,
                                          std::size_t max_bytes);

class InputFile {
 public:
  /// Opens path. `what` names the kind of file in the reasons ("a recording"). Throws Error whose
  /// message is the reason alone (the caller adds the file's name, or uses read_input_file):
  /// "no such file", "cannot open the file: Permission denied", "a directory, not a recording",
  /// "not a regular file (a FIFO)" (or a character device, a block device, a socket).
  InputFile(const std::filesystem::path& path, std::string_view what);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  /// The size fstat gave when the file was opened.
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }

  /// Up to n bytes into buffer; 0 at the end of the file. Throws Error "cannot read the file: ...".
  [[nodiscard]] std::size_t read(char* buffer, std::size_t n);

  /// Exactly n bytes from offset (pread: the position read() uses does not move). Throws Error
  /// "the file ended after K of the N bytes wanted at offset O" when it is shorter (it shrank).
  void read_at(std::uint64_t offset, char* buffer, std::size_t n);

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
