// The corpus kernels on the CPU (tests/kernels/cuda_shim.hpp): the tuned kernels under a few
// configs agree with their reference kernels (or, for the partial sums, with the sum of the
// input) on sizes that fit no tile, on the inputs tiletune's generators give; and with
// -DCORPUS_PLANT_BUG=1 each one disagrees, so that its check on the GPU reports wrong_result.
// CUB and half kernels are left to the GPU test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <sstream>

#include "cuda_shim.hpp"
#include "emulated.hpp"
#include "test_support.hpp"
#include "worker/generators.hpp"
#include "tiletune/data_file.hpp"
#include "tiletune/reference.hpp"

namespace tiletune {
namespace {

struct EmulatedConfig {
  std::string name;
  std::map<std::string, std::string> params;
  tt_emu::AnyKernel entry = nullptr;
  [[nodiscard]] int param(const std::string& key) const { return std::stoi(params.at(key)); }
  [[nodiscard]] bool planted() const { return params.count("CORPUS_PLANT_BUG") && param("CORPUS_PLANT_BUG") == 1; }
};

// Every registered config of FILE/ENTRY.
std::vector<EmulatedConfig> configs(const std::string& kernel) {
  std::vector<EmulatedConfig> out;
  for (const auto& [name, entry] : tt_emu::kernels()) {
    if (name.rfind(kernel + ":", 0) != 0) continue;
    EmulatedConfig c{name, {}, entry};
    std::stringstream list(name.substr(kernel.size() + 1));
    std::string item;
    while (std::getline(list, item, ',')) {
      const auto eq = item.find('=');
      if (eq != std::string::npos) c.params[item.substr(0, eq)] = item.substr(eq + 1);
    }
    out.push_back(std::move(c));
  }
  return out;
}

// The configs of a tuned kernel: some good, some with the planted bug (else the test proves nothing).
std::vector<EmulatedConfig> tuned(const std::string& kernel) {
  std::vector<EmulatedConfig> found = configs(kernel);
  const auto planted = std::count_if(found.begin(), found.end(), [](const EmulatedConfig& c) { return c.planted(); });
  EXPECT_GE(planted, 1) << kernel;
  EXPECT_GE(found.size() - static_cast<std::size_t>(planted), 1u) << kernel;
  return found;
}

template <class Fn>
Fn* kernel(const EmulatedConfig& c) {
  return reinterpret_cast<Fn*>(c.entry);
}

EmulatedConfig reference(const std::string& kernel) {
  const auto found = configs(kernel);
  if (found.size() != 1) throw std::runtime_error("no single emulated " + kernel);
  return found.front();
}

unsigned ceil_div(long long a, long long b) { return static_cast<unsigned>((a + b - 1) / b); }

template <class T>
std::vector<T> generated(const std::string& name, ElementType type, std::uint64_t count, BufferInit kind,
                         double a = 0, double b = 0) {
  BufferPlan p;
  p.name = name;
  p.type = type;
  p.count = count;
  p.init.kind = kind;
  p.init.a = a;
  p.init.b = b;
  const HostBuffer h = make_host_buffer(p, 1);
  std::vector<T> v(count);
  std::memcpy(v.data(), h.bytes.data(), h.bytes.size());
  return v;
}

std::vector<float> poisoned(std::size_t n) { return std::vector<float>(n, std::nanf("")); }

// The largest |a - b| / max(1, |b|), NaN counting as infinity.
double worst_error(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double e = std::abs(double(a[i]) - double(b[i])) / std::max(1.0, std::abs(double(b[i])));
    worst = std::max(worst, std::isnan(e) ? INFINITY : e);
  }
  return worst;
}

// Good configs agree with `want` within `tolerance`, planted ones miss it by more than 1e-3.
void expect_checked(const EmulatedConfig& c, const std::vector<float>& got, const std::vector<float>& want,
                    double tolerance = 1e-5) {
  const double e = worst_error(got, want);
  if (c.planted()) {
    EXPECT_GT(e, 1e-3) << c.name << ": the planted bug would pass the check";
  } else {
    EXPECT_LE(e, tolerance) << c.name;
  }
}

void fill_global(const EmulatedConfig& c, const std::vector<float>& values) {
  const tt_emu::Global& g = tt_emu::globals().at(c.name);
  ASSERT_EQ(g.bytes, values.size() * sizeof(float)) << c.name;
  std::memcpy(g.data, values.data(), g.bytes);
}

TEST(CorpusEmulated, Axpy) {
  constexpr int n = 1001;
  const auto x = generated<float>("x", ElementType::f32, n, BufferInit::uniform, -1, 1);
  const auto y0 = generated<float>("y", ElementType::f32, n, BufferInit::normal, 0, 1);
  using Fn = void(float, const float*, float*, int);
  std::vector<float> want = y0;
  tt_emu::launch({ceil_div(n, 64)}, {64}, 0, [&] { kernel<Fn>(reference("axpy/axpy_naive"))(0.5f, x.data(), want.data(), n); });
  for (const EmulatedConfig& c : tuned("axpy/axpy")) {
    std::vector<float> y = y0;
    const int block = c.param("BLOCK");
    tt_emu::launch({ceil_div(n, block * c.param("ITEMS"))}, {unsigned(block)}, 0,
                   [&] { kernel<Fn>(c)(0.5f, x.data(), y.data(), n); });
    expect_checked(c, y, want, 0);
  }
}

TEST(CorpusEmulated, Conv2dWithConstantWeights) {
  constexpr int width = 70, height = 37;
  const auto in = generated<float>("image", ElementType::f32, width * height, BufferInit::uniform, 0, 1);
  const auto weights = generated<float>("conv::weights", ElementType::f32, 25, BufferInit::normal, 0, 1);
  using Fn = void(const float*, float*, int, int);
  const EmulatedConfig naive = reference("conv2d_constant/conv2d_naive");
  fill_global(naive, weights);
  std::vector<float> want = poisoned(width * height);
  tt_emu::launch({ceil_div(width, 16), ceil_div(height, 16)}, {16, 16}, 0,
                 [&] { kernel<Fn>(naive)(in.data(), want.data(), width, height); });
  for (const EmulatedConfig& c : tuned("conv2d_constant/conv2d_tiled")) {
    fill_global(c, weights);
    std::vector<float> out = poisoned(width * height);
    const int tx = c.param("TILE_X"), ty = c.param("TILE_Y");
    tt_emu::launch({ceil_div(width, tx), ceil_div(height, ty)}, {unsigned(tx), unsigned(ty)}, 0,
                   [&] { kernel<Fn>(c)(in.data(), out.data(), width, height); });
    expect_checked(c, out, want);
  }
}

// Kernel Tuner's convolution (17 x 17 filter) on an image that fits no tile: the input carries
// its border, so the last blocks stop at the input's edge.
TEST(CorpusEmulated, ConvolutionOfKernelTunersSize) {
  constexpr int width = 70, height = 37, filter = 17;
  constexpr int in_count = (width + filter - 1) * (height + filter - 1);
  const auto in = generated<float>("in", ElementType::f32, in_count, BufferInit::uniform, 0, 1);
  const auto weights = generated<float>("d_filter", ElementType::f32, filter * filter, BufferInit::normal, 0, 1);
  using Fn = void(float*, const float*, int, int);
  const EmulatedConfig naive = reference("convolution_kt/convolution_naive");
  fill_global(naive, weights);
  std::vector<float> want = poisoned(width * height);
  tt_emu::launch({ceil_div(width, 16), ceil_div(height, 16)}, {16, 16}, 0,
                 [&] { kernel<Fn>(naive)(want.data(), in.data(), width, height); });
  for (const EmulatedConfig& c : tuned("convolution_kt/convolution_kernel")) {
    fill_global(c, weights);
    std::vector<float> out = poisoned(width * height);
    const int bx = c.param("block_size_x"), by = c.param("block_size_y");
    const int tx = c.param("tile_size_x"), ty = c.param("tile_size_y");
    const std::size_t shared = std::size_t(by * ty + filter - 1) * (bx * tx + filter - 1 + c.param("use_padding")) * 4;
    tt_emu::launch({ceil_div(width, bx * tx), ceil_div(height, by * ty)}, {unsigned(bx), unsigned(by)}, shared,
                   [&] { kernel<Fn>(c)(out.data(), in.data(), width, height); });
    expect_checked(c, out, want, 1e-4);
  }
}

TEST(CorpusEmulated, SpmvCsr) {
  constexpr int rows = 300, columns = 1000, nnz = rows * 16;
  BufferPlan offsets;
  offsets.name = "row_ptr";
  offsets.type = ElementType::i32;
  offsets.count = rows + 1;
  offsets.init.kind = BufferInit::csr_offsets;
  offsets.init.rows = rows;
  offsets.init.columns = columns;
  offsets.init.nnz = nnz;
  const HostBuffer row_ptr = make_host_buffer(offsets, 1);
  BufferPlan cols = offsets;
  cols.name = "col_idx";
  cols.count = nnz;
  cols.init.kind = BufferInit::csr_columns;
  cols.init.source = 0;
  const HostBuffer col_idx = make_host_buffer(cols, 1, &row_ptr);
  const auto vals = generated<float>("vals", ElementType::f32, nnz, BufferInit::uniform, 0.5, 1.5);
  const auto x = generated<float>("x", ElementType::f32, columns, BufferInit::uniform, 0, 1);
  using Fn = void(const int*, const int*, const float*, const float*, float*, int);
  const int* rp = row_ptr.as<const std::int32_t>().data();
  const int* ci = col_idx.as<const std::int32_t>().data();
  std::vector<float> want = poisoned(rows);
  tt_emu::launch({ceil_div(rows, 64)}, {64}, 0,
                 [&] { kernel<Fn>(reference("spmv_csr/spmv_scalar"))(rp, ci, vals.data(), x.data(), want.data(), rows); });
  for (const EmulatedConfig& c : tuned("spmv_csr/spmv_vector")) {
    std::vector<float> y = poisoned(rows);
    const int block = c.param("BLOCK");
    tt_emu::launch({ceil_div(rows * c.param("THREADS_PER_ROW"), block)}, {unsigned(block)}, 0,
                   [&] { kernel<Fn>(c)(rp, ci, vals.data(), x.data(), y.data(), rows); });
    expect_checked(c, y, want);
  }
}

TEST(CorpusEmulated, BlockPartialSumsAddUpToTheSum) {
  constexpr int n = 10007;
  const auto in = generated<float>("in", ElementType::f32, n, BufferInit::uniform, 0, 1);
  double total = 0;
  for (const float v : in) total += v;
  using Fn = void(const float*, float*, int);
  for (const EmulatedConfig& c : tuned("block_partial_sums/block_partial_sums")) {
    const unsigned blocks = ceil_div(n, c.param("BLOCK") * c.param("ITEMS"));
    std::vector<float> partials = poisoned(blocks);
    tt_emu::launch({blocks}, {unsigned(c.param("BLOCK"))}, 0, [&] { kernel<Fn>(c)(in.data(), partials.data(), n); });
    double sum = 0;
    for (const float p : partials) sum += p;
    expect_checked(c, {static_cast<float>(sum / total)}, {1.0f});
  }
}

TEST(CorpusEmulated, SoftThresholdMatchesItsExpectedFiles) {
  const auto data = testing::source_dir() / "tests" / "corpus" / "data";
  using Fn = void(float*, float, int);
  for (const int n : {1000, 4093}) {
    auto load = [&](const std::string& what) {
      const std::vector<std::byte> bytes =
          read_data_file(data / ("threshold_" + what + "_" + std::to_string(n) + ".npy"), ElementType::f32, n, what);
      std::vector<float> v(n);
      std::memcpy(v.data(), bytes.data(), bytes.size());
      return v;
    };
    const std::vector<float> in = load("in");
    const std::vector<float> want = load("out");
    for (const EmulatedConfig& c : tuned("soft_threshold/soft_threshold")) {
      std::vector<float> x = in;
      const int block = c.param("BLOCK");
      tt_emu::launch({ceil_div(ceil_div(n, c.param("VEC")), block)}, {unsigned(block)}, 0,
                     [&] { kernel<Fn>(c)(x.data(), 0.5f, n); });
      expect_checked(c, x, want, 0);
    }
  }
}

TEST(CorpusEmulated, HeatStencil) {
  constexpr int nx = 70, ny = 37;  // as compiled (-DNX, -DNY)
  const auto in = generated<float>("grid", ElementType::f32, nx * ny, BufferInit::uniform, 0, 1);
  using Fn = void(const float*, float*);
  std::vector<float> want = poisoned(nx * ny);
  tt_emu::launch({ceil_div(nx, 16), ceil_div(ny, 16)}, {16, 16}, 0,
                 [&] { kernel<Fn>(reference("heat_stencil/heat_naive"))(in.data(), want.data()); });
  for (const EmulatedConfig& c : tuned("heat_stencil/heat_tiled")) {
    std::vector<float> out = poisoned(nx * ny);
    const int bx = c.param("BX"), by = c.param("BY");
    tt_emu::launch({ceil_div(nx, bx), ceil_div(ny, by)}, {unsigned(bx), unsigned(by)}, 0,
                   [&] { kernel<Fn>(c)(in.data(), out.data()); });
    expect_checked(c, out, want, 0);
  }
}

TEST(CorpusEmulated, TiledGemm) {
  constexpr int m = 37, n = 45, k = 53;
  const auto a = generated<float>("A", ElementType::f32, m * k, BufferInit::uniform, -1, 1);
  const auto b = generated<float>("B", ElementType::f32, k * n, BufferInit::uniform, -1, 1);
  using Fn = void(const float*, const float*, float*, int, int, int);
  std::vector<float> want = poisoned(m * n);
  tt_emu::launch({ceil_div(n, 16), ceil_div(m, 16)}, {16, 16}, 0,
                 [&] { kernel<Fn>(reference("gemm_tiled/gemm_naive"))(a.data(), b.data(), want.data(), m, n, k); });
  for (const EmulatedConfig& c : tuned("gemm_tiled/gemm_tiled")) {
    std::vector<float> out = poisoned(m * n);
    const int tile = c.param("TILE");
    tt_emu::launch({ceil_div(n, tile), ceil_div(m, tile)}, {unsigned(tile), unsigned(tile)}, 0,
                   [&] { kernel<Fn>(c)(a.data(), b.data(), out.data(), m, n, k); });
    expect_checked(c, out, want);
  }
}

TEST(CorpusEmulated, HistogramOfAnIntegerRange) {
  constexpr int n = 5000, bins = 100;
  const auto data = generated<std::int32_t>("data", ElementType::i32, n, BufferInit::uniform, 0, bins);
  using Fn = void(const int*, unsigned*, int, int);
  using Naive = void(const int*, unsigned*, int);
  std::vector<unsigned> want(bins, 0);
  tt_emu::launch({ceil_div(n, 64)}, {64}, 0,
                 [&] { kernel<Naive>(reference("histogram_bins/histogram_global"))(data.data(), want.data(), n); });
  for (const EmulatedConfig& c : tuned("histogram_bins/histogram_shared")) {
    std::vector<unsigned> counts(bins, 0);  // init: zero, restored before every launch
    tt_emu::launch({4}, {unsigned(c.param("BLOCK"))}, bins * sizeof(unsigned),
                   [&] { kernel<Fn>(c)(data.data(), counts.data(), n, bins); });
    if (c.planted()) {
      EXPECT_NE(counts, want) << c.name;
    } else {
      EXPECT_EQ(counts, want) << c.name;
    }
  }
}

TEST(CorpusEmulated, NearestOfPointsCloseTogether) {
  constexpr int nq = 300, np = 200;
  const auto queries = generated<float>("queries", ElementType::f32, 2 * nq, BufferInit::uniform, 0, 0.01);
  const auto points = generated<float>("points", ElementType::f32, 2 * np, BufferInit::uniform, 0, 0.01);
  using Fn = void(const float2*, const float2*, float*, int, int);
  const auto* q = reinterpret_cast<const float2*>(queries.data());
  const auto* p = reinterpret_cast<const float2*>(points.data());
  std::vector<float> want = poisoned(nq);
  tt_emu::launch({ceil_div(nq, 64)}, {64}, 0,
                 [&] { kernel<Fn>(reference("nearest_points/nearest_naive"))(q, p, want.data(), nq, np); });
  for (const float d : want) ASSERT_LT(d, 1e-4f) << "the points are close together";
  for (const EmulatedConfig& c : tuned("nearest_points/nearest_tiled")) {
    std::vector<float> best = poisoned(nq);
    const int block = c.param("BLOCK");
    tt_emu::launch({ceil_div(nq, block)}, {unsigned(block)}, 0, [&] { kernel<Fn>(c)(q, p, best.data(), nq, np); });
    if (c.planted()) {
      EXPECT_NE(best, want) << c.name;
    } else {
      EXPECT_EQ(best, want) << c.name;
    }
  }
}

}  // namespace
}  // namespace tiletune
