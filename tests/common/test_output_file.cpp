// write_output and check_output (common/output_file.hpp), the one way a command writes a file for
// the user (issue 22): a regular file replaced atomically with its mode kept, a device or FIFO
// written through, a link followed and kept, a directory, socket or dangling link refused, an
// input never written; every failure leaves the directory as it was (no temporary file).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

#include "common/output_file.hpp"
#include "test_support.hpp"

namespace tiletune {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::tree_digest;

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

/// The message write_output throws, or "" when it wrote.
std::string error_of(const fs::path& path, std::string_view bytes, const OutputRules& rules = {}) {
  try {
    write_output(path, bytes, rules);
    return "";
  } catch (const Error& e) { return e.what(); }
}

/// Sets the umask for the scope (the process's; these tests run one at a time).
class Umask {
 public:
  explicit Umask(mode_t m) : old_(::umask(m)) {}
  ~Umask() { ::umask(old_); }

 private:
  mode_t old_;
};

TEST(OutputFileWrite, ANewFileGetsTheUmasksMode) {
  TempDir dir;
  for (const mode_t mask : {mode_t{022}, mode_t{077}, mode_t{002}}) {
    const Umask scope(mask);
    const fs::path out = dir.path() / ("new" + std::to_string(mask));
    EXPECT_EQ(check_output(out), OutputTarget::absent);
    write_output(out, "text\n");
    EXPECT_EQ(testing::read_file(out), "text\n");
    EXPECT_EQ(mode_of(out), 0666 & ~mask);
  }
}

TEST(OutputFileWrite, AnExistingFileKeepsItsModeAndIsReplacedWhole) {
  TempDir dir;
  for (const mode_t mode : {mode_t{0600}, mode_t{0640}, mode_t{0755}, mode_t{0444}}) {
    const fs::path out = dir.write("f" + std::to_string(mode), std::string(100000, 'x'));
    ASSERT_EQ(::chmod(out.c_str(), mode), 0);
    EXPECT_EQ(check_output(out), OutputTarget::regular);
    write_output(out, "short");
    EXPECT_EQ(testing::read_file(out), "short");
    EXPECT_EQ(mode_of(out), mode);
  }
}

TEST(OutputFileWrite, ALinkIsFollowedAndKept) {
  TempDir dir;
  const fs::path real = dir.write("real/file.txt", "old");
  ASSERT_EQ(::chmod(real.c_str(), 0600), 0);
  fs::create_directory(dir.path() / "links");
  const fs::path link = dir.path() / "links" / "out.txt";
  fs::create_symlink("../real/file.txt", link);
  const fs::path link2 = dir.path() / "links" / "out2.txt";
  fs::create_symlink(link, link2);  // a chain
  write_output(link2, "new");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::is_symlink(link2));
  EXPECT_EQ(testing::read_file(real), "new");
  EXPECT_EQ(mode_of(real), 0600u);
  // The temporary file was made beside the target, not beside the link: nothing else anywhere.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path() / "links"), fs::directory_iterator()), 2);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path() / "real"), fs::directory_iterator()), 1);
}

TEST(OutputFileWrite, ANullDeviceIsWrittenThroughAndStaysADevice) {
  TempDir dir;
  const fs::path null = testing::char_device(dir.path(), "null", 3);
  EXPECT_EQ(check_output(null), OutputTarget::stream);
  write_output(null, "anything");
  struct stat st {};
  ASSERT_EQ(::lstat(null.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  const fs::path link = dir.path() / "link";
  fs::create_symlink(null, link);
  const std::string before = tree_digest(dir.path());
  write_output(link, "anything");
  EXPECT_EQ(tree_digest(dir.path()), before);
}

TEST(OutputFileWrite, AFullDeviceIsCannotWrite) {
  TempDir dir;
  const fs::path full = testing::char_device(dir.path(), "full", 7);
  const std::string before = tree_digest(dir.path());
  EXPECT_EQ(error_of(full, "x"), full.string() + ": cannot write: No space left on device");
  EXPECT_EQ(tree_digest(dir.path()), before);
}

TEST(OutputFileWrite, AFifoWithNoReaderIsRefusedAtOnce) {
  TempDir dir;
  const fs::path fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::string before = tree_digest(dir.path());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of(fifo, "x"), fifo.string() + ": a FIFO with no reader");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(tree_digest(dir.path()), before);
}

TEST(OutputFileWrite, AFifoWithAReaderGetsEveryByte) {
  TempDir dir;
  const fs::path fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  const std::string text(1 << 20, 'y');  // more than a pipe holds: the writer waits for the reader
  std::string got;
  std::thread drain([&] {
    char buf[65536];
    for (int idle = 0; idle < 2000 && got.size() < text.size();) {
      const ssize_t n = ::read(reader, buf, sizeof buf);
      if (n > 0)
        got.append(buf, static_cast<std::size_t>(n)), idle = 0;
      else
        ++idle, std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  EXPECT_EQ(error_of(fifo, text), "");
  drain.join();
  ::close(reader);
  EXPECT_EQ(got.size(), text.size());
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(OutputFileWrite, ADirectoryASocketAndADanglingLinkAreRefused) {
  TempDir dir;
  fs::create_directory(dir.path() / "sub");
  const fs::path sock = dir.path() / "sock";
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  fs::create_symlink("nowhere/file", dir.path() / "dangling");
  const std::string before = tree_digest(dir.path());
  EXPECT_EQ(error_of(dir.path() / "sub", "x"), (dir.path() / "sub").string() + ": a directory, not a file");
  EXPECT_EQ(error_of(sock, "x"), sock.string() + ": a socket, not a file");
  EXPECT_EQ(
      error_of(dir.path() / "dangling", "x"),
      (dir.path() / "dangling").string() +
          ": a symbolic link to nothing (nowhere/file): name a file that exists, or where the new file should be");
  EXPECT_THROW((void)check_output(dir.path() / "dangling"), Error);
  EXPECT_EQ(tree_digest(dir.path()), before);
  ::close(s);
}

TEST(OutputFileWrite, ABlockDeviceIsRefused) {
  // A node of its own, of a device number no driver serves: a regression cannot reach a disk.
  TempDir dir;
  const fs::path node = dir.path() / "block";
  if (::mknod(node.c_str(), S_IFBLK | 0600, ::makedev(0, 0)) != 0) GTEST_SKIP() << "cannot make a block device node";
  const std::string before = tree_digest(dir.path());
  EXPECT_EQ(error_of(node, "x"), node.string() + ": a block device, not a file");
  EXPECT_EQ(tree_digest(dir.path()), before);
}

TEST(OutputFileWrite, AnInputIsNeverWrittenUnderAnyName) {
  TempDir dir;
  const fs::path input = dir.write("in.json", "{}");
  fs::create_symlink("in.json", dir.path() / "link.json");
  fs::create_hard_link(input, dir.path() / "hard.json");
  const std::string before = tree_digest(dir.path());
  const OutputRules rules{{input}};
  for (const fs::path& out :
       {input, dir.path() / "link.json", dir.path() / "hard.json", dir.path() / "." / "in.json"}) {
    SCOPED_TRACE(out.string());
    EXPECT_THROW((void)check_output(out, rules), OutputIsInputError);
    try {
      write_output(out, "overwritten", rules);
      ADD_FAILURE() << "wrote its input";
    } catch (const OutputIsInputError& e) {
      EXPECT_EQ(std::string(e.what()),
                out.string() + " is " + input.string() + ", an input of this command (the same file)");
    }
  }
  EXPECT_EQ(tree_digest(dir.path()), before);
}

TEST(OutputFileWrite, RegularOnlyRefusesDevicesAndMissingFiles) {
  TempDir dir;
  const OutputRules rewrite{{}, true};
  const fs::path null = testing::char_device(dir.path(), "null", 3);
  EXPECT_EQ(error_of(null, "x", rewrite), null.string() + ": not a regular file (a FIFO or a device?)");
  EXPECT_EQ(error_of(dir.path() / "missing", "x", rewrite),
            (dir.path() / "missing").string() + ": cannot write: No such file or directory");
  const fs::path file = dir.write("space.yaml", "old");
  ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
  write_output(file, "new", rewrite);
  EXPECT_EQ(testing::read_file(file), "new");
  EXPECT_EQ(mode_of(file), 0600u);
}

// A write that stops part way (here at a file size limit, as a full disk would stop it): the
// target as it was, no temporary file left. In a child, since the limit is the process's.
TEST(OutputFileWrite, AShortWriteLeavesTheTargetAsItWas) {
  TempDir dir;
  const fs::path file = dir.write("out.txt", "old content");
  const std::string before = tree_digest(dir.path());
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::signal(SIGXFSZ, SIG_IGN);  // the write fails with EFBIG instead of killing the child
    const rlimit limit{4096, 4096};
    const std::string got =
        ::setrlimit(RLIMIT_FSIZE, &limit) == 0 ? error_of(file, std::string(1 << 20, 'x')) : "setrlimit";
    (void)!::write(fds[1], got.data(), got.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string got;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  ::waitpid(pid, nullptr, 0);
  EXPECT_EQ(got, file.string() + ": cannot write: File too large");
  EXPECT_EQ(tree_digest(dir.path()), before);
}

TEST(OutputFileWrite, ANameOfTheLongestLengthIsWrittenAndAnEmptyPathRefused) {
  TempDir dir;
  const fs::path out = dir.path() / std::string(255, 'n');
  write_output(out, "text");
  EXPECT_EQ(testing::read_file(out), "text");
  EXPECT_EQ(error_of("", "x"), "an empty path as an output");
}

TEST(OutputFileWrite, AMissingDirectoryIsCannotWrite) {
  TempDir dir;
  const std::string before = tree_digest(dir.path());
  EXPECT_EQ(error_of(dir.path() / "no" / "such.txt", "x"),
            (dir.path() / "no" / "such.txt").string() + ": cannot write: No such file or directory");
  EXPECT_EQ(tree_digest(dir.path()), before);
}

// A directory the process cannot write: the file (writable itself) is left as it was and no
// temporary file appears; as root the write runs as nobody (run_without_write_access).
TEST(OutputFileWrite, AReadOnlyDirectoryIsCannotWriteAndLeavesNothing) {
  TempDir dir;
  const fs::path file = dir.write("out.txt", "old");
  ASSERT_EQ(::chmod(file.c_str(), 0666), 0);  // only the directory stands in the way
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  const std::string before = tree_digest(dir.path());
  const std::string got = testing::run_without_write_access(dir.path(), [&] { return error_of(file, "new"); });
  EXPECT_EQ(got, file.string() + ": cannot write: Permission denied");
  EXPECT_EQ(tree_digest(dir.path()), before);
}

}  // namespace
}  // namespace tiletune
