// The physics guard's arithmetic (tiletune/physics.hpp): the per-SM throughput table against the
// H200's datasheet, the ceilings of DRAM- and L2-sized problems, the verdict at the margins, and
// the headroom of a trial.
#include <gtest/gtest.h>

#include "tiletune/physics.hpp"

namespace tiletune {
namespace {

CeilingInputs h200(std::optional<double> copy_gbps = 4058.35) {
  return CeilingInputs{9, 0, 132, 1'980'000, 62'914'560, copy_gbps};
}

TEST(Physics, TheH200sFp32PeakIsItsDatasheets) {
  // H200.md: 132 x 128 x 2 x 1.98 GHz = 66.9 TFLOP/s.
  const Ceilings c = ceilings_for(h200(), std::nullopt, FlopType::fp32);
  ASSERT_TRUE(c.gflops);
  EXPECT_NEAR(*c.gflops, 66'908.16, 0.01);
  // FP64 on sm_90 runs at half the FP32 rate; the tensor cores (FP8) at 32x.
  EXPECT_NEAR(*ceilings_for(h200(), std::nullopt, FlopType::fp64).gflops, 66'908.16 / 2, 0.01);
  EXPECT_NEAR(*ceilings_for(h200(), std::nullopt, FlopType::tensor).gflops, 66'908.16 * 32, 0.1);
  // A space that does not say takes the fastest unit.
  EXPECT_EQ(*ceilings_for(h200(), std::nullopt, FlopType::any).gflops,
            *ceilings_for(h200(), std::nullopt, FlopType::tensor).gflops);
}

TEST(Physics, TheTableKnowsItsArchsAndNothingElse) {
  EXPECT_EQ(flops_per_sm_per_clock(8, 0, FlopType::fp32), 128.0);  // A100: 64 FMA per clock per SM
  EXPECT_EQ(flops_per_sm_per_clock(8, 6, FlopType::fp32), 256.0);
  EXPECT_FALSE(flops_per_sm_per_clock(6, 1, FlopType::tensor)) << "Pascal has no tensor cores";
  EXPECT_FALSE(flops_per_sm_per_clock(4, 0, FlopType::fp32)) << "not in the table";
  // Without a clock or a table entry there is no arithmetic ceiling, and nothing is held against one.
  CeilingInputs no_clock = h200();
  no_clock.sm_clock_khz = 0;
  EXPECT_FALSE(ceilings_for(no_clock, std::nullopt, FlopType::fp32).gflops);
}

TEST(Physics, AWorkingSetThatFitsInL2HasTheL2Ceiling) {
  const Ceilings dram = ceilings_for(h200(), 512.0 * (1 << 20), FlopType::fp32);
  ASSERT_TRUE(dram.gbps);
  EXPECT_FALSE(dram.l2_resident);
  EXPECT_DOUBLE_EQ(*dram.gbps, 4058.35);
  const Ceilings l2 = ceilings_for(h200(), 8.0 * (1 << 20), FlopType::fp32);
  EXPECT_TRUE(l2.l2_resident);
  EXPECT_DOUBLE_EQ(*l2.gbps, 4058.35 * l2_bandwidth_factor);
  // Exactly the L2's size still fits; an unknown L2 makes every problem DRAM-sized.
  EXPECT_TRUE(ceilings_for(h200(), 62'914'560.0, FlopType::fp32).l2_resident);
  CeilingInputs no_l2 = h200();
  no_l2.l2_bytes = 0;
  EXPECT_FALSE(ceilings_for(no_l2, 8.0 * (1 << 20), FlopType::fp32).l2_resident);
  // No copy measured: no bandwidth ceiling.
  EXPECT_FALSE(ceilings_for(h200(std::nullopt), 1e9, FlopType::fp32).gbps);
}

TEST(Physics, ATrialIsSuspectOnlyPastItsCeilingTimesTheMargin) {
  const Ceilings c = ceilings_for(h200(), 1e9, FlopType::fp32);
  // The fastest honest trials measured on the H200: reduction at 1.094x the copy, vector_add at 1.082x.
  EXPECT_FALSE(physics_violation(c, 4058.35 * 1.094, std::nullopt));
  EXPECT_FALSE(physics_violation(c, 4058.35 * bandwidth_margin * 0.999, std::nullopt));
  const auto over = physics_violation(c, 4058.35 * bandwidth_margin * 1.001, std::nullopt);
  ASSERT_TRUE(over);
  EXPECT_NE(over->find("the bandwidth ceiling of 4058 GB/s (the sweep's copy)"), std::string::npos) << *over;
  // Arithmetic: the matmul's 46.5 TFLOP/s is fine; Kernel Tuner's 270x the FP32 peak is not.
  EXPECT_FALSE(physics_violation(c, std::nullopt, 46'515.0));
  EXPECT_FALSE(physics_violation(c, std::nullopt, 66'908.16 * compute_margin * 0.999));
  const auto impossible = physics_violation(c, std::nullopt, 66'908.16 * 270);
  ASSERT_TRUE(impossible);
  EXPECT_NE(impossible->find("270.00x the device's peak of 66908 GFLOP/s"), std::string::npos) << *impossible;
  // Nothing known, nothing held.
  EXPECT_FALSE(physics_violation(Ceilings{}, 1e12, 1e12));
}

TEST(Physics, TheHeadroomIsTheNearerCeilings) {
  // 3911 GB/s of a 4058 GB/s copy: 96.4 % of the bandwidth ceiling, 3.6 % headroom.
  auto share = ceiling_share(3911.0, std::nullopt, 4058.35, std::nullopt);
  ASSERT_TRUE(share);
  EXPECT_FALSE(share->compute_bound);
  EXPECT_NEAR(share->fraction, 0.9637, 1e-4);
  EXPECT_NEAR(share->headroom_percent(), 3.63, 0.01);
  // A matmul: 68 GB/s of 4058 but 46.5 of 66.9 TFLOP/s: compute bound at 69.5 %.
  share = ceiling_share(68.0, 46'515.0, 4058.35, 66'908.16);
  ASSERT_TRUE(share);
  EXPECT_TRUE(share->compute_bound);
  EXPECT_NEAR(share->fraction, 0.6952, 1e-4);
  // Past the ceiling (a read-only kernel beats the copy): no headroom, not negative.
  EXPECT_EQ(ceiling_share(4400.0, std::nullopt, 4058.35, std::nullopt)->headroom_percent(), 0);
  EXPECT_FALSE(ceiling_share(3911.0, std::nullopt, std::nullopt, std::nullopt));
}

TEST(Physics, FlopTypesReadBackByName) {
  for (const FlopType t : {FlopType::any, FlopType::fp64, FlopType::fp32, FlopType::fp16, FlopType::tensor})
    EXPECT_EQ(parse_flop_type(flop_type_name(t)), t);
  EXPECT_FALSE(parse_flop_type("fp8"));
  EXPECT_EQ(flop_type_names(), "any, fp64, fp32, fp16, tensor");
}

}  // namespace
}  // namespace tiletune
