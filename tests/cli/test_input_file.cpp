// read_input_file and InputFile (issue 22, "one way to read a file"): a regular file is read
// whole; anything else is refused at once with one line naming the file; the size is checked
// against the caller's limit before reading, and a file that grows while read is cut off.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "common/input_file.hpp"
#include "test_support.hpp"
#include "tiletune/error.hpp"

namespace tiletune {
namespace {

namespace fs = std::filesystem;

std::string refusal(const fs::path& path, std::size_t max_bytes) {
  try {
    (void)read_input_file(path, "a thing", max_bytes);
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e.what();
  }
  return "(read)";
}

TEST(InputFileRead, ARegularFileIsReadWholeUpToItsLimit) {
  testing::TempDir dir;
  const fs::path file = dir.write("f.txt", std::string(1000, 'x'));
  EXPECT_EQ(read_input_file(file, "a thing", 1000), std::string(1000, 'x'));  // at the limit: read
  EXPECT_EQ(refusal(file, 999), file.string() + ": 1000 bytes, more than a thing can be (999 bytes)");
  EXPECT_EQ(read_input_file(dir.write("empty", ""), "a thing", 0), "");
}

TEST(InputFileRead, EveryOtherKindIsRefusedAtOnceByName) {
  testing::TempDir dir;
  const fs::path fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path sock = dir.path() / "sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(sock.string().size(), sizeof addr.sun_path);
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  fs::create_symlink(fifo, dir.path() / "link");
  ::alarm(20);  // a reader that blocks on the FIFO ends the test here
  EXPECT_EQ(refusal(fifo, 100), fifo.string() + ": not a regular file (a FIFO)");
  EXPECT_EQ(refusal(dir.path() / "link", 100), (dir.path() / "link").string() + ": not a regular file (a FIFO)");
  EXPECT_EQ(refusal("/dev/zero", 100), "/dev/zero: not a regular file (a character device)");
  EXPECT_EQ(refusal(sock, 100), sock.string() + ": not a regular file (a socket)");
  ::alarm(0);
  ::close(fd);
  EXPECT_EQ(refusal(dir.path(), 100), dir.path().string() + ": a directory, not a thing");
  EXPECT_EQ(refusal(dir.path() / "missing", 100), (dir.path() / "missing").string() + ": no such file");
}

TEST(InputFileRead, ASparseTenGigabyteFileIsRefusedBeforeReading) {
  testing::TempDir dir;
  const fs::path big = dir.path() / "big";
  { std::ofstream touch(big); }
  fs::resize_file(big, 10'000'000'000);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(refusal(big, std::size_t{64} << 20),
            big.string() + ": 10000000000 bytes, more than a thing can be (64 MiB)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(InputFileRead, AFileThatGrowsWhileReadIsCutOff) {
  // /proc files are regular files whose size says 0: what is read is more than was announced.
  EXPECT_NE(refusal("/proc/self/status", 16).find("/proc/self/status: the file grew past the size a thing can be"),
            std::string::npos);
  EXPECT_NE(read_input_file("/proc/self/status", "a thing", 1 << 20).find("Name:"), std::string::npos);
}

TEST(InputFileRead, ControlBytesInTheNameAreShownEscaped) {
  testing::TempDir dir;
  const fs::path odd = dir.path() / "a\x1b[2J\nb\xff";
  const std::string message = refusal(odd, 100);
  EXPECT_NE(message.find("a\\x1b[2J\\nb\\xff: no such file"), std::string::npos) << message;
  EXPECT_EQ(message.find('\x1b'), std::string::npos);
  // A path of 100,000 bytes is cut.
  const std::string long_name = "/" + std::string(100000, 'p');
  EXPECT_LT(refusal(long_name, 100).size(), 400u);
  EXPECT_EQ(shown_path("/plain/path with spaces.yaml"), "/plain/path with spaces.yaml");
}

TEST(InputFileRead, ReadAtRefusesWhatIsNotThere) {
  testing::TempDir dir;
  InputFile file(dir.write("f", "0123456789"), "a thing");
  char buf[4] = {};
  file.read_at(6, buf, 4);
  EXPECT_EQ(std::string(buf, 4), "6789");
  try {
    file.read_at(8, buf, 4);
    ADD_FAILURE() << "read past the end";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the file ended after 2 of the 4 bytes wanted at offset 8"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tiletune
