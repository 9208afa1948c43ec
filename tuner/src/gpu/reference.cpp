// The CPU references of the shipped kernel families and the deterministic inputs shared by
// the host and the GPU worker. References are plain loops, written for obviousness rather
// than speed: they run once per problem, and a reference that is wrong makes every
// candidate wrong, so it must be easy to check by eye.
#include "tiletune/reference.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include <fmt/format.h>

namespace tiletune {
namespace {

// splitmix64: tiny, fast and good enough to fill test inputs; one step per element.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() noexcept {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

// FNV-1a of the buffer name, so that each buffer of a problem draws its own stream.
std::uint64_t name_hash(std::string_view name) noexcept {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (const char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ull;
  }
  return h;
}

// Uniform in [-1, 1): 24 (53) random bits, so every value is exact in the type.
float unit_float(std::uint64_t x) noexcept {
  return static_cast<float>(x >> 40) * 0x1p-23f - 1.0f;
}
double unit_double(std::uint64_t x) noexcept {
  return static_cast<double>(x >> 11) * 0x1p-52 - 1.0;
}

template <class T, class Gen>
void fill(HostBuffer& b, Gen gen) {
  auto elements = b.as<T>();
  for (std::size_t i = 0; i < elements.size(); ++i) elements[i] = gen(i);
}

const HostBuffer* find_buffer(const std::vector<HostBuffer>& buffers, std::string_view name) {
  for (const auto& b : buffers) {
    if (b.name == name) return &b;
  }
  return buffers.size() == 1 ? &buffers.front() : nullptr;
}

std::string buffer_names(const std::vector<HostBuffer>& buffers) {
  std::string names;
  for (const auto& b : buffers) names += (names.empty() ? "" : ", ") + b.name;
  return names.empty() ? "none" : names;
}

void require_count(const HostBuffer& b, std::uint64_t count, std::string_view reference) {
  if (b.count() < count) {
    throw Error(fmt::format("CPU reference '{}': buffer '{}' has {} elements, the problem needs {}",
                            reference, b.name, b.count(), count));
  }
}

std::uint64_t positive_size(const ReferenceArgs& args, std::string_view name,
                            std::string_view reference) {
  const std::int64_t n = args.size(name);
  if (n <= 0)
    throw Error(
        fmt::format("CPU reference '{}': size {} = {} must be positive", reference, name, n));
  return static_cast<std::uint64_t>(n);
}

// --- the references --------------------------------------------------------------------

// out[x][y] = in[y][x] for an N x N row-major matrix of floats.
void transpose_reference(const ReferenceArgs& args) {
  const std::uint64_t n = positive_size(args, "N", "transpose");
  const HostBuffer& in_buffer = args.input("in");
  HostBuffer& out_buffer = args.output("out");
  require_count(in_buffer, n * n, "transpose");
  require_count(out_buffer, n * n, "transpose");
  const auto in = in_buffer.as<const float>();
  const auto out = out_buffer.as<float>();
  for (std::uint64_t y = 0; y < n; ++y) {
    for (std::uint64_t x = 0; x < n; ++x) out[x * n + y] = in[y * n + x];
  }
}

// c[i] = a[i] + b[i] for i < N (N from the sizes, else the length of c).
template <class T>
void vector_add_typed(const HostBuffer& a_buffer, const HostBuffer& b_buffer, HostBuffer& c_buffer,
                      std::uint64_t n) {
  const auto a = a_buffer.as<const T>();
  const auto b = b_buffer.as<const T>();
  const auto c = c_buffer.as<T>();
  for (std::uint64_t i = 0; i < n; ++i) c[i] = static_cast<T>(a[i] + b[i]);
}

void vector_add_reference(const ReferenceArgs& args) {
  const HostBuffer& a = args.input("a");
  const HostBuffer& b = args.input("b");
  HostBuffer& c = args.output("c");
  const std::uint64_t n =
      args.sizes().contains("N") ? positive_size(args, "N", "vector_add") : c.count();
  for (const HostBuffer* buffer : {&a, &b, static_cast<const HostBuffer*>(&c)}) {
    require_count(*buffer, n, "vector_add");
  }
  switch (c.type) {
    case ElementType::f32: vector_add_typed<float>(a, b, c, n); break;
    case ElementType::f64: vector_add_typed<double>(a, b, c, n); break;
    case ElementType::i32: vector_add_typed<std::int32_t>(a, b, c, n); break;
    case ElementType::i64: vector_add_typed<std::int64_t>(a, b, c, n); break;
    default:
      throw Error(
          fmt::format("CPU reference 'vector_add': element type {} of '{}' is not supported",
                      static_cast<int>(c.type), c.name));
  }
}

// out[0] = the sum of in[0, N) (floats), accumulated in double and rounded once.
void reduction_reference(const ReferenceArgs& args) {
  const HostBuffer& in_buffer = args.input("in");
  HostBuffer& out_buffer = args.output("out");
  const std::uint64_t n =
      args.sizes().contains("N") ? positive_size(args, "N", "reduction") : in_buffer.count();
  require_count(in_buffer, n, "reduction");
  require_count(out_buffer, 1, "reduction");
  const auto in = in_buffer.as<const float>();
  double sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) sum += static_cast<double>(in[i]);
  out_buffer.as<float>()[0] = static_cast<float>(sum);
}

// out[i] = sum_{j=-R..R} in[i+j] / (2R+1) for i < N, in[] read as 0 outside [0, N); in double.
void stencil_1d_reference(const ReferenceArgs& args) {
  const std::uint64_t n = positive_size(args, "N", "stencil_1d");
  const std::int64_t r = args.size("R");
  if (r < 0)
    throw Error(fmt::format("CPU reference 'stencil_1d': radius R = {} must not be negative", r));
  const HostBuffer& in_buffer = args.input("in");
  HostBuffer& out_buffer = args.output("out");
  require_count(in_buffer, n, "stencil_1d");
  require_count(out_buffer, n, "stencil_1d");
  const auto in = in_buffer.as<const float>();
  const auto out = out_buffer.as<float>();
  const auto size = static_cast<std::int64_t>(n);
  const double w = 1.0 / static_cast<double>(2 * r + 1);
  for (std::int64_t i = 0; i < size; ++i) {
    double sum = 0;
    for (std::int64_t g = std::max<std::int64_t>(i - r, 0); g <= std::min(i + r, size - 1); ++g)
      sum += static_cast<double>(in[static_cast<std::size_t>(g)]);
    out[static_cast<std::size_t>(i)] = static_cast<float>(sum * w);
  }
}

// out[b] = the number of bytes equal to b in in[0, N), b < 256 (uint8 in, uint32 counts).
void histogram_reference(const ReferenceArgs& args) {
  const HostBuffer& in_buffer = args.input("in");
  HostBuffer& out_buffer = args.output("out");
  const std::uint64_t n =
      args.sizes().contains("N") ? positive_size(args, "N", "histogram") : in_buffer.count();
  require_count(in_buffer, n, "histogram");
  require_count(out_buffer, 256, "histogram");
  const auto in = in_buffer.as<const std::uint8_t>();
  const auto out = out_buffer.as<std::uint32_t>();
  std::fill(out.begin(), out.end(), 0u);
  for (std::uint64_t i = 0; i < n; ++i) ++out[in[i]];
}

// C = A * B for row-major float matrices (M x K times K x N), summed over k in order in
// double. For small sizes (tests): the shipped space checks matmul against a reference config.
void matmul_reference(const ReferenceArgs& args) {
  const std::uint64_t m = positive_size(args, "M", "matmul");
  const std::uint64_t n = positive_size(args, "N", "matmul");
  const std::uint64_t k = positive_size(args, "K", "matmul");
  const HostBuffer& a_buffer = args.input("A");
  const HostBuffer& b_buffer = args.input("B");
  HostBuffer& c_buffer = args.output("C");
  require_count(a_buffer, m * k, "matmul");
  require_count(b_buffer, k * n, "matmul");
  require_count(c_buffer, m * n, "matmul");
  const auto a = a_buffer.as<const float>();
  const auto b = b_buffer.as<const float>();
  const auto c = c_buffer.as<float>();
  std::vector<double> row(n);
  for (std::uint64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (std::uint64_t p = 0; p < k; ++p) {
      const double x = a[i * k + p];
      for (std::uint64_t j = 0; j < n; ++j) row[j] += x * static_cast<double>(b[p * n + j]);
    }
    for (std::uint64_t j = 0; j < n; ++j) c[i * n + j] = static_cast<float>(row[j]);
  }
}

// The registry: one line per family, sorted by name.
const std::vector<CpuReference>& registry() {
  static const std::vector<CpuReference> references = {
      {"histogram", "out[b] = count of bytes b in in[0, N) (256 uint32 bins)",
       histogram_reference},
      {"matmul", "C = A * B (row-major floats, M x K times K x N; small sizes)", matmul_reference},
      {"reduction", "out[0] = sum of in[0, N) (double accumulation)", reduction_reference},
      {"stencil_1d", "out[i] = sum_{|j|<=R} in[i+j] / (2R+1), zero outside [0, N)",
       stencil_1d_reference},
      {"transpose", "out[x*N+y] = in[y*N+x] (N x N floats)", transpose_reference},
      {"vector_add", "c[i] = a[i] + b[i]", vector_add_reference},
  };
  return references;
}

}  // namespace

std::size_t host_element_bytes(ElementType type) noexcept { return element_size(type); }

void HostBuffer::check_type(ElementType wanted) const {
  if (wanted != type) {
    throw Error(fmt::format("buffer '{}' holds element type {}, read as type {}", name,
                            static_cast<int>(type), static_cast<int>(wanted)));
  }
}

std::int64_t ReferenceArgs::size(std::string_view name) const {
  const auto it = sizes_.find(std::string(name));
  if (it == sizes_.end()) {
    std::string known;
    for (const auto& [key, value] : sizes_) known += (known.empty() ? "" : ", ") + key;
    throw Error(fmt::format("the CPU reference needs problem size '{}' (the problem has: {})", name,
                            known.empty() ? "none" : known));
  }
  return it->second;
}

const HostBuffer& ReferenceArgs::input(std::string_view name) const {
  if (const HostBuffer* b = find_buffer(inputs_, name)) return *b;
  throw Error(fmt::format("the CPU reference needs an input buffer '{}' (inputs: {})", name,
                          buffer_names(inputs_)));
}

HostBuffer& ReferenceArgs::output(std::string_view name) const {
  if (const HostBuffer* b = find_buffer(outputs_, name)) return const_cast<HostBuffer&>(*b);
  throw Error(fmt::format("the CPU reference needs an output buffer '{}' (outputs: {})", name,
                          buffer_names(outputs_)));
}

const CpuReference* find_cpu_reference(std::string_view name) {
  for (const auto& reference : registry()) {
    if (reference.name == name) return &reference;
  }
  return nullptr;
}

std::vector<std::string_view> cpu_reference_names() {
  std::vector<std::string_view> names;
  for (const auto& reference : registry()) names.push_back(reference.name);
  std::sort(names.begin(), names.end());
  return names;
}

HostBuffer make_host_buffer(const BufferPlan& plan, std::uint64_t seed) {
  HostBuffer b;
  b.name = plan.name;
  b.type = plan.type;
  b.bytes.assign(plan.count * host_element_bytes(plan.type), std::byte{0});
  if (plan.init == BufferInit::zero || plan.init == BufferInit::none) return b;

  if (plan.init == BufferInit::iota) {
    switch (plan.type) {
      case ElementType::f32:
        fill<float>(b, [](std::size_t i) { return static_cast<float>(i); });
        break;
      case ElementType::f64:
        fill<double>(b, [](std::size_t i) { return static_cast<double>(i); });
        break;
      case ElementType::i32:
        fill<std::int32_t>(b, [](std::size_t i) { return static_cast<std::int32_t>(i); });
        break;
      case ElementType::u32:
        fill<std::uint32_t>(b, [](std::size_t i) { return static_cast<std::uint32_t>(i); });
        break;
      case ElementType::i64:
        fill<std::int64_t>(b, [](std::size_t i) { return static_cast<std::int64_t>(i); });
        break;
      case ElementType::u8:
        fill<std::uint8_t>(b, [](std::size_t i) { return static_cast<std::uint8_t>(i); });
        break;
      case ElementType::f16:
        fill<std::uint16_t>(
            b, [](std::size_t i) { return float_to_half_bits(static_cast<float>(i)); });
        break;
    }
    return b;
  }

  // random
  SplitMix64 rng{seed ^ name_hash(plan.name)};
  rng.next();  // decorrelate neighbouring seeds before the first element
  switch (plan.type) {
    case ElementType::f32:
      fill<float>(b, [&](std::size_t) { return unit_float(rng.next()); });
      break;
    case ElementType::f64:
      fill<double>(b, [&](std::size_t) { return unit_double(rng.next()); });
      break;
    case ElementType::i32:
      fill<std::int32_t>(
          b, [&](std::size_t) { return static_cast<std::int32_t>(rng.next() >> 57) - 64; });
      break;
    case ElementType::u32:
      fill<std::uint32_t>(
          b, [&](std::size_t) { return static_cast<std::uint32_t>(rng.next() >> 57); });
      break;
    case ElementType::i64:
      fill<std::int64_t>(
          b, [&](std::size_t) { return static_cast<std::int64_t>(rng.next() >> 57) - 64; });
      break;
    case ElementType::u8:
      fill<std::uint8_t>(b,
                         [&](std::size_t) { return static_cast<std::uint8_t>(rng.next() >> 56); });
      break;
    case ElementType::f16:
      fill<std::uint16_t>(b,
                          [&](std::size_t) { return float_to_half_bits(unit_float(rng.next())); });
      break;
  }
  return b;
}

std::uint16_t float_to_half_bits(float value) noexcept {
  const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (f >> 16) & 0x8000u;
  const std::uint32_t exponent = (f >> 23) & 0xFFu;
  std::uint32_t mantissa = f & 0x7FFFFFu;
  if (exponent == 0xFF) {  // inf or NaN (keep NaN quiet)
    return static_cast<std::uint16_t>(sign | 0x7C00u | (mantissa != 0 ? 0x200u : 0u));
  }
  const int e = static_cast<int>(exponent) - 127 + 15;
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7C00u);  // overflow: inf
  if (e <= 0) {
    if (e < -10) return static_cast<std::uint16_t>(sign);  // underflows to zero
    // Subnormal half: shift the mantissa (with its implicit 1) right, rounding to even.
    mantissa |= 0x800000u;
    const int shift = 14 - e;
    std::uint32_t half = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u) != 0)) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = sign | (static_cast<std::uint32_t>(e) << 10) | (mantissa >> 13);
  const std::uint32_t rest = mantissa & 0x1FFFu;
  // Round to nearest even; a carry into the exponent is the right result (up to inf).
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u) != 0)) ++half;
  return static_cast<std::uint16_t>(half);
}

float half_bits_to_float(std::uint16_t bits) noexcept {
  const std::uint32_t sign = (static_cast<std::uint32_t>(bits) & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  const std::uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

}  // namespace tiletune
