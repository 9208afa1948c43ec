// parse_ptxas_report on literal logs in the shapes nvcc and NVRTC print.
#include <gtest/gtest.h>

#include "tiletune/compile.hpp"
#include "tiletune/error.hpp"

namespace tiletune {
namespace {

// What NVRTC 13 puts in the program log for the transpose kernel on sm_90.
constexpr const char* kNvrtcLog =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'transpose' for 'sm_90'\n"
    "ptxas info    : Function properties for transpose\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 32 registers, used 1 barriers, 4224 bytes smem\n"
    "ptxas info    : Compile time = 27.102 ms\n";

TEST(PtxasReport, NvrtcLog) {
  const Resources r = parse_ptxas_report(kNvrtcLog, "transpose");
  EXPECT_EQ(r.registers, 32);
  EXPECT_EQ(r.barriers, 1);
  EXPECT_EQ(r.static_shared_bytes, 4224);
  EXPECT_EQ(r.constant_bytes, 0);
  EXPECT_EQ(r.stack_frame_bytes, 0);
  EXPECT_EQ(r.spill_store_bytes, 0);
  EXPECT_EQ(r.spill_load_bytes, 0);
}

TEST(PtxasReport, SeveralFunctionsPickTheNamedOne) {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z5firstPf' for 'sm_80'\n"
      "ptxas info    : Function properties for _Z5firstPf\n"
      "    8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 10 registers, used 0 barriers, 0 bytes smem, 356 bytes cmem[0]\n"
      "ptxas info    : Function properties for _Z6helperv\n"
      "    24 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Compiling entry function 'transpose' for 'sm_80'\n"
      "ptxas info    : Function properties for transpose\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 30 registers, used 1 barriers, 4224 bytes smem, 372 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function 'third' for 'sm_80'\n"
      "ptxas info    : Function properties for third\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 4 registers, 360 bytes cmem[0]\n";
  const Resources t = parse_ptxas_report(log, "transpose");
  EXPECT_EQ(t.registers, 30);
  EXPECT_EQ(t.barriers, 1);
  EXPECT_EQ(t.static_shared_bytes, 4224);
  EXPECT_EQ(t.constant_bytes, 372);
  EXPECT_EQ(t.stack_frame_bytes, 0);

  const Resources f = parse_ptxas_report(log, "_Z5firstPf");
  EXPECT_EQ(f.registers, 10);
  EXPECT_EQ(f.stack_frame_bytes, 8);
  EXPECT_EQ(f.constant_bytes, 356);

  const Resources third = parse_ptxas_report(log, "third");
  EXPECT_EQ(third.registers, 4);
  EXPECT_EQ(third.constant_bytes, 360);
  EXPECT_EQ(third.static_shared_bytes, 0);
  EXPECT_EQ(third.barriers, 0);

  // A device function has properties but no "Used" line: not a kernel.
  EXPECT_THROW((void)parse_ptxas_report(log, "_Z6helperv"), Error);
}

TEST(PtxasReport, MissingBarriersField) {
  // Older ptxas (before CUDA 12) prints no barrier count.
  const std::string log =
      "ptxas info    : Compiling entry function 'k' for 'sm_70'\n"
      "ptxas info    : Function properties for k\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 16 registers, 4224 bytes smem, 360 bytes cmem[0]\n";
  const Resources r = parse_ptxas_report(log, "k");
  EXPECT_EQ(r.registers, 16);
  EXPECT_EQ(r.barriers, 0);
  EXPECT_EQ(r.static_shared_bytes, 4224);
  EXPECT_EQ(r.constant_bytes, 360);
}

TEST(PtxasReport, Spills) {
  const std::string log =
      "ptxas info    : Compiling entry function '_Z4heavyPfi' for 'sm_90'\r\n"
      "ptxas info    : Function properties for _Z4heavyPfi\r\n"
      "    1048 bytes stack frame, 1204 bytes spill stores, 1312 bytes spill loads\r\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 0 bytes smem, 380 bytes cmem[0], "
      "8 bytes cmem[2]\r\n";
  const Resources r = parse_ptxas_report(log, "_Z4heavyPfi");
  EXPECT_EQ(r.registers, 255);
  EXPECT_EQ(r.stack_frame_bytes, 1048);
  EXPECT_EQ(r.spill_store_bytes, 1204);
  EXPECT_EQ(r.spill_load_bytes, 1312);
  EXPECT_EQ(r.constant_bytes, 380);
}

TEST(PtxasReport, NoSmemFieldAndCumulativeStack) {
  // nvcc 13 on sm_90 with -maxrregcount=24: no smem field at all, a cumulative stack size.
  const std::string log =
      "ptxas info    : Overriding maximum register limit 256 for 'heavy' with  24 of "
      "maxrregcount option\n"
      "ptxas info    : Compiling entry function 'heavy' for 'sm_90'\n"
      "ptxas info    : Function properties for heavy\n"
      "    576 bytes stack frame, 1312 bytes spill stores, 1396 bytes spill loads\n"
      "ptxas info    : Used 24 registers, used 0 barriers, 576 bytes cumulative stack size\n"
      "ptxas info    : Compile time = 65.045 ms\n";
  const Resources r = parse_ptxas_report(log, "heavy");
  EXPECT_EQ(r.registers, 24);
  EXPECT_EQ(r.barriers, 0);
  EXPECT_EQ(r.static_shared_bytes, 0);
  EXPECT_EQ(r.stack_frame_bytes, 576);
  EXPECT_EQ(r.spill_store_bytes, 1312);
  EXPECT_EQ(r.spill_load_bytes, 1396);
}

TEST(PtxasReport, MissingFunctionIsAnErrorNamingWhatIsThere) {
  try {
    (void)parse_ptxas_report(kNvrtcLog, "transposeX");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("transposeX"), std::string::npos) << what;
    EXPECT_NE(what.find("'transpose'"), std::string::npos) << what;
  }
  EXPECT_THROW((void)parse_ptxas_report("", "transpose"), Error);
  EXPECT_THROW((void)parse_ptxas_report("k.cu(3): error: oops\n", "transpose"), Error);
}

TEST(PtxasReport, PrefixOfAnotherNameDoesNotMatch) {
  const std::string log =
      "ptxas info    : Compiling entry function 'transpose_v2' for 'sm_90'\n"
      "ptxas info    : Function properties for transpose_v2\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 20 registers, used 1 barriers, 4224 bytes smem\n";
  EXPECT_THROW((void)parse_ptxas_report(log, "transpose"), Error);
  EXPECT_EQ(parse_ptxas_report(log, "transpose_v2").registers, 20);
}

}  // namespace
}  // namespace tiletune
