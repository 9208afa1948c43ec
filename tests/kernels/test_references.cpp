// The CPU references of the kernel families added with issue 4 (reduction, stencil_1d,
// histogram, matmul) on small odd sizes, against values worked out by hand or by a second,
// independent loop.
#include <cmath>
#include <cstring>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "host_buffer.hpp"
#include "tiletune/reference.hpp"

namespace tiletune {
namespace {

using testing::host_buffer;

HostBuffer zeros(std::string name, ElementType type, std::size_t count) {
  HostBuffer b;
  b.name = std::move(name);
  b.type = type;
  b.bytes.assign(count * host_element_bytes(type), std::byte{0});
  return b;
}

void run(std::string_view family, const ProblemSizes& sizes, const std::vector<HostBuffer>& in,
         std::vector<HostBuffer>& out) {
  const CpuReference* reference = find_cpu_reference(family);
  ASSERT_NE(reference, nullptr) << family;
  reference->compute(ReferenceArgs(sizes, in, out));
}

TEST(KernelReferences, AreRegistered) {
  for (const char* name : {"histogram", "matmul", "reduction", "stencil_1d"})
    EXPECT_NE(find_cpu_reference(name), nullptr) << name;
}

TEST(KernelReferences, ReductionSumsInDouble) {
  // 1 + 2^-30 (x 7) + ... : a float running sum would lose the small terms.
  std::vector<float> values = {1.0f};
  for (int i = 0; i < 6; ++i) values.push_back(0x1p-25f);
  values.push_back(-0.5f);
  values.push_back(3.25f);  // 9 values, odd
  std::vector<HostBuffer> in = {host_buffer("in", values)};
  std::vector<HostBuffer> out = {zeros("out", ElementType::f32, 1)};
  run("reduction", {{"N", 9}}, in, out);
  const double want = 1.0 + 6 * 0x1p-25 - 0.5 + 3.25;
  EXPECT_EQ(out[0].as<float>()[0], static_cast<float>(want));

  // Only the first N elements count.
  run("reduction", {{"N", 3}}, in, out);
  EXPECT_EQ(out[0].as<float>()[0], static_cast<float>(1.0 + 2 * 0x1p-25));
  EXPECT_THROW(run("reduction", {{"N", 10}}, in, out), Error);  // more than the buffer holds
}

TEST(KernelReferences, Stencil1dIsZeroOutsideTheArray) {
  const std::vector<float> values = {1, 2, 3, 4, 5, 6, 7};  // N = 7
  std::vector<HostBuffer> in = {host_buffer("in", values)};
  std::vector<HostBuffer> out = {zeros("out", ElementType::f32, 7)};
  run("stencil_1d", {{"N", 7}, {"R", 1}}, in, out);
  const auto o = out[0].as<float>();
  EXPECT_FLOAT_EQ(o[0], (0 + 1 + 2) / 3.0f);
  EXPECT_FLOAT_EQ(o[3], (3 + 4 + 5) / 3.0f);
  EXPECT_FLOAT_EQ(o[6], (6 + 7 + 0) / 3.0f);

  // A radius wider than the array: every output is the whole sum / (2R + 1).
  run("stencil_1d", {{"N", 7}, {"R", 8}}, in, out);
  for (int i = 0; i < 7; ++i) EXPECT_FLOAT_EQ(o[static_cast<std::size_t>(i)], 28.0f / 17.0f) << i;

  // R = 3, against a direct loop.
  run("stencil_1d", {{"N", 7}, {"R", 3}}, in, out);
  for (int i = 0; i < 7; ++i) {
    double s = 0;
    for (int j = -3; j <= 3; ++j)
      if (i + j >= 0 && i + j < 7) s += values[static_cast<std::size_t>(i + j)];
    EXPECT_FLOAT_EQ(o[static_cast<std::size_t>(i)], static_cast<float>(s / 7)) << i;
  }
  EXPECT_THROW(run("stencil_1d", {{"N", 7}}, in, out), Error);  // no R
}

TEST(KernelReferences, HistogramCountsEveryByte) {
  std::vector<std::uint8_t> bytes;
  for (int i = 0; i < 1001; ++i) bytes.push_back(static_cast<std::uint8_t>((i * 7) % 251));
  bytes.push_back(255);
  bytes.push_back(255);
  std::vector<HostBuffer> in = {host_buffer("in", bytes)};
  std::vector<HostBuffer> out = {host_buffer("out", std::vector<std::uint32_t>(256, 99u))};  // overwritten
  run("histogram", {{"N", 1003}}, in, out);
  const auto o = out[0].as<std::uint32_t>();
  std::vector<std::uint32_t> want(256, 0);
  for (const auto b : bytes) ++want[b];
  for (int b = 0; b < 256; ++b) EXPECT_EQ(o[static_cast<std::size_t>(b)], want[static_cast<std::size_t>(b)]) << b;
  EXPECT_EQ(o[255], 2u);
  EXPECT_EQ(o[251], 0u);
  EXPECT_EQ(std::accumulate(o.begin(), o.end(), 0u), 1003u);
}

TEST(KernelReferences, MatmulRowMajor) {
  // A 3x2, B 2x5: C = A B, 3x5, checked element by element.
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<float> b = {1, 0, -1, 2, 0.5f, 0, 1, 1, -2, 3};
  std::vector<HostBuffer> in = {host_buffer("A", a), host_buffer("B", b)};
  std::vector<HostBuffer> out = {zeros("C", ElementType::f32, 15)};
  run("matmul", {{"M", 3}, {"N", 5}, {"K", 2}}, in, out);
  const auto c = out[0].as<float>();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) {
      float want = 0;
      for (int p = 0; p < 2; ++p)
        want += a[static_cast<std::size_t>(i * 2 + p)] * b[static_cast<std::size_t>(p * 5 + j)];
      EXPECT_FLOAT_EQ(c[static_cast<std::size_t>(i * 5 + j)], want) << i << "," << j;
    }
  EXPECT_FLOAT_EQ(c[0], 1.0f);  // 1*1 + 2*0
  EXPECT_FLOAT_EQ(c[4], 6.5f);
}

}  // namespace
}  // namespace tiletune
