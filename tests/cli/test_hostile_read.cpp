// Hostile files where the `tiletune` executable reads what a user or another machine wrote
// (issue 22, "one way to read a file"): a T1 file (import-t1), a search space (upgrade-space),
// and a space's input .npy, expected output and allowed-configs files (plan). Each case exits
// with its status under a 60 s watchdog (a FIFO must not block, /dev/zero and a 10 GB sparse
// file must be refused before they are read), says so in one line that starts with "tiletune: "
// and names the file (the space loader adds its "  hint:" line), quotes hostile bytes escaped and
// short, and leaves every file it was given as it was. CPU only, a few seconds.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>

#include "test_support.hpp"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }

// Where the file under test is read.
enum class Surface { import_t1, upgrade_space, plan_input, plan_expected, plan_allowed, plan_source };

// What the file under test is.
enum class Kind { bytes, fifo, dev_zero, directory, fifo_link, sparse_10gb, over_limit, missing, unreadable, esc_fifo };

struct ReadCase {
  std::string name;
  Surface surface;
  Kind kind;
  int exit_code;
  std::string message;  ///< in the first line of the output
  std::string bytes;    ///< Kind::bytes: the file's contents
};

std::ostream& operator<<(std::ostream& out, const ReadCase& c) { return out << c.name; }

constexpr std::uint64_t kTenGB = 10'000'000'000;

// An .npy file around a hand-written header (version 1; 2 when the header needs it).
std::string npy(const std::string& dict, std::size_t data_bytes) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\0';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>((header.size() >> 8) & 0xFF);
  return out + header + std::string(data_bytes, '\0');
}

std::string npy_f32(const std::string& shape, std::size_t data_bytes, const std::string& descr = "<f4",
                    const std::string& fortran = "False") {
  return npy("{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }", data_bytes);
}

// A version 2 header that announces `announced` bytes (4 GiB - 1 at most) and holds a few.
std::string npy_announcing(std::uint32_t announced) {
  std::string out = "\x93NUMPY";
  out += '\x02';
  out += '\0';
  for (int i = 0; i < 4; ++i) out += static_cast<char>((announced >> (8 * i)) & 0xFF);
  return out + "{'descr': '<f4', 'fortran_order': False, 'shape': (64,), }\n";
}

constexpr const char* kN = "64";

std::string space_yaml(bool allowed) {
  return std::string(
             "kernel: hostile_read\n"
             "source: soft_threshold.cu\n"
             "entry: soft_threshold\n"
             "problem:\n  N: [") +
         kN +
         "]\n"
         "params:\n  BLOCK: [64, 256]\n  VEC: [1, 2, 4]\n" +
         (allowed ? "allowed: {file: allowed.csv}\n" : "") +
         "launch:\n  grid: [\"ceil_div(ceil_div(N, VEC), BLOCK)\"]\n  block: [BLOCK]\n"
         "buffers:\n"
         "  signal: {type: float, count: N, init: {file: \"in_{N}.npy\"}}\n"
         "  x: {type: float, count: N, init: {copy: signal}, output: true}\n"
         "args: [x, {value: 0.5, type: float}, N]\n"
         "verify:\n  reference: {files: {x: \"out_{N}.npy\"}}\n"
         "metrics: {bytes: 2*N*4}\n";
}

// A folder with a space that plans, a T1 file that imports and a space to upgrade, all valid.
void write_valid(const TempDir& dir) {
  std::ofstream(dir.path() / "soft_threshold.cu") << read_file(test_data_dir() / "corpus" / "soft_threshold.cu");
  (void)dir.write("space.yaml", space_yaml(false));
  (void)dir.write("allowed_space.yaml", space_yaml(true));
  (void)dir.write("allowed.csv", "BLOCK,VEC\n64,1\n256,4\n");
  (void)dir.write("in_64.npy", npy_f32("(64,)", 256));
  (void)dir.write("out_64.npy", npy_f32("(64,)", 256));
  (void)dir.write("k.json", "{}");  // import-t1's valid file is its fixture (its kernel beside it)
  (void)dir.write("s.yaml", read_file(source_dir() / "configs" / "transpose.yaml"));
}

fs::path target_of(const TempDir& dir, Surface s) {
  switch (s) {
    case Surface::import_t1: return dir.path() / "k.json";
    case Surface::upgrade_space: return dir.path() / "s.yaml";
    case Surface::plan_input: return dir.path() / "in_64.npy";
    case Surface::plan_expected: return dir.path() / "out_64.npy";
    case Surface::plan_allowed: return dir.path() / "allowed.csv";
    case Surface::plan_source: return dir.path() / "soft_threshold.cu";
  }
  return {};
}

std::size_t limit_of(Surface s) {
  switch (s) {
    case Surface::import_t1: return std::size_t{64} << 20;
    case Surface::upgrade_space: return std::size_t{4} << 20;
    case Surface::plan_allowed: return std::size_t{256} << 20;
    case Surface::plan_source: return std::size_t{16} << 20;
    default: return 0;
  }
}

// A sparse file of `bytes` (no data written), whose first bytes are `head`.
void make_sparse(const fs::path& path, std::uint64_t bytes, const std::string& head = "") {
  std::ofstream(path, std::ios::binary) << head;
  fs::resize_file(path, bytes);
}

// Puts the hostile file where the surface reads it. Large files live in `big` (not hashed; the
// caller compares their size and time) and the surface reaches them through a symlink where it
// reads a fixed name; returns the path the command is given.
fs::path plant(const ReadCase& c, const TempDir& dir, const TempDir& big) {
  const fs::path target = target_of(dir, c.surface);
  const bool named = c.surface == Surface::import_t1 || c.surface == Surface::upgrade_space;
  fs::remove(target);
  switch (c.kind) {
    case Kind::bytes: std::ofstream(target, std::ios::binary) << c.bytes; return target;
    case Kind::fifo: EXPECT_EQ(::mkfifo(target.c_str(), 0600), 0); return target;
    case Kind::dev_zero:
      if (named) return "/dev/zero";
      fs::create_symlink("/dev/zero", target);
      return target;
    case Kind::directory: fs::create_directory(target); return target;
    case Kind::fifo_link:
      EXPECT_EQ(::mkfifo((big.path() / "fifo").c_str(), 0600), 0);
      fs::create_symlink(big.path() / "fifo", target);
      return target;
    case Kind::sparse_10gb:
    case Kind::over_limit: {
      const fs::path file = big.path() / target.filename();
      make_sparse(file, c.kind == Kind::sparse_10gb ? kTenGB : limit_of(c.surface) + 1);
      if (named) return file;
      fs::create_symlink(file, target);
      return target;
    }
    case Kind::missing: return target;
    case Kind::unreadable:
      std::ofstream(target) << "secret";
      fs::permissions(target, fs::perms::none);
      return target;
    case Kind::esc_fifo: {
      const fs::path odd = dir.path() / ("odd\x1b[2J" + target.extension().string());
      EXPECT_EQ(::mkfifo(odd.c_str(), 0600), 0);
      return odd;
    }
  }
  return target;
}

std::string command_of(const ReadCase& c, const fs::path& given, const TempDir& dir) {
  switch (c.surface) {
    case Surface::import_t1: return "import-t1 " + quote(given);
    case Surface::upgrade_space: return "upgrade-space " + quote(given);
    case Surface::plan_allowed: return "plan --arch sm_90 " + quote(dir.path() / "allowed_space.yaml");
    default: return "plan --arch sm_90 " + quote(dir.path() / "space.yaml");
  }
}

// Size, mode and modification time of each file in `big`: a large file is not hashed.
std::string stat_digest(const fs::path& dir) {
  std::ostringstream out;
  for (const auto& e : fs::directory_iterator(dir)) {
    struct stat st {};
    ::lstat(e.path().c_str(), &st);
    out << e.path().filename().string() << ' ' << st.st_size << ' ' << st.st_mode << ' ' << st.st_mtim.tv_sec << '.'
        << st.st_mtim.tv_nsec << '\n';
  }
  return out.str();
}

// Root reads a file of mode 000: the unreadable case runs the CLI as nobody, who must reach the
// rest of the folder.
std::string prefix_for(const ReadCase& c, const TempDir& dir) {
  if (c.kind != Kind::unreadable || ::geteuid() != 0) return "";
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
  for (const auto& e : fs::directory_iterator(dir.path()))
    if (e.path() != target_of(dir, c.surface))
      fs::permissions(e.path(), fs::perms::group_read | fs::perms::others_read, fs::perm_options::add);
  return unprivileged_command_prefix();
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class HostileRead : public ::testing::TestWithParam<ReadCase> {};

TEST_P(HostileRead, RefusedAtOnceInOneLineWithNothingChanged) {
  const ReadCase& c = GetParam();
  TempDir dir;
  TempDir big;
  write_valid(dir);
  const fs::path given = plant(c, dir, big);
  const std::string prefix = prefix_for(c, dir);
  const std::string before = tree_digest(dir.path());
  const std::string big_before = stat_digest(big.path());
  const CommandResult r =
      run_command("cd " + quote(dir.path()) + " && TILETUNE_CUBIN_CACHE=" + quote(dir.path() / "cubin") +
                  " TILETUNE_DB=" + quote(dir.path() / "cache.db") + " timeout 60 " + prefix + quote(cli_path()) + " " +
                  command_of(c, given, dir) + " </dev/null");
  RecordProperty("output", r.output);
  EXPECT_EQ(r.exit_code, c.exit_code) << r.output;
  const std::vector<std::string> lines = split_lines(r.output);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].rfind("tiletune: ", 0), 0u) << r.output;
  EXPECT_NE(lines[0].find(c.message), std::string::npos) << r.output;
  // One line; a search space's error adds one "  hint:" line, as every space error does.
  EXPECT_TRUE(lines.size() == 1 || (lines.size() == 2 && lines[1].rfind("  hint: ", 0) == 0)) << r.output;
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << "a raw ESC reached the terminal";
  EXPECT_LT(r.output.size(), 1000u) << r.output;
  EXPECT_EQ(tree_digest(dir.path()), before) << r.output;
  EXPECT_EQ(stat_digest(big.path()), big_before);
  if (c.kind == Kind::unreadable) fs::permissions(target_of(dir, c.surface), fs::perms::owner_all);
}

// The valid folder works: the surfaces above fail because of the hostile file, nothing else.
TEST(HostileReadBaseline, TheValidFilesAreRead) {
  TempDir dir;
  TempDir cubins;  // plan compiles what it plans: its cubins go elsewhere
  write_valid(dir);
  const std::string before = tree_digest(dir.path());
  const fs::path t1 = test_data_dir() / "interchange" / "t1" / "vector_add.json";
  for (const std::string& args :
       {"import-t1 " + quote(t1), std::string("upgrade-space s.yaml"), std::string("plan --arch sm_90 space.yaml"),
        std::string("plan --arch sm_90 allowed_space.yaml")}) {
    const CommandResult r = run_command("cd " + quote(dir.path()) + " && TILETUNE_CUBIN_CACHE=" + quote(cubins.path()) +
                                        " TILETUNE_DB=" + quote(dir.path() / "cache.db") + " timeout 60 " +
                                        quote(cli_path()) + " " + args + " </dev/null");
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.output;
  }
  EXPECT_EQ(tree_digest(dir.path()), before);
}

// The cases of every surface that reads a named file whole (import-t1, upgrade-space).
std::vector<ReadCase> whole_file_cases(Surface s, const std::string& tag, const std::string& what,
                                       const std::string& limit) {
  return {
      {tag + "_fifo", s, Kind::fifo, 1, ": not a regular file (a FIFO)"},
      {tag + "_dev_zero", s, Kind::dev_zero, 1, "/dev/zero: not a regular file (a character device)"},
      {tag + "_directory", s, Kind::directory, 2, "directory"},
      {tag + "_symlink_to_fifo", s, Kind::fifo_link, 1, ": not a regular file (a FIFO)"},
      {tag + "_sparse_10gb", s, Kind::sparse_10gb, 1,
       ": 10000000000 bytes, more than " + what + " can be (" + limit + ")"},
      {tag + "_over_limit", s, Kind::over_limit, 1, " bytes, more than " + what + " can be (" + limit + ")"},
      {tag + "_missing", s, Kind::missing, 2, "does not exist"},
      {tag + "_unreadable", s, Kind::unreadable, 1, ": cannot open the file: Permission denied"},
      {tag + "_esc_in_name", s, Kind::esc_fifo, 1, "odd\\x1b[2J"},
  };
}

// Hostile .npy (and raw) contents for a file the space names.
std::vector<ReadCase> npy_cases(Surface s, const std::string& tag) {
  const std::string path = s == Surface::plan_input ? "in_64.npy: " : "out_64.npy: ";
  return {
      {tag + "_header_4gib", s, Kind::bytes, 1,
       path + "the .npy header announces 4294967295 bytes, more than the 65536", npy_announcing(0xFFFFFFFFu)},
      {tag + "_shape_4tib", s, Kind::bytes, 1, path + "the .npy header announces 4398046511104 bytes of data",
       npy_f32("(1099511627776,)", 256)},
      {tag + "_shape_overflows", s, Kind::bytes, 1, "more than 2^64 elements",
       npy_f32("(4294967296, 4294967296)", 256)},
      // (2^62 + 16) x 4 wraps to 64: once read as the 64 elements the space wants.
      {tag + "_shape_wraps_to_64", s, Kind::bytes, 1, "more than 2^64 elements",
       npy_f32("(4611686018427387920, 4)", 256)},
      {tag + "_bytes_overflow", s, Kind::bytes, 1, "more than 2^64 bytes", npy_f32("(4611686018427387904,)", 256)},
      {tag + "_shape_negative", s, Kind::bytes, 1, "'shape' is not a tuple of sizes", npy_f32("(-64,)", 256)},
      {tag + "_shape_garbage", s, Kind::bytes, 1, "'shape' is not a tuple of sizes", npy_f32("('x',)", 256)},
      {tag + "_size_past_2_64", s, Kind::bytes, 1, "a size in 'shape' past 2^64",
       npy_f32("(99999999999999999999999,)", 256)},
      {tag + "_truncated", s, Kind::bytes, 1, path + "the .npy header announces 256 bytes of data, the file holds 100",
       npy_f32("(64,)", 100)},
      {tag + "_wrong_count", s, Kind::bytes, 1, "has 64 elements, the file holds 63", npy_f32("(63,)", 256)},
      {tag + "_wrong_dtype", s, Kind::bytes, 1, "is float, the file holds double", npy_f32("(64,)", 512, "<f8")},
      {tag + "_fortran_order", s, Kind::bytes, 1, "Fortran order", npy_f32("(8, 8)", 256, "<f4", "True")},
      {tag + "_big_endian", s, Kind::bytes, 1, "big-endian", npy_f32("(64,)", 256, ">f4")},
      {tag + "_bad_magic", s, Kind::bytes, 1, path + "not an .npy file", "\x93NUMPZ" + std::string(300, '\0')},
      {tag + "_empty", s, Kind::bytes, 1, path + "not an .npy file", ""},
      {tag + "_version_9", s, Kind::bytes, 1, "version 9 is not supported", "\x93NUMPY\x09" + std::string(300, '\0')},
      {tag + "_non_utf8_header", s, Kind::bytes, 1, "dtype '\\xff\\xfe<f4'", npy_f32("(64,)", 256, "\xff\xfe<f4")},
      {tag + "_esc_in_header", s, Kind::bytes, 1, "dtype '\\x1b]0;pwned\\x07<f4'",
       npy_f32("(64,)", 256, "\x1b]0;pwned\x07<f4")},
      {tag + "_newlines_header", s, Kind::bytes, 1, "\\n\\n\\n", npy("{" + std::string(60000, '\n') + "}", 256)},
      {tag + "_unknown_key", s, Kind::bytes, 1, "an unknown key 'evil'",
       npy("{'descr': '<f4', 'fortran_order': False, 'shape': (64,), 'evil': 1}", 256)},
  };
}

std::vector<ReadCase> all_cases() {
  std::vector<ReadCase> out = whole_file_cases(Surface::import_t1, "import_t1", "a T1 file", "64 MiB");
  for (ReadCase& c : whole_file_cases(Surface::upgrade_space, "upgrade_space", "a search space", "4 MiB"))
    out.push_back(c);
  for (ReadCase& c : npy_cases(Surface::plan_input, "input")) out.push_back(c);
  const std::vector<ReadCase> files = {
      {"input_fifo", Surface::plan_input, Kind::fifo, 1, "in_64.npy: not a regular file (a FIFO)"},
      {"input_dev_zero", Surface::plan_input, Kind::dev_zero, 1, "in_64.npy: not a regular file (a character device)"},
      {"input_directory", Surface::plan_input, Kind::directory, 1, "in_64.npy: a directory, not a data file"},
      {"input_symlink_to_fifo", Surface::plan_input, Kind::fifo_link, 1, "in_64.npy: not a regular file (a FIFO)"},
      {"input_sparse_10gb", Surface::plan_input, Kind::sparse_10gb, 1, "in_64.npy: not an .npy file"},
      {"input_missing", Surface::plan_input, Kind::missing, 1, "in_64.npy: no such file"},
      {"input_unreadable", Surface::plan_input, Kind::unreadable, 1,
       "in_64.npy: cannot open the file: Permission denied"},
      {"expected_fifo", Surface::plan_expected, Kind::fifo, 1, "out_64.npy: not a regular file (a FIFO)"},
      {"expected_dev_zero", Surface::plan_expected, Kind::dev_zero, 1,
       "out_64.npy: not a regular file (a character device)"},
      {"expected_sparse_10gb", Surface::plan_expected, Kind::sparse_10gb, 1, "out_64.npy: not an .npy file"},
      {"allowed_fifo", Surface::plan_allowed, Kind::fifo, 1, "is not a regular file"},
      {"allowed_dev_zero", Surface::plan_allowed, Kind::dev_zero, 1, "is not a regular file"},
      {"allowed_directory", Surface::plan_allowed, Kind::directory, 1, "is a directory"},
      {"allowed_sparse_10gb", Surface::plan_allowed, Kind::sparse_10gb, 1,
       "allowed.csv: 10000000000 bytes, more than an allowed-configs file can be (256 MiB)"},
      {"allowed_over_limit", Surface::plan_allowed, Kind::over_limit, 1,
       "allowed.csv: 268435457 bytes, more than an allowed-configs file can be (256 MiB)"},
      {"allowed_unreadable", Surface::plan_allowed, Kind::unreadable, 1,
       "allowed.csv: cannot open the file: Permission denied"},
      // The kernel source is read when the plan compiles: still located at the space's source: key.
      {"source_unreadable", Surface::plan_source, Kind::unreadable, 1,
       "space.yaml:2:9: error: cannot read kernel source '"},
      {"source_over_limit", Surface::plan_source, Kind::over_limit, 1, "space.yaml:2:9: error: kernel source '"},
  };
  out.insert(out.end(), files.begin(), files.end());
  for (ReadCase& c : npy_cases(Surface::plan_expected, "expected")) out.push_back(c);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Issue22, HostileRead, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tiletune::testing
