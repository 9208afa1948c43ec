// c[i] = a[i] + b[i] for n floats: the bandwidth lesson. Each block iteration moves a chunk
// of BLOCK * ITEMS vectors of VEC floats; the ITEMS loads of a thread are issued before any
// store (memory-level parallelism), consecutive threads touch consecutive vectors (coalesced).
// Correct for any n: a chunk that runs past the end is bounds-checked per vector, and the
// last n % VEC elements (the scalar tail) are done by the first threads of the grid.
// Buffers from cuMemAlloc are 256-byte aligned, so float2/float4 accesses are aligned.
//
// Tunables (-D): BLOCK (threads per block), ITEMS (vectors per thread per chunk), VEC (1, 2
// or 4: float, float2, float4 accesses), GRID_STRIDE (0: the grid covers the array once, one
// chunk per block; 1: a grid-stride loop over the array with the grid the launch gives,
// min(GRID, chunks) blocks). n must be below 2^31.
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 4
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef GRID_STRIDE
#define GRID_STRIDE 0
#endif

#if VEC == 4
typedef float4 vec_t;
#elif VEC == 2
typedef float2 vec_t;
#elif VEC == 1
typedef float vec_t;
#else
#error "VEC must be 1, 2 or 4"
#endif

static __device__ __forceinline__ float vadd(float x, float y) { return x + y; }
static __device__ __forceinline__ float2 vadd(float2 x, float2 y) {
  return make_float2(x.x + y.x, x.y + y.y);
}
static __device__ __forceinline__ float4 vadd(float4 x, float4 y) {
  return make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
vector_add(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  const vec_t* __restrict__ av = reinterpret_cast<const vec_t*>(a);
  const vec_t* __restrict__ bv = reinterpret_cast<const vec_t*>(b);
  vec_t* __restrict__ cv = reinterpret_cast<vec_t*>(c);
  const long long nv = n / VEC;  // whole vectors
  const long long chunk = static_cast<long long>(BLOCK) * ITEMS;
  const long long start = static_cast<long long>(blockIdx.x) * chunk + threadIdx.x;
#if GRID_STRIDE
  const long long stride = static_cast<long long>(gridDim.x) * chunk;
  for (long long base = start; base - threadIdx.x < nv; base += stride) {
#else
  {
    const long long base = start;
#endif
    if (base - threadIdx.x + chunk <= nv) {  // the whole chunk is inside: no checks
      vec_t x[ITEMS], y[ITEMS];
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) {
        x[k] = av[base + k * BLOCK];
        y[k] = bv[base + k * BLOCK];
      }
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) cv[base + k * BLOCK] = vadd(x[k], y[k]);
    } else {
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) {
        const long long i = base + k * BLOCK;
        if (i < nv) cv[i] = vadd(av[i], bv[i]);
      }
    }
  }
#if VEC > 1
  // The scalar tail: fewer than VEC elements after the last whole vector.
  const long long i = nv * VEC + static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
#endif
}
