// write_output: the one way a command writes a file for the user (see output_file.hpp).
#include "common/output_file.hpp"

#include "common/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>

namespace tiletune {

namespace fs = std::filesystem;

namespace {

/// A path as a message shows it: the user's own text, with control characters made visible.
std::string shown(const fs::path& path) { return shown_path(path); }

[[noreturn]] void refuse(const fs::path& path, const std::string& reason) { throw Error(shown(path) + ": " + reason); }

[[noreturn]] void cannot_write(const fs::path& path, int error) {
  refuse(path, std::string("cannot write: ") + std::strerror(error));
}

/// What a path leads to: the file a symbolic link points to, or the path itself.
struct Resolved {
  fs::path target;
  bool exists = false;
  struct stat st {};
};

Resolved resolve(const fs::path& path) {
  if (path.empty()) throw Error("an empty path as an output");
  Resolved r{path};
  if (::lstat(path.c_str(), &r.st) != 0) {
    if (errno != ENOENT) cannot_write(path, errno);
    return r;
  }
  r.exists = true;
  if (!S_ISLNK(r.st.st_mode)) return r;
  char real[PATH_MAX];
  if (::realpath(path.c_str(), real) == nullptr) {
    if (errno != ENOENT) cannot_write(path, errno);
    std::error_code ec;
    refuse(path, "a symbolic link to nothing (" + shown(fs::read_symlink(path, ec)) +
                     "): name a file that exists, or where the new file should be");
  }
  r.target = real;
  if (::stat(r.target.c_str(), &r.st) != 0) cannot_write(path, errno);
  return r;
}

void refuse_inputs(const fs::path& path, const Resolved& r, const OutputRules& rules) {
  for (const fs::path& input : rules.inputs) {
    struct stat in {};
    if (::stat(input.c_str(), &in) == 0 && in.st_dev == r.st.st_dev && in.st_ino == r.st.st_ino)
      throw OutputIsInputError(shown(path) + " is " + shown(input) + ", an input of this command (the same file)");
  }
}

OutputTarget classify(const fs::path& path, const Resolved& r, const OutputRules& rules) {
  if (!r.exists) {
    if (rules.regular_only) cannot_write(path, ENOENT);
    return OutputTarget::absent;
  }
  const mode_t m = r.st.st_mode;
  if (S_ISREG(m)) return OutputTarget::regular;
  if (S_ISDIR(m)) refuse(path, "a directory, not a file");
  if (rules.regular_only) refuse(path, "not a regular file (a FIFO or a device?)");
  if (S_ISCHR(m) || S_ISFIFO(m)) return OutputTarget::stream;
  refuse(path, S_ISSOCK(m) ? "a socket, not a file" : S_ISBLK(m) ? "a block device, not a file" : "not a file");
}

/// Writes all of bytes to fd; 0, or the errno of the write that failed.
int write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;  // a write that takes nothing would loop forever
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

/// The temporary file of an atomic replace: closed and removed at scope exit unless renamed.
class TempFile {
 public:
  explicit TempFile(const fs::path& target) {
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::random_device random;
    for (int attempt = 0; attempt < 100; ++attempt) {
      // At most 100 bytes of the name, so that a name near NAME_MAX still has room for ours.
      path_ = dir / ("." + target.filename().string().substr(0, 100) + ".tiletune-" + std::to_string(::getpid()) + "-" +
                     std::to_string(random()));
      // 0666: the umask applies, as to any new file; an existing file's mode is set with fchmod.
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ >= 0 || errno != EEXIST) break;
    }
    open_error_ = fd_ < 0 ? errno : 0;
    created_ = fd_ >= 0;
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (created_) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  /// Writes bytes and renames the file over target: 0, or the errno of the step that failed.
  int replace(const fs::path& target, std::string_view bytes, const struct stat* old) {
    if (!created_) return open_error_;
    if (old) {
      // Best effort, as an editor does: only root may give a file to another user.
      if (old->st_uid != ::geteuid() || old->st_gid != ::getegid()) (void)!::fchown(fd_, old->st_uid, old->st_gid);
      if (::fchmod(fd_, old->st_mode & 07777) != 0) return errno;
    }
    if (const int e = write_all(fd_, bytes)) return e;
    if (::fsync(fd_) != 0) return errno;
    if (::close(std::exchange(fd_, -1)) != 0) return errno;
    if (::rename(path_.c_str(), target.c_str()) != 0) return errno;
    created_ = false;
    return 0;
  }

 private:
  fs::path path_;
  int fd_ = -1;
  int open_error_ = 0;
  bool created_ = false;  ///< path_ is ours to remove
};

void replace_regular(const fs::path& path, const Resolved& r, std::string_view bytes) {
  TempFile temp(r.target);
  const int e = temp.replace(r.target, bytes, r.exists ? &r.st : nullptr);
  if (e != 0) cannot_write(path, e);
  // The rename is durable once the directory is: best effort (some file systems refuse it).
  const fs::path dir = r.target.has_parent_path() ? r.target.parent_path() : fs::path(".");
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
}

/// A descriptor closed at scope exit unless closed (and checked) before.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  int close() { return ::close(std::exchange(fd, -1)) == 0 ? 0 : errno; }
};

void write_through(const fs::path& path, const Resolved& r, std::string_view bytes) {
  const bool fifo = S_ISFIFO(r.st.st_mode);
  Fd out{::open(r.target.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | (fifo ? O_NONBLOCK : 0))};
  if (out.fd < 0 && fifo && errno == ENXIO) refuse(path, "a FIFO with no reader");
  if (out.fd < 0) cannot_write(path, errno);
  struct stat now {};
  if (::fstat(out.fd, &now) != 0) cannot_write(path, errno);
  if (now.st_dev != r.st.st_dev || now.st_ino != r.st.st_ino)
    refuse(path, "replaced by another file while it was being opened");
  // A reader is there: from now on a full pipe waits for it, as any writer's would.
  if (fifo && ::fcntl(out.fd, F_SETFL, ::fcntl(out.fd, F_GETFL) & ~O_NONBLOCK) != 0) cannot_write(path, errno);
  if (const int e = write_all(out.fd, bytes)) cannot_write(path, e);
  if (const int e = out.close()) cannot_write(path, e);
}

}  // namespace

OutputTarget check_output(const fs::path& path, const OutputRules& rules) {
  const Resolved r = resolve(path);
  if (r.exists) refuse_inputs(path, r, rules);
  return classify(path, r, rules);
}

void write_output(const fs::path& path, std::string_view bytes, const OutputRules& rules) {
  const Resolved r = resolve(path);
  if (r.exists) refuse_inputs(path, r, rules);
  if (classify(path, r, rules) == OutputTarget::stream)
    write_through(path, r, bytes);
  else
    replace_regular(path, r, bytes);
}

}  // namespace tiletune
