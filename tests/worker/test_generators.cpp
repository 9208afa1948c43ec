// The input generators on the host (the same functions the worker runs on the device): each
// kind has the properties it promises (bounds, moments, CSR structure), is repeatable, draws
// its own stream per buffer, and `random` gives the bits the sequential generator of earlier
// versions gave, so that recorded results keep their meaning.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "worker/generators.hpp"
#include "tiletune/error.hpp"
#include "tiletune/reference.hpp"

namespace tiletune {
namespace {

BufferPlan plan(std::string name, ElementType type, std::uint64_t count, BufferInit kind, double a = 0, double b = 0) {
  BufferPlan p;
  p.name = std::move(name);
  p.type = type;
  p.count = count;
  p.init.kind = kind;
  p.init.a = a;
  p.init.b = b;
  return p;
}

template <class T>
std::vector<T> values(const HostBuffer& b) {
  std::vector<T> v(b.count());
  std::memcpy(v.data(), b.bytes.data(), b.bytes.size());
  return v;
}

// Element i of an integer buffer of any width, widened.
std::int64_t integer_at(const HostBuffer& b, std::uint64_t i) {
  const std::byte* at = b.bytes.data() + i * element_size(b.type);
  const auto load = [at]<class T>(T v) {
    std::memcpy(&v, at, sizeof v);
    return static_cast<std::int64_t>(v);
  };
  switch (b.type) {
    case ElementType::i8: return load(std::int8_t{});
    case ElementType::i16: return load(std::int16_t{});
    case ElementType::i32: return load(std::int32_t{});
    case ElementType::i64: return load(std::int64_t{});
    case ElementType::u8: return load(std::uint8_t{});
    case ElementType::u16: return load(std::uint16_t{});
    case ElementType::u32: return load(std::uint32_t{});
    case ElementType::u64: return load(std::uint64_t{});  // the tests' values stay below 2^63
    case ElementType::f32:
    case ElementType::f64:
    case ElementType::f16: break;
  }
  ADD_FAILURE() << element_type_name(b.type) << " is no integer type";
  return 0;
}

std::vector<std::int64_t> as_i64(const HostBuffer& b) {
  std::vector<std::int64_t> v;
  for (std::uint64_t i = 0; i < b.count(); ++i) v.push_back(integer_at(b, i));
  return v;
}

struct Moments {
  double mean = 0, stddev = 0, min = 1e300, max = -1e300;
};
template <class T>
Moments moments(const std::vector<T>& v) {
  Moments m;
  for (const T x : v) {
    m.mean += double(x);
    m.min = std::min(m.min, double(x));
    m.max = std::max(m.max, double(x));
  }
  m.mean /= double(v.size());
  for (const T x : v) m.stddev += (double(x) - m.mean) * (double(x) - m.mean);
  m.stddev = std::sqrt(m.stddev / double(v.size() - 1));
  return m;
}

// The generator of tiletune 0.x, sequential, as it stood in reference.cpp: the oracle.
struct OldSplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};
std::uint64_t old_name_hash(std::string_view name) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (const char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ull;
  }
  return h;
}

TEST(Generators, RandomIsBitIdenticalToTheSequentialGeneratorOfBefore) {
  constexpr std::uint64_t n = 5000;
  for (const ElementType type : {ElementType::f32, ElementType::f64, ElementType::i32, ElementType::u32,
                                 ElementType::i64, ElementType::u8, ElementType::f16}) {
    SCOPED_TRACE(element_type_name(type));
    const HostBuffer b = make_host_buffer(plan("in", type, n, BufferInit::random), 12345);
    OldSplitMix64 rng{12345 ^ old_name_hash("in")};
    rng.next();
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t x = rng.next();
      const std::byte* at = b.bytes.data() + i * element_size(type);
      switch (type) {
        case ElementType::f32: {
          const float want = static_cast<float>(x >> 40) * 0x1p-23f - 1.0f;
          ASSERT_EQ(std::memcmp(at, &want, 4), 0) << i;
          break;
        }
        case ElementType::f64: {
          const double want = static_cast<double>(x >> 11) * 0x1p-52 - 1.0;
          ASSERT_EQ(std::memcmp(at, &want, 8), 0) << i;
          break;
        }
        case ElementType::i32: {
          const std::int32_t want = static_cast<std::int32_t>(x >> 57) - 64;
          ASSERT_EQ(std::memcmp(at, &want, 4), 0) << i;
          break;
        }
        case ElementType::u32: {
          const auto want = static_cast<std::uint32_t>(x >> 57);
          ASSERT_EQ(std::memcmp(at, &want, 4), 0) << i;
          break;
        }
        case ElementType::i64: {
          const std::int64_t want = static_cast<std::int64_t>(x >> 57) - 64;
          ASSERT_EQ(std::memcmp(at, &want, 8), 0) << i;
          break;
        }
        case ElementType::u8: {
          const auto want = static_cast<std::uint8_t>(x >> 56);
          ASSERT_EQ(std::memcmp(at, &want, 1), 0) << i;
          break;
        }
        case ElementType::f16: {
          const std::uint16_t want = float_to_half_bits(static_cast<float>(x >> 40) * 0x1p-23f - 1.0f);
          ASSERT_EQ(std::memcmp(at, &want, 2), 0) << i;
          break;
        }
      }
    }
  }
}

// int8, int16, uint16 and uint64 follow the rule of the types before them: `random` gives the
// same small integers at every width (signed in [-64, 64), unsigned in [0, 128); the same draw
// as int and uint), so a kernel's result does not depend on the width the space chose.
TEST(Generators, RandomGivesTheSameSmallIntegersAtEveryWidth) {
  constexpr std::uint64_t n = 20000;
  const HostBuffer signed_reference = make_host_buffer(plan("in", ElementType::i32, n, BufferInit::random), 99);
  const HostBuffer unsigned_reference = make_host_buffer(plan("in", ElementType::u32, n, BufferInit::random), 99);
  for (const ElementType type :
       {ElementType::i8, ElementType::i16, ElementType::i64, ElementType::u16, ElementType::u64}) {
    SCOPED_TRACE(element_type_name(type));
    const bool is_signed = type == ElementType::i8 || type == ElementType::i16 || type == ElementType::i64;
    const HostBuffer b = make_host_buffer(plan("in", type, n, BufferInit::random), 99);
    ASSERT_EQ(b.count(), n);
    ASSERT_EQ(b.bytes.size(), n * element_size(type));
    const std::vector<std::int64_t> v = as_i64(b);
    EXPECT_EQ(v, as_i64(is_signed ? signed_reference : unsigned_reference));
    const std::int64_t low = is_signed ? -64 : 0;
    EXPECT_EQ(*std::min_element(v.begin(), v.end()), low);  // the whole range is reached
    EXPECT_EQ(*std::max_element(v.begin(), v.end()), low + 127);
    EXPECT_EQ(std::set<std::int64_t>(v.begin(), v.end()).size(), 128u);
  }
  // The oracle of the rule, element by element: draw i of the stream, its top 7 bits.
  OldSplitMix64 rng{99 ^ old_name_hash("in")};
  rng.next();
  const HostBuffer bytes = make_host_buffer(plan("in", ElementType::i8, 100, BufferInit::random), 99);
  for (std::uint64_t i = 0; i < 100; ++i)
    ASSERT_EQ(integer_at(bytes, i), static_cast<std::int64_t>(rng.next() >> 57) - 64);
}

TEST(Generators, NarrowAndWideIntegersOfEveryKind) {
  // iota converts modulo 2^bits: int8 wraps from 127 to -128, uint16 from 65535 to 0.
  const HostBuffer i8 = make_host_buffer(plan("i", ElementType::i8, 300, BufferInit::iota), 1);
  EXPECT_EQ(integer_at(i8, 127), 127);
  EXPECT_EQ(integer_at(i8, 128), -128);
  EXPECT_EQ(integer_at(i8, 299), 43);
  const HostBuffer u16 = make_host_buffer(plan("i", ElementType::u16, 70000, BufferInit::iota), 1);
  EXPECT_EQ(integer_at(u16, 65535), 65535);
  EXPECT_EQ(integer_at(u16, 65536), 0);
  const HostBuffer u64 = make_host_buffer(plan("i", ElementType::u64, 5, BufferInit::iota), 1);
  EXPECT_EQ(as_i64(u64), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  // Constants, the extremes of each type among them.
  const std::tuple<ElementType, double> constants[] = {{ElementType::i8, -128},    {ElementType::i8, 127},
                                                       {ElementType::i16, -32768}, {ElementType::u16, 65535},
                                                       {ElementType::u64, 1e15},   {ElementType::i16, -5}};
  for (const auto& [type, value] : constants) {
    const auto v = as_i64(make_host_buffer(plan("c", type, 7, BufferInit::constant, value), 1));
    EXPECT_EQ(v, std::vector<std::int64_t>(7, static_cast<std::int64_t>(value))) << element_type_name(type);
  }
  // Uniform covers [low, high - 1] of each type, its edges included.
  const std::tuple<ElementType, double, double> ranges[] = {{ElementType::i8, -128, 128},
                                                            {ElementType::i16, -32768, -32758},
                                                            {ElementType::u16, 65530, 65536},
                                                            {ElementType::u64, 1099511627776.0, 1099511627776.0 + 9}};
  for (const auto& [type, lo, hi] : ranges) {
    SCOPED_TRACE(element_type_name(type));
    const auto v = as_i64(make_host_buffer(plan("u", type, 50000, BufferInit::uniform, lo, hi), 3));
    const std::set<std::int64_t> seen(v.begin(), v.end());
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(hi - lo));
    EXPECT_EQ(*seen.begin(), static_cast<std::int64_t>(lo));
    EXPECT_EQ(*seen.rbegin(), static_cast<std::int64_t>(hi) - 1);
  }
}

TEST(Generators, AnElementDependsOnItsIndexNotOnTheCount) {
  for (const BufferInit kind : {BufferInit::random, BufferInit::uniform, BufferInit::normal}) {
    const HostBuffer small = make_host_buffer(plan("x", ElementType::f64, 10, kind, 1, 2), 9);
    const HostBuffer big = make_host_buffer(plan("x", ElementType::f64, 100000, kind, 1, 2), 9);
    EXPECT_EQ(std::memcmp(small.bytes.data(), big.bytes.data(), small.bytes.size()), 0);
  }
}

TEST(Generators, StreamsDifferBySeedAndName) {
  EXPECT_NE(generator_stream(1, "a"), generator_stream(2, "a"));
  EXPECT_NE(generator_stream(1, "a"), generator_stream(1, "b"));
  const auto a = values<float>(make_host_buffer(plan("a", ElementType::f32, 1000, BufferInit::uniform, 0, 1), 3));
  const auto b = values<float>(make_host_buffer(plan("b", ElementType::f32, 1000, BufferInit::uniform, 0, 1), 3));
  const auto again = values<float>(make_host_buffer(plan("a", ElementType::f32, 1000, BufferInit::uniform, 0, 1), 3));
  EXPECT_NE(a, b);
  EXPECT_EQ(a, again);
}

TEST(Generators, UniformFloatsStayInTheirBoundsWithTheRightMoments) {
  constexpr std::uint64_t n = 200000;
  const double lo = -2, hi = 3;
  const double sd = (hi - lo) / std::sqrt(12.0);
  for (const ElementType type : {ElementType::f32, ElementType::f64}) {
    SCOPED_TRACE(element_type_name(type));
    const HostBuffer b = make_host_buffer(plan("u", type, n, BufferInit::uniform, lo, hi), 7);
    const Moments m = type == ElementType::f32 ? moments(values<float>(b)) : moments(values<double>(b));
    EXPECT_GE(m.min, lo);
    EXPECT_LT(m.max, hi);
    EXPECT_NEAR(m.mean, 0.5, 4 * sd / std::sqrt(double(n)));
    EXPECT_NEAR(m.stddev, sd, 0.01 * sd);
    EXPECT_LT(m.min, lo + 0.001);  // the whole range is reached
    EXPECT_GT(m.max, hi - 0.001);
  }
  // Positive scales: half in [0.5, 2).
  const HostBuffer h = make_host_buffer(plan("s", ElementType::f16, 10000, BufferInit::uniform, 0.5, 2), 7);
  std::vector<double> hv;
  for (const std::uint16_t bits : values<std::uint16_t>(h)) hv.push_back(half_bits_to_float(bits));
  const Moments m = moments(hv);
  EXPECT_GE(m.min, 0.5);
  EXPECT_LT(m.max, 2.0);
  EXPECT_NEAR(m.mean, 1.25, 0.02);
}

TEST(Generators, UniformIntegersCoverTheirRangeEvenly) {
  constexpr std::uint64_t n = 80000;
  const HostBuffer b = make_host_buffer(plan("k", ElementType::i32, n, BufferInit::uniform, -3, 5), 11);
  std::map<std::int32_t, int> histogram;
  for (const std::int32_t v : values<std::int32_t>(b)) ++histogram[v];
  ASSERT_EQ(histogram.size(), 8u);  // -3 .. 4, the high bound excluded
  EXPECT_EQ(histogram.begin()->first, -3);
  EXPECT_EQ(histogram.rbegin()->first, 4);
  for (const auto& [value, count] : histogram) EXPECT_NEAR(count, n / 8.0, 5 * std::sqrt(n / 8.0)) << value;

  const HostBuffer bytes = make_host_buffer(plan("b", ElementType::u8, 100000, BufferInit::uniform, 0, 256), 11);
  const auto bv = values<std::uint8_t>(bytes);
  EXPECT_EQ(std::set<std::uint8_t>(bv.begin(), bv.end()).size(), 256u);
  const HostBuffer big = make_host_buffer(plan("i", ElementType::i64, 1000, BufferInit::uniform, 1e12, 1e12 + 10), 11);
  for (const std::int64_t v : values<std::int64_t>(big)) {
    ASSERT_GE(v, 1000000000000ll);
    ASSERT_LT(v, 1000000000010ll);
  }
}

TEST(Generators, NormalHasItsMeanAndStandardDeviation) {
  constexpr std::uint64_t n = 200000;
  for (const ElementType type : {ElementType::f32, ElementType::f64}) {
    SCOPED_TRACE(element_type_name(type));
    const HostBuffer b = make_host_buffer(plan("g", type, n, BufferInit::normal, 2.0, 0.5), 5);
    const std::vector<double> v = [&] {
      if (type == ElementType::f64) return values<double>(b);
      const auto f = values<float>(b);
      return std::vector<double>(f.begin(), f.end());
    }();
    const Moments m = moments(v);
    EXPECT_NEAR(m.mean, 2.0, 4 * 0.5 / std::sqrt(double(n)));
    EXPECT_NEAR(m.stddev, 0.5, 0.005);
    const auto within = std::count_if(v.begin(), v.end(), [](double x) { return std::abs(x - 2.0) < 0.5; });
    EXPECT_NEAR(double(within) / double(n), 0.6827, 0.005);  // one standard deviation
    EXPECT_LT(m.min, 2.0 - 4 * 0.5);                         // the tails are there
    EXPECT_GT(m.max, 2.0 + 4 * 0.5);
    for (const double x : v) ASSERT_TRUE(std::isfinite(x));
  }
}

TEST(Generators, ConstantsAndIota) {
  const auto c = values<double>(make_host_buffer(plan("c", ElementType::f64, 100, BufferInit::constant, -0.125), 1));
  EXPECT_TRUE(std::all_of(c.begin(), c.end(), [](double x) { return x == -0.125; }));
  const auto ci = values<std::int32_t>(make_host_buffer(plan("c", ElementType::i32, 10, BufferInit::constant, 42), 1));
  EXPECT_TRUE(std::all_of(ci.begin(), ci.end(), [](std::int32_t x) { return x == 42; }));
  const auto ch = values<std::uint16_t>(make_host_buffer(plan("c", ElementType::f16, 3, BufferInit::constant, 0.5), 1));
  EXPECT_EQ(ch, std::vector<std::uint16_t>(3, 0x3800));
  const auto iota = values<std::int64_t>(make_host_buffer(plan("i", ElementType::i64, 5, BufferInit::iota), 1));
  EXPECT_EQ(iota, (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
}

struct CsrShape {
  std::uint64_t rows, columns, nnz;
};

// Offsets and columns of one shape, with offsets of `offset_type`.
std::pair<HostBuffer, HostBuffer> csr(const CsrShape& s, ElementType offset_type, ElementType column_type) {
  BufferPlan offsets = plan("row_ptr", offset_type, s.rows + 1, BufferInit::csr_offsets);
  offsets.init.rows = s.rows;
  offsets.init.columns = s.columns;
  offsets.init.nnz = s.nnz;
  BufferPlan columns = plan("col_idx", column_type, s.nnz, BufferInit::csr_columns);
  columns.init = offsets.init;
  columns.init.kind = BufferInit::csr_columns;
  columns.init.source = 0;
  HostBuffer o = make_host_buffer(offsets, 17);
  HostBuffer c = make_host_buffer(columns, 17, &o);
  return {std::move(o), std::move(c)};
}

TEST(Generators, CsrMatricesAreWellFormed) {
  const std::vector<CsrShape> shapes = {
      {1000, 50, 20000},      // dense-ish rows
      {7, 3, 21},             // completely full
      {1000, 1000000, 5000},  // very sparse, wide
      {333, 777, 0},          // empty
      {1, 100, 37},           // one row
      {4096, 4096, 4096 * 16},
  };
  for (const CsrShape& s : shapes) {
    for (const ElementType t : {ElementType::i32, ElementType::i64, ElementType::u32, ElementType::u64}) {
      SCOPED_TRACE(testing::Message() << s.rows << " x " << s.columns << ", nnz " << s.nnz << ", "
                                      << element_type_name(t));
      const auto [offsets_buffer, columns_buffer] = csr(s, t, t);
      const std::vector<std::int64_t> offsets = as_i64(offsets_buffer);
      const std::vector<std::int64_t> columns = as_i64(columns_buffer);
      ASSERT_EQ(offsets.size(), s.rows + 1);
      EXPECT_EQ(offsets.front(), 0);
      EXPECT_EQ(offsets.back(), static_cast<std::int64_t>(s.nnz));
      std::set<std::int64_t> lengths;
      for (std::uint64_t r = 0; r < s.rows; ++r) {
        const std::int64_t length = offsets[r + 1] - offsets[r];
        ASSERT_GE(length, 0) << "row " << r;
        ASSERT_LE(length, static_cast<std::int64_t>(s.columns)) << "row " << r;
        lengths.insert(length);
        for (std::int64_t k = offsets[r]; k < offsets[r + 1]; ++k) {
          ASSERT_GE(columns[k], 0);
          ASSERT_LT(columns[k], static_cast<std::int64_t>(s.columns));
          if (k > offsets[r]) ASSERT_LT(columns[k - 1], columns[k]) << "row " << r << ": sorted and distinct";
        }
      }
      // Rows vary in length where there is room to: a real sparse structure, not a band.
      if (s.rows >= 100 && s.nnz > 10 * s.rows && s.columns > 2 * s.nnz / s.rows) EXPECT_GT(lengths.size(), 5u);
    }
  }
}

TEST(Generators, CsrColumnsSpreadOverTheColumns) {
  const auto [offsets_buffer, columns_buffer] = csr({200, 10000, 200 * 50}, ElementType::i32, ElementType::i32);
  const std::vector<std::int64_t> columns = as_i64(columns_buffer);
  const Moments m = moments(columns);
  EXPECT_NEAR(m.mean, 5000, 200);
  EXPECT_LT(m.min, 200);
  EXPECT_GT(m.max, 9800);
}

TEST(Generators, CopiesAndMissingSources) {
  const HostBuffer x = make_host_buffer(plan("x", ElementType::f32, 100, BufferInit::normal, 0, 1), 3);
  BufferPlan y = plan("y", ElementType::f32, 100, BufferInit::copy);
  y.init.source = 0;
  EXPECT_EQ(make_host_buffer(y, 3, &x).bytes, x.bytes);
  EXPECT_THROW((void)make_host_buffer(y, 3), Error);
  BufferPlan shorter = y;
  shorter.count = 99;
  EXPECT_THROW((void)make_host_buffer(shorter, 3, &x), Error);
}

TEST(HalfFloat, TheGeneratorsConversionsRoundTrip) {
  for (const float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f})
    EXPECT_EQ(half_bits_to_float(float_to_half_bits(f)), f) << f;
  EXPECT_EQ(float_to_half_bits(1e6f), 0x7C00);            // overflow: inf
  EXPECT_EQ(float_to_half_bits(1.00048828125f), 0x3C00);  // halfway: to even
  EXPECT_TRUE(std::isnan(half_bits_to_float(0x7E00)));
}

}  // namespace
}  // namespace tiletune
