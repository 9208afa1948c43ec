// Hostile command lines and cache files through the `tiletune` executable (issue 12): every usage
// error exits 2 with one line naming the option, before any work and the same with or without a
// GPU; a cache command that fails leaves the cache and its -wal/-shm/-journal with the same
// SHA-256; reading never needs write access; `best` without a match exits 4. CPU only, fast.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_fixture.hpp"
#include "test_support.hpp"
#include "tiletune/cache_db.hpp"

namespace tiletune::testing {
namespace {

namespace fs = std::filesystem;

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }

const fs::path kSpace = source_dir() / "configs" / "transpose.yaml";
const fs::path kRecording = test_data_dir() / "data" / "landscapes" / "transpose.csv";

/// Runs the CLI in dir, its caches pointed into dir, with a watchdog (nothing may block).
CommandResult tiletune_in(const TempDir& dir, const std::string& args, const std::string& prefix = "") {
  return run_command("cd " + quote(dir.path()) + " && TILETUNE_CUBIN_CACHE=" + quote(dir.path() / "cubin") +
                     " TILETUNE_DB=" + quote(dir.path() / "cache.db") + " timeout 60 " + prefix + quote(cli_path()) +
                     " " + args);
}

std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// --- usage errors ---------------------------------------------------------------------------

struct UsageCase {
  std::string args;     ///< after `tiletune`; SPACE and REC stand for the shipped space and recording
  std::string message;  ///< what the one line on stderr must say
};

std::ostream& operator<<(std::ostream& out, const UsageCase& c) { return out << c.args; }

std::string expand(std::string args) {
  for (const auto& [word, path] : {std::pair{std::string("SPACE"), kSpace}, std::pair{std::string("REC"), kRecording}})
    for (auto at = args.find(word); at != std::string::npos; at = args.find(word))
      args.replace(at, word.size(), quote(path));
  return args;
}

class UsageError : public ::testing::TestWithParam<UsageCase> {};

TEST_P(UsageError, ExitsTwoWithOneLineBeforeAnyWork) {
  const UsageCase& c = GetParam();
  TempDir dir;
  const CommandResult r = tiletune_in(dir, expand(c.args));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output.rfind("tiletune: ", 0), 0u) << r.output;
  EXPECT_EQ(lines(r.output), 1u) << r.output;
  EXPECT_NE(r.output.find(c.message), std::string::npos) << r.output;
  // Nothing was done: no fallback to plan, no cubin cache, no result cache.
  EXPECT_EQ(r.output.find("no CUDA device present"), std::string::npos) << r.output;
  EXPECT_TRUE(entries(dir.path()).empty()) << r.output;
}

INSTANTIATE_TEST_SUITE_P(
    Cli, UsageError,
    ::testing::Values(
        UsageCase{"plan --size N SPACE", "--size: 'N': expected NAME=VALUE"},
        UsageCase{"plan --size N=abc SPACE", "--size: 'N=abc': the value is not a whole number"},
        UsageCase{"plan --size N=-5 SPACE", "--size: 'N=-5'"},
        UsageCase{"plan --size N=99999999999999999999 SPACE", "--size: 'N=99999999999999999999'"},
        UsageCase{"plan --size =5 SPACE", "--size: '=5'"},
        UsageCase{"plan --size M=3 --arch sm_90 SPACE", "'M' is not a problem size of transpose"},
        UsageCase{"plan --arch sm_999 SPACE", "--arch: 'sm_999': no device limits for sm_999"},
        UsageCase{"plan --arch banana SPACE", "--arch: 'banana' is not a GPU architecture"},
        UsageCase{"plan --threads 100000 SPACE", "--threads: 100000 is out of range (expected 0 to 256)"},
        UsageCase{"plan --threads -1 SPACE", "--threads: '-1' is not a whole number"},
        UsageCase{"plan --sample 0 SPACE", "--sample: 0 is out of range"},
        UsageCase{"plan --sample 100000000000000000000 SPACE", "--sample: '100000000000000000000' is out of range"},
        UsageCase{"plan --format xml SPACE", "--format"}, UsageCase{"plan --frobnicate SPACE", "--frobnicate"},
        UsageCase{"tune --budget abc SPACE", "--budget: 'abc': expected a count"},
        UsageCase{"tune --budget 0 SPACE", "--budget: '0'"},
        UsageCase{"tune --budget 150% SPACE", "--budget: '150%': a share of the space is at most 100%"},
        UsageCase{"tune --budget 10parsecs SPACE", "--budget: '10parsecs': unknown unit"},
        UsageCase{"tune --budget '' SPACE", "--budget: '': expected a count"},
        UsageCase{"tune --replay REC --budget '' SPACE", "--budget: '': expected a count"},
        UsageCase{"plan --sample 2 --max-configs 3 SPACE", "--sample 2 plans"},
        UsageCase{"plan --max-configs -1 SPACE", "--max-configs"},
        UsageCase{"tune --seed -1 SPACE", "--seed: '-1' is not a whole number"},
        UsageCase{"tune --seed 1e3 SPACE", "--seed: '1e3' is not a whole number"},
        UsageCase{"tune --max-time nan SPACE", "--max-time: 'nan' is not a finite number"},
        UsageCase{"tune --deadline inf SPACE", "--deadline: 'inf' is not a finite number"},
        UsageCase{"tune --max-noise 0 SPACE", "--max-noise: 0 is out of range"},
        UsageCase{"tune --min-samples 0 SPACE", "--min-samples: 0 is out of range"},
        UsageCase{"tune --min-time -1 SPACE", "--min-time: -1 is out of range"},
        UsageCase{"tune --top -1 SPACE", "--top: '-1' is not a whole number"},
        UsageCase{"tune --device -1 SPACE", "--device: '-1' is not a whole number"},
        UsageCase{"tune --devices 0,0 SPACE", "--devices: '0,0': device 0 is listed twice"},
        UsageCase{"tune --devices 0,x SPACE", "--devices: '0,x': 'x' is not a device ordinal"},
        UsageCase{"tune --devices 1, SPACE", "--devices: '1,': '' is not a device ordinal"},
        UsageCase{"tune --devices -1 SPACE", "--devices: '-1': '-1' is not a device ordinal"},
        UsageCase{"tune --devices any SPACE", "--devices: 'any': 'any' is not a device ordinal"},
        UsageCase{"tune --devices all --device 1 SPACE", "--device excludes --devices"},
        UsageCase{"tune --strategy bogus SPACE", "unknown strategy 'bogus'"},
        UsageCase{"tune --arch sm_999 SPACE", "--arch: 'sm_999'"},
        UsageCase{"tune --replay REC --in-flight 0 SPACE", "--in-flight: 0 is out of range"},
        UsageCase{"tune --replay REC --size N=1e3 SPACE", "--size: 'N=1e3'"},
        UsageCase{"best --format env", "--format env needs --kernel and --size"},
        UsageCase{"best --format cmake --kernel transpose", "--format cmake needs --kernel and --size"},
        UsageCase{"best --size N=8192", "--size needs --kernel"},
        UsageCase{"best --kernel transpose --size N=0", "--size: 'N=0'"},
        UsageCase{"best --kernel transpose --size N=1 --size N=2", "--size N=2: N is given twice"},
        UsageCase{"best --format yaml", "--format"},
        UsageCase{"best --kernel 'two words'", "--kernel: 'two words' is not a name"},
        UsageCase{"show --kernel " + std::string(100000, 'k'),
                  "--kernel: 'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk... (100000 bytes)' is not a name"},
        UsageCase{"export --device " + std::string(1000, 'd'), "is not 256 characters or fewer"},
        UsageCase{"show --limit 0", "--limit: 0 is out of range"},
        UsageCase{"show --limit -3", "--limit: '-3' is not a whole number"},
        UsageCase{"show --status fine", "--status"},
        UsageCase{"export --format landscape", "export --format landscape: name the kernel with --kernel"},
        UsageCase{"export --format xml", "--format"}, UsageCase{"merge all.db does-not-exist.db", "does-not-exist.db"},
        UsageCase{"merge", "into is required"}, UsageCase{"", "A subcommand is required"}));

// --- cache files ----------------------------------------------------------------------------

/// Sets a pragma on a closed file (in the rollback journal, so the header holds it).
fs::path with_pragma(const fs::path& path, const std::string& pragma) {
  const CommandResult r = run_command("sqlite3 " + quote(path) + " 'PRAGMA journal_mode = DELETE; " + pragma + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return path;
}

TEST(CliCache, AMergeIntoItselfIsAUsageErrorUnderEveryName) {
  TempDir dir;
  const auto target = write_cache(dir.path() / "all.db", "GPU-1");
  fs::create_hard_link(target, dir.path() / "hard.db");
  fs::create_symlink(target, dir.path() / "soft.db");
  fs::create_directories(dir.path() / "sub");
  const std::string before = cache_files_digest(target);
  for (const std::string alias : {"all.db", "hard.db", "soft.db", "sub/../all.db", "./all.db"}) {
    SCOPED_TRACE(alias);
    const CommandResult r = tiletune_in(dir, "merge all.db " + alias);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("merge: " + alias + " is the target all.db itself (the same file)"), std::string::npos)
        << r.output;
    EXPECT_EQ(lines(r.output), 1u) << r.output;
    EXPECT_EQ(cache_files_digest(target), before);
  }
}

TEST(CliCache, AMergeThatFailsOnASourceLeavesTheTargetByteForByte) {
  TempDir dir;
  const auto rollback = write_cache(dir.path() / "rollback.db", "GPU-1", 0.15, /*wal=*/false);
  const auto wal = write_cache(dir.path() / "wal.db", "GPU-2");
  const auto good = write_cache(dir.path() / "good.db", "GPU-3");
  const auto negative = with_pragma(write_cache(dir.path() / "negative.db", "GPU-4"), "PRAGMA user_version = -3");
  const auto newer = with_pragma(write_cache(dir.path() / "newer.db", "GPU-5"), "PRAGMA user_version = 99");
  const auto foreign = with_pragma(write_cache(dir.path() / "foreign.db", "GPU-6"), "PRAGMA application_id = 7");
  const auto text = dir.write("notes.txt", "a text file, not a cache, and long enough to be read as one");
  const fs::path fifo = dir.path() / "fifo.db";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  struct Bad {
    fs::path source;
    std::string why;
  };
  for (const Bad& bad : {Bad{negative, "has schema version -3, which no tiletune writes"},
                         Bad{newer, "was written by a newer tiletune (schema version 99"},
                         Bad{foreign, "is not a tiletune cache (application_id 0x00000007)"},
                         Bad{text, "is not a tiletune cache (not an SQLite database)"},
                         Bad{fifo, "is not a tiletune cache (a FIFO, not a regular file)"}}) {
    for (const fs::path& target : {rollback, wal}) {
      SCOPED_TRACE(bad.source.filename().string() + " into " + target.filename().string());
      const std::string before = cache_files_digest(target);
      const CommandResult r = tiletune_in(dir, "merge " + quote(target) + " " + quote(good) + " " + quote(bad.source));
      EXPECT_EQ(r.exit_code, 1) << r.output;
      EXPECT_NE(r.output.find(bad.source.string() + " " + bad.why), std::string::npos) << r.output;
      EXPECT_EQ(lines(r.output), 1u) << r.output;
      EXPECT_EQ(cache_files_digest(target), before) << "the target changed, or got side files";
    }
  }
  const CommandResult r = tiletune_in(dir, "merge new.db " + quote(good) + " " + quote(negative));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_FALSE(fs::exists(dir.path() / "new.db")) << "a merge that failed created its target";
}

// A merge that fails in the target itself, after the sources were read (here a trigger refuses
// every new trial): the transaction rolls back and the target keeps its rollback journal, byte
// for byte (issue 22: it was switched to WAL on opening).
TEST(CliCache, AMergeThatFailsInTheTargetLeavesItByteForByteInItsJournal) {
  TempDir dir;
  // Rollback journals both: a WAL source's reader would add its (empty) -wal and -shm beside it.
  const auto good = write_cache(dir.path() / "good.db", "GPU-3", 0.15, /*wal=*/false);
  const auto target =
      with_pragma(write_cache(dir.path() / "rollback.db", "GPU-1", 0.15, /*wal=*/false),
                  "CREATE TRIGGER refuse BEFORE INSERT ON trials BEGIN SELECT RAISE(ABORT, \"refused\"); END");
  const std::string before = cache_files_digest(target);
  const std::string listing = tree_digest(dir.path());
  const CommandResult r = tiletune_in(dir, "merge " + quote(target) + " " + quote(good));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.rfind("tiletune: ", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("refused"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(target.string()), std::string::npos) << r.output;
  EXPECT_EQ(lines(r.output), 1u) << r.output;
  EXPECT_EQ(cache_files_digest(target), before) << "the target changed, or was switched to WAL";
  EXPECT_EQ(tree_digest(dir.path()), listing);
}

TEST(CliCache, AMergeIntoAForeignTargetLeavesIt) {
  TempDir dir;
  const auto good = write_cache(dir.path() / "good.db", "GPU-3");
  const auto foreign = with_pragma(write_cache(dir.path() / "foreign.db", "GPU-6"), "PRAGMA application_id = 7");
  const std::string before = cache_files_digest(foreign);
  const CommandResult r = tiletune_in(dir, "merge " + quote(foreign) + " " + quote(good));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(foreign.string() + " is not a tiletune cache (application_id 0x00000007)"), std::string::npos)
      << r.output;
  EXPECT_EQ(cache_files_digest(foreign), before);
}

TEST(CliCache, EveryReaderRefusesABadHeaderAndLeavesTheFile) {
  TempDir dir;
  struct Bad {
    std::string pragma, why;
  };
  for (const Bad& bad : {Bad{"PRAGMA user_version = -3", "has schema version -3, which no tiletune writes"},
                         Bad{"PRAGMA user_version = 99", "was written by a newer tiletune (schema version 99"},
                         Bad{"PRAGMA application_id = 7", "is not a tiletune cache (application_id 0x00000007"}}) {
    const auto path = with_pragma(write_cache(dir.path() / "cache.db", "GPU-1"), bad.pragma);
    const std::string before = cache_files_digest(path);
    for (const std::string command :
         {"show", "best", "best --kernel transpose --size N=8192 --device sm_90", "export", "export --format csv"}) {
      SCOPED_TRACE(bad.pragma + " / " + command);
      const CommandResult r = tiletune_in(dir, command);
      EXPECT_EQ(r.exit_code, 1) << r.output;
      EXPECT_NE(r.output.find(path.string() + " " + bad.why), std::string::npos) << r.output;
      EXPECT_EQ(lines(r.output), 1u) << r.output;
      EXPECT_EQ(cache_files_digest(path), before);
    }
    fs::remove(path);
  }
}

TEST(CliCache, AFifoAsTheCacheIsRefusedWithoutBlocking) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir.path() / "cache.db").c_str(), 0644), 0);
  for (const std::string command : {"show", "best", "export", "best --kernel transpose --size N=1 --device sm_90"}) {
    SCOPED_TRACE(command);
    const CommandResult r = tiletune_in(dir, command);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("a FIFO, not a regular file"), std::string::npos) << r.output;
  }
}

TEST(CliCache, ReadingAWalCacheNeedsNoWriteAccess) {
  TempDir dir;
  const auto path = write_cache(dir.path() / "cache.db", "GPU-1");
  const std::string before = cache_files_digest(path);
  const std::vector<std::string> listing = entries(dir.path());
  ReadOnly read_only(dir.path());
  const std::string as = unprivileged_command_prefix();
  const CommandResult show = tiletune_in(dir, "show --format json", as);
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_EQ(nlohmann::json::parse(show.output).size(), 2u);
  const CommandResult best = tiletune_in(dir, "best --kernel transpose --size N=8192 --device GPU-1 --format env", as);
  EXPECT_EQ(best.exit_code, 0) << best.output;
  EXPECT_EQ(best.output, "TILE=64\nBLOCK_ROWS=2\nPAD=1\nTILETUNE_MATCH=exact\nTILETUNE_TIES=1\n");
  const CommandResult exported = tiletune_in(dir, "export --format landscape --kernel transpose", as);
  EXPECT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_NE(exported.output.find("N=8192,TILE=64;BLOCK_ROWS=2;PAD=1,ok,0.15,"), std::string::npos) << exported.output;
  EXPECT_EQ(cache_files_digest(path), before);
  EXPECT_EQ(entries(dir.path()), listing);
}

TEST(CliCache, BestWithoutAMatchExitsFour) {
  TempDir dir;
  write_cache(dir.path() / "cache.db", "GPU-1");
  for (const std::string command :
       {"best --kernel reduction --size N=100 --device sm_90",
        "best --kernel reduction --size N=100 --device sm_90 --format json", "best --kernel reduction",
        "best --kernel reduction --format json", "best --device GPU-none"}) {
    SCOPED_TRACE(command);
    const CommandResult r = tiletune_in(dir, command);
    EXPECT_EQ(r.exit_code, 4) << r.output;
  }
  EXPECT_EQ(tiletune_in(dir, "best --kernel transpose").exit_code, 0);
}

TEST(CliCache, ARecordingThatIsNotARegularFileOrNotFiniteIsRefused) {
  TempDir dir;
  const fs::path fifo = dir.path() / "rec.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  CommandResult r = tiletune_in(dir, "tune --replay " + quote(fifo) + " " + quote(kSpace));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(fifo.string() + ": landscape: not a regular file"), std::string::npos) << r.output;
  std::string text = read_file(kRecording);
  const auto at = text.find(",ok,") + 4;
  text.replace(at, text.find(',', at) - at, "nan");
  const auto nan = dir.write("nan.csv", text);
  r = tiletune_in(dir, "tune --replay " + quote(nan) + " " + quote(kSpace));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(nan.string() + ":"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(": landscape: time_ms 'nan' is not a finite number"), std::string::npos) << r.output;
  EXPECT_EQ(lines(r.output), 1u) << r.output;
}

TEST(CliCache, AReplayInWhichEveryEvaluationFailedExitsFour) {
  TempDir dir;
  // The shipped recording with every trial turned into a runtime fault.
  std::string text, line;
  std::istringstream in(read_file(kRecording));
  bool rows = false;
  while (std::getline(in, line)) {
    if (rows) {
      std::vector<std::string> f;
      std::string::size_type from = 0;
      for (int i = 0; i < 9; ++i) {
        const auto comma = line.find(',', from);
        f.push_back(line.substr(from, comma - from));
        from = comma + 1;
      }
      f[2] = "runtime_fault";
      f[3] = "";
      line.clear();
      for (const std::string& field : f) line += field + ",";
      line += "illegal address";
    }
    rows = rows || line.rfind("problem,params,", 0) == 0;
    text += line + "\n";
  }
  const auto failed = dir.write("failed.csv", text);
  const CommandResult r = tiletune_in(dir, "tune --replay " + quote(failed) + " --size N=1024 " + quote(kSpace));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("no config of this problem ran in the recording"), std::string::npos) << r.output;
}

// A space of `params` params of 100 values each and no constraint: 10^(2 * params) points.
std::string huge_space(int params) {
  std::string values = "[";
  for (int v = 1; v <= 100; ++v) values += (v > 1 ? ", " : "") + std::to_string(v);
  values += "]";
  std::string yaml = "kernel: huge\nsource: " + (source_dir() / "kernels" / "vector_add.cu").string() +
                     "\nentry: vector_add\nproblem:\n  N: [1024]\nparams:\n";
  for (int p = 0; p < params; ++p) yaml += "  P" + std::to_string(p) + ": " + values + "\n";
  return yaml +
         "launch:\n  grid: 1\n  block: 32\nbuffers:\n  a: {count: N}\n  b: {count: N}\n  c: {count: N, output: true}\n"
         "args: [a, b, c, N]\nverify: none\n";
}

// Plans of 10^8 and 10^12 points stay bounded (issue 37): under a 2 GiB address-space limit and a
// watchdog, a plan without --sample says at once, at the space's first param, that it plans a
// uniform sample, and compiles no more than --max-configs; a --sample that leaves too many is
// refused within a second (exit 2), naming the sample that fits.
TEST(HugeSpaces, APlanOfAnySizeIsBoundedAndSaysSoFirst) {
  TempDir dir;
  for (const int params : {4, 6}) {
    const std::string name = "huge" + std::to_string(params) + ".yaml";
    const fs::path yaml = dir.write(name, huge_space(params));
    const std::string limited = "ulimit -v 2097152; TILETUNE_CUBIN_CACHE=" + quote(dir.path() / "cubin") +
                                " timeout 60 " + quote(cli_path()) + " plan --arch sm_90 " + quote(yaml);
    const auto start = std::chrono::steady_clock::now();
    const CommandResult refused = run_command(limited + " --sample 2");
    const double refused_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(refused.exit_code, 2) << refused.output;
    EXPECT_LT(refused_s, 1.0) << refused.output;
    const std::string points = params == 4 ? "100000000" : "1000000000000";
    EXPECT_NE(refused.output.find("--sample 2 plans " + std::to_string(std::stoull(points) / 2) + " configs"),
              std::string::npos)
        << refused.output;
    EXPECT_NE(refused.output.find("pass --sample " + std::to_string(std::stoull(points) / 10000) + " or more"),
              std::string::npos)
        << refused.output;

    const CommandResult sampled =
        run_command("(" + limited + " --max-configs 12 --format json 2>" + quote(dir.path() / "err") + ")");
    ASSERT_EQ(sampled.exit_code, 0) << sampled.output;
    const std::string notes = read_file(dir.path() / "err");
    EXPECT_NE(notes.find(name + ":7:3: note: " + points + " configs after constraints, more than the 12 a plan "
                                "compiles (--max-configs): planning a uniform sample of 12"),
              std::string::npos)
        << notes;
    const auto plan = nlohmann::json::parse(sampled.output);
    EXPECT_EQ(plan["summary"]["planned"], 12) << plan["summary"].dump();
    EXPECT_EQ(plan["summary"]["sampled_by_default"], true);
    EXPECT_EQ(plan["summary"]["after_constraints"].get<std::uint64_t>(), std::stoull(points));
  }
}

}  // namespace
}  // namespace tiletune::testing
