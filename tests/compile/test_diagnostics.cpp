// Compile diagnostics: NVRTC's log cleaned of NUL bytes, the first error as a one-line reason
// naming the kernel (ptxas' "too much shared data" in bytes), warnings of successful compiles,
// and a file with two kernels where the other one fails ptxas.
#include <gtest/gtest.h>

#include <string>

#include "compile/diagnostics.hpp"
#include "test_support.hpp"
#include "tiletune/compile.hpp"

namespace tiletune {
namespace {

using namespace compile_detail;
using tiletune::testing::TempDir;

// What NVRTC 13.0 wrote for a kernel 'a' with 80 KB of static shared memory: the front end's
// part, a NUL, ptxas' part, a NUL.
const std::string kSharedLog =
    std::string(
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function 'a' for 'sm_90'\n"
        "ptxas info    : Used 10 registers, used 1 barriers, 81920 bytes smem\n") +
    '\0' + "ptxas error   : Entry function 'a' uses too much shared data (0x14000 bytes, 0xc000 max)\n" + '\0';

TEST(Diagnostics, CleanLogHasNoNulBytes) {
  ASSERT_NE(kSharedLog.find('\0'), std::string::npos);
  const std::string clean = clean_log(kSharedLog);
  EXPECT_EQ(clean.find('\0'), std::string::npos);
  EXPECT_NE(clean.find("\nptxas error   : Entry function 'a'"), std::string::npos) << clean;
  EXPECT_EQ(clean.back(), '\n');
  EXPECT_EQ(clean_log(std::string("x\0", 2)), "x\n");
  EXPECT_EQ(clean_log(""), "");
}

TEST(Diagnostics, PtxasSharedMemoryErrorNamesTheKernelAndTheBytes) {
  const auto error = first_ptxas_error(clean_log(kSharedLog));
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->function, "a");
  EXPECT_EQ(error->reason, "a: static shared memory 81920 B > 48 KB max");
  EXPECT_EQ(first_error(clean_log(kSharedLog)), error->reason);
  // Another ptxas error keeps its words; a mangled name is shown demangled.
  const auto other = first_ptxas_error("ptxas error   : Entry function '_Z3fooPf' uses too much parameter space\n");
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->function, "_Z3fooPf");
  EXPECT_EQ(other->reason, "foo: ptxas: uses too much parameter space");
  EXPECT_EQ(first_ptxas_error("ptxas fatal   : Unknown option 'e,c'\n")->reason, "ptxas: Unknown option 'e,c'");
}

TEST(Diagnostics, FirstErrorPrefersTheFrontEndAndSkipsQuotedSource) {
  const std::string log =
      "k.cu(2): warning #177-D: variable \"x\" was declared but never referenced\n"
      "    int error: 1;   // quoted source, indented\n"
      "k.cu(3): error: identifier \"nope\" is undefined\n"
      "k.cu(4): error: another\n";
  EXPECT_EQ(first_error(log), "k.cu(3): error: identifier \"nope\" is undefined");
  EXPECT_EQ(first_error("nvrtc: error: unrecognized option --bad found\n"),
            "nvrtc: error: unrecognized option --bad found");
  EXPECT_EQ(first_error("ptxas info    : Used 8 registers\n"), "");
}

TEST(Diagnostics, WarningsAreTheFirstLineOfEachOnce) {
  const std::string log =
      "k.cu(2): warning #47-D: incompatible redefinition of macro \"V\" (declared at line 1)\n"
      "  #define V 3\n"
      "          ^\n\n"
      "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n\n"
      "k.cu(4): warning #20168-D: the unroll value cannot be zero or negative, ignoring pragma for this loop\n"
      "k.cu(2): warning #47-D: incompatible redefinition of macro \"V\" (declared at line 1)\n"
      "ptxas warning : Registers are spilled to local memory in function 'k', 8 bytes spill stores\n"
      "ptxas info    : Used 8 registers\n";
  const auto warnings = log_warnings(log);
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_NE(warnings[0].find("#47-D"), std::string::npos);
  EXPECT_NE(warnings[1].find("#20168-D"), std::string::npos);
  EXPECT_EQ(warnings[2].rfind("ptxas warning", 0), 0u);
}

TEST(Diagnostics, KernelDisplayNames) {
  EXPECT_EQ(kernel_display_name("transpose"), "transpose");
  EXPECT_EQ(kernel_display_name("_Z5scaleIfLi4EEvPT_S0_i"), "scale");
  EXPECT_EQ(kernel_display_name("_ZN2ns6kernelEPf"), "ns::kernel");
  EXPECT_EQ(kernel_display_name("_Z99x"), "_Z99x");  // not a name NVRTC makes: shown as is
}

// Real compiles: one kernel with too much static shared memory, and a good one beside it.
const char* kTwoKernels =
    "extern \"C\" __global__ void good(float* p) { p[threadIdx.x] *= 2.0f; }\n"
    "__global__ void ExpDist(float* p) {\n"
    "  __shared__ float s[12530];  // 50120 B\n"
    "  s[threadIdx.x] = p[threadIdx.x];\n  __syncthreads();\n  p[threadIdx.x] = s[threadIdx.x + 1];\n}\n"
    "template <int N> __global__ void scaled(float* p) { p[threadIdx.x] *= N; }\n";

TEST(Diagnostics, TheTunedKernelFailingPtxasIsTheReason) {
  TempDir dir;
  const KernelSource source = load_kernel_source(dir.write("two.cu", kTwoKernels));
  const CompileResult result = compile_nvrtc({&source, {}, "sm_90", "ExpDist"});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error, "ExpDist: static shared memory 50120 B > 48 KB max");
  EXPECT_FALSE(result.transient);
  EXPECT_EQ(result.log.find('\0'), std::string::npos);
  EXPECT_NE(result.log.find("ptxas error"), std::string::npos) << result.log;
}

TEST(Diagnostics, AnotherKernelFailingPtxasLeavesTheEntryCompiled) {
  TempDir dir;
  const KernelSource source = load_kernel_source(dir.write("two.cu", kTwoKernels));
  for (const std::string entry : {"good", "scaled<3>"}) {
    SCOPED_TRACE(entry);
    const CompileResult result = compile_nvrtc({&source, {}, "sm_90", entry});
    ASSERT_TRUE(result.ok()) << result.error << "\n" << result.log;
    ASSERT_FALSE(result.warnings.empty());
    EXPECT_NE(result.warnings[0].find("ExpDist: static shared memory 50120 B > 48 KB max"), std::string::npos)
        << result.warnings[0];
    EXPECT_NE(result.warnings[0].find("compiled only the entry '" + entry + "'"), std::string::npos)
        << result.warnings[0];
    EXPECT_EQ(result.options.back(), "--ptxas-options=--entry=" + result.kernel->lowered_name);
    EXPECT_EQ(result.kernel->extra_options, std::vector<std::string>{result.options.back()});
    EXPECT_GT(result.kernel->resources.registers, 0);
  }
}

TEST(Diagnostics, WarningsOfASuccessfulCompile) {
  TempDir dir;
  const KernelSource source = load_kernel_source(
      dir.write("warn.cu",
                "#define V 2\n#define V 3\nextern \"C\" __global__ void k(float* p) {\n#pragma unroll 0\n"
                "  for (int i = 0; i < 4; ++i) p[i] = V;\n}\n"));
  const CompileResult result = compile_nvrtc({&source, {}, "sm_90", "k"});
  ASSERT_TRUE(result.ok()) << result.error;
  ASSERT_EQ(result.warnings.size(), 2u) << result.log;
  EXPECT_NE(result.warnings[0].find("warn.cu(2): warning #47-D"), std::string::npos) << result.warnings[0];
  EXPECT_NE(result.warnings[1].find("warn.cu(4): warning #20168-D"), std::string::npos) << result.warnings[1];
  EXPECT_EQ(result.kernel->warnings, result.warnings);
}

}  // namespace
}  // namespace tiletune
