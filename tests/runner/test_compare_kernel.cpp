// The comparison kernels the GPU worker compiles at start: they must compile with NVRTC as
// they stand (no headers) and define one entry per element type. NVRTC needs no GPU.
#include <gtest/gtest.h>

#include "tiletune/compile.hpp"

namespace tiletune {
namespace {

constexpr char kCompareSource[] =
#include "gpu/compare_kernel.cu.inc"
    ;

void expect_compiles_for(const std::string& arch) {
  KernelSource source;
  source.main = {"tiletune_compare.cu", kCompareSource};
  CompileRequest request;
  request.source = &source;
  request.arch = arch;
  request.entry = "tiletune_compare_f32";
  const CompileResult result = compile_nvrtc(request);
  ASSERT_TRUE(result.ok()) << result.error << "\n" << result.log;
  EXPECT_EQ(result.kernel->lowered_name, "tiletune_compare_f32");
  for (const char* type : {"f32", "f64", "f16", "i32", "u32", "i64", "u8"}) {
    const std::string name = std::string("tiletune_compare_") + type;
    const Resources r = parse_ptxas_report(result.log, name);  // throws when it is missing
    EXPECT_EQ(r.spill_store_bytes, 0) << name;
    EXPECT_EQ(r.static_shared_bytes, 0) << name;
  }
}

TEST(CompareKernel, CompilesForHopper) {
  expect_compiles_for("sm_90");
}

TEST(CompareKernel, CompilesForTheOldestSupportedArch) {
  const std::vector<int> archs = nvrtc_supported_archs();
  ASSERT_FALSE(archs.empty());
  expect_compiles_for(std::to_string(archs.front()));
}

}  // namespace
}  // namespace tiletune
