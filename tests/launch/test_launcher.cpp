// The launcher without a GPU: the config comes from the cache (exact match on a fictional device),
// the cubin is compiled once and stored in the database, and a second Launcher on the same
// database gets it from there without NVRTC.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "cache_builder.hpp"
#include "test_support.hpp"
#include "tiletune/cache_db.hpp"
#include "tiletune/launcher.hpp"

namespace tiletune::testing {
namespace {

const std::string fake_uuid = "GPU-f1c71000-0000-4000-8000-00000000abcd";

QueryDevice fake_device() { return QueryDevice{fake_uuid, "Fictional H200", 9, 0}; }

std::filesystem::path transpose_yaml() { return source_dir() / "configs" / "transpose.yaml"; }

// A cache where transpose N=1000 on the fictional device was tuned: TILE=16;BLOCK_ROWS=4;PAD=1;VEC=1 won.
std::filesystem::path write_fixture(const std::filesystem::path& path) {
  return CacheBuilder()
      .device(fake_uuid, "Fictional H200")
      .kernel("transpose", "fixture-hash", "--gpu-architecture=sm_90", "13.0")
      .trial("N=1000", "TILE=16;BLOCK_ROWS=4;PAD=1;VEC=1", 0.010)
      .trial("N=1000", "TILE=32;BLOCK_ROWS=8;PAD=0;VEC=1", 0.020)
      .build(path);
}

Launcher::Options offline(const std::filesystem::path& db) {
  Launcher::Options o;
  o.db_path = db;
  o.device = fake_device();
  o.arch = "sm_90";
  return o;
}

TEST(Launcher, ExactMatchCompilesOnceThenServesFromDatabase) {
  TempDir dir;
  const auto db_path = write_fixture(dir.path() / "cache.db");
  const std::map<std::string, std::int64_t> sizes{{"N", 1000}};

  std::string key;
  {
    auto launcher = Launcher::open(transpose_yaml(), offline(db_path));
    EXPECT_TRUE(launcher.db_writable()) << launcher.db_message();
    EXPECT_EQ(launcher.arch(), "sm_90");
    const LaunchPlan plan = launcher.prepare(sizes);
    EXPECT_EQ(plan.match, MatchLevel::exact) << plan.query_message;
    EXPECT_EQ(plan.config_text, "TILE=16;BLOCK_ROWS=4;PAD=1;VEC=1");
    EXPECT_EQ(plan.param("TILE"), 16);
    EXPECT_EQ(plan.param("BLOCK_ROWS"), 4);
    EXPECT_EQ(plan.problem_text, "N=1000");
    // grid ceil_div(1000, 16) squared, block [TILE, BLOCK_ROWS]
    EXPECT_EQ(plan.geometry.grid[0], 63);
    EXPECT_EQ(plan.geometry.grid[1], 63);
    EXPECT_EQ(plan.geometry.grid[2], 1);
    EXPECT_EQ(plan.geometry.block[0], 16);
    EXPECT_EQ(plan.geometry.block[1], 4);
    EXPECT_EQ(plan.geometry.shared_bytes, 0);
    EXPECT_TRUE(plan.compiled);
    EXPECT_EQ(plan.cubin_origin, CubinOrigin::compiled);
    EXPECT_GT(plan.compile_ms, 0.0);
    EXPECT_TRUE(plan.stored) << plan.store_error;
    EXPECT_GT(plan.cubin_bytes, 0u);
    EXPECT_EQ(plan.lowered_name, "transpose");
    key = plan.cubin_key;

    // The same Launcher again: from its memory, no compile, no database read.
    const LaunchPlan again = launcher.prepare(sizes);
    EXPECT_EQ(again.cubin_origin, CubinOrigin::memory);
    EXPECT_FALSE(again.compiled);
    EXPECT_EQ(again.cubin_key, key);
  }
  {
    auto db = CacheDb::open(db_path, CacheDb::Mode::read_only);
    auto stored = db.get_cubin(key);
    ASSERT_TRUE(stored.has_value());
    EXPECT_EQ(stored->arch, "sm_90");
    EXPECT_EQ(stored->lowered_name, "transpose");
    EXPECT_GT(stored->cubin.size(), 0u);
  }
  {
    // A new Launcher (as a second process would): the cubin comes from the database.
    auto second = Launcher::open(transpose_yaml(), offline(db_path));
    const LaunchPlan plan = second.prepare(sizes);
    EXPECT_EQ(plan.match, MatchLevel::exact);
    EXPECT_EQ(plan.config_text, "TILE=16;BLOCK_ROWS=4;PAD=1;VEC=1");
    EXPECT_EQ(plan.cubin_origin, CubinOrigin::database);
    EXPECT_FALSE(plan.compiled);
    EXPECT_EQ(plan.compile_ms, 0.0);
    EXPECT_EQ(plan.cubin_key, key);
    EXPECT_EQ(plan.lowered_name, "transpose");
  }
}

TEST(Launcher, EmptyCacheFallsBackToTheSpaceDefault) {
  TempDir dir;
  auto launcher = Launcher::open(transpose_yaml(), offline(dir.path() / "empty.db"));
  const LaunchPlan plan = launcher.prepare({{"N", 2048}});
  EXPECT_EQ(plan.match, MatchLevel::none);
  EXPECT_FALSE(plan.query_message.empty());
  EXPECT_EQ(plan.config_text, "TILE=32;BLOCK_ROWS=8;PAD=0;VEC=1");  // default: in transpose.yaml
  EXPECT_EQ(plan.geometry.grid[0], 64);
  EXPECT_EQ(plan.geometry.block[0], 32);
  EXPECT_EQ(plan.geometry.block[1], 8);
  EXPECT_TRUE(plan.compiled);
  EXPECT_TRUE(plan.stored) << plan.store_error;
}

TEST(Launcher, ReadOnlyCacheCompilesWithoutStoring) {
  TempDir dir;
  const auto db_path = write_fixture(dir.path() / "cache.db");
  auto o = offline(db_path);
  o.read_only = true;
  auto launcher = Launcher::open(transpose_yaml(), o);
  EXPECT_FALSE(launcher.db_writable());
  const LaunchPlan plan = launcher.prepare({{"N", 1000}});
  EXPECT_EQ(plan.match, MatchLevel::exact);  // lookups still work
  EXPECT_TRUE(plan.compiled);
  EXPECT_FALSE(plan.stored);
  EXPECT_FALSE(plan.store_error.empty());
  auto db = CacheDb::open(db_path, CacheDb::Mode::read_only);
  EXPECT_FALSE(db.get_cubin(plan.cubin_key).has_value());
}

TEST(Launcher, BadSizesNameTheKernel) {
  TempDir dir;
  auto launcher = Launcher::open(transpose_yaml(), offline(dir.path() / "c.db"));
  auto message = [&](const std::map<std::string, std::int64_t>& sizes) {
    try {
      (void)launcher.prepare(sizes);
    } catch (const std::exception& e) { return std::string(e.what()); }
    return std::string("no error");
  };
  EXPECT_NE(message({}).find("needs the problem size 'N'"), std::string::npos) << message({});
  EXPECT_NE(message({{"N", 64}, {"M", 3}}).find("no problem size 'M'"), std::string::npos);
  EXPECT_NE(message({{"N", 0}}).find("transpose"), std::string::npos);
}

TEST(Launcher, LaunchChecksTheArgumentCount) {
  TempDir dir;
  auto launcher = Launcher::open(transpose_yaml(), offline(dir.path() / "c.db"));
  const LaunchPlan plan = launcher.prepare({{"N", 64}});
  void* one[1] = {nullptr};
  try {
    launcher.launch(plan, one);
    FAIL() << "launch with one argument did not throw";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("transpose"), std::string::npos) << what;
    EXPECT_NE(what.find(plan.config_text), std::string::npos) << what;
    EXPECT_NE(what.find("1 arguments given, the kernel takes 3"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace tiletune::testing
