// The shipped kernels, compiled for the CPU (cuda_shim.hpp, emulate_config.cpp) under a few
// configs each, run on sizes that fit no tile and checked against the registered CPU
// references with the tolerances of the shipped spaces. The kernels that accumulate through
// scratch buffers (reduction, histogram) are launched twice: the second launch must be
// right too, and both must leave the scratch zeroed.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cuda_shim.hpp"
#include "emulated.hpp"
#include "worker/generators.hpp"
#include "tiletune/reference.hpp"
#include "tiletune/space.hpp"

namespace tiletune {
namespace {

using Params = std::map<std::string, long long>;

// "vector_add:BLOCK=64,ITEMS=2" -> {BLOCK: 64, ITEMS: 2}
Params parse_params(const std::string& name) {
  Params p;
  std::stringstream list(name.substr(name.find(':') + 1));
  std::string item;
  while (std::getline(list, item, ',')) {
    const auto eq = item.find('=');
    p[item.substr(0, eq)] = std::stoll(item.substr(eq + 1));
  }
  return p;
}

std::vector<std::pair<std::string, tt_emu::AnyKernel>> configs_of(const std::string& family) {
  std::vector<std::pair<std::string, tt_emu::AnyKernel>> out;
  for (const auto& [name, entry] : tt_emu::kernels())
    if (name.rfind(family + ":", 0) == 0) out.emplace_back(name, entry);
  return out;
}

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

HostBuffer make(const std::string& name, ElementType type, std::uint64_t count, BufferInit init,
                std::uint64_t seed = 7) {
  BufferPlan plan;
  plan.name = name;
  plan.type = type;
  plan.count = count;
  plan.init.kind = init;
  return make_host_buffer(plan, seed);
}

// What the runner does to a plain output before the verified launch: 0xFF bytes (NaN).
void poison(HostBuffer& b) { std::fill(b.bytes.begin(), b.bytes.end(), std::byte{0xFF}); }

HostBuffer expected(std::string_view family, const ProblemSizes& sizes, const std::vector<HostBuffer>& inputs,
                    HostBuffer output) {
  std::vector<HostBuffer> outputs = {std::move(output)};
  find_cpu_reference(family)->compute(ReferenceArgs(sizes, inputs, outputs));
  return outputs[0];
}

// The tolerances of the family's (first) output check.
const OutputCheck& tolerances(const std::string& family) {
  static std::map<std::string, OutputCheck> cache;
  auto it = cache.find(family);
  if (it == cache.end()) {
    it =
        cache
            .emplace(family,
                     load_space(std::string(TILETUNE_SOURCE_DIR) + "/configs/" + family + ".yaml").verify.outputs.at(0))
            .first;
  }
  return it->second;
}

// The number of elements outside |got - want| <= atol + rtol |want| (NaN is always outside).
std::size_t mismatches(const HostBuffer& got, const HostBuffer& want, double rtol, double atol, std::string* first) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.count(); ++i) {
    double g = 0, w = 0;
    if (got.type == ElementType::f32) {
      g = got.as<float>()[i];
      w = want.as<float>()[i];
    } else {
      g = got.as<std::uint32_t>()[i];
      w = want.as<std::uint32_t>()[i];
    }
    if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w))) {
      if (bad++ == 0 && first)
        *first = "[" + std::to_string(i) + "]: got " + std::to_string(g) + ", want " + std::to_string(w);
    }
  }
  return bad;
}

#define EXPECT_MATCHES(got, want, rtol, atol)                                        \
  do {                                                                               \
    std::string first_;                                                              \
    EXPECT_EQ(mismatches(got, want, rtol, atol, &first_), 0u) << "first " << first_; \
  } while (0)

TEST(KernelsEmulated, VectorAdd) {
  const auto configs = configs_of("vector_add");
  ASSERT_FALSE(configs.empty());
  for (const auto& [name, entry] : configs) {
    const Params p = parse_params(name);
    auto kernel = reinterpret_cast<void (*)(const float*, const float*, float*, int)>(entry);
    for (const int n : {1, 3, 5, 37, 1003, 4099}) {
      SCOPED_TRACE(name + " N=" + std::to_string(n));
      const HostBuffer a = make("a", ElementType::f32, n, BufferInit::random);
      const HostBuffer b = make("b", ElementType::f32, n, BufferInit::random);
      HostBuffer c = make("c", ElementType::f32, n, BufferInit::zero);
      const HostBuffer want = expected("vector_add", {{"N", n}}, {a, b}, c);
      poison(c);
      const long long chunks = ceil_div(n, p.at("BLOCK") * p.at("ITEMS") * p.at("VEC"));
      const long long grid = p.at("GRID_STRIDE") ? std::min(p.at("GRID"), chunks) : chunks;
      tt_emu::launch({static_cast<unsigned>(grid)}, {static_cast<unsigned>(p.at("BLOCK"))}, 0,
                     [&] { kernel(a.as<float>().data(), b.as<float>().data(), c.as<float>().data(), n); });
      EXPECT_MATCHES(c, want, 0, 0);
    }
  }
}

TEST(KernelsEmulated, ReductionRepeatedLaunches) {
  const auto configs = configs_of("reduction");
  ASSERT_FALSE(configs.empty());
  const OutputCheck& tol = tolerances("reduction");
  for (const auto& [name, entry] : configs) {
    const Params p = parse_params(name);
    auto kernel = reinterpret_cast<void (*)(const float*, float*, unsigned*, float*, int)>(entry);
    HostBuffer partials = make("partials", ElementType::f32, 8192, BufferInit::zero);
    HostBuffer counter = make("counter", ElementType::u32, 1, BufferInit::zero);
    for (const int n : {1, 2, 7, 1003, 70001}) {
      SCOPED_TRACE(name + " N=" + std::to_string(n));
      const HostBuffer in = make("in", ElementType::f32, n, BufferInit::random);
      HostBuffer out = make("out", ElementType::f32, 1, BufferInit::zero);
      const HostBuffer want = expected("reduction", {{"N", n}}, {in}, out);
      const long long per_block = p.at("BLOCK") * (p.at("VARIANT") == 3 ? 4 * p.at("ITEMS") : 1);
      const long long grid = std::min(p.at("GRID"), ceil_div(n, per_block));
      for (int launch = 0; launch < 2; ++launch) {
        poison(out);
        tt_emu::launch({static_cast<unsigned>(grid)}, {static_cast<unsigned>(p.at("BLOCK"))}, 0, [&] {
          kernel(in.as<float>().data(), partials.as<float>().data(), counter.as<std::uint32_t>().data(),
                 out.as<float>().data(), n);
        });
        EXPECT_MATCHES(out, want, tol.rtol, tol.atol);
        // Tighter than the space's tolerance: small sums are nearly exact.
        EXPECT_NEAR(out.as<float>()[0], want.as<float>()[0], 1e-3);
        EXPECT_EQ(counter.as<std::uint32_t>()[0], 0u);
        const auto parts = partials.as<float>();
        EXPECT_TRUE(std::all_of(parts.begin(), parts.end(), [](float v) { return v == 0.0f; }));
      }
    }
  }
}

TEST(KernelsEmulated, Stencil1dBothEnds) {
  const auto configs = configs_of("stencil_1d");
  ASSERT_FALSE(configs.empty());
  const OutputCheck& tol = tolerances("stencil_1d");
  for (const auto& [name, entry] : configs) {
    const Params p = parse_params(name);
    auto kernel = reinterpret_cast<void (*)(const float*, float*, int, int)>(entry);
    for (const int n : {1, 10, 37, 1003}) {
      for (const int r : {0, 1, 2, 3, 5, 8, 16}) {
        SCOPED_TRACE(name + " N=" + std::to_string(n) + " R=" + std::to_string(r));
        const HostBuffer in = make("in", ElementType::f32, n, BufferInit::random);
        HostBuffer out = make("out", ElementType::f32, n, BufferInit::zero);
        const HostBuffer want = expected("stencil_1d", {{"N", n}, {"R", r}}, {in}, out);
        poison(out);
        const long long grid = ceil_div(n, p.at("BLOCK") * p.at("ITEMS"));
        // The space's shared_bytes: L floats, plus 4 after every 32 with SHARED=2.
        const long long floats = p.at("BLOCK") * p.at("ITEMS") + 2 * r + 4;
        const long long skew = p.at("SHARED") == 2 ? 4 * ceil_div(floats, 32) : 0;
        const long long shared = p.at("SHARED") ? (floats + skew) * 4 : 0;
        tt_emu::launch({static_cast<unsigned>(grid)}, {static_cast<unsigned>(p.at("BLOCK"))},
                       static_cast<std::size_t>(shared),
                       [&] { kernel(in.as<float>().data(), out.as<float>().data(), n, r); });
        EXPECT_MATCHES(out, want, tol.rtol, tol.atol);
      }
    }
  }
}

TEST(KernelsEmulated, HistogramRepeatedLaunches) {
  const auto configs = configs_of("histogram");
  ASSERT_FALSE(configs.empty());
  for (const auto& [name, entry] : configs) {
    const Params p = parse_params(name);
    auto kernel = reinterpret_cast<void (*)(const std::uint8_t*, unsigned*, unsigned*, unsigned*, int)>(entry);
    HostBuffer acc = make("acc", ElementType::u32, 256, BufferInit::zero);
    HostBuffer counter = make("counter", ElementType::u32, 1, BufferInit::zero);
    for (const int n : {1, 15, 16, 17, 1003, 40000}) {
      SCOPED_TRACE(name + " N=" + std::to_string(n));
      const HostBuffer in = make("in", ElementType::u8, n, BufferInit::random);
      HostBuffer out = make("out", ElementType::u32, 256, BufferInit::zero);
      const HostBuffer want = expected("histogram", {{"N", n}}, {in}, out);
      const long long grid = std::min(p.at("GRID"), ceil_div(n, p.at("BLOCK") * p.at("ITEMS") * 16));
      for (int launch = 0; launch < 2; ++launch) {
        poison(out);
        tt_emu::launch({static_cast<unsigned>(grid)}, {static_cast<unsigned>(p.at("BLOCK"))}, 0, [&] {
          kernel(in.as<std::uint8_t>().data(), acc.as<std::uint32_t>().data(), counter.as<std::uint32_t>().data(),
                 out.as<std::uint32_t>().data(), n);
        });
        EXPECT_MATCHES(out, want, 0, 0);
        EXPECT_EQ(counter.as<std::uint32_t>()[0], 0u);
        const auto bins = acc.as<std::uint32_t>();
        EXPECT_TRUE(std::all_of(bins.begin(), bins.end(), [](unsigned v) { return v == 0u; }));
      }
    }
  }
}

TEST(KernelsEmulated, MatmulEdges) {
  const auto configs = configs_of("matmul");
  ASSERT_FALSE(configs.empty());
  const OutputCheck& tol = tolerances("matmul");
  struct Size {
    int m, n, k;
  };
  for (const auto& [name, entry] : configs) {
    const Params p = parse_params(name);
    auto kernel = reinterpret_cast<void (*)(const float*, const float*, float*, int, int, int)>(entry);
    // Odd sizes (scalar paths), multiples of 4 that fit no tile (float4 paths with edges),
    // exact tiles, a single element, K not a multiple of 4 with N a multiple of 4.
    for (const Size s :
         {Size{37, 45, 29}, Size{36, 132, 68}, Size{64, 64, 64}, Size{1, 1, 1}, Size{130, 20, 30}, Size{5, 260, 3}}) {
      SCOPED_TRACE(name + " M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k));
      const HostBuffer a = make("A", ElementType::f32, static_cast<std::uint64_t>(s.m) * s.k, BufferInit::random);
      const HostBuffer b = make("B", ElementType::f32, static_cast<std::uint64_t>(s.k) * s.n, BufferInit::random);
      HostBuffer c = make("C", ElementType::f32, static_cast<std::uint64_t>(s.m) * s.n, BufferInit::zero);
      const HostBuffer want = expected("matmul", {{"M", s.m}, {"N", s.n}, {"K", s.k}}, {a, b}, c);
      poison(c);
      const dim3 grid{static_cast<unsigned>(ceil_div(s.n, p.at("BN"))),
                      static_cast<unsigned>(ceil_div(s.m, p.at("BM"))), 1};
      const dim3 block{static_cast<unsigned>((p.at("BM") / p.at("TM")) * (p.at("BN") / p.at("TN"))), 1, 1};
      const long long shared = (p.at("PREFETCH") + 1) * p.at("BK") * (p.at("BM") + p.at("BN") + 2 * p.at("PAD")) * 4;
      tt_emu::launch(grid, block, static_cast<std::size_t>(shared),
                     [&] { kernel(a.as<float>().data(), b.as<float>().data(), c.as<float>().data(), s.m, s.n, s.k); });
      EXPECT_MATCHES(c, want, tol.rtol, tol.atol);
    }
  }
}

// Odd sizes take the scalar path everywhere; multiples of 4 that fit no tile take the vector
// path inside and stop at the edge tiles.
TEST(KernelsEmulated, TransposeEdges) {
  const auto configs = configs_of("transpose");
  ASSERT_FALSE(configs.empty());
  for (const auto& [name, entry] : configs) {
    const Params p = parse_params(name);
    auto kernel = reinterpret_cast<void (*)(const float*, float*, int)>(entry);
    for (const int n : {1, 3, 37, 68, 130}) {
      SCOPED_TRACE(name + " N=" + std::to_string(n));
      const auto count = static_cast<std::uint64_t>(n) * n;
      const HostBuffer in = make("in", ElementType::f32, count, BufferInit::random);
      HostBuffer out = make("out", ElementType::f32, count, BufferInit::zero);
      const HostBuffer want = expected("transpose", {{"N", n}}, {in}, out);
      poison(out);
      const auto tiles = static_cast<unsigned>(ceil_div(n, p.at("TILE")));
      const dim3 block{static_cast<unsigned>(p.at("TILE") / p.at("VEC")), static_cast<unsigned>(p.at("BLOCK_ROWS")), 1};
      tt_emu::launch({tiles, tiles, 1}, block, 0, [&] { kernel(in.as<float>().data(), out.as<float>().data(), n); });
      EXPECT_MATCHES(out, want, 0, 0);
    }
  }
}

}  // namespace
}  // namespace tiletune
