// The CPU references and the deterministic inputs the GPU worker fills its buffers with.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <set>

#include "worker/problem_setup.hpp"
#include "worker/generators.hpp"
#include "tiletune/error.hpp"
#include "tiletune/reference.hpp"

namespace tiletune {
namespace {

BufferPlan plan(std::string name, ElementType type, std::uint64_t count, BufferInit init, bool output = false) {
  BufferPlan p;
  p.name = std::move(name);
  p.type = type;
  p.count = count;
  p.init.kind = init;
  p.output = output;
  return p;
}

TEST(CpuReference, RegistryFindsTransposeAndVectorAdd) {
  ASSERT_NE(find_cpu_reference("transpose"), nullptr);
  ASSERT_NE(find_cpu_reference("vector_add"), nullptr);
  EXPECT_EQ(find_cpu_reference("no_such_kernel"), nullptr);
  const auto names = cpu_reference_names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::count(names.begin(), names.end(), "transpose"), 1);
}

// N = 37 is not a multiple of any tile: the reference has no tile assumptions to hide.
TEST(CpuReference, TransposeOfA37By37Matrix) {
  constexpr std::int64_t n = 37;
  std::vector<HostBuffer> inputs{make_host_buffer(plan("in", ElementType::f32, n * n, BufferInit::random), 7)};
  std::vector<HostBuffer> outputs{make_host_buffer(plan("out", ElementType::f32, n * n, BufferInit::zero, true), 7)};
  const ProblemSizes sizes{{"N", n}};
  find_cpu_reference("transpose")->compute(ReferenceArgs(sizes, inputs, outputs));

  const auto in = inputs[0].as<const float>();
  const auto out = outputs[0].as<const float>();
  for (std::int64_t y = 0; y < n; ++y) {
    for (std::int64_t x = 0; x < n; ++x) { ASSERT_EQ(out[x * n + y], in[y * n + x]) << "x=" << x << " y=" << y; }
  }
  // Transposing twice gives the input back.
  std::vector<HostBuffer> again{make_host_buffer(plan("out", ElementType::f32, n * n, BufferInit::zero, true), 7)};
  std::vector<HostBuffer> as_input{outputs[0]};
  as_input[0].name = "in";
  find_cpu_reference("transpose")->compute(ReferenceArgs(sizes, as_input, again));
  EXPECT_EQ(std::memcmp(again[0].bytes.data(), inputs[0].bytes.data(), inputs[0].bytes.size()), 0);
}

TEST(CpuReference, TransposeFindsRenamedBuffersByPosition) {
  std::vector<HostBuffer> inputs{make_host_buffer(plan("src", ElementType::f32, 4, BufferInit::iota), 1)};
  std::vector<HostBuffer> outputs{make_host_buffer(plan("dst", ElementType::f32, 4, BufferInit::zero, true), 1)};
  find_cpu_reference("transpose")->compute(ReferenceArgs({{"N", 2}}, inputs, outputs));
  const auto out = outputs[0].as<const float>();
  EXPECT_EQ((std::vector<float>(out.begin(), out.end())), (std::vector<float>{0, 2, 1, 3}));
}

TEST(CpuReference, TransposeRejectsWhatDoesNotFit) {
  const auto* transpose = find_cpu_reference("transpose");
  std::vector<HostBuffer> inputs{make_host_buffer(plan("in", ElementType::f32, 9, BufferInit::iota), 1)};
  std::vector<HostBuffer> outputs{make_host_buffer(plan("out", ElementType::f32, 9, BufferInit::zero, true), 1)};
  // No N.
  try {
    transpose->compute(ReferenceArgs({{"M", 3}}, inputs, outputs));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'N'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("M"), std::string::npos) << e.what();
  }
  // Too few elements for N = 4.
  EXPECT_THROW(transpose->compute(ReferenceArgs({{"N", 4}}, inputs, outputs)), Error);
  // A double buffer read as float.
  std::vector<HostBuffer> doubles{make_host_buffer(plan("in", ElementType::f64, 9, BufferInit::iota), 1)};
  EXPECT_THROW(transpose->compute(ReferenceArgs({{"N", 3}}, doubles, outputs)), Error);
  // Two inputs, none named "in": no guessing.
  std::vector<HostBuffer> two{make_host_buffer(plan("a", ElementType::f32, 9, BufferInit::iota), 1),
                              make_host_buffer(plan("b", ElementType::f32, 9, BufferInit::iota), 1)};
  EXPECT_THROW(transpose->compute(ReferenceArgs({{"N", 3}}, two, outputs)), Error);
}

TEST(CpuReference, VectorAdd) {
  std::vector<HostBuffer> inputs{make_host_buffer(plan("a", ElementType::f32, 1000, BufferInit::random), 3),
                                 make_host_buffer(plan("b", ElementType::f32, 1000, BufferInit::iota), 3)};
  std::vector<HostBuffer> outputs{make_host_buffer(plan("c", ElementType::f32, 1000, BufferInit::zero, true), 3)};
  find_cpu_reference("vector_add")->compute(ReferenceArgs({{"N", 1000}}, inputs, outputs));
  const auto a = inputs[0].as<const float>();
  const auto c = outputs[0].as<const float>();
  for (std::size_t i = 0; i < 1000; ++i) ASSERT_EQ(c[i], a[i] + static_cast<float>(i));
}

TEST(HostInputs, RandomIsDeterministicPerSeedAndName) {
  const auto p = plan("in", ElementType::f32, 10000, BufferInit::random);
  const HostBuffer a = make_host_buffer(p, 42);
  const HostBuffer b = make_host_buffer(p, 42);
  const HostBuffer c = make_host_buffer(p, 43);
  const HostBuffer d = make_host_buffer(plan("other", ElementType::f32, 10000, BufferInit::random), 42);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_NE(a.bytes, c.bytes);
  EXPECT_NE(a.bytes, d.bytes);
  EXPECT_EQ(a.count(), 10000u);
}

TEST(HostInputs, RandomFloatsAreInMinusOneToOneAndNotConstant) {
  const HostBuffer f = make_host_buffer(plan("x", ElementType::f32, 100000, BufferInit::random), 1);
  double sum = 0;
  std::set<float> distinct;
  for (const float v : f.as<const float>()) {
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    sum += v;
    distinct.insert(v);
  }
  EXPECT_LT(std::abs(sum / 100000), 0.02);  // centred
  EXPECT_GT(distinct.size(), 90000u);
  const HostBuffer doubles = make_host_buffer(plan("x", ElementType::f64, 1000, BufferInit::random), 1);
  for (const double v : doubles.as<const double>()) {
    ASSERT_GE(v, -1.0);
    ASSERT_LT(v, 1.0);
  }
  const HostBuffer halves = make_host_buffer(plan("x", ElementType::f16, 1000, BufferInit::random), 1);
  for (const std::uint16_t h : halves.as<const std::uint16_t>()) {
    const float v = half_bits_to_float(h);
    ASSERT_GE(v, -1.0f);
    ASSERT_LE(v, 1.0f);  // rounding to half may reach 1
  }
}

TEST(HostInputs, RandomIntegersAreSmall) {
  std::set<std::int32_t> seen;
  const HostBuffer ints = make_host_buffer(plan("k", ElementType::i32, 10000, BufferInit::random), 5);
  for (const std::int32_t v : ints.as<const std::int32_t>()) {
    ASSERT_GE(v, -64);
    ASSERT_LT(v, 64);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 128u);
  const HostBuffer unsigneds = make_host_buffer(plan("k", ElementType::u32, 1000, BufferInit::random), 5);
  for (const std::uint32_t v : unsigneds.as<const std::uint32_t>()) { ASSERT_LT(v, 128u); }
  const HostBuffer longs = make_host_buffer(plan("k", ElementType::i64, 1000, BufferInit::random), 5);
  for (const std::int64_t v : longs.as<const std::int64_t>()) {
    ASSERT_GE(v, -64);
    ASSERT_LT(v, 64);
  }
}

TEST(HostInputs, IotaAndZero) {
  const auto iota = make_host_buffer(plan("i", ElementType::i32, 5, BufferInit::iota), 1);
  const auto values = iota.as<const std::int32_t>();
  EXPECT_EQ((std::vector<std::int32_t>(values.begin(), values.end())), (std::vector<std::int32_t>{0, 1, 2, 3, 4}));
  const auto bytes = make_host_buffer(plan("b", ElementType::u8, 300, BufferInit::iota), 1);
  EXPECT_EQ(bytes.as<const std::uint8_t>()[257], 1);  // wraps
  const auto half = make_host_buffer(plan("h", ElementType::f16, 3, BufferInit::iota), 1);
  EXPECT_EQ(half_bits_to_float(half.as<const std::uint16_t>()[2]), 2.0f);
  const auto zero = make_host_buffer(plan("z", ElementType::f64, 8, BufferInit::zero), 1);
  EXPECT_EQ(zero.bytes.size(), 64u);
  for (const double v : zero.as<const double>()) EXPECT_EQ(v, 0.0);
  EXPECT_THROW((void)zero.as<const float>(), Error);
}

TEST(HostInputs, EachIntegerWidthReadsAsItsOwnCppType) {
  const auto constant = [](std::string name, ElementType type, double value) {
    BufferPlan p = plan(std::move(name), type, 4, BufferInit::constant);
    p.init.a = value;
    return make_host_buffer(p, 1);
  };
  const auto i8 = make_host_buffer(plan("a", ElementType::i8, 200, BufferInit::iota), 1);
  EXPECT_EQ(i8.as<const std::int8_t>()[130], -126);  // wraps
  const auto i16 = constant("b", ElementType::i16, -300);
  EXPECT_EQ(i16.as<const std::int16_t>()[3], -300);
  const auto u16 = make_host_buffer(plan("c", ElementType::u16, 4, BufferInit::iota), 1);
  EXPECT_EQ(u16.as<const std::uint16_t>()[3], 3);
  const auto u64 = constant("d", ElementType::u64, 1e18);
  EXPECT_EQ(u64.as<const std::uint64_t>()[0], 1000000000000000000ull);
  EXPECT_EQ(u64.count(), 4u);
  // std::uint16_t also reads the bits of a half buffer; any other mismatch is refused.
  const auto half = constant("h", ElementType::f16, 1);
  EXPECT_EQ(half.as<const std::uint16_t>()[0], 0x3C00);
  EXPECT_THROW((void)u16.as<const std::int16_t>(), Error);
  EXPECT_THROW((void)i8.as<const std::uint8_t>(), Error);
  EXPECT_THROW((void)u64.as<const std::int64_t>(), Error);
}

TEST(HalfFloat, RoundTripsAndRounds) {
  for (const float v :
       {0.0f, -0.0f, 1.0f, -2.5f, 0.333251953125f, 65504.0f, 6.103515625e-05f, 5.9604644775390625e-08f}) {
    EXPECT_EQ(half_bits_to_float(float_to_half_bits(v)), v) << v;
  }
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half_bits(1e6f), 0x7C00);             // overflow to inf
  EXPECT_EQ(float_to_half_bits(1.0f + 0x1p-11f), 0x3C00);  // halfway: to even
  EXPECT_EQ(float_to_half_bits(1.0f + 0x1p-11f + 0x1p-20f), 0x3C01);
  EXPECT_TRUE(std::isnan(half_bits_to_float(0xFFFF)));  // the poison pattern
  EXPECT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(std::nanf("")))));
}

}  // namespace
}  // namespace tiletune

namespace tiletune {
namespace {

std::string misfit(std::string_view reference, std::vector<std::string> sizes,
                   std::vector<ReferenceBufferUse> buffers) {
  return cpu_reference_misfit(*find_cpu_reference(reference), sizes, buffers).value_or("fits");
}

TEST(CpuReference, MisfitsAreFoundBeforeAnythingRuns) {
  using T = ElementType;
  EXPECT_EQ(misfit("transpose", {"N"}, {{"in", T::f32, false, false}, {"out", T::f32, true, true}}), "fits");
  // Renamed buffers are found as the only input and the only output, as when it runs.
  EXPECT_EQ(misfit("transpose", {"N"}, {{"src", T::f32, false, false}, {"dst", T::f32, true, true}}), "fits");
  EXPECT_NE(misfit("transpose", {"M"}, {{"in", T::f32, false, false}, {"out", T::f32, true, true}})
                .find("needs problem size N"),
            std::string::npos);
  EXPECT_NE(misfit("transpose", {"N"}, {{"in", T::f64, false, false}, {"out", T::f32, true, true}})
                .find("takes input 'in' as float, not double"),
            std::string::npos);
  EXPECT_NE(misfit("transpose", {"N"},
                   {{"a", T::f32, false, false}, {"b", T::f32, false, false}, {"out", T::f32, true, true}})
                .find("needs an input buffer named 'in'"),
            std::string::npos);
  EXPECT_NE(
      misfit("transpose", {"N"}, {{"in", T::f32, false, false}, {"o1", T::f32, true, true}, {"o2", T::f32, true, true}})
          .find("needs an output buffer named 'out'"),
      std::string::npos);
  EXPECT_NE(misfit("stencil_1d", {"N", "R"},
                   {{"in", T::f32, false, false}, {"out", T::f32, true, true}, {"tmp", T::f32, true, true}})
                .find("does not write output 'tmp'"),
            std::string::npos);
  EXPECT_EQ(misfit("stencil_1d", {"N", "R"},
                   {{"in", T::f32, false, false}, {"out", T::f32, true, true}, {"tmp", T::f32, true, false}}),
            "fits");  // a scratch output that is not checked
  EXPECT_EQ(
      misfit("vector_add", {}, {{"a", T::f64, false, false}, {"b", T::f64, false, false}, {"c", T::f64, true, true}}),
      "fits");
  EXPECT_NE(
      misfit("vector_add", {}, {{"a", T::f64, false, false}, {"b", T::f32, false, false}, {"c", T::f64, true, true}})
          .find("of one type"),
      std::string::npos);
}

TEST(CpuReference, EveryBuiltInDeclaresWhatItNeeds) {
  for (const auto name : cpu_reference_names()) {
    const CpuReference& r = *find_cpu_reference(name);
    EXPECT_FALSE(r.buffers.empty()) << name;
    EXPECT_TRUE(std::any_of(r.buffers.begin(), r.buffers.end(), [](const ReferenceBuffer& b) { return b.output; }))
        << name;
  }
}

}  // namespace
}  // namespace tiletune

namespace tiletune {
namespace {

// The worker reuses a problem's inputs and reference while this key holds: it changes with
// everything that decides them, but not with a buffer's count (a scratch sized by the grid),
// which the worker rebuilds on its own.
TEST(ProblemKey, ChangesWithWhatDecidesTheInputs) {
  TrialRequest base;
  base.kernel = "k";
  base.problem_key = "k|N=10";
  BufferPlan in;
  in.name = "in";
  in.count = 10;
  in.init.kind = BufferInit::uniform;
  in.init.b = 1;
  BufferPlan scratch;
  scratch.name = "scratch";
  scratch.count = 4;
  scratch.output = true;
  scratch.init.kind = BufferInit::none;
  base.buffers = {in, scratch};
  const std::string key = problem_cache_key(base);

  TrialRequest same = base;
  same.buffers[0].count = 16;
  same.buffers[1].count = 8;
  same.id = 9;
  same.cubin = "another config";
  EXPECT_EQ(problem_cache_key(same), key);

  std::vector<std::function<void(TrialRequest&)>> changes = {
      [](TrialRequest& r) { r.seed = 2; },
      [](TrialRequest& r) { r.problem_key = "k|N=10|T=double"; },
      [](TrialRequest& r) { r.buffers[0].init.b = 2; },
      [](TrialRequest& r) { r.buffers[0].type = ElementType::f64; },
      [](TrialRequest& r) { r.buffers[1].init.kind = BufferInit::zero; },
      [](TrialRequest& r) { r.verify.cpu_reference = "other"; },
      [](TrialRequest& r) { r.verify.mode = VerifySettings::Mode::files; },
      [](TrialRequest& r) { r.verify.library = "/lib.so"; },
      [](TrialRequest& r) {
        r.verify.checks = {CheckPlan{1, OutputCheck::Compare::elements, 4, 0, 0, "/e.npy"}};
      },
      [](TrialRequest& r) {
        r.globals = {GlobalPlan{"w", "w", ElementType::f32, 9, {}}};
      },
  };
  for (std::size_t i = 0; i < changes.size(); ++i) {
    TrialRequest changed = base;
    changes[i](changed);
    EXPECT_NE(problem_cache_key(changed), key) << "change " << i;
  }
}

}  // namespace
}  // namespace tiletune
