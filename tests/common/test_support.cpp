// Implementation of the shared test helpers.
#include "test_support.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace tiletune::testing {

DeviceInfo h200_device_info() {
  DeviceInfo d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.sm_count = 132;
  d.total_memory = 141ull << 30;
  d.l2_bytes = 60ull << 20;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.regs_per_block = 65536;
  d.regs_per_sm = 65536;
  d.warp_size = 32;
  d.shared_per_block = 49152;
  d.shared_per_block_optin = 232448;
  d.shared_per_sm = 233472;
  d.reserved_shared_per_block = 1024;
  d.max_block_dim = {1024, 1024, 64};
  d.max_grid_dim = {2147483647LL, 65535, 65535};
  d.driver_version = 13000;
  return d;
}

TempDir::TempDir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto candidate = std::filesystem::temp_directory_path() /
                     ("tiletune-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    if (std::filesystem::create_directory(candidate)) {
      path_ = candidate;
      return;
    }
  }
  throw std::runtime_error("TempDir: cannot create a temporary directory");
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path TempDir::write(const std::string& name, const std::string& text) const {
  auto p = path_ / name;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("TempDir::write: cannot write " + p.string());
  return p;
}

std::filesystem::path source_dir() { return TILETUNE_SOURCE_DIR; }
std::filesystem::path test_data_dir() { return TILETUNE_TEST_DATA_DIR; }
std::filesystem::path cli_path() { return TILETUNE_CLI_PATH; }

Space shipped_space(const std::string& name) { return load_space(source_dir() / "configs" / (name + ".yaml")); }

std::filesystem::path shipped_landscape(const std::string& kernel) {
  return test_data_dir() / "data" / "landscapes" / (kernel + ".csv");
}

std::string shell_quoted(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

CommandResult run_command(const std::string& command) {
  CommandResult result;
  std::string full = command + " 2>&1";
  FILE* pipe = ::popen(full.c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed for: " + command);
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) result.output.append(buf.data(), n);
  int status = ::pclose(pipe);
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace tiletune::testing

// --- file digests and access without write permission ----------------------------------------

namespace tiletune::testing {

namespace {

// FIPS 180-4 SHA-256, enough for comparing files in tests.
class Sha256 {
 public:
  void update(const unsigned char* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      block_[fill_++] = p[i];
      if (fill_ == 64) {
        compress();
        fill_ = 0;
      }
    }
    bits_ += 8ULL * n;
  }
  std::string hex() {
    const std::uint64_t bits = bits_;
    const unsigned char one = 0x80, zero = 0;
    update(&one, 1);
    while (fill_ != 56) update(&zero, 1);
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
    update(len, 8);
    std::string out;
    char buf[9];
    for (std::uint32_t v : h_) {
      std::snprintf(buf, sizeof buf, "%08x", v);
      out += buf;
    }
    return out;
  }

 private:
  static std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
  void compress() {
    static constexpr std::uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    std::uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = (std::uint32_t{block_[4 * i]} << 24) | (std::uint32_t{block_[4 * i + 1]} << 16) |
             (std::uint32_t{block_[4 * i + 2]} << 8) | block_[4 * i + 3];
    for (int i = 16; i < 64; ++i) {
      const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
    for (int i = 0; i < 64; ++i) {
      const std::uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    const std::uint32_t add[8] = {a, b, c, d, e, f, g, h};
    for (int i = 0; i < 8; ++i) h_[i] += add[i];
  }

  std::uint32_t h_[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  unsigned char block_[64] = {};
  std::size_t fill_ = 0;
  std::uint64_t bits_ = 0;
};

constexpr unsigned nobody = 65534;

}  // namespace

std::string sha256_of_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return "absent";
  std::ifstream in(path, std::ios::binary);
  Sha256 sha;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0)
    sha.update(reinterpret_cast<const unsigned char*>(buf), static_cast<std::size_t>(in.gcount()));
  return sha.hex();
}

std::string cache_files_digest(const std::filesystem::path& cache) {
  std::string out;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    out += cache.filename().string() + suffix + " " + sha256_of_file(cache.string() + suffix) + "\n";
  return out;
}

std::string tree_digest(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> lines;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::none, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    const fs::file_status st = fs::symlink_status(p, ec);
    const auto perms = static_cast<unsigned>(st.permissions()) & 07777u;
    std::string line = fs::relative(p, dir, ec).string();
    char mode[16];
    std::snprintf(mode, sizeof mode, " %04o ", perms);
    switch (st.type()) {
      case fs::file_type::regular: line += std::string(" file") + mode + sha256_of_file(p); break;
      case fs::file_type::directory: line += std::string(" dir") + mode; break;
      case fs::file_type::symlink: line += " link -> " + fs::read_symlink(p, ec).string(); break;
      case fs::file_type::fifo: line += std::string(" fifo") + mode; break;
      default: line += std::string(" other") + mode; break;
    }
    lines.push_back(std::move(line));
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

std::filesystem::path char_device(const std::filesystem::path& dir, const std::string& name, unsigned minor) {
  const std::filesystem::path node = dir / name;
  if (::geteuid() == 0 && ::mknod(node.c_str(), S_IFCHR | 0666, ::makedev(1, minor)) == 0 &&
      ::chmod(node.c_str(), 0666) == 0)
    return node;
  return minor == 7 ? "/dev/full" : "/dev/null";
}

std::string run_without_write_access(const std::filesystem::path& dir, const std::function<std::string()>& fn) {
  int fds[2];
  if (::pipe(fds) != 0) return "child failed: pipe";
  ReadOnly guard(dir);
  const pid_t pid = ::fork();
  if (pid < 0) return "child failed: fork";
  if (pid == 0) {
    ::close(fds[0]);
    std::string result;
    if (::geteuid() == 0 && (::setgid(nobody) != 0 || ::setuid(nobody) != 0)) {
      result = "child failed: cannot become nobody";
    } else {
      try {
        result = fn();
      } catch (const std::exception& e) { result = std::string("child failed: ") + e.what(); }
    }
    for (std::size_t done = 0; done < result.size();) {
      const ssize_t n = ::write(fds[1], result.data() + done, result.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return out;
}

std::string unprivileged_command_prefix() {
  return ::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
}

ReadOnly::ReadOnly(std::filesystem::path dir) : dir_(std::move(dir)) {
  namespace fs = std::filesystem;
  // Whoever runs the code under test must reach and read what is there.
  std::error_code ec;
  fs::permissions(dir_,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                      fs::perms::others_exec,
                  ec);
  for (const auto& e : fs::directory_iterator(dir_, ec))
    fs::permissions(e.path(), fs::perms::group_read | fs::perms::others_read, fs::perm_options::add, ec);
  if (::geteuid() == 0) return;
  fs::permissions(dir_, fs::perms::owner_write, fs::perm_options::remove, ec);
  changed_ = !ec;
}

ReadOnly::~ReadOnly() {
  std::error_code ec;
  if (changed_)
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_write, std::filesystem::perm_options::add, ec);
}

}  // namespace tiletune::testing
