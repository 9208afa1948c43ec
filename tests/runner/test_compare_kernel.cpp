// The GPU worker's own kernels (input generators, comparison, sum, the device references), which
// it compiles at start:
// they must compile with NVRTC as they stand (no headers) and define their entries. NVRTC
// needs no GPU.
#include <gtest/gtest.h>

#include "gpu/worker_kernels.hpp"
#include "tiletune/compile.hpp"

namespace tiletune {
namespace {

void expect_compiles_for(const std::string& arch) {
  KernelSource source;
  source.main = {"tiletune_worker_kernels.cu", worker_kernels_source()};
  CompileRequest request;
  request.source = &source;
  request.arch = arch;
  request.entry = "tiletune_compare_f32";
  request.options = worker_kernels_options();
  const CompileResult result = compile_nvrtc(request);
  ASSERT_TRUE(result.ok()) << result.error << "\n" << result.log;
  EXPECT_EQ(result.kernel->lowered_name, "tiletune_compare_f32");
  for (const char* type : {"f32", "f64", "f16", "i32", "u32", "i64", "u8"}) {
    const std::string compare = std::string("tiletune_compare_") + type;
    const Resources r = parse_ptxas_report(result.log, compare);  // throws when it is missing
    EXPECT_EQ(r.spill_store_bytes, 0) << compare;
    EXPECT_EQ(r.static_shared_bytes, 0) << compare;
    const std::string sum = std::string("tiletune_sum_") + type;
    EXPECT_EQ(parse_ptxas_report(result.log, sum).static_shared_bytes, 256 * 8) << sum;
  }
  const Resources generate = parse_ptxas_report(result.log, "tiletune_generate");
  EXPECT_EQ(generate.static_shared_bytes, 0);
  // The device versions of the simple built-in references (gpu/reference_kernels.cu.inc).
  for (const char* reference : {"tiletune_ref_transpose", "tiletune_ref_vector_add_f32", "tiletune_ref_vector_add_f64",
                                "tiletune_ref_vector_add_i32", "tiletune_ref_vector_add_i64", "tiletune_ref_stencil_1d"}) {
    EXPECT_EQ(parse_ptxas_report(result.log, reference).spill_store_bytes, 0) << reference;
  }
  EXPECT_EQ(parse_ptxas_report(result.log, "tiletune_ref_histogram").static_shared_bytes, 256 * 4);
}

TEST(WorkerKernels, CompileForHopper) {
  expect_compiles_for("sm_90");
}

TEST(WorkerKernels, CompileForTheOldestSupportedArch) {
  const std::vector<int> archs = nvrtc_supported_archs();
  ASSERT_FALSE(archs.empty());
  expect_compiles_for(std::to_string(archs.front()));
}

}  // namespace
}  // namespace tiletune
