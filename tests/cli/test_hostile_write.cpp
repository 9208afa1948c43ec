// Hostile outputs through the `tiletune` executable (issue 22, "one way to write an output"): each
// writing command (report -o as HTML, SVG and PNG, import-t1 -o, import-kt-cache -o) against each
// kind of target: a new file, a null device (written through, still a device), a FIFO with no reader
// (refused at once), a link to a file (the file replaced, the link kept), a dangling link, a
// directory, a 600 file (mode kept), a directory it cannot write, /dev/full, and its own input
// under another name or through a link (exit 2); upgrade-space --write and merge on their
// targets; stdout on /dev/full or closed for every command that prints. As root the devices are
// nodes of the case's own (char_device), so that a command that wrongly replaced its output
// (as tiletune did before issue 22) cannot replace the machine's /dev/null. Each case asserts the
// exit status, one located line, and that nothing else in its directory changed. CPU only.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <sstream>

#include "cli_fixture.hpp"
#include "test_support.hpp"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }
std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

/// Runs the CLI in dir (umask 022, caches pointed into dir) with a watchdog: nothing may block.
std::string command_in(const fs::path& dir, const std::string& args, const std::string& prefix = "") {
  return "cd " + quote(dir) + " && umask 022 && TILETUNE_CUBIN_CACHE=" + quote(dir / "cubin") +
         " TILETUNE_DB=" + quote(dir / "cache.db") + " timeout 60 " + prefix + quote(cli_path()) + " " + args;
}

CommandResult tiletune_in(const fs::path& dir, const std::string& args, const std::string& prefix = "") {
  return run_command(command_in(dir, args, prefix));
}

/// tree_digest of dir without the lines of `except` (a path relative to dir, and what is under it).
std::string digest_except(const fs::path& dir, const std::vector<std::string>& except) {
  std::istringstream in(tree_digest(dir));
  std::string out, line;
  while (std::getline(in, line)) {
    const bool skip = std::any_of(except.begin(), except.end(), [&](const std::string& e) {
      return line.rfind(e + " ", 0) == 0 || line.rfind(e + "/", 0) == 0;
    });
    if (!skip) out += line + "\n";
  }
  return out;
}

/// The output without a command's notes ("import-t1: note: ..."), which may come before an error.
std::string without_notes(const std::string& output) {
  std::istringstream in(output);
  std::string out, line;
  while (std::getline(in, line))
    if (line.find(": note: ") == std::string::npos || line.rfind("tiletune: ", 0) == 0) out += line + "\n";
  return out;
}

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

std::string t1_json() {
  return R"({
  "General": {"BenchmarkName": "vector_add", "OutputFormat": "JSON"},
  "ConfigurationSpace": {"TuningParameters": [{"Name": "BLOCK", "Type": "uint", "Values": "[64, 128]"}]},
  "KernelSpecification": {
    "Language": "CUDA", "KernelName": "vector_add", "KernelFile": ")" +
         (source_dir() / "kernels" / "vector_add.cu").string() + R"(",
    "GlobalSize": {"X": "1048576"}, "LocalSize": {"X": "BLOCK"},
    "Arguments": [
      {"Name": "a", "Type": "float4", "Size": 262144, "FillType": "Random", "FillValue": 1.0, "AccessType": "ReadOnly", "MemoryType": "Vector"},
      {"Name": "b", "Type": "float4", "Size": 262144, "FillType": "Random", "FillValue": 1.0, "AccessType": "ReadOnly", "MemoryType": "Vector"},
      {"Name": "c", "Type": "float4", "Size": 262144, "AccessType": "WriteOnly", "MemoryType": "Vector"},
      {"Name": "n", "Type": "int32", "FillValue": 1048576, "MemoryType": "Scalar"}
    ]
  }
})";
}

// --- each writing command against each kind of target -----------------------------------------

/// A command that writes a file named with -o: its input (made in the case's directory) and args.
struct Writer {
  std::string name;
  std::string input;  ///< its input, a file in the case's directory
  std::string args;   ///< after `tiletune`; OUT stands for the output
};

const Writer kWriters[] = {
    {"report_html", "in.db", "report --db in.db -o OUT"},
    {"report_svg", "in.db", "report --db in.db --format svg --plot status -o OUT"},
    {"report_png", "in.db", "report --db in.db --format png --plot status -o OUT"},
    {"import_t1", "in.json", "import-t1 in.json -o OUT --force"},
    {"import_kt_cache", "in.json", "import-kt-cache in.json -o OUT --space side/space.yaml --force"},
};

void make_input(const TempDir& dir, const Writer& w) {
  if (w.name.rfind("report", 0) == 0)
    (void)write_cache(dir.path() / w.input, "GPU-1", 0.15, /*wal=*/false);
  else if (w.name == "import_t1")
    (void)dir.write(w.input, t1_json());
  else
    (void)dir.write(w.input, read_file(test_data_dir() / "interchange" / "kt" / "vector_add.json"));
  if (w.name == "import_kt_cache") fs::create_directory(dir.path() / "side");  // where its space goes
}

enum class Target {
  new_file,
  dev_null,
  fifo,
  link_to_file,
  dangling_link,
  directory,
  mode_600,
  read_only_dir,
  dev_full,
  input_hard_link,
  input_symlink
};

const char* target_name(Target t) {
  static const char* names[] = {"new_file",      "dev_null",        "fifo",         "link_to_file",
                                "dangling_link", "directory",       "mode_600",     "read_only_dir",
                                "dev_full",      "input_hard_link", "input_symlink"};
  return names[static_cast<int>(t)];
}

struct WriteCase {
  Writer writer;
  Target target;
};

std::ostream& operator<<(std::ostream& out, const WriteCase& c) {
  return out << c.writer.name << "_" << target_name(c.target);
}

class HostileWrite : public ::testing::TestWithParam<WriteCase> {};

/// Makes the target in dir and returns the path the command is given.
fs::path make_target(const TempDir& dir, const WriteCase& c) {
  const fs::path out = dir.path() / "out";
  switch (c.target) {
    case Target::new_file: return out;
    case Target::dev_null: return char_device(dir.path(), "null", 3);
    case Target::dev_full: return char_device(dir.path(), "full", 7);
    case Target::fifo: EXPECT_EQ(::mkfifo(out.c_str(), 0644), 0); return out;
    case Target::link_to_file:
      (void)dir.write("real", "old");
      EXPECT_EQ(::chmod((dir.path() / "real").c_str(), 0640), 0);
      fs::create_symlink("real", out);
      return out;
    case Target::dangling_link: fs::create_symlink("nowhere/real", out); return out;
    case Target::directory: fs::create_directory(out); return out;
    case Target::mode_600:
      (void)dir.write("out", "old");
      EXPECT_EQ(::chmod(out.c_str(), 0600), 0);
      return out;
    case Target::read_only_dir:
      (void)dir.write("out", "old");
      EXPECT_EQ(::chmod(out.c_str(), 0666), 0);  // only the directory stands in the way
      return out;
    case Target::input_hard_link: fs::create_hard_link(dir.path() / c.writer.input, out); return out;
    case Target::input_symlink: fs::create_symlink(c.writer.input, out); return out;
  }
  return out;
}

/// What the one line says (after "tiletune: "), or "" for a command that succeeds.
std::string expected_message(const WriteCase& c, const fs::path& out) {
  const std::string o = out.string();
  switch (c.target) {
    case Target::new_file:
    case Target::dev_null:
    case Target::link_to_file:
    case Target::mode_600: return "";
    case Target::fifo: return o + ": a FIFO with no reader";
    case Target::dangling_link:
      return o +
             ": a symbolic link to nothing (nowhere/real): name a file that exists, or where the new file should be";
    case Target::directory: return o + ": a directory, not a file";
    case Target::read_only_dir: return o + ": cannot write: Permission denied";
    case Target::dev_full: return o + ": cannot write: No space left on device";
    case Target::input_hard_link:
    case Target::input_symlink: return o + " is " + c.writer.input + ", an input of this command (the same file)";
  }
  return "?";
}

int expected_exit(Target t) {
  if (t == Target::input_hard_link || t == Target::input_symlink) return 2;  // refused before any work
  if (t == Target::new_file || t == Target::dev_null || t == Target::link_to_file || t == Target::mode_600) return 0;
  return 1;
}

TEST_P(HostileWrite, WritesThroughReplacesOrRefusesAndLeavesTheRest) {
  const WriteCase& c = GetParam();
  if (c.writer.name == "report_png" && run_command("command -v rsvg-convert").exit_code != 0)
    GTEST_SKIP() << "no rsvg-convert";
  TempDir dir;
  make_input(dir, c.writer);
  const fs::path out = make_target(dir, c);
  std::string args = c.writer.args;
  args.replace(args.find("OUT"), 3, quote(out));
  const bool read_only = c.target == Target::read_only_dir;
  if (read_only) ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  // What must not change: everything but the file written (and, on success, import-kt-cache's side files).
  const std::vector<std::string> written = {"out", "real", "side"};
  const bool ok = expected_exit(c.target) == 0;
  const std::string before = ok ? digest_except(dir.path(), written) : tree_digest(dir.path());

  CommandResult r;
  if (read_only) {
    ReadOnly guard(dir.path());
    r = tiletune_in(dir.path(), args, unprivileged_command_prefix());
  } else {
    r = tiletune_in(dir.path(), args);
  }
  EXPECT_EQ(r.exit_code, expected_exit(c.target)) << r.output;
  const std::string message = expected_message(c, out);
  if (!ok) {
    EXPECT_EQ(without_notes(r.output), "tiletune: " + message + "\n") << r.output;
    EXPECT_EQ(lines(without_notes(r.output)), 1u) << r.output;
    EXPECT_EQ(tree_digest(dir.path()), before) << r.output;
    return;
  }
  EXPECT_EQ(r.output.find("tiletune: "), std::string::npos) << r.output;
  EXPECT_EQ(digest_except(dir.path(), written), before) << r.output;
  struct stat st {};
  switch (c.target) {
    case Target::dev_null:
      ASSERT_EQ(::lstat(out.c_str(), &st), 0);
      EXPECT_TRUE(S_ISCHR(st.st_mode)) << out << " was replaced";
      EXPECT_FALSE(fs::exists(dir.path() / "out"));
      break;
    case Target::new_file:
      EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(out)));
      EXPECT_EQ(mode_of(out), 0644u);
      EXPECT_GT(fs::file_size(out), 100u);
      break;
    case Target::link_to_file:
      EXPECT_TRUE(fs::is_symlink(out)) << "the link was replaced by a file";
      EXPECT_EQ(mode_of(dir.path() / "real"), 0640u);
      EXPECT_GT(fs::file_size(dir.path() / "real"), 100u);
      break;
    case Target::mode_600:
      EXPECT_EQ(mode_of(out), 0600u);
      EXPECT_GT(fs::file_size(out), 100u);
      break;
    default: break;
  }
  // Nothing else appeared: no temporary file beside the output.
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find(".tiletune-"), std::string::npos) << e.path();
}

std::vector<WriteCase> write_cases() {
  std::vector<WriteCase> cases;
  for (const Writer& w : kWriters)
    for (int t = 0; t <= static_cast<int>(Target::input_symlink); ++t) cases.push_back({w, static_cast<Target>(t)});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Write, HostileWrite, ::testing::ValuesIn(write_cases()), [](const auto& info) {
  std::ostringstream name;
  name << info.param;
  return name.str();
});

// --- upgrade-space --write: its input is its output -------------------------------------------

const std::string kOldSpace =
    "kernel: transpose\nsource: " + (source_dir() / "kernels" / "transpose.cu").string() +
    "\nentry: transpose\nproblem: {N: [1024]}\nparams: {TILE: [16, 32], BLOCK_ROWS: [4, 8], PAD: [0, 1], VEC: [1]}\n"
    "launch:\n  grid: [ceil_div(N, TILE), ceil_div(N, TILE)]\n  block: [TILE / VEC, BLOCK_ROWS]\n"
    "buffers:\n  in:  {type: float, count: N*N, init: random}\n  out: {type: float, count: N*N, output: true}\n"
    "args: [in, out, N]\nverify: {reference: cpu, rtol: 0}\n";

TEST(HostileWriteUpgrade, AFileKeepsItsModeAndALinkIsKept) {
  TempDir dir;
  const fs::path file = dir.write("old.yaml", kOldSpace);
  ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
  const fs::path real = dir.write("real.yaml", kOldSpace);
  ASSERT_EQ(::chmod(real.c_str(), 0640), 0);
  fs::create_symlink("real.yaml", dir.path() / "link.yaml");
  for (const char* name : {"old.yaml", "link.yaml"}) {
    SCOPED_TRACE(name);
    const CommandResult r = tiletune_in(dir.path(), std::string("upgrade-space --write ") + name);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.find("tiletune: "), std::string::npos) << r.output;
  }
  EXPECT_NE(read_file(file).find("\"ceil_div(N, TILE)\""), std::string::npos);
  EXPECT_EQ(mode_of(file), 0600u);
  EXPECT_TRUE(fs::is_symlink(dir.path() / "link.yaml"));
  EXPECT_NE(read_file(real).find("\"ceil_div(N, TILE)\""), std::string::npos);
  EXPECT_EQ(mode_of(real), 0640u);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 3)
      << "a temporary file was left";
}

TEST(HostileWriteUpgrade, AReadOnlyDirectoryIsCannotWriteAndLeavesTheFile) {
  TempDir dir;
  const fs::path file = dir.write("old.yaml", kOldSpace);
  ASSERT_EQ(::chmod(file.c_str(), 0666), 0);
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  const std::string before = tree_digest(dir.path());
  ReadOnly guard(dir.path());
  const CommandResult r = tiletune_in(dir.path(), "upgrade-space --write old.yaml", unprivileged_command_prefix());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // The changes are listed on stderr first; the last line is the error.
  const std::string line = "tiletune: old.yaml: cannot write: Permission denied\n";
  EXPECT_EQ(r.output.find("tiletune: "), r.output.size() - line.size()) << r.output;
  EXPECT_EQ(r.output.substr(r.output.size() - std::min(r.output.size(), line.size())), line) << r.output;
  EXPECT_EQ(tree_digest(dir.path()), before);
}

// --- stdout that cannot be written --------------------------------------------------------------

struct PrintCase {
  std::string args;  ///< after `tiletune`, in a directory with cache.db, in.json, old.yaml and small.yaml
};

/// A space of one config, for plan.
const std::string kSmallSpace =
    "kernel: transpose\nsource: " + (source_dir() / "kernels" / "transpose.cu").string() +
    "\nentry: transpose\nproblem: {N: [1024]}\nparams: {TILE: [32], BLOCK_ROWS: [8], PAD: [0], VEC: [1]}\n"
    "launch:\n  grid: [\"ceil_div(N, TILE)\", \"ceil_div(N, TILE)\"]\n  block: [TILE / VEC, BLOCK_ROWS]\n"
    "buffers:\n  in:  {type: float, count: N*N, init: random}\n  out: {type: float, count: N*N, output: true}\n"
    "args: [in, out, N]\nverify: {reference: {builtin: transpose}, rtol: 0}\n";

std::ostream& operator<<(std::ostream& out, const PrintCase& c) { return out << c.args; }

class HostileStdout : public ::testing::TestWithParam<PrintCase> {};

TEST_P(HostileStdout, AFullOrClosedStdoutIsExitOneCannotWrite) {
  TempDir dir;
  (void)write_cache(dir.path() / "cache.db", "GPU-1", 0.15, /*wal=*/false);
  (void)dir.write("in.json", t1_json());
  (void)dir.write("old.yaml", kOldSpace);
  (void)dir.write("small.yaml", kSmallSpace);
  const std::string args = GetParam().args;
  // The command works when stdout does.
  const CommandResult ok = tiletune_in(dir.path(), args + " > /dev/null");
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  const std::string before = tree_digest(dir.path());
  for (const auto& [redirect, reason] : {std::pair<std::string, std::string>{" > /dev/full", "No space left on device"},
                                         std::pair<std::string, std::string>{" >&-", "Bad file descriptor"}}) {
    SCOPED_TRACE(redirect);
    // stdout redirected inside the subshell; its stderr is what run_command captures.
    const CommandResult r = run_command("(" + command_in(dir.path(), args) + redirect + ")");
    const std::string& err = r.output;
    EXPECT_EQ(r.exit_code, 1) << err;
    // Notes a command prints on stderr may come first; the error is the one line of its kind, last.
    const std::string line = "tiletune: cannot write to standard output: " + reason + "\n";
    EXPECT_EQ(err.find("tiletune: "), err.size() < line.size() ? std::string::npos : err.size() - line.size()) << err;
    EXPECT_TRUE(err.size() >= line.size() && err.compare(err.size() - line.size(), line.size(), line) == 0) << err;
    EXPECT_EQ(tree_digest(dir.path()), before);
  }
}

INSTANTIATE_TEST_SUITE_P(Print, HostileStdout,
                         ::testing::Values(PrintCase{"show"}, PrintCase{"show --format json"}, PrintCase{"best"},
                                           PrintCase{"best --format json"}, PrintCase{"export"},
                                           PrintCase{"export --format json"}, PrintCase{"export --format csv"},
                                           PrintCase{"plan small.yaml --arch sm_90 --no-cubin-cache --threads 1 -q"},
                                           PrintCase{"report --db cache.db -o -"},
                                           PrintCase{"report --db cache.db --format svg --plot status -o -"},
                                           PrintCase{"import-t1 in.json"}, PrintCase{"upgrade-space old.yaml"}));

// --- merge: its target is a cache that SQLite writes in place -----------------------------------

/// merge TARGET good.db in dir, where good.db is a cache of another device.
CommandResult merge_into(const TempDir& dir, const std::string& target, const std::string& prefix = "") {
  return tiletune_in(dir.path(), "merge " + target + " good.db", prefix);
}

/// The one line of a merge that failed, which names the target; and dir as it was.
void expect_refused(const CommandResult& r, int status, const std::string& target, const std::string& before,
                    const TempDir& dir) {
  EXPECT_EQ(r.exit_code, status) << r.output;
  EXPECT_EQ(r.output.rfind("tiletune: ", 0), 0u) << r.output;
  EXPECT_EQ(lines(r.output), 1u) << r.output;
  EXPECT_NE(r.output.find(target), std::string::npos) << r.output;
  EXPECT_EQ(tree_digest(dir.path()), before) << r.output;
}

class HostileMergeTarget : public ::testing::Test {
 protected:
  void SetUp() override { (void)write_cache(dir_.path() / "good.db", "GPU-2", 0.15, /*wal=*/false); }
  TempDir dir_;
};

TEST_F(HostileMergeTarget, ADeviceIsRefusedAndStaysADevice) {
  for (const fs::path& dev : {char_device(dir_.path(), "null", 3), char_device(dir_.path(), "full", 7)}) {
    SCOPED_TRACE(dev.string());
    const std::string before = tree_digest(dir_.path());
    expect_refused(merge_into(dir_, quote(dev)), 1, dev.string() + " is not a tiletune cache (a device", before, dir_);
    struct stat st {};
    ASSERT_EQ(::lstat(dev.c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
  }
}

TEST_F(HostileMergeTarget, AFifoIsRefusedAtOnce) {
  ASSERT_EQ(::mkfifo((dir_.path() / "fifo.db").c_str(), 0644), 0);
  const std::string before = tree_digest(dir_.path());
  expect_refused(merge_into(dir_, "fifo.db"), 1, "fifo.db is not a tiletune cache (a FIFO", before, dir_);
}

TEST_F(HostileMergeTarget, ADirectoryIsRefused) {
  fs::create_directory(dir_.path() / "dir.db");
  const std::string before = tree_digest(dir_.path());
  expect_refused(merge_into(dir_, "dir.db"), 1, "dir.db: a directory, not a file", before, dir_);
}

TEST_F(HostileMergeTarget, ADanglingLinkIsRefused) {
  fs::create_directory(dir_.path() / "real");
  fs::create_symlink("real/all.db", dir_.path() / "all.db");
  const std::string before = tree_digest(dir_.path());
  expect_refused(merge_into(dir_, "all.db"), 1, "all.db: a symbolic link to nothing (real/all.db)", before, dir_);
}

TEST_F(HostileMergeTarget, TheSourceUnderAnotherNameIsExitTwo) {
  fs::create_symlink("good.db", dir_.path() / "alias.db");
  fs::create_hard_link(dir_.path() / "good.db", dir_.path() / "hard.db");
  const std::string before = tree_digest(dir_.path());
  for (const std::string alias : {"alias.db", "hard.db"})
    expect_refused(merge_into(dir_, alias), 2, "good.db is the target " + alias + " itself", before, dir_);
}

TEST_F(HostileMergeTarget, ALinkToACacheIsMergedThroughAndKept) {
  fs::create_directory(dir_.path() / "real");
  (void)write_cache(dir_.path() / "real" / "all.db", "GPU-1", 0.15, /*wal=*/false);
  ASSERT_EQ(::chmod((dir_.path() / "real" / "all.db").c_str(), 0600), 0);
  fs::create_symlink("real/all.db", dir_.path() / "all.db");
  const std::string good = cache_files_digest(dir_.path() / "good.db");
  const CommandResult r = merge_into(dir_, "all.db");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("good.db: 2 trials read, 2 added"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_symlink(dir_.path() / "all.db"));
  EXPECT_EQ(mode_of(dir_.path() / "real" / "all.db"), 0600u) << "the cache's mode changed";
  EXPECT_EQ(cache_files_digest(dir_.path() / "good.db"), good) << "a source changed";
  const CommandResult show = tiletune_in(dir_.path(), "show --db all.db --format csv");
  EXPECT_EQ(lines(show.output), 5u) << show.output;  // a header and four trials, two per device
}

// A target in a directory the merge cannot write: SQLite cannot make its journal there, so the
// merge fails with the target, the source and the directory as they were.
TEST_F(HostileMergeTarget, AReadOnlyDirectoryLeavesTheTargetByteForByte) {
  const fs::path target = write_cache(dir_.path() / "all.db", "GPU-1", 0.15, /*wal=*/false);
  ASSERT_EQ(::chmod(target.c_str(), 0666), 0);  // only the directory stands in the way
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
  const std::string before = tree_digest(dir_.path());
  ReadOnly guard(dir_.path());
  const CommandResult r = merge_into(dir_, "all.db", unprivileged_command_prefix());
  expect_refused(r, 1, "on all.db: attempt to write a readonly database", before, dir_);
}

}  // namespace
}  // namespace tiletune::testing
