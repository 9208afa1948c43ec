// Shards (tiletune/shard.hpp): every config of a real space (matmul, Kernel Tuner's
// convolution) is in exactly one shard for N = 1..64; the shards are balanced; a config's shard
// is XXH3-64 of its sorted NAME=VALUE key modulo N, so it does not move when the params or
// their values are reordered or a problem size is added; "i/N" and the launchers' variables
// parse, and malformed ones are refused with the text that is wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "make_space.hpp"
#include "test_support.hpp"
#include "tiletune/error.hpp"
#include "tiletune/shard.hpp"

namespace tiletune {
namespace {

std::vector<Config> configs_of(const Space& space, const Problem& problem) {
  std::vector<Config> out;
  Enumerator e(space, problem);
  while (auto c = e.next()) out.push_back(std::move(*c));
  return out;
}

class ShardOfRealSpace : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    space_ = load_space(testing::source_dir() / GetParam());
    configs_ = configs_of(space_, all_problems(space_).front());
    ASSERT_GT(configs_.size(), 1000u);
  }
  Space space_;
  std::vector<Config> configs_;
};

TEST_P(ShardOfRealSpace, EveryConfigIsInExactlyOneShard) {
  std::vector<std::string> keys;
  for (const Config& c : configs_) keys.push_back(shard_key(space_, c));
  for (std::uint32_t n = 1; n <= 64; ++n) {
    std::vector<std::size_t> sizes(n, 0);
    for (const std::string& key : keys) {
      const std::uint32_t owner = shard_of(key, n);
      ASSERT_LT(owner, n) << key;
      ++sizes[owner];
    }
    EXPECT_EQ(std::accumulate(sizes.begin(), sizes.end(), std::size_t{0}), configs_.size()) << "N=" << n;
  }
  // Through the predicate the sweep and plan use: one owner per config.
  for (const std::uint32_t n : {1u, 2u, 3u, 8u, 13u, 64u}) {
    for (const Config& c : configs_) {
      std::uint32_t owners = 0;
      for (std::uint32_t i = 0; i < n; ++i) owners += in_shard(space_, c, Shard{i, n}) ? 1 : 0;
      ASSERT_EQ(owners, 1u) << shard_key(space_, c) << " with N=" << n;
    }
  }
}

// A hash spreads configs like a fair die: each shard's count stays within four standard
// deviations of the mean (a rule that depends on the enumeration would bunch them).
TEST_P(ShardOfRealSpace, ShardsAreBalanced) {
  for (const std::uint32_t n : {2u, 3u, 4u, 8u, 16u, 32u, 64u}) {
    std::vector<std::size_t> counts(n, 0);
    for (const Config& c : configs_) ++counts[shard_of(shard_key(space_, c), n)];
    const double mean = double(configs_.size()) / n;
    const double sd = std::sqrt(mean * (1 - 1.0 / n));
    for (std::uint32_t i = 0; i < n; ++i)
      EXPECT_LE(std::abs(double(counts[i]) - mean), 4 * sd + 1) << "shard " << i << "/" << n << ": " << counts[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Spaces, ShardOfRealSpace,
                         ::testing::Values("configs/matmul.yaml", "tests/corpus/convolution_kt.yaml"),
                         [](const auto& info) {
                           return info.index == 0 ? std::string("matmul") : std::string("convolution_kt");
                         });

using testing::make_space;

// shard key -> shard, over every config of every problem of a space.
std::map<std::string, std::uint32_t> partition(const Space& space, std::uint32_t n) {
  std::map<std::string, std::uint32_t> out;
  for (const Problem& p : all_problems(space))
    for (const Config& c : configs_of(space, p)) {
      std::uint32_t owner = n;
      for (std::uint32_t i = 0; i < n; ++i)
        if (in_shard(space, c, Shard{i, n})) owner = i;
      out[shard_key(space, c)] = owner;
    }
  return out;
}

TEST(Shard, DoesNotMoveWhenParamsAndValuesAreReorderedOrAProblemSizeIsAdded) {
  const Space before = make_space(
      {{"N", {1024}, {}}}, {{"TILE", {16, 32, 64}, {}}, {"BLOCK_ROWS", {1, 2, 4, 8, 16}, {}}, {"PAD", {0, 1}, {}}},
      {"BLOCK_ROWS <= TILE"});
  const Space after = make_space(
      {{"N", {4096, 1024}, {}}, {"M", {7}, {}}},
      {{"PAD", {1, 0}, {}}, {"BLOCK_ROWS", {16, 8, 4, 2, 1}, {}}, {"TILE", {64, 32, 16}, {}}}, {"BLOCK_ROWS <= TILE"});
  for (const std::uint32_t n : {2u, 5u, 8u}) {
    const auto a = partition(before, n);
    EXPECT_EQ(a.size(), 30u);
    EXPECT_EQ(a, partition(after, n)) << "N=" << n;
  }
}

TEST(Shard, IsXxh3OfTheSortedKeyModuloN) {
  const Space s = make_space({}, {{"TILE", {32}, {}}, {"BLOCK_ROWS", {8}, {}}, {"PAD", {1}, {}}}, {});
  const Config c{{32, 8, 1}};
  const std::string key = shard_key(s, c);
  EXPECT_EQ(key, "BLOCK_ROWS=8;PAD=1;TILE=32");
  for (const std::uint32_t n : {2u, 7u, 64u, 65536u})
    EXPECT_EQ(shard_of(key, n), XXH3_64bits(key.data(), key.size()) % n);
  EXPECT_EQ(shard_of(key, 1), 0u);
}

TEST(Shard, ParsesIOverN) {
  EXPECT_EQ(parse_shard("0/1"), (Shard{0, 1}));
  EXPECT_EQ(parse_shard("3/8"), (Shard{3, 8}));
  EXPECT_EQ(format_shard(parse_shard("3/8")), "3/8");
  EXPECT_EQ(format_shard(Shard{}), "whole");
  for (const char* bad : {"", "3", "8/8", "9/8", "1/0", "-1/4", "a/4", "1/4x", "1/70000", " 1/4"}) {
    try {
      (void)parse_shard(bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

EnvironmentLookup environment(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(Shard, ComesFromTheLaunchersEnvironment) {
  EXPECT_FALSE(shard_from_environment(environment({})).has_value());
  EXPECT_EQ(shard_from_environment(environment({{"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_ARRAY_TASK_COUNT", "8"}})),
            (Shard{5, 8}));
  // An array numbered from 1 (--array=1-8): the lowest index is shard 0.
  EXPECT_EQ(shard_from_environment(environment(
                {{"SLURM_ARRAY_TASK_ID", "8"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_COUNT", "8"}})),
            (Shard{7, 8}));
  EXPECT_EQ(shard_from_environment(environment({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}})),
            (Shard{3, 4}));
  EXPECT_EQ(shard_from_environment(environment({{"PMIX_RANK", "2"}, {"SLURM_NTASKS", "16"}})), (Shard{2, 16}));
  EXPECT_EQ(shard_from_environment(environment({{"PMIX_RANK", "2"}, {"PMIX_SIZE", "3"}, {"SLURM_NTASKS", "16"}})),
            (Shard{2, 3}));
  EXPECT_EQ(shard_from_environment(environment({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}})), (Shard{1, 2}));
  // A job array wins over the ranks of a step inside it.
  EXPECT_EQ(shard_from_environment(environment({{"SLURM_ARRAY_TASK_ID", "0"},
                                                {"SLURM_ARRAY_TASK_COUNT", "2"},
                                                {"SLURM_PROCID", "1"},
                                                {"SLURM_NTASKS", "4"}})),
            (Shard{0, 2}));
}

TEST(Shard, RefusesAMalformedEnvironmentNamingTheVariables) {
  const std::vector<std::map<std::string, std::string>> bad = {
      {{"OMPI_COMM_WORLD_RANK", "4"}, {"OMPI_COMM_WORLD_SIZE", "4"}},
      {{"OMPI_COMM_WORLD_RANK", "1"}},
      {{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "4"}},
      {{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_COUNT", "4"}},
      {{"PMIX_RANK", "0"}},
  };
  for (const auto& vars : bad) {
    try {
      (void)shard_from_environment(environment(vars));
      ADD_FAILURE() << vars.begin()->first << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(vars.begin()->first), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tiletune
