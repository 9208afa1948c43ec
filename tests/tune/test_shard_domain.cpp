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
    EXPECT_GT(part.domain.size(), 0u);
    std::uint64_t walked = 0;
    for (auto point = part.domain.next(); point; point = part.domain.next(point), ++walked) {
      const Config c = part.config(*point);
      EXPECT_TRUE(in_shard(space, c, Shard{i, kShards}));
      EXPECT_TRUE(owner.emplace(canonical_config(space, c), i).second) << canonical_config(space, c) << " twice";
    }
    EXPECT_EQ(part.domain.size(), walked);
    if (const auto start = part.domain.start()) {
      ++starts;
      EXPECT_EQ(part.config(*start).values, *space.default_config);
    }
  }
  EXPECT_EQ(owner.size(), whole.domain.size());
  EXPECT_EQ(starts, 1u) << "the default config is in one shard";
}

TEST(ShardDomain, ReplayShardsHoldEveryRecordedConfigOnceWithItsOutcome) {
  const Space space = transpose();
  const Landscape landscape = load_landscape(test_data_dir() / "data" / "landscapes" / "transpose.csv");
  const Problem problem = select_problem(space, {"N=8192"});
  const ReplayProblem whole = replay_problem(space, landscape, problem);
  std::map<std::string, double> recorded;
  for (const std::size_t point : recorded_points(whole))
    recorded[canonical_config(space, whole.space.config(point))] = whole.outcomes.at(point).compile_ms;
  std::size_t total = 0;
  for (std::uint32_t i = 0; i < kShards; ++i) {
    const ReplayProblem part = replay_problem(space, landscape, problem, Shard{i, kShards});
    for (const std::size_t point : recorded_points(part)) {
      const std::string key = canonical_config(space, part.space.config(point));
      ASSERT_TRUE(recorded.contains(key)) << key;
      EXPECT_EQ(whole.space.point_of(space, key), point) << key << ": a shard's ids are the whole space's";
      EXPECT_EQ(part.outcomes.at(point).compile_ms, recorded.at(key)) << key;
      EXPECT_EQ(recorded.erase(key), 1u);
    }
    total += part.outcomes.size();
  }
  EXPECT_EQ(total, whole.outcomes.size());
  EXPECT_TRUE(recorded.empty()) << recorded.size() << " recorded configs in no shard";
}

}  // namespace
}  // namespace tiletune::testing
