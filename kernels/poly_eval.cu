// out[i] = p(x[i]) for n floats, p a fixed degree-7 polynomial (the Taylor polynomial of exp):
// a bandwidth-bound map with enough arithmetic that the evaluation scheme shows, written to
// give the tuner a space of 10^7 configs whose every param changes the code and none the
// result (beyond rounding: the schemes round differently, within the space's rtol).
// Each block iteration moves a chunk of BLOCK * ITEMS vectors of VEC floats; a thread's ITEMS
// loads are issued before any store when PREFETCH=1, else each item is loaded, evaluated and
// stored in turn. Correct for any n: a chunk that runs past the end is bounds-checked per
// vector, and the last n % VEC elements (the scalar tail) are done by the first threads.
// Buffers from cuMemAlloc are 256-byte aligned, so float2/float4 accesses are aligned.
//
// Tunables (-D):
//   BLOCK      threads per block (a multiple of 32)
//   MINBLOCKS  the min blocks per SM of __launch_bounds__ (a register budget for the compiler)
//   ITEMS      vectors per thread per chunk;  UNROLL: the unroll factor of the item loops
//   VEC        1, 2 or 4: float, float2, float4 accesses
//   GRID_STRIDE, CHUNKS  0: one chunk per block; 1: a grid-stride loop, the launch giving
//              each block about CHUNKS chunks
//   LOAD       0 plain, 1 __ldg (read-only path), 2 __ldcs (streaming), 3 __ldlu (last use)
//   STORE      0 plain, 1 __stcs (streaming), 2 __stwt (write-through), 3 __stcg (L2 only)
//   EVAL       0 Horner with fma, 1 Horner with separate rounded multiply and add, 2 Estrin
//   PREFETCH   0/1 (see above);  INDEX64: 0 int, 1 long long index arithmetic
// n must be below 2^31.
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef MINBLOCKS
#define MINBLOCKS 1
#endif
#ifndef ITEMS
#define ITEMS 4
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef GRID_STRIDE
#define GRID_STRIDE 0
#endif
#ifndef LOAD
#define LOAD 0
#endif
#ifndef STORE
#define STORE 0
#endif
#ifndef EVAL
#define EVAL 0
#endif
#ifndef PREFETCH
#define PREFETCH 1
#endif
#ifndef INDEX64
#define INDEX64 0
#endif

#if BLOCK % 32 != 0
#error "BLOCK must be a multiple of 32"
#endif
#if VEC == 4
typedef float4 PE_vec;
#elif VEC == 2
typedef float2 PE_vec;
#elif VEC == 1
typedef float PE_vec;
#else
#error "VEC must be 1, 2 or 4"
#endif
#if INDEX64
typedef long long PE_index;
#else
typedef int PE_index;
#endif

#define PE_STR(x) #x
#define PE_PRAGMA_UNROLL(n) _Pragma(PE_STR(unroll n))

// 1 + x + x^2/2! + ... + x^7/7!
#define PE_C0 1.0f
#define PE_C1 1.0f
#define PE_C2 0.5f
#define PE_C3 0.16666667f
#define PE_C4 0.041666668f
#define PE_C5 0.008333334f
#define PE_C6 0.0013888889f
#define PE_C7 0.00019841270f

static __device__ __forceinline__ float pe_poly(float x) {
#if EVAL == 0
  float r = PE_C7;
  r = fmaf(r, x, PE_C6);
  r = fmaf(r, x, PE_C5);
  r = fmaf(r, x, PE_C4);
  r = fmaf(r, x, PE_C3);
  r = fmaf(r, x, PE_C2);
  r = fmaf(r, x, PE_C1);
  return fmaf(r, x, PE_C0);
#elif EVAL == 1
  float r = PE_C7;
  r = __fadd_rn(__fmul_rn(r, x), PE_C6);
  r = __fadd_rn(__fmul_rn(r, x), PE_C5);
  r = __fadd_rn(__fmul_rn(r, x), PE_C4);
  r = __fadd_rn(__fmul_rn(r, x), PE_C3);
  r = __fadd_rn(__fmul_rn(r, x), PE_C2);
  r = __fadd_rn(__fmul_rn(r, x), PE_C1);
  return __fadd_rn(__fmul_rn(r, x), PE_C0);
#elif EVAL == 2
  const float x2 = x * x;
  const float x4 = x2 * x2;
  const float p01 = fmaf(PE_C1, x, PE_C0), p23 = fmaf(PE_C3, x, PE_C2);
  const float p45 = fmaf(PE_C5, x, PE_C4), p67 = fmaf(PE_C7, x, PE_C6);
  return fmaf(fmaf(p67, x2, p45), x4, fmaf(p23, x2, p01));
#else
#error "EVAL must be 0, 1 or 2"
#endif
}

// Only the width in use is defined: NVRTC warns of an unused static function.
#if VEC == 1
static __device__ __forceinline__ float pe_apply(float v) { return pe_poly(v); }
#elif VEC == 2
static __device__ __forceinline__ float2 pe_apply(float2 v) { return make_float2(pe_poly(v.x), pe_poly(v.y)); }
#else
static __device__ __forceinline__ float4 pe_apply(float4 v) {
  return make_float4(pe_poly(v.x), pe_poly(v.y), pe_poly(v.z), pe_poly(v.w));
}
#endif

template <typename T>
static __device__ __forceinline__ T pe_load(const T* p) {
#if LOAD == 0
  return *p;
#elif LOAD == 1
  return __ldg(p);
#elif LOAD == 2
  return __ldcs(p);
#elif LOAD == 3
  return __ldlu(p);
#else
#error "LOAD must be 0 to 3"
#endif
}

template <typename T>
static __device__ __forceinline__ void pe_store(T* p, T v) {
#if STORE == 0
  *p = v;
#elif STORE == 1
  __stcs(p, v);
#elif STORE == 2
  __stwt(p, v);
#elif STORE == 3
  __stcg(p, v);
#else
#error "STORE must be 0 to 3"
#endif
}

extern "C" __global__ void __launch_bounds__(BLOCK, MINBLOCKS)
poly_eval(const float* __restrict__ x, float* __restrict__ out, int n) {
  const PE_vec* __restrict__ xv = reinterpret_cast<const PE_vec*>(x);
  PE_vec* __restrict__ ov = reinterpret_cast<PE_vec*>(out);
  const PE_index nv = n / VEC;  // whole vectors
  const PE_index chunk = static_cast<PE_index>(BLOCK) * ITEMS;
  const PE_index start = static_cast<PE_index>(blockIdx.x) * chunk + static_cast<PE_index>(threadIdx.x);
#if GRID_STRIDE
  const PE_index stride = static_cast<PE_index>(gridDim.x) * chunk;
  for (PE_index base = start; base - static_cast<PE_index>(threadIdx.x) < nv; base += stride) {
#else
  {
    const PE_index base = start;
#endif
    if (base - static_cast<PE_index>(threadIdx.x) + chunk <= nv) {  // the whole chunk is inside
#if PREFETCH
      PE_vec v[ITEMS];
      PE_PRAGMA_UNROLL(UNROLL)
      for (int k = 0; k < ITEMS; ++k) v[k] = pe_load(xv + base + k * BLOCK);
      PE_PRAGMA_UNROLL(UNROLL)
      for (int k = 0; k < ITEMS; ++k) pe_store(ov + base + k * BLOCK, pe_apply(v[k]));
#else
      PE_PRAGMA_UNROLL(UNROLL)
      for (int k = 0; k < ITEMS; ++k) pe_store(ov + base + k * BLOCK, pe_apply(pe_load(xv + base + k * BLOCK)));
#endif
    } else {
      PE_PRAGMA_UNROLL(UNROLL)
      for (int k = 0; k < ITEMS; ++k) {
        const PE_index i = base + k * BLOCK;
        if (i < nv) pe_store(ov + i, pe_apply(pe_load(xv + i)));
      }
    }
  }
#if VEC > 1
  // The scalar tail: fewer than VEC elements after the last whole vector.
  const PE_index i = nv * VEC + static_cast<PE_index>(blockIdx.x) * BLOCK + static_cast<PE_index>(threadIdx.x);
  if (i < n) out[i] = pe_poly(x[i]);
#endif
}
