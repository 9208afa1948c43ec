// InputFile: the checks before a user's file is read, and bounded reads of it.
#include "common/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tiletune/error.hpp"

namespace tiletune {
namespace {

constexpr std::size_t kShownPathChars = 200;

std::string kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

}  // namespace

std::string shown_path(const std::filesystem::path& path) { return escaped_excerpt(path.native(), kShownPathChars); }

std::string size_limit_text(std::size_t bytes) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  return bytes >= kMiB && bytes % kMiB == 0 ? std::to_string(bytes / kMiB) + " MiB" : std::to_string(bytes) + " bytes";
}

std::string read_input_file(const std::filesystem::path& path, std::string_view what, std::size_t max_bytes) {
  try {
    InputFile file(path, what);
    return file.read_all(max_bytes);
  } catch (const Error& e) { throw Error(shown_path(path) + ": " + e.what()); }
}

InputFile::InputFile(const std::filesystem::path& path, std::string_view what) : what_(what) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd_ < 0) {
    const int e = errno;
    if (e == ENOENT) throw Error("no such file");
    // A socket cannot be opened at all (ENXIO): its kind says more than the errno.
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
      throw Error("not a regular file (" + kind_of(st.st_mode) + ")");
    throw Error(std::string("cannot open the file: ") + std::strerror(e));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int e = errno;
    ::close(fd_);
    throw Error(std::string("cannot stat the file: ") + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw Error(S_ISDIR(st.st_mode) ? "a directory, not " + what_ : "not a regular file (" + kind_of(st.st_mode) + ")");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

InputFile::~InputFile() { ::close(fd_); }

std::size_t InputFile::read(char* buffer, std::size_t n) {
  for (;;) {
    const ssize_t got = ::read(fd_, buffer, n);
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno != EINTR) throw Error(std::string("cannot read the file: ") + std::strerror(errno));
  }
}

void InputFile::read_at(std::uint64_t offset, char* buffer, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd_, buffer + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw Error(std::string("cannot read the file: ") + std::strerror(errno));
    if (got == 0)
      throw Error("the file ended after " + std::to_string(done) + " of the " + std::to_string(n) +
                  " bytes wanted at offset " + std::to_string(offset) + " (it shrank while being read?)");
    done += static_cast<std::size_t>(got);
  }
}

std::string InputFile::read_all(std::size_t max_bytes) {
  if (size_ > max_bytes)
    throw Error(std::to_string(size_) + " bytes, more than " + what_ + " can be (" + size_limit_text(max_bytes) + ")");
  std::string text;
  text.reserve(static_cast<std::size_t>(size_));
  char buf[65536];
  while (const std::size_t n = read(buf, sizeof buf)) {
    if (n > max_bytes - text.size()) throw Error("the file grew past the size " + what_ + " can be");
    text.append(buf, n);
  }
  return text;
}

}  // namespace tiletune
