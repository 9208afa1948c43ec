// InputFile: the checks before a user's file is read, and bounded reads of it.
#include "common/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tiletune/error.hpp"

namespace tiletune {

InputFile::InputFile(const std::filesystem::path& path, std::string_view what) : what_(what) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) throw Error(std::string("cannot open the file: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int e = errno;
    ::close(fd_);
    throw Error(std::string("cannot stat the file: ") + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw Error(S_ISDIR(st.st_mode) ? "a directory, not " + what_ : std::string("not a regular file (a FIFO or a device?)"));
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

std::string InputFile::read_all(std::size_t max_bytes) {
  if (size_ > max_bytes)
    throw Error(std::to_string(size_) + " bytes, more than " + what_ + " can be (" + std::to_string(max_bytes >> 20) +
                " MiB)");
  std::string text;
  text.reserve(static_cast<std::size_t>(size_));
  char buf[65536];
  while (const std::size_t n = read(buf, sizeof buf)) {
    if (text.size() + n > max_bytes) throw Error("the file grew past the size " + what_ + " can be");
    text.append(buf, n);
  }
  return text;
}

}  // namespace tiletune
