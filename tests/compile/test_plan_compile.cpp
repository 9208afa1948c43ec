// Kernels written elsewhere, planned end to end: a header found through a relative -I (resolved
// against the YAML's directory) edited between two plans is recompiled and starts a new kernel
// version; the version is built from the options NVRTC gets, defaults included, and does not
// change with the checkout's path; failed compiles are cached, so a second plan compiles
// nothing; problem sizes (`problem_defines`) and ${EXPR} in options reach NVRTC and the keys;
// `plan` exits 4 when no config compiles (with the most common reason), 3 with --strict when
// some fail; warnings reach --logs and the JSON; plan, the sweep and the Launcher compile a
// config under one key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "test_support.hpp"
#include "tiletune/cache_db.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/launcher.hpp"
#include "tiletune/plan.hpp"
#include "tiletune/sweep.hpp"
#include "tune/sweep_stages.hpp"

namespace tiletune {
namespace {

namespace fs = std::filesystem;
using tiletune::testing::CommandResult;
using tiletune::testing::TempDir;

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }

// A space of two configs (P = 1, 2) for `entry` in kernels/k.cu, with `options` (and the YAML
// lines `problem`, if any).
fs::path write_space(const TempDir& dir, const std::string& root, const std::string& entry,
                     const std::string& options = "[-Iinclude]", const std::string& problem = "") {
  return dir.write(root + "/space.yaml", "kernel: stale\nsource: kernels/k.cu\nentry: " + entry + "\n" + problem +
                                             "options: " + options +
                                             "\nparams:\n  P: [1, 2]\nlaunch: {grid: [1], block: [32]}\n"
                                             "buffers:\n  p: {type: float, count: 64}\nargs: [p]\n"
                                             "verify: none\n");
}

// kernels/k.cu takes its shared array's size from include/lib/smem.cuh, found through -I.
fs::path write_stale_tree(const TempDir& dir, const std::string& root, int floats) {
  dir.write(root + "/include/lib/smem.cuh", "#pragma once\n#define LIB_FLOATS " + std::to_string(floats) + "\n");
  dir.write(root + "/kernels/k.cu",
            "#include <lib/smem.cuh>\n"
            "extern \"C\" __global__ void k(float* p) {\n"
            "  __shared__ float s[LIB_FLOATS];\n  s[threadIdx.x] = P;\n  __syncthreads();\n"
            "  if (p) p[threadIdx.x] = s[(threadIdx.x + 1) % LIB_FLOATS];\n}\n");
  return write_space(dir, root, "k");
}

Plan plan_with(const Space& space, const CubinCache& cache) {
  PlanOptions options;
  options.device = *builtin_device_limits(90);
  options.problem = select_problem(space, {});
  options.threads = 2;
  options.cache = &cache;
  return plan_space(space, options);
}

TEST(PlanCompile, EditingAHeaderFoundThroughIncludeRecompilesAndStartsANewKernelVersion) {
  TempDir dir;
  const Space space = load_space(write_stale_tree(dir, "a", 1024));
  // -Iinclude is the YAML's include/, whatever the current directory.
  const auto options = compile_options(space, Problem{}, Config{{1}});
  EXPECT_EQ(options.back(), "-I" + (dir.path() / "a" / "include").string());

  const CubinCache cache(dir.path() / "cubin");
  const Plan first = plan_with(space, cache);
  ASSERT_EQ(first.summary.ok, 2u) << first.rows[0].detail;
  EXPECT_EQ(first.summary.compiled, 2u);
  EXPECT_EQ(first.rows[0].resources->static_shared_bytes, 4096);
  KernelSources sources(space.source);
  const KernelRecord before = kernel_record(space, sources.for_options(space_options(space)), 90);
  EXPECT_EQ(plan_with(space, cache).summary.compiled, 0u);  // unchanged: nothing compiled

  write_stale_tree(dir, "a", 12288);
  const Plan edited = plan_with(space, cache);
  EXPECT_EQ(edited.summary.compiled, 2u);
  EXPECT_EQ(edited.summary.cache_hits, 0u);
  ASSERT_TRUE(edited.rows[0].resources.has_value()) << edited.rows[0].detail;
  EXPECT_EQ(edited.rows[0].resources->static_shared_bytes, 12288 * 4);
  EXPECT_NE(edited.rows[0].cubin_key, first.rows[0].cubin_key);
  KernelSources edited_sources(space.source);
  const KernelRecord after = kernel_record(space, edited_sources.for_options(space_options(space)), 90);
  EXPECT_NE(after.source_hash, before.source_hash);
}

TEST(PlanCompile, KernelVersionIsTheOptionsNvrtcGetsAndTheSameInEveryCheckout) {
  TempDir dir;
  const Space a = load_space(write_stale_tree(dir, "a", 1024));
  const Space b = load_space(write_stale_tree(dir, "elsewhere/b", 1024));
  KernelSources sources_a(a.source), sources_b(b.source);
  const KernelSource& source = sources_a.for_options(space_options(a));
  const KernelRecord version = kernel_record(a, source, 90);

  std::string expected;
  for (const auto& o : key_options({&source, space_options(a), "sm_90", "k"})) expected += o + " ";
  EXPECT_EQ(version.options, expected + "entry=k");
  for (const char* option : {"--gpu-architecture=sm_90", "--ptxas-options=-v", "--std=c++17", "-I<include[0]>",
                             "-I<toolkit[0]>", "-I<toolkit[1]>"})
    EXPECT_NE(version.options.find(option), std::string::npos) << option << " in " << version.options;
  EXPECT_EQ(version.options.find(dir.path().string()), std::string::npos) << version.options;

  const KernelRecord moved = kernel_record(b, sources_b.for_options(space_options(b)), 90);
  EXPECT_EQ(moved.options, version.options);
  EXPECT_EQ(moved.source_hash, version.source_hash);

  // A space choosing its own dialect drops the default --std=c++17: another version.
  const Space own_std = load_space(write_space(dir, "a", "k", "[-Iinclude, --std=c++20]"));
  const KernelRecord other = kernel_record(own_std, source, 90);
  EXPECT_NE(other.options, version.options);
  EXPECT_EQ(other.options.find("--std=c++17"), std::string::npos) << other.options;
}

// kernels/k.cu where P selects 64 or 128 KB of static shared memory: no config compiles.
fs::path write_failing_tree(const TempDir& dir) {
  dir.write("f/kernels/k.cu",
            "extern \"C\" __global__ void k(float* p) {\n"
            "  __shared__ float s[P * 16384];\n  s[threadIdx.x] = 1;\n  __syncthreads();\n"
            "  p[threadIdx.x] = s[threadIdx.x + 1];\n}\n");
  return write_space(dir, "f", "k", "[]");
}

TEST(PlanCompile, FailedCompilesAreCachedSoASecondPlanCompilesNothing) {
  TempDir dir;
  const Space space = load_space(write_failing_tree(dir));
  const CubinCache cache(dir.path() / "cubin");
  const Plan first = plan_with(space, cache);
  EXPECT_EQ(first.summary.compile_failed, 2u);
  EXPECT_EQ(first.summary.compiled, 2u);
  EXPECT_EQ(first.summary.compiled_ok, 0u);
  EXPECT_EQ(first.rows[0].detail, "k: static shared memory 65536 B > 48 KB max");
  EXPECT_EQ(first.rows[1].detail, "k: static shared memory 131072 B > 48 KB max");
  const auto common = most_common_failure(first);
  ASSERT_TRUE(common.has_value());
  EXPECT_EQ(common->configs, 2u);  // numbers apart, one reason
  EXPECT_EQ(common->reason, first.rows[0].detail);

  const Plan second = plan_with(space, cache);
  EXPECT_EQ(second.summary.compiled, 0u);
  EXPECT_EQ(second.summary.cache_hits, 2u);
  EXPECT_EQ(second.summary.compile_failed, 2u);
  EXPECT_EQ(second.rows[1].detail, first.rows[1].detail);
  EXPECT_EQ(second.rows[1].compile_log, first.rows[1].compile_log);
}

TEST(PlanCompile, ProblemSizesAndOptionExpressionsReachTheCompilerAndTheKeys) {
  TempDir dir;
  dir.write("d/kernels/k.cu",
            "static_assert(WIDTH == 2 * N, \"WIDTH follows N\");\n"
            "extern \"C\" __global__ void k(float* p) {\n"
            "  __shared__ float s[N / 8];\n  s[threadIdx.x] = P;\n  __syncthreads();\n"
            "  p[threadIdx.x] = s[threadIdx.x + 1];\n}\n");
  const fs::path yaml = dir.write("d/space.yaml",
                                  "kernel: sized\nsource: kernels/k.cu\nentry: k\nproblem:\n  N: [1024, 2048]\n"
                                  "problem_defines: true\noptions: [\"-DWIDTH=${2 * N}\", \"-DINV=${100 / (P - 1)}\"]\n"
                                  "params:\n  P: [1, 2]\nlaunch: {grid: [1], block: [32]}\n"
                                  "buffers:\n  p: {type: float, count: 64}\nargs: [p]\nverify: none\n");
  const Space space = load_space(yaml);

  EXPECT_EQ(compile_options(space, Problem{{2048}}, Config{{2}}),
            (std::vector<std::string>{"-DP=2", "-DN=2048", "-DWIDTH=4096", "-DINV=100"}));
  const CubinCache cache(dir.path() / "cubin");
  PlanOptions options;
  options.device = *builtin_device_limits(90);
  options.cache = &cache;
  options.problem = Problem{{1024}};
  const Plan small = plan_space(space, options);
  options.problem = Problem{{2048}};
  const Plan large = plan_space(space, options);
  // P = 1 divides by zero in INV's expression: pruned, with the option named.
  EXPECT_EQ(small.rows[0].status, TrialStatus::pruned);
  EXPECT_NE(small.rows[0].detail.find("option '-DINV=${100 / (P - 1)}'"), std::string::npos) << small.rows[0].detail;
  ASSERT_EQ(small.rows[1].status, TrialStatus::ok) << small.rows[1].detail;
  ASSERT_EQ(large.rows[1].status, TrialStatus::ok) << large.rows[1].detail;
  EXPECT_EQ(small.rows[1].resources->static_shared_bytes, 1024 / 8 * 4);
  EXPECT_EQ(large.rows[1].resources->static_shared_bytes, 2048 / 8 * 4);
  EXPECT_NE(small.rows[1].cubin_key, large.rows[1].cubin_key);
  EXPECT_EQ(large.summary.cache_hits, 0u);

  KernelSources sources(space.source);
  const KernelRecord version = kernel_record(space, sources.for_options(space_options(space)), 90);
  EXPECT_NE(version.options.find("-DWIDTH=${2 * N} -DINV=${100 / (P - 1)}"), std::string::npos) << version.options;
  EXPECT_NE(version.options.find(" problem_defines "), std::string::npos) << version.options;
}

// plan, the sweep's compiles (CompileAhead) and the Launcher build a config's compile in one place
// (config_compile_request): a config whose options hold a problem size, an ${} expression and a
// relative -I compiles under one cubin key in all three. One that assembled its request again
// (another option order, a -I left relative, the problem sizes left out, another source) would
// get another key.
TEST(PlanCompile, PlanSweepAndLauncherCompileAConfigUnderOneKey) {
  TempDir dir;
  dir.write("c/include/lib/scale.cuh", "#pragma once\n#define LIB_SCALE 2\n");
  dir.write("c/kernels/k.cu",
            "#include <lib/scale.cuh>\nstatic_assert(WIDTH == LIB_SCALE * N, \"WIDTH follows N\");\n"
            "extern \"C\" __global__ void k(float* p) {\n  if (p) p[threadIdx.x] = P;\n}\n");
  const fs::path yaml =
      write_space(dir, "c", "k", "[-Iinclude, \"-DWIDTH=${2 * N}\"]", "problem:\n  N: [1024]\nproblem_defines: true\n");
  const Space space = load_space(yaml);
  const Problem problem{{1024}};
  const Config config{{2}};

  const CubinCache cache(dir.path() / "cubin");
  PlanOptions options;
  options.device = *builtin_device_limits(90);
  options.problem = problem;
  options.cache = &cache;
  const Plan plan = plan_space(space, options);
  ASSERT_EQ(plan.rows.size(), 2u);
  ASSERT_EQ(plan.rows[1].status, TrialStatus::ok) << plan.rows[1].detail;
  const std::string key = plan.rows[1].cubin_key;
  ASSERT_FALSE(key.empty());

  sweep_detail::CompileAhead ahead(space, "sm_90", 1, cache);
  const CompileResult swept = ahead.config(problem, config).get();
  EXPECT_EQ(swept.cache_key, key) << "the sweep compiles the config under another key than plan";
  EXPECT_TRUE(swept.cache_hit);

  // The Launcher's answer for N=1024 on a fictional device is the same config.
  const fs::path db_path = dir.path() / "cache.db";
  {
    CacheDb db = CacheDb::open(db_path);
    TrialRecord t;
    t.key = TrialKey{db.upsert_device(DeviceRecord{.uuid = "GPU-c0ffee00-0000-4000-8000-000000000001",
                                                   .name = "Fictional H200",
                                                   .cc_major = 9,
                                                   .cc_minor = 0}),
                     db.upsert_kernel(KernelRecord{"stale", "fixture", "", "13.0"}), "N=1024", "P=2"};
    t.status = TrialStatus::ok;
    t.time_ms = 0.01;
    (void)db.record_trial(t);
  }
  Launcher::Options launch;
  launch.db_path = db_path;
  launch.device = QueryDevice{"GPU-c0ffee00-0000-4000-8000-000000000001", "Fictional H200", 9, 0};
  launch.arch = "sm_90";
  auto launcher = Launcher::open(yaml, launch);
  const LaunchPlan launched = launcher.prepare({{"N", 1024}});
  EXPECT_EQ(launched.config_text, "P=2") << launched.query_message;
  EXPECT_EQ(launched.cubin_key, key) << "the Launcher compiles the config under another key than plan";
}

CommandResult tiletune_plan(const TempDir& dir, const std::string& args) {
  return tiletune::testing::run_command("cd " + quote(dir.path()) +
                                        " && TILETUNE_CUBIN_CACHE=" + quote(dir.path() / "cubin") + " " +
                                        quote(tiletune::testing::cli_path()) + " plan --arch sm_90 -q " + args);
}

TEST(PlanCompile, ExitStatusWhenNothingOrSomethingFailsToCompile) {
  TempDir dir;
  const fs::path failing = write_failing_tree(dir);
  CommandResult r = tiletune_plan(dir, quote(failing));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("tiletune: plan: no config of stale compiled (2 failed); most common reason (2 of 2): "
                          "k: static shared memory 65536 B > 48 KB max\n"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(tiletune_plan(dir, "--strict " + quote(failing)).exit_code, 4);

  // One of two configs fails (P = 2: 96 KB): 0, and 3 with --strict.
  dir.write("s/kernels/k.cu",
            "extern \"C\" __global__ void k(float* p) {\n"
            "  __shared__ float s[(P - 1) * 24576 + 1024];\n  s[threadIdx.x] = 1;\n  __syncthreads();\n"
            "  p[threadIdx.x] = s[threadIdx.x + 1];\n}\n");
  const fs::path some = write_space(dir, "s", "k", "[]");
  r = tiletune_plan(dir, quote(some));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(tiletune_plan(dir, "--strict " + quote(some)).exit_code, 3);
}

TEST(PlanCompile, WarningsAndTheOtherKernelInLogsAndJson) {
  TempDir dir;
  dir.write("w/kernels/k.cu",
            "extern \"C\" __global__ void k(float* p) {\n#pragma unroll 0\n"
            "  for (int i = 0; i < 4; ++i) p[i] = P;\n}\n"
            "extern \"C\" __global__ void ExpDist(float* p) {\n"
            "  __shared__ float s[12530];\n  s[threadIdx.x] = p[threadIdx.x];\n  __syncthreads();\n"
            "  p[threadIdx.x] = s[threadIdx.x + 1];\n}\n");
  const fs::path space = write_space(dir, "w", "k", "[]");
  const CommandResult json = tiletune_plan(dir, "--format json " + quote(space) + " 2>/dev/null");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto j = nlohmann::json::parse(json.output);
  ASSERT_EQ(j["rows"].size(), 2u);
  for (const auto& row : j["rows"]) {
    EXPECT_EQ(row["status"], "ok");
    ASSERT_EQ(row["warnings"].size(), 2u) << row.dump();
    EXPECT_NE(row["warnings"][0].get<std::string>().find("ExpDist: static shared memory 50120 B > 48 KB max"),
              std::string::npos);
    EXPECT_NE(row["warnings"][1].get<std::string>().find("#20168-D"), std::string::npos);
  }
  EXPECT_EQ(j["summary"]["with_warnings"], 2);

  const CommandResult logs = tiletune_plan(dir, "--logs " + quote(space));  // from the cache now
  ASSERT_EQ(logs.exit_code, 0) << logs.output;
  EXPECT_NE(logs.output.find("--- stale (P=1 and 1 more configs): warning: another kernel of k.cu fails ptxas"),
            std::string::npos)
      << logs.output;
  EXPECT_NE(logs.output.find("2 configs compiled with warnings (--logs shows them)"), std::string::npos);
}

}  // namespace
}  // namespace tiletune
