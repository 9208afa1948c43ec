// Capture without a GPU: the launch's buffers are host arrays read through HostCaptureMemory (the
// seam the Launcher fills with device reads), so every rule of capture is checked here: the
// folder and its files, the space it writes (loads, validates, plans, and has the kernel version
// of the application's space), deduplication, the size cap, skipping the first launches, and
// capture folders that cannot be used.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cache_builder.hpp"
#include "test_support.hpp"
#include "tiletune/cache_db.hpp"
#include "tiletune/capture.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/data_file.hpp"
#include "tiletune/launcher.hpp"
#include "tiletune/plan.hpp"
#include "tiletune/sweep.hpp"
#include "tiletune/trial.hpp"
#include "tiletune/validate.hpp"

namespace tiletune::testing {
namespace {

constexpr const char* kSource = R"(#include "scale_impl.cuh"
extern "C" __global__ void scale(const float* in, float* out, int* hits, float alpha, int n) {
  const int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) {
    out[i] = scale_impl(in[i], alpha);
    hits[i] += 1;
  }
}
)";

constexpr const char* kSpace = R"yaml(kernel: test_scale
source: scale.cu
entry: scale
options: [-Iinclude]
problem:
  N: [1000, 4096]
params:
  BLOCK: [64, 128, 256]
launch:
  grid: ["ceil_div(N, BLOCK)"]
  block: [BLOCK]
buffers:
  in: {type: float, count: N, init: random}
  out: {type: float, count: N, output: true}
  hits: {type: int, count: N, init: iota, output: true}
args: [in, out, hits, {value: 2.5, type: float}, N]
verify: {reference: {config: {BLOCK: 64}}, rtol: 1e-6}
default: {BLOCK: 128}
)yaml";

/// An application's space in its own folder (source, a header under include/).
struct App {
  TempDir dir;
  Space space;
  App() {
    (void)dir.write("app/scale.cu", kSource);
    (void)dir.write("app/include/scale_impl.cuh",
                    "__device__ inline float scale_impl(float x, float a) { return a * x; }\n");
    space = load_space(dir.write("app/space.yaml", kSpace));
  }
};

/// One launch's host buffers, the kernel applied on the host as the GPU would.
struct HostLaunch {
  int n;
  float alpha;
  std::vector<float> in, out;
  std::vector<int> hits;
  std::uint64_t p_in, p_out, p_hits;
  void* args[5];
  explicit HostLaunch(int size, float first = 0.5f, float a = 3.0f)
      : n(size), alpha(a), in(std::size_t(size)), out(std::size_t(size), 0.0f), hits(std::size_t(size)) {
    for (int i = 0; i < n; ++i) {
      in[std::size_t(i)] = first + 0.25f * float(i);
      hits[std::size_t(i)] = 7 * i;
    }
    p_in = reinterpret_cast<std::uintptr_t>(in.data());
    p_out = reinterpret_cast<std::uintptr_t>(out.data());
    p_hits = reinterpret_cast<std::uintptr_t>(hits.data());
    args[0] = &p_in;
    args[1] = &p_out;
    args[2] = &p_hits;
    args[3] = &alpha;
    args[4] = &n;
  }
  void run() {
    for (int i = 0; i < n; ++i) {
      out[std::size_t(i)] = alpha * in[std::size_t(i)];
      hits[std::size_t(i)] += 1;
    }
  }
  CaptureLaunch launch(int block = 256) const { return {Problem{{n}}, Config{{block}}, args}; }
};

CaptureOptions options_in(const std::filesystem::path& dir) {
  CaptureOptions o;
  o.patterns = {"test_*"};
  o.directory = dir;
  return o;
}

/// before(), the host "launch", after(): the outcome.
CaptureOutcome capture_once(CaptureWriter& writer, HostLaunch& launch, int block = 256) {
  HostCaptureMemory memory;
  CaptureOutcome outcome = CaptureOutcome::off;
  auto pending = writer.before(launch.launch(block), memory, outcome);
  launch.run();
  if (pending) outcome = writer.after(std::move(pending), memory);
  return outcome;
}

std::vector<std::filesystem::path> entries(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) out.push_back(e.path());
  return out;
}

template <typename T>
std::vector<T> read_npy(const std::filesystem::path& path, ElementType type) {
  const std::vector<std::byte> bytes = read_data_file(path, type, std::nullopt, path.filename().string());
  std::vector<T> out(bytes.size() / sizeof(T));
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

TEST(Capture, WritesTheSpaceTheInputsAndTheOutputsAsExpected) {
  App app;
  const auto captures = app.dir.path() / "captures";
  std::ostringstream said;
  CaptureWriter writer(app.space, options_in(captures), said);
  HostLaunch launch(1000);
  const std::vector<int> hits_before = launch.hits;
  ASSERT_EQ(capture_once(writer, launch), CaptureOutcome::written) << said.str();
  EXPECT_EQ(said.str(), "");
  const std::filesystem::path folder = writer.last_written();
  ASSERT_FALSE(folder.empty());
  EXPECT_EQ(folder.parent_path(), captures);
  EXPECT_EQ(folder.filename().string().rfind("test_scale_N1000_", 0), 0u) << folder;
  EXPECT_EQ(entries(captures).size(), 1u) << "no temporary folder left beside it";

  // Inputs as they were before the launch (hits is in/out), outputs as it left them.
  EXPECT_EQ(read_npy<float>(folder / "inputs" / "in.npy.gz", ElementType::f32), launch.in);
  EXPECT_EQ(read_npy<int>(folder / "inputs" / "hits.npy.gz", ElementType::i32), hits_before);
  EXPECT_EQ(read_npy<float>(folder / "expected" / "out.npy.gz", ElementType::f32), launch.out);
  EXPECT_EQ(read_npy<int>(folder / "expected" / "hits.npy.gz", ElementType::i32), launch.hits);
  EXPECT_EQ(read_npy<float>(folder / "inputs" / "arg3.npy.gz", ElementType::f32), std::vector<float>{3.0f});
  EXPECT_EQ(read_npy<int>(folder / "inputs" / "arg4.npy.gz", ElementType::i32), std::vector<int>{1000});
  EXPECT_FALSE(std::filesystem::exists(folder / "inputs" / "out.npy.gz")) << "out is written whole: not an input";
  const DataFileInfo info = inspect_data_file(folder / "inputs" / "in.npy.gz");
  EXPECT_TRUE(info.npy);
  EXPECT_EQ(info.type, ElementType::f32);
  EXPECT_EQ(info.shape, std::vector<std::uint64_t>{1000});

  // The space: one problem, the launched config as default, inputs and check from the files.
  const Space captured = load_space(folder / "space.yaml");
  EXPECT_EQ(captured.kernel, "test_scale");
  EXPECT_EQ(captured.entry, "scale");
  EXPECT_EQ(captured.source, app.space.source);
  ASSERT_EQ(captured.problem.size(), 1u);
  EXPECT_EQ(captured.problem[0].values, std::vector<std::int64_t>{1000});
  ASSERT_EQ(captured.params.size(), 1u);
  EXPECT_EQ(captured.params[0].values, (std::vector<std::int64_t>{64, 128, 256})) << "params as declared";
  ASSERT_TRUE(captured.default_config);
  EXPECT_EQ(*captured.default_config, std::vector<std::int64_t>{256}) << "the launched config";
  EXPECT_EQ(captured.buffers[0].init.kind, BufferInit::file);
  EXPECT_EQ(captured.buffers[1].init.kind, BufferInit::zero);
  EXPECT_EQ(captured.buffers[2].init.kind, BufferInit::file);
  EXPECT_EQ(captured.verify.reference, VerifySpec::Reference::files);
  ASSERT_EQ(captured.verify.files.size(), 2u);
  EXPECT_EQ(captured.verify.outputs[0].rtol, 1e-6);
  // The scalars the application passed: alpha 3, not the space's 2.5; n as a value.
  ASSERT_TRUE(captured.args[3].value.real);
  EXPECT_EQ(*captured.args[3].value.real, 3.0);
  EXPECT_EQ(captured.args[4].value.expr.expr.text(), "1000");
  EXPECT_NO_THROW(validate_inputs_and_checks(captured, {"sm_90", nullptr}));
  if (std::getenv("TILETUNE_TEST_SHOW_CAPTURE")) std::cout << read_file(folder / "space.yaml");
}

TEST(Capture, TheCapturedSpaceHasTheApplicationsKernelVersionAndPlans) {
  App app;
  std::ostringstream said;
  CaptureWriter writer(app.space, options_in(app.dir.path() / "captures"), said);
  HostLaunch launch(4096);
  ASSERT_EQ(capture_once(writer, launch, 64), CaptureOutcome::written) << said.str();
  const Space captured = load_space(writer.last_written() / "space.yaml");

  // The cache rows a tune of the capture writes are those the application's Launcher reads.
  KernelSources app_sources(app.space.source), capture_sources(captured.source);
  const KernelRecord a = kernel_record(app.space, app_sources.for_options(space_options(app.space)), 90);
  const KernelRecord c = kernel_record(captured, capture_sources.for_options(space_options(captured)), 90);
  EXPECT_EQ(c.name, a.name);
  EXPECT_EQ(c.source_hash, a.source_hash);
  EXPECT_EQ(c.options, a.options);
  EXPECT_NE(c.options.find("-I<include[0]>"), std::string::npos) << c.options;

  PlanOptions options;
  options.device = *builtin_device_limits(90);
  options.problem = all_problems(captured).front();
  options.threads = 2;
  const Plan plan = plan_space(captured, options);
  EXPECT_EQ(plan.summary.valid, 3u);
  EXPECT_EQ(plan.summary.ok, 3u);
  EXPECT_EQ(plan.summary.compile_failed, 0u);

  // And as a user plans it: `tiletune plan CAPTURE/space.yaml`.
  const CommandResult cli =
      run_command(shell_quoted(cli_path()) + " plan " + shell_quoted(writer.last_written() / "space.yaml") +
                  " --arch sm_90 --format json --no-cubin-cache");
  EXPECT_EQ(cli.exit_code, 0) << cli.output;
  EXPECT_NE(cli.output.find("\"N\": 4096"), std::string::npos) << cli.output.substr(0, 2000);
}

// What `tiletune tune CAPTURE/space.yaml` writes (the kernel row of the capture's space, its trials
// under the capture's problem and params) is what the application's Launcher finds: exact.
TEST(Capture, ResultsTunedOnACaptureAreTheApplicationsAtMatchExact) {
  App app;
  std::ostringstream said;
  CaptureWriter writer(app.space, options_in(app.dir.path() / "captures"), said);
  HostLaunch launch(4096);
  ASSERT_EQ(capture_once(writer, launch, 128), CaptureOutcome::written) << said.str();
  const Space captured = load_space(writer.last_written() / "space.yaml");

  const QueryDevice device{"GPU-f1c71000-0000-4000-8000-00000000abcd", "Fictional H200", 9, 0};
  const auto db_path = app.dir.path() / "cache.db";
  {
    KernelSources sources(captured.source);
    CacheBuilder cache;
    cache.device(device.uuid, device.name)
        .kernel(kernel_record(captured, sources.for_options(space_options(captured)), 90));
    const std::string problem = canonical_problem(captured, all_problems(captured).front());
    for (auto [block, ms] : std::vector<std::pair<std::int64_t, double>>{{64, 0.010}, {128, 0.020}, {256, 0.015}})
      cache.trial(problem, canonical_config(captured, Config{{block}}), ms);
    cache.build(db_path);
  }
  Launcher::Options o;
  o.db_path = db_path;
  o.device = device;
  o.arch = "sm_90";
  o.capture = CaptureOptions{};  // off
  auto launcher = Launcher::open(app.dir.path() / "app" / "space.yaml", o);
  const LaunchPlan plan = launcher.prepare({{"N", 4096}});
  EXPECT_EQ(plan.match, MatchLevel::exact) << plan.query_message;
  EXPECT_EQ(plan.config_text, "BLOCK=64");
  const LaunchPlan other = launcher.prepare({{"N", 1000}});
  EXPECT_NE(other.match, MatchLevel::exact) << "only the captured problem was tuned";
}

TEST(Capture, OncePerKernelAndProblemAcrossWritersUnlessForced) {
  App app;
  const auto captures = app.dir.path() / "captures";
  std::ostringstream said;
  {
    CaptureWriter writer(app.space, options_in(captures), said);
    HostLaunch first(1000), second(1000, 9.0f), other(512);
    EXPECT_EQ(capture_once(writer, first), CaptureOutcome::written);
    EXPECT_EQ(capture_once(writer, second), CaptureOutcome::done) << "same problem, other inputs";
    EXPECT_EQ(capture_once(writer, other), CaptureOutcome::written) << "another problem";
  }
  {
    CaptureWriter next_process(app.space, options_in(captures), said);
    HostLaunch again(1000, 9.0f);
    EXPECT_EQ(capture_once(next_process, again), CaptureOutcome::done) << "found on disk";
  }
  EXPECT_EQ(entries(captures).size(), 2u);
  {
    CaptureOptions o = options_in(captures);
    o.force = true;
    CaptureWriter forced(app.space, o, said);
    HostLaunch same(1000), different(1000, 9.0f), different_again(1000, 9.0f);
    EXPECT_EQ(capture_once(forced, same), CaptureOutcome::duplicate) << "same inputs: same content hash";
    EXPECT_EQ(capture_once(forced, different), CaptureOutcome::written);
    EXPECT_EQ(capture_once(forced, different_again), CaptureOutcome::duplicate);
  }
  EXPECT_EQ(entries(captures).size(), 3u);
  EXPECT_EQ(said.str(), "");
}

TEST(Capture, OverTheSizeCapNothingIsWrittenAndItIsSaidOnce) {
  App app;
  const auto captures = app.dir.path() / "captures";
  CaptureOptions o = options_in(captures);
  // in 4000 + hits 4000 in and out + out 4000 = 16000 bytes for N=1000.
  o.max_bytes = 15999;
  std::ostringstream said;
  CaptureWriter writer(app.space, o, said);
  HostLaunch a(1000), b(1000);
  EXPECT_EQ(capture_once(writer, a), CaptureOutcome::too_large);
  EXPECT_EQ(capture_once(writer, b), CaptureOutcome::too_large);
  EXPECT_TRUE(entries(captures).empty());
  const std::string text = said.str();
  EXPECT_NE(text.find("16000 bytes of buffers exceed the cap of 15999 bytes"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;

  o.max_bytes = 16000;
  CaptureWriter at_cap(app.space, o, said);
  HostLaunch c(1000);
  EXPECT_EQ(capture_once(at_cap, c), CaptureOutcome::written);
  // The cap counts the buffers' bytes, not the (smaller) .npy.gz files they are written to.
  std::uintmax_t on_disk = 0;
  for (const char* sub : {"inputs", "expected"})
    for (const auto& f : entries(at_cap.last_written() / sub)) on_disk += std::filesystem::file_size(f);
  EXPECT_LT(on_disk, 16000u);
}

TEST(Capture, FilesAreGzipAndADamagedOneIsOneLocatedError) {
  App app;
  std::ostringstream said;
  CaptureWriter writer(app.space, options_in(app.dir.path() / "captures"), said);
  HostLaunch launch(1000);
  ASSERT_EQ(capture_once(writer, launch), CaptureOutcome::written) << said.str();
  const auto folder = writer.last_written();
  const std::string in = read_file(folder / "inputs" / "in.npy.gz");
  ASSERT_GE(in.size(), 2u);
  EXPECT_EQ(in.substr(0, 2), "\x1f\x8b") << "gzip's magic";

  // Cut inside the header: the space's check names the file and says so.
  const auto out = folder / "expected" / "out.npy.gz";
  const std::string whole = read_file(out);
  const auto write_file = [](const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  };
  write_file(out, whole.substr(0, 12));
  try {
    validate_inputs_and_checks(load_space(folder / "space.yaml"), {"sm_90", nullptr});
    ADD_FAILURE() << "a truncated expected output passed the check";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("out.npy.gz: a truncated .gz file"), std::string::npos) << what;
  }
  // Cut inside the data: the header passes the space's check, reading the data does not.
  write_file(out, whole.substr(0, whole.size() - 10));
  EXPECT_NO_THROW(validate_inputs_and_checks(load_space(folder / "space.yaml"), {"sm_90", nullptr}));
  try {
    (void)read_data_file(out, ElementType::f32, 1000, "expected output 'out'");
    ADD_FAILURE() << "a truncated expected output was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(out.string() + ": a truncated .gz file"), std::string::npos) << e.what();
  }
}

TEST(Capture, SkipsTheFirstLaunches) {
  App app;
  CaptureOptions o = options_in(app.dir.path() / "captures");
  o.skip = 2;
  std::ostringstream said;
  CaptureWriter writer(app.space, o, said);
  HostLaunch l1(1000, 1.0f), l2(1000, 2.0f), l3(1000, 3.0f);
  EXPECT_EQ(capture_once(writer, l1), CaptureOutcome::skipped);
  EXPECT_EQ(capture_once(writer, l2), CaptureOutcome::skipped);
  EXPECT_EQ(capture_once(writer, l3), CaptureOutcome::written);
  EXPECT_EQ(read_npy<float>(writer.last_written() / "inputs" / "in.npy.gz", ElementType::f32), l3.in)
      << "the third launch's inputs";
}

TEST(Capture, AKernelThatDoesNotMatchIsNotCaptured) {
  App app;
  CaptureOptions o = options_in(app.dir.path() / "captures");
  o.patterns = {"transpose", "other*"};
  std::ostringstream said;
  CaptureWriter writer(app.space, o, said);
  HostLaunch l(1000);
  EXPECT_EQ(capture_once(writer, l), CaptureOutcome::off);
  EXPECT_FALSE(std::filesystem::exists(app.dir.path() / "captures"));
  o.patterns = {"transpose", "*"};
  EXPECT_TRUE(o.matches("test_scale"));
  o.patterns = {"test_scale"};
  EXPECT_TRUE(o.matches("test_scale"));
  EXPECT_FALSE(o.matches("test_scale2"));
}

/// A capture folder that cannot be used: one line, no throw, nothing written, capture stops.
void expect_refused(App& app, const std::filesystem::path& captures, const std::string& reason) {
  std::ostringstream said;
  CaptureWriter writer(app.space, options_in(captures), said);
  HostLaunch l(1000), again(512);
  const std::vector<float> expected_out = [&] {
    HostLaunch copy(1000);
    copy.run();
    return copy.out;
  }();
  EXPECT_EQ(capture_once(writer, l), CaptureOutcome::failed);
  EXPECT_EQ(l.out, expected_out) << "the launch's result is unchanged";
  EXPECT_EQ(capture_once(writer, again), CaptureOutcome::off) << "capture stopped";
  const std::string text = said.str();
  EXPECT_NE(text.find(reason), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_EQ(text.rfind("tiletune: capture: ", 0), 0u) << text;
}

TEST(Capture, AFileWhereTheFolderShouldBeIsRefused) {
  App app;
  const auto file = app.dir.write("captures", "not a folder\n");
  expect_refused(app, file, "the capture folder is not a directory");
  EXPECT_EQ(read_file(file), "not a folder\n");
}

TEST(Capture, AFolderThatCannotBeWrittenIsRefused) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into any folder";
  App app;
  const auto captures = app.dir.path() / "locked";
  std::filesystem::create_directory(captures);
  ::chmod(captures.c_str(), 0500);
  expect_refused(app, captures, "cannot write into the capture folder");
  ::chmod(captures.c_str(), 0700);
  EXPECT_TRUE(entries(captures).empty());
}

TEST(Capture, AFolderWhereNoFolderCanBeMadeIsRefused) {
  // /sys takes no new folder, whoever asks (root included: mkdir fails with EPERM).
  if (!std::filesystem::is_directory("/sys")) GTEST_SKIP() << "no /sys";
  App app;
  expect_refused(app, "/sys", ::geteuid() == 0 ? "cannot make the folder" : "cannot write into the capture folder");
}

TEST(Capture, ASymbolicLinkAsTheFolderIsRefused) {
  App app;
  const auto target = app.dir.path() / "elsewhere";
  std::filesystem::create_directory(target);
  const auto link = app.dir.path() / "captures";
  std::filesystem::create_directory_symlink(target, link);
  expect_refused(app, link, "the capture folder is a symbolic link");
  EXPECT_TRUE(entries(target).empty());
}

TEST(Capture, AMissingParentIsRefused) {
  App app;
  expect_refused(app, app.dir.path() / "no" / "such" / "dir", "cannot make the capture folder");
}

TEST(Capture, ASpaceWithModuleGlobalsIsRefusedOnce) {
  App app;
  std::string text = kSpace;
  text += "globals: {weights: {type: float, count: 4, init: random}}\n";
  const Space with_globals = load_space(app.dir.write("app/globals.yaml", text));
  std::ostringstream said;
  CaptureWriter writer(with_globals, options_in(app.dir.path() / "captures"), said);
  HostLaunch l(1000), again(1000);
  EXPECT_EQ(capture_once(writer, l), CaptureOutcome::refused);
  EXPECT_EQ(capture_once(writer, again), CaptureOutcome::off);
  EXPECT_NE(said.str().find("module globals"), std::string::npos) << said.str();
  EXPECT_EQ(capture_refusal(app.space), std::nullopt);
}

TEST(Capture, ByteSizesAndTheEnvironment) {
  EXPECT_EQ(parse_byte_size("512"), 512u);
  EXPECT_EQ(parse_byte_size("64K"), 65536u);
  EXPECT_EQ(parse_byte_size("3M"), 3u << 20);
  EXPECT_EQ(parse_byte_size("1g"), std::uint64_t{1} << 30);
  EXPECT_EQ(parse_byte_size(""), std::nullopt);
  EXPECT_EQ(parse_byte_size("1.5G"), std::nullopt);
  EXPECT_EQ(parse_byte_size("-1"), std::nullopt);
  EXPECT_EQ(parse_byte_size("99999999999999999999"), std::nullopt);

  ::setenv("TILETUNE_CAPTURE", "transpose, my_*", 1);
  ::setenv("TILETUNE_CAPTURE_DIR", "/tmp/caps", 1);
  ::setenv("TILETUNE_CAPTURE_FORCE", "1", 1);
  ::setenv("TILETUNE_CAPTURE_MAX_BYTES", "2M", 1);
  ::setenv("TILETUNE_CAPTURE_SKIP", "3", 1);
  std::ostringstream said;
  CaptureOptions o = CaptureOptions::from_environment(said);
  EXPECT_EQ(o.patterns, (std::vector<std::string>{"transpose", "my_*"}));
  EXPECT_EQ(o.directory, "/tmp/caps");
  EXPECT_TRUE(o.force);
  EXPECT_EQ(o.max_bytes, 2u << 20);
  EXPECT_EQ(o.skip, 3u);
  EXPECT_EQ(said.str(), "");

  ::setenv("TILETUNE_CAPTURE_SKIP", "3K", 1);
  o = CaptureOptions::from_environment(said);
  EXPECT_FALSE(o.enabled());
  EXPECT_NE(said.str().find("TILETUNE_CAPTURE_SKIP='3K' is not a count"), std::string::npos) << said.str();
  for (const char* name : {"TILETUNE_CAPTURE", "TILETUNE_CAPTURE_DIR", "TILETUNE_CAPTURE_FORCE",
                           "TILETUNE_CAPTURE_MAX_BYTES", "TILETUNE_CAPTURE_SKIP"})
    ::unsetenv(name);
  EXPECT_FALSE(CaptureOptions::from_environment(said).enabled());
  EXPECT_EQ(CaptureOptions{}.max_bytes, kDefaultCaptureMaxBytes);
}

TEST(Capture, TheLauncherCapturesOnlyMatchingKernels) {
  App app;
  Launcher::Options o;
  o.db_path = app.dir.path() / "cache.db";
  o.device = QueryDevice{"GPU-f1c71000-0000-4000-8000-00000000abcd", "Fictional H200", 9, 0};
  o.arch = "sm_90";
  o.capture = options_in(app.dir.path() / "captures");
  auto on = Launcher::open(app.dir.path() / "app" / "space.yaml", o);
  ASSERT_NE(on.capture(), nullptr);
  EXPECT_EQ(on.capture()->options().patterns, std::vector<std::string>{"test_*"});
  EXPECT_EQ(on.last_capture(), CaptureOutcome::off);
  o.capture->patterns = {"transpose"};
  auto off = Launcher::open(app.dir.path() / "app" / "space.yaml", o);
  EXPECT_EQ(off.capture(), nullptr);
}

}  // namespace
}  // namespace tiletune::testing
