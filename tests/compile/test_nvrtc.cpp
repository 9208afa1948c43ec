// NVRTC compiles of the transpose kernel and of small sources: arch parsing, options, the
// CUBIN and its resources (checked against what nvcc's ptxas prints), compile errors and
// template entries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "test_support.hpp"
#include "tiletune/compile.hpp"
#include "tiletune/error.hpp"

namespace tiletune {
namespace {

using tiletune::testing::TempDir;

const std::vector<std::string> kDefines{"-DTILE=32", "-DBLOCK_ROWS=8", "-DPAD=1"};

std::filesystem::path transpose_path() { return tiletune::testing::source_dir() / "kernels" / "transpose.cu"; }

bool is_elf(const std::string& bytes) {
  return bytes.size() > 4 && bytes.compare(0, 4,
                                           "\x7f"
                                           "ELF") == 0;
}

TEST(Arch, Parse) {
  EXPECT_EQ(parse_arch("sm_90"), 90);
  EXPECT_EQ(parse_arch("90"), 90);
  EXPECT_EQ(parse_arch("9.0"), 90);
  EXPECT_EQ(parse_arch("compute_90"), 90);
  EXPECT_EQ(parse_arch("sm_90a"), 90);
  EXPECT_EQ(parse_arch(" SM_80 "), 80);
  EXPECT_EQ(parse_arch("12.1"), 121);
  EXPECT_EQ(parse_arch("sm_100f"), 100);
  EXPECT_EQ(normalize_arch("9.0"), "sm_90");
  EXPECT_EQ(normalize_arch("compute_90a"), "sm_90a");
  for (const char* bad : {"", "sm_", "sm90x", "abc", "9", "9.", ".0", "9.00", "sm_9", "sm_0900", "compute_", "90b",
                          "sm_90aa", "-90", "9.0.1"}) {
    try {
      (void)parse_arch(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) { EXPECT_NE(std::string(e.what()).find("sm_90"), std::string::npos) << e.what(); }
  }
}

TEST(Nvrtc, VersionAndArchs) {
  const std::string version = nvrtc_version();
  EXPECT_EQ(version, "13.0");  // the toolkit this project is built against
  const auto archs = nvrtc_supported_archs();
  EXPECT_NE(std::find(archs.begin(), archs.end(), 80), archs.end());
  EXPECT_NE(std::find(archs.begin(), archs.end(), 90), archs.end());
}

// The toolkit's -I flags NVRTC gets after the request's options, as given and by role.
std::vector<std::string> toolkit_flags(const KernelSource& source, bool by_role) {
  std::vector<std::string> flags;
  for (std::size_t i = 0; i < source.search.toolkit_dirs.size(); ++i)
    flags.push_back(by_role ? "-I<toolkit[" + std::to_string(i) + "]>" : "-I" + source.search.toolkit_dirs[i].string());
  return flags;
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(Nvrtc, OptionsAreDeterministic) {
  const KernelSource source = load_kernel_source(transpose_path());
  // The toolkit tiletune was built against: its include/ and include/cccl.
  ASSERT_EQ(source.search.toolkit_dirs.size(), 2u);
  EXPECT_EQ(source.search.toolkit_dirs[1].filename(), "cccl");
  const CompileRequest request{&source, {"-DTILE=32", "-DPAD=1", "-lineinfo"}, "9.0", "transpose"};
  // NVRTC 13's --no-cache: its own cache would return cubins without ptxas' report.
  const std::vector<std::string> expected{"--gpu-architecture=sm_90",
                                          "--ptxas-options=-v",
                                          "--no-cache",
                                          "--std=c++17",
                                          "-DTILE=32",
                                          "-DPAD=1",
                                          "-lineinfo"};
  EXPECT_EQ(nvrtc_options(request), concat(expected, toolkit_flags(source, false)));
  EXPECT_EQ(key_options(request), concat(expected, toolkit_flags(source, true)));
  const CompileRequest own_std{&source, {"--std=c++20"}, "sm_80", "transpose"};
  const std::vector<std::string> expected_std{"--gpu-architecture=sm_80", "--ptxas-options=-v", "--no-cache",
                                              "--std=c++20"};
  EXPECT_EQ(nvrtc_options(own_std), concat(expected_std, toolkit_flags(source, false)));
  EXPECT_THROW((void)nvrtc_options({&source, {}, "gpu", "transpose"}), Error);
}

TEST(Nvrtc, KeyOptionsNameIncludeDirectoriesByRole) {
  TempDir dir;
  dir.write("a/x.cuh", "#define X 1\n");
  dir.write("b/y.cuh", "#define Y 1\n");
  const std::vector<std::string> options{"-I" + (dir.path() / "a").string(), "-DZ=1", "--include-path",
                                         (dir.path() / "b").string()};
  const KernelSource source = load_kernel_source(dir.write("k.cu", "#include <x.cuh>\n"), include_search(options));
  const CompileRequest request{&source, options, "sm_90", "k"};
  const std::vector<std::string> given = nvrtc_options(request);
  const std::vector<std::string> keyed = key_options(request);
  ASSERT_EQ(given.size(), keyed.size() + 1);  // "--include-path DIR" is one option in the key
  EXPECT_EQ(std::vector<std::string>(keyed.begin() + 4, keyed.begin() + 7),
            (std::vector<std::string>{"-I<include[0]>", "-DZ=1", "-I<include[1]>"}));
  EXPECT_EQ(given[4], options[0]);
  for (const std::string& option : keyed) EXPECT_EQ(option.find(dir.path().string()), std::string::npos) << option;

  // A request whose -I differ from those its source was loaded for is refused.
  const CompileRequest mismatched{&source, {"-DZ=1"}, "sm_90", "k"};
  EXPECT_THROW((void)compile_nvrtc(mismatched), Error);
}

class TransposeArch : public ::testing::TestWithParam<std::string> {};

TEST_P(TransposeArch, CompilesToACubinWithPlausibleResources) {
  const KernelSource source = load_kernel_source(transpose_path());
  const CompileResult result = compile_nvrtc({&source, kDefines, GetParam(), "transpose"});
  ASSERT_TRUE(result.ok()) << result.error << "\n" << result.log;
  const CompiledKernel& kernel = *result.kernel;
  EXPECT_TRUE(is_elf(kernel.cubin));
  EXPECT_EQ(kernel.lowered_name, "transpose");
  EXPECT_EQ(kernel.resources.static_shared_bytes, 32 * 33 * 4);
  EXPECT_GT(kernel.resources.registers, 4);
  EXPECT_LE(kernel.resources.registers, 255);
  EXPECT_EQ(kernel.resources.barriers, 1);
  EXPECT_EQ(kernel.resources.spill_store_bytes, 0);
  EXPECT_EQ(kernel.resources.stack_frame_bytes, 0);
  EXPECT_NE(kernel.log.find("ptxas info"), std::string::npos) << kernel.log;
  EXPECT_TRUE(result.error.empty());
  EXPECT_GT(result.seconds, 0.0);
  EXPECT_FALSE(result.cache_hit);
  EXPECT_EQ(result.options, nvrtc_options({&source, kDefines, GetParam(), "transpose"}));
  std::printf("[ info ] transpose %s: %d registers, %d B smem, %.1f ms\n", GetParam().c_str(),
              kernel.resources.registers, kernel.resources.static_shared_bytes, result.seconds * 1e3);
}

INSTANTIATE_TEST_SUITE_P(Archs, TransposeArch, ::testing::Values("sm_80", "sm_90"));

// The resources NVRTC reports must be what ptxas prints for the same kernel: compile it with
// nvcc too and parse nvcc's ptxas output with the same parser.
TEST(Nvrtc, ResourcesEqualWhatNvccPtxasPrints) {
  const std::filesystem::path nvcc = "/usr/local/cuda/bin/nvcc";
  if (!std::filesystem::exists(nvcc)) GTEST_SKIP() << "no nvcc at " << nvcc;
  const KernelSource source = load_kernel_source(transpose_path());
  const CompileResult ours = compile_nvrtc({&source, kDefines, "sm_90", "transpose"});
  ASSERT_TRUE(ours.ok()) << ours.error << "\n" << ours.log;

  TempDir dir;
  std::string command = nvcc.string() + " -cubin -arch=sm_90 -Xptxas -v";
  for (const auto& define : kDefines) command += " " + define;
  command += " -o '" + (dir.path() / "t.cubin").string() + "' '" + transpose_path().string() + "'";
  const auto run = tiletune::testing::run_command(command);
  ASSERT_EQ(run.exit_code, 0) << command << "\n" << run.output;
  const Resources theirs = parse_ptxas_report(run.output, "transpose");
  const Resources& mine = ours.kernel->resources;
  EXPECT_EQ(mine.registers, theirs.registers) << run.output << "\n---\n" << ours.log;
  EXPECT_EQ(mine.static_shared_bytes, theirs.static_shared_bytes);
  EXPECT_EQ(mine.spill_store_bytes, theirs.spill_store_bytes);
  EXPECT_EQ(mine.spill_load_bytes, theirs.spill_load_bytes);
  EXPECT_EQ(mine.stack_frame_bytes, theirs.stack_frame_bytes);
  EXPECT_EQ(mine.barriers, theirs.barriers);
}

TEST(Nvrtc, CompileErrorKeepsLogAndOptions) {
  TempDir dir;
  const KernelSource source =
      load_kernel_source(dir.write("bad.cu",
                                   "extern \"C\" __global__ void bad(float* p) {\n"
                                   "  unsigned error_code = -1;  // a warning first, mentioning \"error\"\n"
                                   "  p[0] = undefined_thing;\n}\n"));
  const CompileRequest request{&source, {"-DTILE=32"}, "sm_90", "bad"};
  const CompileResult result = compile_nvrtc(request);
  EXPECT_FALSE(result.ok());
  EXPECT_NE(result.error.find("error"), std::string::npos) << result.error;
  EXPECT_NE(result.error.find("undefined_thing"), std::string::npos) << result.error;
  EXPECT_NE(result.log.find("undefined_thing"), std::string::npos) << result.log;
  EXPECT_NE(result.log.find("bad.cu(3)"), std::string::npos) << result.log;
  EXPECT_EQ(result.options, nvrtc_options(request));
  std::printf("[ info ] compile error: %s\n", result.error.c_str());
  EXPECT_NE(std::find(result.options.begin(), result.options.end(), "-DTILE=32"), result.options.end());
}

TEST(Nvrtc, BadOptionIsAFailedResultNotAThrow) {
  const KernelSource source = load_kernel_source(transpose_path());
  const CompileResult result = compile_nvrtc({&source, {"--no-such-option"}, "sm_90", "transpose"});
  EXPECT_FALSE(result.ok());
  EXPECT_FALSE(result.error.empty());
  std::printf("[ info ] bad option: %s\n", result.error.c_str());
}

TEST(Nvrtc, EntryThatIsNotAKernelFails) {
  TempDir dir;
  const KernelSource source =
      load_kernel_source(dir.write("dev.cu",
                                   "__device__ int twice(int x) { return 2 * x; }\n"
                                   "extern \"C\" __global__ void k(int* p) { p[0] = twice(p[0]); }\n"));
  const CompileResult result = compile_nvrtc({&source, {}, "sm_90", "twice"});
  EXPECT_FALSE(result.ok());
  EXPECT_NE(result.error.find("twice"), std::string::npos) << result.error;
}

TEST(Nvrtc, TemplateEntryGetsAMangledName) {
  TempDir dir;
  const KernelSource source =
      load_kernel_source(dir.write("scale.cu",
                                   "template <typename T, int N>\n"
                                   "__global__ void scale(T* data, T factor, int n) {\n"
                                   "  const int i = (blockIdx.x * blockDim.x + threadIdx.x) * N;\n"
                                   "#pragma unroll\n"
                                   "  for (int k = 0; k < N; ++k)\n"
                                   "    if (i + k < n) data[i + k] *= factor;\n"
                                   "}\n"));
  const CompileResult result = compile_nvrtc({&source, {}, "sm_90", "scale<float, 4>"});
  ASSERT_TRUE(result.ok()) << result.error << "\n" << result.log;
  const std::string& lowered = result.kernel->lowered_name;
  EXPECT_EQ(lowered.rfind("_Z", 0), 0u) << lowered;
  EXPECT_NE(lowered.find("scale"), std::string::npos) << lowered;
  EXPECT_NE(result.kernel->log.find(lowered), std::string::npos);
  EXPECT_GT(result.kernel->resources.registers, 0);
  EXPECT_TRUE(is_elf(result.kernel->cubin));
}

// The same request compiled again must still carry ptxas' report. On a machine with a CUDA
// driver NVRTC 13 caches compiled code itself, and a hit there has an empty log; this is
// what --no-cache is for.
TEST(Nvrtc, RepeatedCompilesKeepTheReport) {
  const KernelSource source = load_kernel_source(transpose_path());
  Resources first;
  for (int i = 0; i < 3; ++i) {
    const CompileResult r = compile_nvrtc({&source, kDefines, "sm_90", "transpose"});
    ASSERT_TRUE(r.ok()) << "compile " << i << ": " << r.error << "\n" << r.log;
    EXPECT_NE(r.log.find("Used "), std::string::npos) << r.log;
    if (i == 0) first = r.kernel->resources;
    EXPECT_EQ(r.kernel->resources, first);
  }
}

TEST(Nvrtc, NullSourceThrows) { EXPECT_THROW((void)compile_nvrtc({nullptr, {}, "sm_90", "k"}), Error); }

// Prints the NVRTC compile time of each transpose config on sm_90 (not a pass/fail check).
TEST(Nvrtc, CompileTimePerConfig) {
  const KernelSource source = load_kernel_source(transpose_path());
  double total = 0;
  int count = 0;
  for (int tile : {16, 32, 64}) {
    for (int rows : {4, 8, 16}) {
      for (int pad : {0, 1}) {
        const CompileResult r = compile_nvrtc(
            {&source,
             {"-DTILE=" + std::to_string(tile), "-DBLOCK_ROWS=" + std::to_string(rows), "-DPAD=" + std::to_string(pad)},
             "sm_90",
             "transpose"});
        ASSERT_TRUE(r.ok()) << r.error;
        EXPECT_EQ(r.kernel->resources.static_shared_bytes, tile * (tile + pad) * 4);
        total += r.seconds;
        ++count;
      }
    }
  }
  std::printf("[ info ] NVRTC sm_90 transpose: %d configs, mean %.1f ms per config\n", count, total / count * 1e3);
}

}  // namespace
}  // namespace tiletune
