// Shards of a search (tiletune/shard.hpp through space_domain and replay_problem), on the CPU:
// the shards' domains of the transpose space are disjoint and hold every config together; the
// default config starts the search only in its own shard; the shards of a replay of the
// shipped H200 recording hold every recorded config once, each with its recorded outcome.
#include <gtest/gtest.h>

#include <map>

#include "test_support.hpp"
#include "tiletune/landscape.hpp"
#include "tiletune/plan.hpp"
#include "tiletune/replay.hpp"
#include "tiletune/trial.hpp"

namespace tiletune::testing {
namespace {

constexpr std::uint32_t kShards = 4;

Space transpose() { return load_space(source_dir() / "configs" / "transpose.yaml"); }

TEST(ShardDomain, ShardsHoldEveryConfigOnceAndTheDefaultStartsOnlyItsOwn) {
  const Space space = transpose();
  const Problem problem = all_problems(space).front();
  const SpaceDomain whole = space_domain(space, problem);
  ASSERT_TRUE(whole.domain.start().has_value());
  std::map<std::string, std::uint32_t> owner;
  std::uint32_t starts = 0;
  for (std::uint32_t i = 0; i < kShards; ++i) {
    const SpaceDomain part = space_domain(space, problem, Shard{i, kShards});
    EXPECT_GT(part.configs.size(), 0u);
    EXPECT_EQ(part.domain.size(), part.configs.size());
    for (const Config& c : part.configs) {
      EXPECT_TRUE(in_shard(space, c, Shard{i, kShards}));
      EXPECT_TRUE(owner.emplace(canonical_config(space, c), i).second) << canonical_config(space, c) << " twice";
    }
    if (const auto start = part.domain.start()) {
      ++starts;
      EXPECT_EQ(part.configs.at(*start).values, *space.default_config);
    }
  }
  EXPECT_EQ(owner.size(), whole.configs.size());
  EXPECT_EQ(starts, 1u) << "the default config is in one shard";
}

TEST(ShardDomain, ReplayShardsHoldEveryRecordedConfigOnceWithItsOutcome) {
  const Space space = transpose();
  const Landscape landscape = load_landscape(test_data_dir() / "data" / "landscapes" / "transpose.csv");
  const Problem problem = select_problem(space, {"N=8192"});
  const ReplayProblem whole = replay_problem(space, landscape, problem);
  std::map<std::string, double> recorded;
  for (std::size_t i = 0; i < whole.space.configs.size(); ++i)
    recorded[canonical_config(space, whole.space.configs[i])] = whole.outcomes[i].compile_ms;
  std::size_t total = 0;
  for (std::uint32_t i = 0; i < kShards; ++i) {
    const ReplayProblem part = replay_problem(space, landscape, problem, Shard{i, kShards});
    ASSERT_EQ(part.outcomes.size(), part.space.configs.size());
    for (std::size_t k = 0; k < part.space.configs.size(); ++k) {
      const std::string key = canonical_config(space, part.space.configs[k]);
      ASSERT_TRUE(recorded.contains(key)) << key;
      EXPECT_EQ(part.outcomes[k].compile_ms, recorded.at(key)) << key;
      EXPECT_EQ(recorded.erase(key), 1u);
    }
    total += part.space.configs.size();
  }
  EXPECT_EQ(total, whole.space.configs.size());
  EXPECT_TRUE(recorded.empty()) << recorded.size() << " recorded configs in no shard";
}

}  // namespace
}  // namespace tiletune::testing
