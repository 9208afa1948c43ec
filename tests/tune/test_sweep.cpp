// CPU tests of the sweep's pure parts: budgets, canonical keys, trial requests and metrics
// evaluated from the shipped transpose space.
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "tiletune/sweep.hpp"

namespace tiletune {
namespace {

Space transpose() { return load_space(testing::source_dir() / "configs" / "transpose.yaml"); }

TEST(Sweep, ParseBudget) {
  EXPECT_EQ(parse_budget("200").evaluations, 200u);
  EXPECT_DOUBLE_EQ(*parse_budget("25%").fraction, 0.25);
  EXPECT_DOUBLE_EQ(*parse_budget("90s").seconds, 90.0);
  EXPECT_DOUBLE_EQ(*parse_budget("10m").seconds, 600.0);
  EXPECT_DOUBLE_EQ(*parse_budget("2h").seconds, 7200.0);
  const SweepBudget none = parse_budget("");
  EXPECT_FALSE(none.evaluations || none.fraction || none.seconds);
  for (const char* bad : {"abc", "-3", "0", "1.5", "150%", "10x", "nan"}) {
    EXPECT_THROW((void)parse_budget(bad), Error) << bad;
  }
}

TEST(Sweep, CanonicalKeysRoundTrip) {
  const Space s = transpose();
  const Config c{{32, 8, 1, 4}};
  EXPECT_EQ(canonical_config(s, c), "TILE=32;BLOCK_ROWS=8;PAD=1;VEC=4");
  EXPECT_EQ(canonical_problem(s, Problem{{8192}}), "N=8192");
  EXPECT_EQ(parse_canonical_config(s, "PAD=1;VEC=4;TILE=32;BLOCK_ROWS=8"), c);
  EXPECT_FALSE(parse_canonical_config(s, "TILE=32;BLOCK_ROWS=8;PAD=1").has_value());
  EXPECT_FALSE(parse_canonical_config(s, "TILE=32;BLOCK_ROWS=8;PAD=1;VEC=4;X=2").has_value());
  EXPECT_FALSE(parse_canonical_config(s, "TILE=3x;BLOCK_ROWS=8;PAD=1;VEC=4").has_value());
}

TEST(Sweep, TrialRequestOfATransposeConfig) {
  const Space s = transpose();
  const Problem p{{1000}};
  const Config c{{32, 8, 1, 1}};
  const LaunchGeometry g = evaluate_launch(s, p, c);
  EXPECT_EQ(g.grid[0], 32);  // ceil(1000 / 32)
  EXPECT_EQ(g.grid[1], 32);
  EXPECT_EQ(g.block[0], 32);
  EXPECT_EQ(g.block[1], 8);
  CompiledKernel k;
  k.cubin = "ELF";
  k.lowered_name = "transpose";
  const TrialRequest r = make_trial_request(s, p, c, g, k);
  EXPECT_EQ(r.config_text, "TILE=32 BLOCK_ROWS=8 PAD=1 VEC=1");
  EXPECT_EQ(r.sizes.at("N"), 1000);
  ASSERT_EQ(r.buffers.size(), 2u);
  EXPECT_EQ(r.buffers[0].count, 1000000u);
  EXPECT_EQ(r.buffers[0].init.kind, BufferInit::random);
  EXPECT_TRUE(r.buffers[1].output);
  ASSERT_EQ(r.args.size(), 3u);
  EXPECT_TRUE(r.args[0].is_buffer);
  EXPECT_EQ(r.args[1].buffer, 1);
  EXPECT_FALSE(r.args[2].is_buffer);
  EXPECT_EQ(r.args[2].int_value, 1000);
  EXPECT_EQ(r.verify.mode, VerifySettings::Mode::cpu);
  EXPECT_EQ(r.verify.cpu_reference, "transpose");
  const RunMetrics m = evaluate_metrics(s, p, c);
  EXPECT_DOUBLE_EQ(*m.bytes, 8e6);
  EXPECT_FALSE(m.flops.has_value());
}

TEST(Sweep, KernelRecordChangesWithTheSource) {
  const Space s = transpose();
  KernelSource a = load_kernel_source(s.source);
  KernelSource b = a;
  b.main.text += "\n// edited\n";
  b.hash = "different";
  EXPECT_EQ(kernel_record(s, a, 90).source_hash, a.hash);
  EXPECT_NE(kernel_record(s, a, 90).source_hash, kernel_record(s, b, 90).source_hash);
  EXPECT_NE(kernel_record(s, a, 90).options, kernel_record(s, a, 80).options);
}

TEST(Sweep, ASweepWithoutADeviceIsAClearErrorBeforeAnyFile) {
  testing::TempDir dir;
  SweepOptions o;  // no device described: run_sweep lists none itself
  o.db_path = dir.path() / "x.db";
  try {
    (void)run_sweep(transpose(), o);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no device described"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(o.db_path));
}

}  // namespace
}  // namespace tiletune
