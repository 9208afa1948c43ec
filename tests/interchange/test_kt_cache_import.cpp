// Kernel Tuner caches into recordings (issue 21): the fixture caches in tests/interchange/kt/ were
// written by Kernel Tuner 1.4's own cache writer (util.store_cache's lines, close_cache's "}\n}";
// matmul_open.json left open as an interrupted run leaves it). Each is imported, its recording
// read back with load_landscape, and replayed in its space; gzip'd copies read the same; hostile
// files are refused with the entry quoted short, in one line. The published landscapes
// (convolution_milo, dedispersion_milo) are imported when present beside the checkout.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <map>

#include "test_support.hpp"
#include "tiletune/enumerate.hpp"
#include "tiletune/interchange.hpp"
#include "tiletune/replay.hpp"
#include "tiletune/strategy.hpp"
#include "tiletune/trial.hpp"

namespace tiletune {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

fs::path fixture(const std::string& name) { return testing::test_data_dir() / "interchange/kt" / name; }

/// text as a gzip stream (level 9), or as `members` gzip members one after the other.
std::string gzip(const std::string& text, int members = 1) {
  std::string out;
  const std::size_t step = (text.size() + members - 1) / members;
  for (std::size_t at = 0; at < text.size(); at += step) {
    z_stream zs{};
    EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
    const std::string part = text.substr(at, step);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(part.data()));
    zs.avail_in = static_cast<uInt>(part.size());
    std::string buf(deflateBound(&zs, part.size()), '\0');
    zs.next_out = reinterpret_cast<Bytef*>(buf.data());
    zs.avail_out = static_cast<uInt>(buf.size());
    EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
    buf.resize(zs.total_out);
    deflateEnd(&zs);
    out += buf;
  }
  return out;
}

/// The import of a cache, its space loaded beside its stub and its recording read back.
struct Imported {
  TempDir dir;
  KtCacheImport import;
  Space space;
  Landscape recording;
  explicit Imported(const fs::path& cache, const KtCacheImportOptions& options = {}) {
    import = import_kt_cache(cache, options);
    dir.write(import.stub_file, import.stub_source);
    space = load_space(dir.write("space.yaml", import.space_yaml));
    recording = load_landscape(dir.write("recording.csv", import.recording_csv));
  }
  [[nodiscard]] const LandscapeTrial& trial(const std::string& params) const {
    for (const LandscapeTrial& t : recording.problems.at(0).trials)
      if (t.params == params) return t;
    throw Error("no trial " + params);
  }
  [[nodiscard]] std::string notes() const {
    std::string all;
    for (const std::string& n : import.notes) all += n + "\n";
    return all;
  }
};

/// The exhaustive replay's best config and time.
std::pair<std::string, double> exhaustive_best(const Imported& t, const Problem& problem) {
  const ReplayProblem rp = replay_problem(t.space, t.recording, problem);
  const auto s = make_strategy("exhaustive", rp.space.domain, 1);
  const SearchTrace trace = replay(rp, *s, SearchRun{});
  // Every recorded config, and only those: the product's others (the cache lacks them) are left out.
  EXPECT_EQ(trace.evaluations.size(), rp.outcomes.size());
  EXPECT_EQ(rp.space.domain.size(), rp.outcomes.size());
  if (!trace.best) return {"", 0};
  return {canonical_config(t.space, rp.space.config(*trace.best)), trace.best_time};
}

std::string error_of(const fs::path& cache, const KtCacheImportOptions& options = {}) {
  try {
    (void)import_kt_cache(cache, options);
    return "";
  } catch (const InterchangeError& e) { return e.what(); }
}

TEST(KtCacheImport, AClosedCacheBecomesOneTrialPerEntryWithEveryStatus) {
  const Imported t(fixture("vector_add.json"));
  EXPECT_EQ(t.import.entries, 8u);
  EXPECT_EQ(t.recording.kernel, "kt_vector_add");
  EXPECT_EQ(t.recording.header_value("device"), "NVIDIA A100-PCIE-40GB");
  EXPECT_NE(t.recording.header_value("source")->find("vector_add.json"), std::string::npos);
  EXPECT_EQ(t.recording.header_value("kt_problem_size"), "100000");
  EXPECT_EQ(t.recording.header_value("recorded"),
            "2024-05-01 12:00:00.000000+00:00 to 2024-05-01 12:00:07.000000+00:00");
  ASSERT_EQ(t.recording.problems.size(), 1u);
  EXPECT_EQ(t.recording.problems[0].problem, "problem_size_x=100000");
  ASSERT_EQ(t.recording.problems[0].trials.size(), 8u);

  // time is Kernel Tuner's mean (ms); compile_ms its compile_time; measure_ms verification + benchmark.
  const LandscapeTrial& best = t.trial("block_size_x=64;tile_size=2");
  EXPECT_EQ(best.status, TrialStatus::ok);
  EXPECT_DOUBLE_EQ(*best.time_ms, 0.2);
  EXPECT_DOUBLE_EQ(best.compile_ms, 103.0);
  EXPECT_DOUBLE_EQ(best.measure_ms, 11.5);
  EXPECT_EQ(best.detail, "");
  const std::map<std::string, std::pair<TrialStatus, std::string>> failed = {
      {"block_size_x=128;tile_size=2", {TrialStatus::compile_failed, "Kernel Tuner: CompilationFailedConfig"}},
      {"block_size_x=2048;tile_size=1", {TrialStatus::pruned, "Kernel Tuner: InvalidConfig"}},
      {"block_size_x=2048;tile_size=2", {TrialStatus::launch_failed, "Kernel Tuner: RuntimeFailedConfig"}},
  };
  for (const auto& [params, expect] : failed) {
    const LandscapeTrial& f = t.trial(params);
    EXPECT_EQ(f.status, expect.first) << params;
    EXPECT_EQ(f.detail, expect.second) << params;
    EXPECT_FALSE(f.time_ms) << params;
  }
  EXPECT_DOUBLE_EQ(t.trial("block_size_x=2048;tile_size=2").measure_ms, 0.5);

  // The space: the params in tune_params_keys order, the problem, Kernel Tuner's default grid.
  EXPECT_EQ(t.space.kernel, "kt_vector_add");
  EXPECT_EQ(t.space.entry, "vector_add");
  ASSERT_EQ(t.space.problem.size(), 1u);
  EXPECT_EQ(t.space.problem[0].name, "problem_size_x");
  ASSERT_EQ(t.space.params.size(), 2u);
  EXPECT_EQ(t.space.params[0].values, (std::vector<std::int64_t>{32, 64, 128, 2048}));
  EXPECT_EQ(t.space.verify.reference, VerifySpec::Reference::none);
  EXPECT_TRUE(t.space.constraints.empty());
  const LaunchGeometry g = evaluate_launch(t.space, Problem{{100000}}, Config{{64, 2}});
  EXPECT_EQ(g.grid[0], (100000 + 63) / 64);
  EXPECT_EQ(g.block[0], 64);

  const auto [params, time] = exhaustive_best(t, Problem{{100000}});
  EXPECT_EQ(params, "block_size_x=64;tile_size=2");
  EXPECT_DOUBLE_EQ(time, 0.2);
}

TEST(KtCacheImport, AnOpenCacheWithRealTextAndBooleanParamsAndAnotherObjective) {
  const Imported t(fixture("matmul_open.json"));
  EXPECT_NE(t.notes().find("left open by an interrupted run"), std::string::npos) << t.notes();
  EXPECT_NE(t.notes().find("objective was 'GFLOP/s'"), std::string::npos) << t.notes();
  EXPECT_EQ(t.import.entries, 6u);
  EXPECT_EQ(t.recording.problems[0].problem, "problem_size_x=512;problem_size_y=256");
  EXPECT_NE(t.recording.header_value("objective")->find("GFLOP/s"), std::string::npos);

  ASSERT_EQ(t.space.params.size(), 5u);
  const Axis& alpha = t.space.params[2];
  EXPECT_EQ(alpha.kind, AxisKind::real);
  EXPECT_EQ(alpha.labels, (std::vector<std::string>{"0.5", "1.0", "1e-05"}));  // Python's str(), as the keys
  const Axis& real_type = t.space.params[3];
  EXPECT_EQ(real_type.kind, AxisKind::text);
  EXPECT_EQ(real_type.labels, (std::vector<std::string>{"float", "double"}));
  const Axis& use_shmem = t.space.params[4];
  EXPECT_EQ(use_shmem.kind, AxisKind::integer);
  EXPECT_EQ(use_shmem.values, (std::vector<std::int64_t>{1, 0}));  // True, False

  const LandscapeTrial& best = t.trial("block_size_x=32;block_size_y=2;alpha=1e-05;real_type=float;use_shmem=1");
  EXPECT_DOUBLE_EQ(*best.time_ms, 0.75);
  EXPECT_DOUBLE_EQ(best.measure_ms, 5.0);
  // With GFLOP/s as the objective a failure has no time: the objective's key says it.
  EXPECT_EQ(t.trial("block_size_x=32;block_size_y=2;alpha=0.5;real_type=double;use_shmem=1").status,
            TrialStatus::launch_failed);
  const LaunchGeometry g = evaluate_launch(t.space, Problem{{512, 256}}, Config{{16, 2, 0, 0, 1}});
  EXPECT_EQ(g.grid[0], 32);
  EXPECT_EQ(g.grid[1], 128);
  EXPECT_EQ(g.block[1], 2);

  // 48 configs in the product, 6 recorded: the replay answers those and leaves the rest out.
  const ReplayProblem rp = replay_problem(t.space, t.recording, Problem{{512, 256}});
  EXPECT_EQ(rp.outcomes.size(), 6u);
  EXPECT_EQ(rp.unrecorded, 42u);
  const auto [params, time] = exhaustive_best(t, Problem{{512, 256}});
  EXPECT_EQ(params, "block_size_x=32;block_size_y=2;alpha=1e-05;real_type=float;use_shmem=1");
  EXPECT_DOUBLE_EQ(time, 0.75);
}

TEST(KtCacheImport, AProblemSizeOfParamsIsNoProblemAndItsGridIsTheExpression) {
  const Imported t(fixture("reduction.json"));
  EXPECT_TRUE(t.space.problem.empty());
  EXPECT_EQ(t.recording.problems[0].problem, "");
  EXPECT_NE(t.notes().find("is not integers"), std::string::npos) << t.notes();
  const LaunchGeometry g = evaluate_launch(t.space, Problem{}, Config{{128, 4}});
  EXPECT_EQ(g.grid[0], 1);  // ceil(num_blocks / block_size_x), Kernel Tuner's default divisor
  EXPECT_EQ(g.block[0], 128);
  const auto [params, time] = exhaustive_best(t, Problem{});
  EXPECT_EQ(params, "block_size_x=128;num_blocks=4");
}

TEST(KtCacheImport, GzipIsToldByItsBytesAndReadsTheSame) {
  TempDir dir;
  const std::string text = testing::read_file(fixture("vector_add.json"));
  const Imported plain(fixture("vector_add.json"));
  for (const auto& [name, bytes] : std::vector<std::pair<std::string, std::string>>{
           {"a.json.gz", gzip(text)}, {"gzip-named.json", gzip(text)}, {"members.json.gz", gzip(text, 3)}}) {
    const Imported z(dir.write(name, bytes));
    EXPECT_EQ(z.import.space_yaml, plain.import.space_yaml) << name;
    ASSERT_EQ(z.recording.problems[0].trials.size(), 8u) << name;
    for (std::size_t i = 0; i < 8; ++i) {
      EXPECT_EQ(z.recording.problems[0].trials[i].params, plain.recording.problems[0].trials[i].params);
      EXPECT_EQ(z.recording.problems[0].trials[i].time_ms, plain.recording.problems[0].trials[i].time_ms);
    }
  }
  // Left open and gzip'd, with the trailing comma of the last entry.
  const Imported open(dir.write("open.json.gz", gzip(testing::read_file(fixture("matmul_open.json")))));
  EXPECT_EQ(open.recording.problems[0].trials.size(), 6u);
}

TEST(KtCacheImport, SkipsAndCountsEntriesOfValuesTuneParamsDoesNotList) {
  TempDir dir;
  std::string text = testing::read_file(fixture("vector_add.json"));
  // A later run with block_size_x 256 appended to the same cache (Kernel Tuner checks only the keys).
  const std::string extra =
      "\n\"256,1\": {\"block_size_x\": 256, \"tile_size\": 1, \"time\": 0.1, \"compile_time\": 1, "
      "\"verification_time\": 0, \"benchmark_time\": 1},";
  text.insert(text.find("\"cache\": {") + 10, extra);
  const Imported t(dir.write("c.json", text));
  EXPECT_EQ(t.import.entries, 9u);
  EXPECT_EQ(t.recording.problems[0].trials.size(), 8u);
  EXPECT_NE(t.notes().find("1 entries skipped"), std::string::npos) << t.notes();
  EXPECT_NE(t.notes().find("cache['256,1']: block_size_x '256'"), std::string::npos) << t.notes();
  EXPECT_EQ(t.recording.header_value("skipped"), "1 entries with a value tune_params does not list");
}

TEST(KtCacheImport, Float32ValuesMatchTheirShortKeysAndNamesCanBeChosen) {
  TempDir dir;
  // numpy.float32(0.1) is written widened (0.10000000149011612); its key spells str(float32): 0.1.
  const std::string text = R"({"device_name": "GPU", "kernel_name": "k<float>", "problem_size": [64, 1],
    "tune_params_keys": ["f"], "tune_params": {"f": [0.10000000149011612, 2.5]}, "objective": "time",
    "cache": {"0.1": {"f": 0.10000000149011612, "time": 1.0}, "2.5": {"f": 2.5, "time": 2.0}}})";
  const fs::path cache = dir.write("f32.json", text);
  EXPECT_NE(error_of(cache).find("kernel_name: 'k<float>' is not a C identifier: name the kernel family with --name"),
            std::string::npos);
  KtCacheImportOptions named;
  named.name = "my_kernel";
  const Imported t(cache, named);
  EXPECT_EQ(t.space.kernel, "my_kernel");
  EXPECT_EQ(t.space.entry, "my_kernel");
  EXPECT_EQ(t.trial("f=0.10000000149011612").time_ms, 1.0);
  EXPECT_EQ(t.space.problem.size(), 2u);
  ASSERT_EQ(t.import.notes.size(), 1u) << t.notes();
  EXPECT_NE(t.notes().find("2 entries lack compile_time, verification_time or benchmark_time"), std::string::npos);
  named.name = "transpose";  // a shipped family's name is the shipped kernel's
  EXPECT_NE(error_of(cache, named).find("is the name of a shipped family"), std::string::npos);
  named.name = "not-a-name";
  EXPECT_NE(error_of(cache, named).find("--name: 'not-a-name' is not a C identifier"), std::string::npos);
}

// Hostile caches: each refused with FILE and the field, the entry's key quoted short and escaped,
// in one line.
TEST(KtCacheImport, HostileCachesAreRefusedNamingTheEntry) {
  TempDir dir;
  const std::string head = R"({"device_name": "GPU", "kernel_name": "k", "problem_size": 64,
    "tune_params_keys": ["a", "b"], "tune_params": {"a": [1, 2], "b": ["x", "y"]}, "objective": "time", "cache": {)";
  const std::string ok = R"("1,x": {"a": 1, "b": "x", "time": 1.5})";
  const std::string long_key = std::string(300, 'k') + "\\u0001\\u001b[31m";
  struct Case {
    std::string text, expect;
  };
  const std::vector<Case> cases = {
      {"this is not JSON", "c.json: not JSON: parse error at line 1, column 2"},
      {head + ok + R"(, "2,y": {"a": 2, "time": ,)",
       "c.json: not JSON (closed as Kernel Tuner closes an open cache): parse error at line 2, column"},
      {"[1, 2]", "c.json: a Kernel Tuner cache is a JSON object"},
      {head + ok + R"(, "2,y": {"a": 1, "b": "y", "time": 1.0}}})",
       "c.json: cache['2,y'].a: 1 disagrees with the key's '2'"},
      {head + ok + R"(, "1,y,3": {"time": 1.0}}})", "c.json: cache['1,y,3']: the key has 3 values for the 2 params"},
      {head + ok + ", " + ok + "}}", "c.json: cache['1,x']: a second entry with this key"},
      {head + R"("1,x": {"time": NaN}}})", "c.json: cache['1,x'].time: nan is neither a time (ms) nor one of"},
      {head + R"("1,x": {"time": -Infinity}}})", "c.json: cache['1,x'].time: -inf is neither a time"},
      {head + R"("1,x": {"time": -2.0}}})", "c.json: cache['1,x'].time: -2.0 is not a positive time (ms)"},
      {head + R"("1,x": {"time": "Crashed"}}})", "c.json: cache['1,x'].time: 'Crashed' is neither a time (ms) nor"},
      {head + R"("1,x": {"time": [1.0, 2.0]}}})", "c.json: cache['1,x'].time: a list or an object is neither a time"},
      {head + R"("1,x": {"b": "x"}}})", "c.json: cache['1,x']: no time and no failure"},
      {head + R"("1,x": {"time": 1, "compile_time": "slow"}}})",
       "c.json: cache['1,x'].compile_time: 'slow' is not a time"},
      {head + R"("1,x": {"time": 1, "benchmark_time": NaN}}})",
       "c.json: cache['1,x'].benchmark_time: nan is not a time"},
      {head + R"("1,x": 7}})", "c.json: cache['1,x']: expected an object (the config's result), found 7"},
      {head + "\"" + long_key + "\": {\"time\": 1}}}",
       "c.json: cache['kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk... (306 bytes)']: the key has 1 values"},
      {R"({"device_name": "GPU", "kernel_name": "k", "tune_params_keys": ["a b"], "tune_params": {"a b": [1]},
          "objective": "time", "cache": {}})",
       "c.json: tune_params_keys[0]: 'a b' is not a C identifier"},
      {R"({"device_name": "GPU", "kernel_name": "k", "tune_params_keys": ["a"], "tune_params": {"a": ["x,y", "z"]},
          "objective": "time", "cache": {}})",
       "c.json: tune_params['a'][0]: 'x,y': a param's value is 1 to 128 characters, none of them ',' or ';'"},
      {R"({"device_name": "GPU", "kernel_name": "k", "tune_params_keys": ["a"], "tune_params": {"a": [1, 1]},
          "objective": "time", "cache": {}})",
       "c.json: tune_params['a'][1]: '1' is listed twice"},
      {R"({"device_name": "GPU", "kernel_name": "k", "tune_params_keys": ["a"], "tune_params": {"a": [1.0, 1]},
          "objective": "time", "cache": {}})",
       "c.json: tune_params['a'][1]: 1 is the number 1.0 again"},
      {R"({"device_name": "GPU", "kernel_name": "k", "tune_params_keys": ["a"], "tune_params": {"a": [1]},
          "objective": "time", "cache": {}})",
       "c.json: cache: no entries"},
      {R"({"device_name": "GPU", "kernel_name": "k", "tune_params": {"a": [1]}, "cache": {"1": {"time": 1}}})",
       "c.json: tune_params_keys: missing"},
      {head + R"("1,x": {"time": 1}}, "cache": {}})", "c.json: cache: a second 'cache' at the top level"},
      {head + R"("\u0001\u001b[31m,x": {"time": 1}}})",
       "c.json: cache: none of its 1 entries has only values that tune_params lists (cache['\\x01\\x1b[31m,x']: a "
       "'\\x01\\x1b[31m')"},
      {std::string(100, '[') + std::string(100, ']'), "c.json: a Kernel Tuner cache is a JSON object"},
      {"{\"a\": " + std::string(100, '[') + std::string(100, ']') + "}", "c.json: nested deeper than 32 levels"},
  };
  for (const Case& c : cases) {
    const fs::path path = dir.write("c.json", c.text);
    const std::string what = error_of(path);
    EXPECT_NE(what.find(c.expect), std::string::npos) << what << "\n  for: " << c.text.substr(0, 200);
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_LT(what.size(), path.string().size() + 300) << what;
    EXPECT_EQ(what.find('\x1b'), std::string::npos) << "a control character of the file in the message";
  }
}

TEST(KtCacheImport, OnlyRegularFilesAreReadAndGzipIsBounded) {
  TempDir dir;
  const fs::path fifo = dir.path() / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  ::alarm(20);  // a reader that blocks on the FIFO ends the test here
  EXPECT_NE(error_of(fifo).find("fifo.json: not a regular file (a FIFO)"), std::string::npos);
  ::alarm(0);
  EXPECT_NE(error_of(dir.path()).find(": a directory, not a Kernel Tuner cache"), std::string::npos);
  EXPECT_NE(error_of(dir.write("empty.json", "")).find("empty.json: the file is empty"), std::string::npos);

  // A gzip bomb: 4 KB that inflate to 4 MiB of zeros, against a 1 MiB cap: inflating stops there.
  KtCacheLimits small;
  small.max_text_bytes = std::uint64_t{1} << 20;
  const std::string bomb = gzip(std::string(std::size_t{4} << 20, '\0'));
  ASSERT_LT(bomb.size(), 10'000u);
  KtCacheImportOptions o;
  o.limits = small;
  EXPECT_NE(error_of(dir.write("bomb.json.gz", bomb), o).find("bomb.json.gz: it inflates to more than 1 MiB"),
            std::string::npos);
  // A plain file over the cap is refused before it is read; so is a gzip'd one over its own.
  EXPECT_NE(error_of(dir.write("big.json", std::string((1 << 20) + 1, ' ')), o)
                .find("1048577 bytes, more than a Kernel "
                      "Tuner cache can be (1 MiB)"),
            std::string::npos);
  o.limits.max_gzip_bytes = 1000;
  std::string noise;
  for (std::uint32_t x = 1; noise.size() < 5000;) noise += static_cast<char>((x = x * 1664525u + 1013904223u) >> 24);
  EXPECT_NE(
      error_of(dir.write("b.json.gz", gzip(noise)), o).find("bytes, more than a gzip'd Kernel Tuner cache can be"),
      std::string::npos);

  const std::string good = gzip(testing::read_file(fixture("vector_add.json")));
  EXPECT_NE(
      error_of(dir.write("cut.json.gz", good.substr(0, good.size() / 2))).find("cut.json.gz: a truncated gzip file"),
      std::string::npos);
  EXPECT_NE(
      error_of(dir.write("tail.json.gz", good + "garbage")).find("tail.json.gz: bytes after the end of the gzip data"),
      std::string::npos);
  std::string flipped = good;
  flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x55);
  EXPECT_NE(error_of(dir.write("flip.json.gz", flipped)).find("flip.json.gz: "), std::string::npos);

  KtCacheImportOptions few;
  few.limits.max_entries = 5;
  EXPECT_NE(error_of(fixture("vector_add.json"), few).find("cache: more than 5 entries"), std::string::npos);
}

// The command: three files written whole; a second GPU's cache of the kernel keeps the space;
// tune --replay of the recording finds the cache's best.
TEST(KtCacheImportCli, WritesTheRecordingAndSpaceAndTheReplayFindsTheBest) {
  TempDir dir;
  const std::string cli = testing::cli_path().string();
  const fs::path gz = dir.write("A100.json.gz", gzip(testing::read_file(fixture("vector_add.json"))));
  auto r = testing::run_command("cd " + dir.path().string() + " && " + cli + " import-kt-cache A100.json.gz");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("8 trials: 5 ok, 1 pruned, 1 compile_failed, 1 launch_failed"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("optimum 0.2 ms at block_size_x=64;tile_size=2"), std::string::npos) << r.output;
  for (const char* f : {"A100.csv", "kt_vector_add.yaml", "kt_vector_add.cu"})
    EXPECT_TRUE(fs::exists(dir.path() / f)) << f;

  r = testing::run_command(cli + " tune " + (dir.path() / "kt_vector_add.yaml").string() + " --replay " +
                           (dir.path() / "A100.csv").string() + " --strategy exhaustive");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("evaluations 8 of 8"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("= 100.0 % of the optimum's speed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("optimum     block_size_x=64 tile_size=2"), std::string::npos) << r.output;

  // Another GPU's cache of the same kernel: its own recording, the same space (kept as it is).
  const std::string space_before = testing::read_file(dir.path() / "kt_vector_add.yaml");
  std::string a4000 = testing::read_file(fixture("vector_add.json"));
  a4000.replace(a4000.find("NVIDIA A100-PCIE-40GB"), 21, "NVIDIA RTX A4000");
  dir.write("A4000.json", a4000);
  r = testing::run_command("cd " + dir.path().string() + " && " + cli + " import-kt-cache A4000.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("unchanged (the same content): "), std::string::npos) << r.output;
  EXPECT_EQ(testing::read_file(dir.path() / "kt_vector_add.yaml"), space_before);
  EXPECT_NE(testing::read_file(dir.path() / "A4000.csv").find("# device: NVIDIA RTX A4000"), std::string::npos);

  // Another space under the same name is not overwritten without --force; a failed import writes nothing.
  r = testing::run_command("cd " + dir.path().string() + " && " + cli + " import-kt-cache " +
                           fixture("matmul_open.json").string() + " -o A100.csv --name kt_vector_add");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("exists with other content: pass --force"), std::string::npos) << r.output;
  EXPECT_EQ(testing::read_file(dir.path() / "kt_vector_add.yaml"), space_before);
  const fs::path bad = dir.write("bad.json", "{\"cache\": {");
  r = testing::run_command(cli + " import-kt-cache " + bad.string() + " -o " + (dir.path() / "bad.csv").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("bad.json: device_name: missing"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.path() / "bad.csv"));
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << "a temporary file left: " << e.path();

  r = testing::run_command(cli + " import-kt-cache --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("Examples:"), std::string::npos);
  EXPECT_NE(r.output.find("Exit status: 0 done"), std::string::npos);
}

// The published landscapes (AutoTuningAssociation/benchmark_hub) when the checkout has them beside
// it (/work/shared/landscapes, or $TILETUNE_KT_LANDSCAPES): every entry imported; the caches hold
// the configs that pass the kernels' restrictions (4,362 of 10,240 and 11,130 of 22,272).
TEST(KtCacheImport, PublishedLandscapes) {
  const char* env = std::getenv("TILETUNE_KT_LANDSCAPES");
  const fs::path root = env ? fs::path(env) : testing::source_dir().parent_path() / "shared" / "landscapes";
  if (!fs::exists(root / "convolution_milo" / "A100.json.gz")) GTEST_SKIP() << "no published landscapes at " << root;
  const std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> expected = {
      {"convolution_milo", {4362, 10240}}, {"dedispersion_milo", {11130, 22272}}};
  for (const auto& [kernel, counts] : expected) {
    for (const char* gpu : {"A100", "A4000", "A6000"}) {
      const fs::path cache = root / kernel / (std::string(gpu) + ".json.gz");
      if (!fs::exists(cache)) continue;
      const Imported t(cache);
      std::uint64_t ok = 0;
      for (const LandscapeTrial& trial : t.recording.problems[0].trials) ok += trial.status == TrialStatus::ok;
      std::cout << kernel << " " << gpu << ": " << t.import.entries << " entries, " << ok << " ok\n";
      EXPECT_EQ(t.import.entries, counts.first) << cache;
      EXPECT_EQ(t.recording.problems[0].trials.size(), counts.first) << cache;
      EXPECT_GT(ok, 0u) << cache;
      Problem problem;
      for (const Axis& a : t.space.problem) problem.sizes.push_back(a.values.at(0));
      const ReplayProblem rp = replay_problem(t.space, t.recording, problem);
      EXPECT_EQ(rp.outcomes.size() + rp.unrecorded, counts.second) << cache;
    }
  }
}

}  // namespace
}  // namespace tiletune
