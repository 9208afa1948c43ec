// The corpus of kernels written elsewhere (tests/corpus/*.cu + *.yaml), on the CPU: every
// space loads, passes the checks plan makes before any GPU work, and plans with no compile
// failure (a few configs each, a sample of the benchmark-sized ones, through a cubin cache in
// the build tree); and the data files of the soft-threshold space hold what they say: the
// expected output is the operator applied to the input. With TILETUNE_WRITE_CORPUS_DATA=1 it writes those files instead.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "corpus.hpp"
#include "test_support.hpp"
#include "worker/generators.hpp"
#include "tiletune/data_file.hpp"
#include "tiletune/plan.hpp"
#include "tiletune/reference.hpp"
#include "tiletune/validate.hpp"

namespace tiletune {
namespace {

const std::filesystem::path kData = testing::source_dir() / "tests" / "corpus" / "data";
constexpr float kThreshold = 0.5f;
constexpr std::uint64_t kThresholdSizes[] = {1000, 4093};

float soft_threshold(float v) { return std::copysign(std::fmax(std::fabs(v) - kThreshold, 0.0f), v); }

std::vector<float> floats(const std::vector<std::byte>& bytes) {
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

TEST(CorpusData, TheSoftThresholdFilesAgree) {
  if (std::getenv("TILETUNE_WRITE_CORPUS_DATA") != nullptr) {
    std::filesystem::create_directories(kData);
    for (const std::uint64_t n : kThresholdSizes) {
      BufferPlan p;
      p.name = "signal";
      p.type = ElementType::f32;
      p.count = n;
      p.init.kind = BufferInit::normal;
      p.init.b = 1;
      const HostBuffer in = make_host_buffer(p, 2026);
      std::vector<float> out = floats(in.bytes);
      for (float& v : out) v = soft_threshold(v);
      write_npy(kData / ("threshold_in_" + std::to_string(n) + ".npy"), ElementType::f32, in.bytes);
      write_npy(kData / ("threshold_out_" + std::to_string(n) + ".npy"), ElementType::f32,
                std::as_bytes(std::span<const float>(out)));
    }
  }
  for (const std::uint64_t n : kThresholdSizes) {
    SCOPED_TRACE(n);
    const std::vector<float> in = floats(read_data_file(kData / ("threshold_in_" + std::to_string(n) + ".npy"),
                                                        ElementType::f32, n, "the input"));
    const std::vector<float> out = floats(read_data_file(kData / ("threshold_out_" + std::to_string(n) + ".npy"),
                                                         ElementType::f32, n, "the expected output"));
    std::size_t negative = 0, zero = 0;
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(out[i], soft_threshold(in[i])) << i;
      negative += out[i] < 0 ? 1 : 0;
      zero += out[i] == 0 ? 1 : 0;
    }
    // A check that would catch a lost sign or a missing threshold.
    EXPECT_GT(negative, n / 5);
    EXPECT_GT(zero, n / 5);
  }
}

TEST(Corpus, HoldsAtLeastTenKernels) {
  const std::vector<std::string> spaces = testing::corpus_spaces();
  EXPECT_GE(spaces.size(), 10u);
  for (const std::string& name : spaces)
    EXPECT_TRUE(std::filesystem::exists(testing::corpus_dir() / (name + ".cu"))) << name << ".yaml without its .cu";
}

class CorpusSpace : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusSpace, LoadsValidatesAndPlans) {
  const Space space = load_space(testing::corpus_dir() / (GetParam() + ".yaml"));
  EXPECT_NE(space.verify.reference, VerifySpec::Reference::none) << "every corpus space checks its kernel";
  const CubinCache cache(TILETUNE_CORPUS_CUBIN_CACHE);
  validate_inputs_and_checks(space, {"sm_90", &cache});
  PlanOptions options;
  options.device = *builtin_device_limits(90);
  options.problem = all_problems(space).front();
  options.cache = &cache;
  options.threads = 2;
  // A benchmark-sized space is planned at about 12 configs spread over its params (a prime
  // stride, so that the fastest-varying params do not repeat their first value).
  constexpr std::uint64_t kSampleStride = 113;
  if (testing::benchmark_sized(GetParam())) options.sample_every = kSampleStride;
  const Plan plan = plan_space(space, options);
  EXPECT_GT(plan.summary.ok, 0u);
  if (testing::benchmark_sized(GetParam()))
    EXPECT_GT(plan.summary.valid, 1000u) << "a benchmark-sized space";
  else
    EXPECT_LE(plan.summary.valid, 16u) << "keep the corpus small: NVRTC runs in CI";
  EXPECT_EQ(plan.summary.compile_failed, 0u);
  for (const PlanRow& row : plan.rows)
    EXPECT_NE(row.status, TrialStatus::compile_failed) << format_config(space, row.config) << "\n" << row.compile_log;
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusSpace, ::testing::ValuesIn(testing::corpus_spaces()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tiletune
