// The GPU worker's own kernels (input generators, comparison, sum, the device references): they
// must compile with NVRTC as they stand (no headers) and define their entries, and the images
// the build made of them must be today's compile, for each arch asked for, and be chosen by
// major and minor. NVRTC needs no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "worker/prebuilt_worker_kernels.hpp"
#include "worker/worker_kernels.hpp"
#include "tiletune/compile.hpp"

namespace tiletune {
namespace {

void expect_compiles_for(int arch) {
  // The worker's own compile (compile_worker_kernels: its source, options and entry); it throws
  // with NVRTC's log when the kernels do not compile.
  CompiledKernel result;
  ASSERT_NO_THROW(result = compile_worker_kernels(arch, -1, nullptr));
  EXPECT_EQ(result.lowered_name, "tiletune_compare_f32");
  for (const char* type : {"f32", "f64", "f16", "i32", "u32", "i64", "u8", "i8", "i16", "u16", "u64"}) {
    const std::string compare = std::string("tiletune_compare_") + type;
    const Resources r = parse_ptxas_report(result.log, compare);  // throws when it is missing
    EXPECT_EQ(r.spill_store_bytes, 0) << compare;
    EXPECT_EQ(r.static_shared_bytes, 0) << compare;
    const std::string sum = std::string("tiletune_sum_") + type;
    EXPECT_EQ(parse_ptxas_report(result.log, sum).static_shared_bytes, 256 * 8) << sum;
  }
  const Resources generate = parse_ptxas_report(result.log, "tiletune_generate");
  EXPECT_EQ(generate.static_shared_bytes, 0);
  // The device versions of the simple built-in references (worker/reference_kernels.cu.inc).
  for (const char* reference :
       {"tiletune_ref_transpose", "tiletune_ref_vector_add_f32", "tiletune_ref_vector_add_f64",
        "tiletune_ref_vector_add_i32", "tiletune_ref_vector_add_i64", "tiletune_ref_stencil_1d"}) {
    EXPECT_EQ(parse_ptxas_report(result.log, reference).spill_store_bytes, 0) << reference;
  }
  EXPECT_EQ(parse_ptxas_report(result.log, "tiletune_ref_histogram").static_shared_bytes, 256 * 4);
}

TEST(WorkerKernels, CompileForHopper) { expect_compiles_for(90); }

TEST(WorkerKernels, CompileForTheOldestSupportedArch) {
  const std::vector<int> archs = nvrtc_supported_archs();
  ASSERT_FALSE(archs.empty());
  expect_compiles_for(archs.front());
}

std::vector<int> archs_asked_for() {  // TILETUNE_PREBUILT_ARCHS, "75,80,..."
  std::vector<int> archs;
  std::istringstream list(TILETUNE_TEST_PREBUILT_ARCHS);
  for (std::string arch; std::getline(list, arch, ',');)
    if (!arch.empty()) archs.push_back(std::stoi(arch.rfind("sm_", 0) == 0 ? arch.substr(3) : arch));
  return archs;
}

TEST(PrebuiltWorkerKernels, AnImageForEachArchAskedForThatNvrtcHas) {
  const std::vector<int> supported = nvrtc_supported_archs();
  std::vector<int> expected;
  for (const int arch : archs_asked_for())
    if (std::count(supported.begin(), supported.end(), arch) != 0) expected.push_back(arch);
  std::sort(expected.begin(), expected.end());
  expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
  std::vector<int> built;
  for (const PrebuiltImage& image : prebuilt_worker_kernel_images()) {
    built.push_back(image.arch);
    ASSERT_GT(image.cubin.size(), 4u) << "sm_" << image.arch;
    EXPECT_EQ(image.cubin.substr(0, 4), std::string_view("\x7f"
                                                         "ELF",
                                                         4))
        << "sm_" << image.arch << " is no cubin";
  }
  EXPECT_EQ(built, expected);
}

TEST(PrebuiltWorkerKernels, AreTheCompileOfTodaysSource) {
  if (!nvrtc_has_no_cache_option())
    GTEST_SKIP() << "NVRTC " << nvrtc_version() << " has no --no-cache: each compile carries a nonce";
  const std::span<const PrebuiltImage> images = prebuilt_worker_kernel_images();
  if (images.empty()) GTEST_SKIP() << "built with TILETUNE_PREBUILT_ARCHS empty";
  // Hopper (the reference GPU) and the oldest: a stale or mis-optioned image differs from both.
  for (const PrebuiltImage* image : {prebuilt_worker_kernels(90), &images.front()}) {
    if (image == nullptr) continue;
    EXPECT_TRUE(image->cubin == compile_worker_kernels(image->arch, -1, nullptr).cubin)
        << "the sm_" << image->arch << " image is not what NVRTC makes of today's source and options";
  }
}

TEST(PrebuiltWorkerKernels, AnArchGetsTheNewestImageOfItsMajorAtOrBelowIt) {
  const auto has = [](int arch) {
    for (const PrebuiltImage& image : prebuilt_worker_kernel_images())
      if (image.arch == arch) return true;
    return false;
  };
  const auto chosen = [](int arch) {
    const PrebuiltImage* image = prebuilt_worker_kernels(arch);
    return image == nullptr ? 0 : image->arch;
  };
  for (const PrebuiltImage& image : prebuilt_worker_kernel_images()) EXPECT_EQ(chosen(image.arch), image.arch);
  if (has(86) && !has(87)) EXPECT_EQ(chosen(87), 86);  // Orin runs the Ampere image
  if (has(89)) EXPECT_EQ(chosen(89), 89);
  if (has(120) && !has(121)) EXPECT_EQ(chosen(121), 120);
  if (has(90)) EXPECT_EQ(chosen(91), 90);
  if (has(80) && !has(75)) EXPECT_EQ(chosen(75), 0);  // never an image of another major
  EXPECT_EQ(chosen(60), 0);                           // older than every image
  EXPECT_EQ(chosen(990), 0);                          // a major no image has: NVRTC at start
}

}  // namespace
}  // namespace tiletune
