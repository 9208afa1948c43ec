// Every match level of QueryCache::lookup on the fixture cache: exact (by UUID and by name),
// nearest problem in log space, same architecture, the portable default (best mean relative time
// over the configs measured on every pair), none; only ok trials of the current version count.
#include <gtest/gtest.h>

#include "query_fixture.hpp"
#include "test_support.hpp"
#include "tiletune/query.hpp"

namespace tiletune::testing {
namespace {

class Lookup : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    write_fixture(dir_->path() / "cache.db");
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  QueryResult find(const std::string& kernel, QueryDevice device, std::map<std::string, std::int64_t> sizes) {
    QueryRequest r{kernel, std::move(device), std::move(sizes)};
    QueryResult result = cache_.lookup(r);
    EXPECT_TRUE(result.ok()) << query_status_name(result.status) << ": " << result.message;
    return result;
  }
  static QueryDevice uuid(const std::string& u) { return QueryDevice{u, "", 0, 0}; }

  static TempDir* dir_;
  QueryCache cache_ = QueryCache::open(dir_->path() / "cache.db");
};
TempDir* Lookup::dir_ = nullptr;

TEST_F(Lookup, ExactBySameUuidAndProblem) {
  auto r = find("transpose", uuid(h200_a), {{"N", 8192}});
  EXPECT_EQ(r.match, MatchLevel::exact);
  EXPECT_EQ(r.params_text, c2);
  ASSERT_EQ(r.params.size(), 3U);
  EXPECT_EQ(r.params[0], (QueryParam{"TILE", 32}));
  EXPECT_EQ(r.params[1], (QueryParam{"BLOCK_ROWS", 8}));
  EXPECT_EQ(r.params[2], (QueryParam{"PAD", 1}));
  EXPECT_EQ(r.param("BLOCK_ROWS"), 8);
  EXPECT_EQ(r.param("NOPE"), std::nullopt);
  EXPECT_EQ(r.problem, "N=8192");
  EXPECT_DOUBLE_EQ(r.time_ms, 0.30);
  EXPECT_EQ(r.device_name, "NVIDIA H200");
  EXPECT_EQ(r.device_uuid, h200_a);
  EXPECT_FALSE(r.from_memory);
  EXPECT_TRUE(r.message.empty());
}

TEST_F(Lookup, ExactByNameWhenNoUuid) {
  // Only H200 B measured N=4096; with a name (no UUID) both H200s are "this device".
  auto r = find("transpose", QueryDevice{"", "NVIDIA H200", 0, 0}, {{"N", 4096}});
  EXPECT_EQ(r.match, MatchLevel::exact);
  EXPECT_EQ(r.params_text, c3);
  EXPECT_EQ(r.device_uuid, h200_b);
  auto s = find("transpose", QueryDevice{"", "NVIDIA H200", 9, 0}, {{"N", 8192}});
  EXPECT_EQ(s.match, MatchLevel::exact);
  EXPECT_EQ(s.device_uuid, h200_a);
}

TEST_F(Lookup, ExactProblemInAnyOrderOfSizes) {
  auto r = find("matmul", uuid(h200_a), {{"K", 64}, {"M", 1024}, {"N", 1024}});
  EXPECT_EQ(r.match, MatchLevel::exact);
  EXPECT_EQ(r.params_text, "BM=64;BN=64");
  EXPECT_EQ(r.problem, "M=1024;N=1024;K=64");
}

TEST_F(Lookup, NearestProblemInLogSpaceOnTheSameDevice) {
  // A measured 1024 and 8192: 2048 is one octave from 1024, two from 8192.
  auto r = find("transpose", uuid(h200_a), {{"N", 2048}});
  EXPECT_EQ(r.match, MatchLevel::nearest_problem);
  EXPECT_EQ(r.problem, "N=1024");
  EXPECT_EQ(r.params_text, c1);  // not the old version's exact N=2048 winner
  auto big = find("transpose", uuid(h200_a), {{"N", 1 << 20}});
  EXPECT_EQ(big.match, MatchLevel::nearest_problem);
  EXPECT_EQ(big.problem, "N=8192");
  EXPECT_EQ(big.params_text, c2);
  // Sums over sizes: (2048, 2048, 128) is 3 octaves from (1024, 1024, 64), 7 from (4096, 4096, 4096).
  auto mm = find("matmul", uuid(h200_a), {{"M", 2048}, {"N", 2048}, {"K", 128}});
  EXPECT_EQ(mm.match, MatchLevel::nearest_problem);
  EXPECT_EQ(mm.problem, "M=1024;N=1024;K=64");
  EXPECT_EQ(mm.params_text, "BM=64;BN=64");
  auto mm2 = find("matmul", uuid(h200_a), {{"M", 4096}, {"N", 4096}, {"K", 2048}});
  EXPECT_EQ(mm2.problem, "M=4096;N=4096;K=4096");
  EXPECT_EQ(mm2.params_text, "BM=128;BN=128");
}

TEST_F(Lookup, SizesWithOtherNamesDoNotMatch) {
  // No problem of transpose has a size called M: no device level matches.
  auto r = find("transpose", uuid(h200_a), {{"M", 8192}});
  EXPECT_EQ(r.match, MatchLevel::portable_default);
  auto extra = find("transpose", uuid(h200_a), {{"N", 8192}, {"R", 3}});
  EXPECT_EQ(extra.match, MatchLevel::portable_default);
}

TEST_F(Lookup, SameArchitectureForAnUnknownDeviceOfKnownCapability) {
  QueryDevice other_h200{h200_new, "NVIDIA H200", 9, 0};
  auto r = find("transpose", other_h200, {{"N", 4096}});
  EXPECT_EQ(r.match, MatchLevel::same_architecture);
  EXPECT_EQ(r.device_uuid, h200_b);  // the exact problem on another 9.0 device
  EXPECT_EQ(r.params_text, c3);
  // 2048: A's 1024 and B's 4096 are both one octave away; the tie goes to the smaller problem.
  auto tie = find("transpose", other_h200, {{"N", 2048}});
  EXPECT_EQ(tie.match, MatchLevel::same_architecture);
  EXPECT_EQ(tie.problem, "N=1024");
  EXPECT_EQ(tie.device_uuid, h200_a);
  // Another product of the same capability.
  auto h100 = find("transpose", QueryDevice{"", "NVIDIA H100 80GB HBM3", 9, 0}, {{"N", 8192}});
  EXPECT_EQ(h100.match, MatchLevel::same_architecture);
  EXPECT_EQ(h100.params_text, c2);
}

TEST_F(Lookup, SameArchitectureFromACapabilitySpec) {
  auto r = find("transpose", QueryDevice::parse("sm_80"), {{"N", 8192}});
  EXPECT_EQ(r.match, MatchLevel::same_architecture);
  EXPECT_EQ(r.device_name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(r.params_text, c3);
  // 4096 is one octave from both 2048 and 8192 on the A100: the smaller problem wins.
  auto n = find("transpose", QueryDevice::parse("8.0"), {{"N", 4096}});
  EXPECT_EQ(n.match, MatchLevel::same_architecture);
  EXPECT_EQ(n.problem, "N=2048");
  EXPECT_EQ(n.params_text, c1);
}

TEST_F(Lookup, OldVersionProblemsDoNotCountForNearest) {
  // L4 (8.9) measured only 8192 in the current version; the old version's 4096 does not count.
  auto r = find("transpose", uuid(l4), {{"N", 4096}});
  EXPECT_EQ(r.match, MatchLevel::nearest_problem);
  EXPECT_EQ(r.problem, "N=8192");
  EXPECT_EQ(r.params_text, c2);
}

TEST_F(Lookup, PortableDefaultIsTheBestMeanRelativeTimeOverAllPairs) {
  // sm_86: no device of that capability. c3 has the lowest mean relative time over the pairs it
  // was measured on, but it misses one pair; c2 is the best of those measured on all six.
  auto r = find("transpose", QueryDevice::parse("sm_86"), {{"N", 8192}});
  EXPECT_EQ(r.match, MatchLevel::portable_default);
  EXPECT_EQ(r.params_text, c2);
  EXPECT_NEAR(r.relative_time, (1.2 + 1.0 + 1.5 + 1.2 / 0.9 + 1.2 + 1.0) / 6.0, 1e-9);
  EXPECT_LT(r.time_ms, 0.0);
  EXPECT_TRUE(r.problem.empty());
  EXPECT_TRUE(r.device_name.empty());
  // An empty device goes straight to the portable default.
  auto e = find("transpose", QueryDevice{}, {{"N", 8192}});
  EXPECT_EQ(e.match, MatchLevel::portable_default);
  EXPECT_EQ(e.params_text, c2);
}

TEST_F(Lookup, NoneWhenNothingPassed) {
  auto r = find("reduce", uuid(h200_a), {{"N", 1024}});
  EXPECT_EQ(r.match, MatchLevel::none);
  EXPECT_TRUE(r.params.empty());
  EXPECT_FALSE(r.found());
}

TEST_F(Lookup, FailedTrialsAndOldVersionsNeverServed) {
  for (const auto& dev : {uuid(h200_a), uuid(h200_b), uuid(a100), uuid(l4), QueryDevice::parse("sm_75")}) {
    for (std::int64_t n : {1024, 2048, 4096, 8192}) {
      auto r = find("transpose", dev, {{"N", n}});
      EXPECT_TRUE(r.found());
      EXPECT_NE(r.params_text, old_winner);
      EXPECT_NE(r.params_text, failed_fast);
      EXPECT_NE(r.params_text, "TILE=64;BLOCK_ROWS=4;PAD=1");
    }
  }
}

TEST_F(Lookup, ErrorsComeBackInTheResult) {
  auto unknown = cache_.lookup(QueryRequest{"nope", uuid(h200_a), {{"N", 1}}});
  EXPECT_EQ(unknown.status, QueryStatus::unknown_kernel);
  EXPECT_EQ(unknown.match, MatchLevel::none);
  EXPECT_NE(unknown.message.find("nope"), std::string::npos) << unknown.message;
  EXPECT_NE(unknown.message.find("transpose"), std::string::npos) << unknown.message;  // lists what is there
  auto empty = cache_.lookup(QueryRequest{"", uuid(h200_a), {}});
  EXPECT_EQ(empty.status, QueryStatus::invalid_argument);
  auto negative = cache_.lookup(QueryRequest{"transpose", uuid(h200_a), {{"N", -4}}});
  EXPECT_EQ(negative.status, QueryStatus::invalid_argument);
  EXPECT_NE(negative.message.find("N=-4"), std::string::npos) << negative.message;
}

TEST(QueryDeviceParse, Specs) {
  EXPECT_EQ(QueryDevice::parse(h200_a), (QueryDevice{h200_a, "", 0, 0}));
  EXPECT_EQ(QueryDevice::parse("MIG-1234"), (QueryDevice{"MIG-1234", "", 0, 0}));
  EXPECT_EQ(QueryDevice::parse("sm_90"), (QueryDevice{"", "", 9, 0}));
  EXPECT_EQ(QueryDevice::parse("sm_90a"), (QueryDevice{"", "", 9, 0}));
  EXPECT_EQ(QueryDevice::parse("sm89"), (QueryDevice{"", "", 8, 9}));
  EXPECT_EQ(QueryDevice::parse("compute_100"), (QueryDevice{"", "", 10, 0}));
  EXPECT_EQ(QueryDevice::parse(" 8.6 "), (QueryDevice{"", "", 8, 6}));
  EXPECT_EQ(QueryDevice::parse("NVIDIA L4"), (QueryDevice{"", "NVIDIA L4", 0, 0}));
  EXPECT_EQ(QueryDevice::parse("small gpu"), (QueryDevice{"", "small gpu", 0, 0}));
  EXPECT_TRUE(QueryDevice::parse("").empty());
}

TEST(QueryDeviceDetect, NeverThrowsWithOrWithoutADriver) {
  std::string why;
  auto d = QueryDevice::detect(0, &why);
  if (d) {
    EXPECT_EQ(d->uuid.rfind("GPU-", 0), 0U) << d->uuid;
    EXPECT_GT(d->cc_major, 0);
  } else {
    EXPECT_FALSE(why.empty());
  }
  EXPECT_FALSE(QueryDevice::detect(100000, &why).has_value());
  EXPECT_FALSE(why.empty());
}

}  // namespace
}  // namespace tiletune::testing
