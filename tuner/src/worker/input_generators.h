// The input generators, counter-based: the value of element i of a buffer follows from its
// kind, its parameters, its stream (the run's seed and the buffer's name) and i alone, so that
// each element is computed without the others. The same text compiles twice: with NVRTC for
// the device (the worker fills a 1 GiB buffer in milliseconds, one thread per element; see
// worker_kernels.cpp) and as C++ on the host (make_host_buffer and the CPU tests of the
// generators' properties). Plain C++ that NVRTC takes without headers: no std, and of the math
// library only log, sqrt and cos (normal), whose last bit may differ between the two sides;
// every other kind is bit-identical on host and device.
#ifndef TILETUNE_INPUT_GENERATORS_H
#define TILETUNE_INPUT_GENERATORS_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define TT_GEN_FN __host__ __device__ __forceinline__
#else
#include <math.h>
#include <string.h>
#define TT_GEN_FN inline
#endif

namespace tiletune_gen {

typedef unsigned long long u64;
typedef long long i64;

/// The generated kinds (zero, none, file and copy need no generator).
enum Kind { kind_random = 1, kind_iota, kind_constant, kind_uniform, kind_normal, kind_csr_offsets, kind_csr_columns };
/// Element types, in the order of tiletune::ElementType.
enum Type { type_f32 = 0, type_f64, type_i32, type_u32, type_i64, type_u8, type_f16, type_i8, type_i16, type_u16, type_u64 };

/// Everything a generator reads; passed by value to the kernel (same layout on both sides).
struct Params {
  u64 count;         ///< elements to write
  u64 stream;        ///< seed ^ hash(name)
  u64 rows;          ///< csr: rows of the matrix
  u64 columns;       ///< csr: columns of the matrix
  u64 nnz;           ///< csr: stored entries
  double a;          ///< constant: the value; uniform: low bound; normal: mean
  double b;          ///< uniform: high bound (excluded); normal: standard deviation
  const void* offsets;  ///< csr_columns: the row offsets (rows + 1 elements)
  int kind;
  int type;
  int offsets_type;  ///< csr_columns: the element type of `offsets`
  int unused;
};

/// splitmix64's output function.
TT_GEN_FN u64 mix(u64 z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Draw `counter` of a stream: splitmix64's (counter + 2)-th output, so that element i of
/// `random` is what a sequential splitmix64 seeded with `stream` gives after one discarded step.
TT_GEN_FN u64 draw(u64 stream, u64 counter) {
  return mix(stream + (counter + 2) * 0x9E3779B97F4A7C15ull);
}

/// Uniform in [-1, 1) from 24 (53) random bits: every value is exact in the type.
TT_GEN_FN float unit_float(u64 x) { return (float)(x >> 40) * 0x1p-23f - 1.0f; }
TT_GEN_FN double unit_double(u64 x) { return (double)(x >> 11) * 0x1p-52 - 1.0; }
/// Uniform in [0, 1) and (0, 1].
TT_GEN_FN double unit_half_open(u64 x) { return (double)(x >> 11) * 0x1p-53; }
TT_GEN_FN double unit_open_low(u64 x) { return (double)((x >> 11) + 1) * 0x1p-53; }

TT_GEN_FN unsigned float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  unsigned u;
  memcpy(&u, &f, sizeof u);
  return u;
#endif
}

/// The float an IEEE half stands for (exact).
TT_GEN_FN float half_value(unsigned short h) {
  const unsigned sign = (unsigned)(h & 0x8000u) << 16;
  const unsigned exponent = (h >> 10) & 0x1Fu;
  const unsigned mantissa = h & 0x3FFu;
  unsigned bits;
  if (exponent == 0) {
    const float magnitude = (float)mantissa * 0x1p-24f;
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 31) {
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent - 15 + 127) << 23) | (mantissa << 13);
  }
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

/// IEEE half bits of a float, rounded to nearest even.
TT_GEN_FN unsigned short half_bits(float value) {
  const unsigned f = float_bits(value);
  const unsigned sign = (f >> 16) & 0x8000u;
  const unsigned exponent = (f >> 23) & 0xFFu;
  unsigned mantissa = f & 0x7FFFFFu;
  if (exponent == 0xFF) return (unsigned short)(sign | 0x7C00u | (mantissa != 0 ? 0x200u : 0u));
  const int e = (int)exponent - 127 + 15;
  if (e >= 31) return (unsigned short)(sign | 0x7C00u);  // overflow: inf
  if (e <= 0) {
    if (e < -10) return (unsigned short)sign;  // underflows to zero
    // A subnormal half: the mantissa with its implicit 1, shifted right, rounded to even.
    mantissa |= 0x800000u;
    const int shift = 14 - e;
    unsigned half = mantissa >> shift;
    const unsigned rest = mantissa & ((1u << shift) - 1u);
    const unsigned halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u) != 0)) ++half;
    return (unsigned short)(sign | half);
  }
  unsigned half = sign | ((unsigned)e << 10) | (mantissa >> 13);
  const unsigned rest = mantissa & 0x1FFFu;
  // A carry into the exponent is the right result (up to inf).
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u) != 0)) ++half;
  return (unsigned short)half;
}

// --- CSR ----------------------------------------------------------------------------------
// Row offsets: base(r) = floor(r * nnz / rows) spreads the entries evenly; every inner offset
// moves up by a random jitter in [0, J], J = min(nnz / rows, columns - ceil(nnz / rows)), so
// that row lengths vary from about 0 to twice the mean while the offsets stay non-decreasing
// (a step loses at most J), start at 0, end at nnz and no row holds more than `columns`.

TT_GEN_FN u64 csr_base(u64 r, u64 rows, u64 nnz) {
  const u64 q = nnz / rows;
  const u64 rem = nnz % rows;
  return r * q + (r * rem) / rows;  // floor(r * nnz / rows) without overflow for rows < 2^32
}

TT_GEN_FN u64 csr_offset(const Params& p, u64 r) {
  if (p.rows == 0) return 0;
  if (r >= p.rows) return p.nnz;
  if (r == 0) return 0;
  const u64 q = p.nnz / p.rows;
  const u64 longest = q + (p.nnz % p.rows != 0 ? 1 : 0);
  const u64 room = p.columns > longest ? p.columns - longest : 0;
  const u64 jitter = q < room ? q : room;
  return csr_base(r, p.rows, p.nnz) + draw(p.stream, r) % (jitter + 1);
}

TT_GEN_FN u64 load_offset(const Params& p, u64 r) {
  switch (p.offsets_type) {
    case type_i32: return (u64)((const int*)p.offsets)[r];
    case type_u32: return (u64)((const unsigned*)p.offsets)[r];
    case type_u64: return ((const u64*)p.offsets)[r];
    default: return (u64)((const i64*)p.offsets)[r];
  }
}

// Column j of the stored entries: its row by binary search in the offsets, then one column per
// stratum: entry k of a row of length L takes a column in [k * columns / L, (k + 1) * columns / L),
// so a row's columns are sorted, distinct and in [0, columns). Entries past nnz are 0.
TT_GEN_FN u64 csr_column(const Params& p, u64 j) {
  if (j >= p.nnz || p.rows == 0) return 0;
  u64 lo = 0, hi = p.rows;  // the row r with offsets[r] <= j < offsets[r + 1]
  while (hi - lo > 1) {
    const u64 mid = lo + (hi - lo) / 2;
    if (load_offset(p, mid) <= j) lo = mid; else hi = mid;
  }
  const u64 start = load_offset(p, lo);
  const u64 length = load_offset(p, lo + 1) - start;
  const u64 k = j - start;
  const u64 first = k * p.columns / length;
  const u64 end = (k + 1) * p.columns / length;
  return first + draw(p.stream, j) % (end - first);
}

// --- one element ----------------------------------------------------------------------------

/// The value of element i of a floating or non-random kind, before conversion to the type.
TT_GEN_FN double real_value(const Params& p, u64 i) {
  switch (p.kind) {
    case kind_iota: return (double)i;
    case kind_constant: return p.a;
    case kind_uniform: return p.a + (p.b - p.a) * unit_half_open(draw(p.stream, i));
    case kind_normal: {
      const double u1 = unit_open_low(draw(p.stream, 2 * i));
      const double u2 = unit_half_open(draw(p.stream, 2 * i + 1));
      return p.a + p.b * (sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
    }
    default: return 0;
  }
}

/// The value of element i of an integer kind, before conversion to the type.
TT_GEN_FN i64 integer_value(const Params& p, u64 i) {
  switch (p.kind) {
    case kind_iota: return (i64)i;
    case kind_constant: return (i64)p.a;
    case kind_uniform: {
      const i64 low = (i64)p.a;
      const u64 range = (u64)((i64)p.b - low);
      return low + (i64)(draw(p.stream, i) % (range == 0 ? 1 : range));
    }
    case kind_csr_offsets: return (i64)csr_offset(p, i);
    case kind_csr_columns: return (i64)csr_column(p, i);
    default: return 0;
  }
}

TT_GEN_FN bool floating(int type) { return type == type_f32 || type == type_f64 || type == type_f16; }

/// Writes element i of the buffer at `out`. `random` gives floats in [-1, 1) and small
/// integers: signed ones in [-64, 64), unsigned ones in [0, 128), except uint8, whose bytes
/// take all 256 values. Integer kinds convert to the type modulo 2^bits (iota wraps).
TT_GEN_FN void generate_element(const Params& p, u64 i, void* out) {
  if (p.kind == kind_random) {
    const u64 x = draw(p.stream, i);
    switch (p.type) {
      case type_f32: ((float*)out)[i] = unit_float(x); return;
      case type_f64: ((double*)out)[i] = unit_double(x); return;
      case type_i32: ((int*)out)[i] = (int)(x >> 57) - 64; return;
      case type_u32: ((unsigned*)out)[i] = (unsigned)(x >> 57); return;
      case type_i64: ((i64*)out)[i] = (i64)(x >> 57) - 64; return;
      case type_u8: ((unsigned char*)out)[i] = (unsigned char)(x >> 56); return;
      case type_f16: ((unsigned short*)out)[i] = half_bits(unit_float(x)); return;
      case type_i8: ((signed char*)out)[i] = (signed char)((int)(x >> 57) - 64); return;
      case type_i16: ((short*)out)[i] = (short)((int)(x >> 57) - 64); return;
      case type_u16: ((unsigned short*)out)[i] = (unsigned short)(x >> 57); return;
      case type_u64: ((u64*)out)[i] = x >> 57; return;
    }
    return;
  }
  if (floating(p.type)) {
    const double v = real_value(p, i);
    switch (p.type) {
      case type_f32: {
        float f = (float)v;
        // Rounding to float may reach the excluded upper bound of a uniform: take the low one.
        if (p.kind == kind_uniform && (double)f >= p.b) f = (float)p.a;
        ((float*)out)[i] = f;
        return;
      }
      case type_f64: ((double*)out)[i] = (p.kind == kind_uniform && v >= p.b) ? p.a : v; return;
      default: {
        unsigned short h = half_bits((float)v);
        if (p.kind == kind_uniform && (double)half_value(h) >= p.b) h = half_bits((float)p.a);
        ((unsigned short*)out)[i] = h;
        return;
      }
    }
  }
  const i64 v = integer_value(p, i);
  switch (p.type) {
    case type_i32: ((int*)out)[i] = (int)v; return;
    case type_u32: ((unsigned*)out)[i] = (unsigned)v; return;
    case type_i64: ((i64*)out)[i] = v; return;
    case type_u8: ((unsigned char*)out)[i] = (unsigned char)v; return;
    case type_i8: ((signed char*)out)[i] = (signed char)v; return;
    case type_i16: ((short*)out)[i] = (short)v; return;
    case type_u16: ((unsigned short*)out)[i] = (unsigned short)v; return;
    case type_u64: ((u64*)out)[i] = (u64)v; return;
  }
}

}  // namespace tiletune_gen

#if defined(__CUDACC_RTC__)
// One thread per element, grid-stride: a grid that fills the device, whatever the count.
extern "C" __global__ void __launch_bounds__(256) tiletune_generate(void* out, tiletune_gen::Params p) {
  const tiletune_gen::u64 stride = (tiletune_gen::u64)gridDim.x * blockDim.x;
  for (tiletune_gen::u64 i = (tiletune_gen::u64)blockIdx.x * blockDim.x + threadIdx.x; i < p.count; i += stride)
    tiletune_gen::generate_element(p, i, out);
}
#endif

#endif  // TILETUNE_INPUT_GENERATORS_H
