// 1D stencil: out[i] = w * sum_{j=-r..r} in[i+j] with w = 1 / (2r + 1), in[] read as 0 outside
// [0, n) (the box filter, summed tap by tap as a general stencil would be). r is a runtime
// argument (the problem size R).
//   SHARED=0: the textbook version: each thread computes ITEMS outputs BLOCK apart (coalesced),
//             each reading its 2r + 1 inputs from global memory (the L1 catches the reuse).
//   SHARED=1: the block stages its BLOCK*ITEMS inputs plus an r-wide halo on each side in
//             shared memory (coalesced loads, zeros outside the array); each thread then
//             computes ITEMS consecutive outputs from a register window of ITEMS + 2r inputs
//             (float4 shared loads when ITEMS % 4 == 0), so each input is read from shared
//             memory about (ITEMS + 2r) / ITEMS times instead of 2r + 1. Radii 1, 2, 3, 4, 8
//             and 16 have unrolled code; any other r takes a generic loop.
// Correct at both ends of the array and for any n (bounds checks on every global access).
//
// Tunables (-D): SHARED (0/1), BLOCK (threads), ITEMS (outputs per thread).
// Dynamic shared memory (SHARED=1): (BLOCK * ITEMS + 2 * r + 4) floats. n must be below 2^31.
#ifndef SHARED
#define SHARED 1
#endif
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 4
#endif
// Dynamic shared memory, declared through a macro so that a host-side test harness can
// provide it.
#ifndef TT_DYNAMIC_SHARED
#define TT_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#endif

#define TILE_OUT (BLOCK * ITEMS)

#if SHARED
// Outputs o0 .. o0 + ITEMS - 1 of this block (o0 = threadIdx.x * ITEMS) from the staged tile,
// where tile[k] holds in[base - r + k]: output o needs tile[o .. o + 2r].
template <int R>
static __device__ __forceinline__ void window(const float* tile, float* __restrict__ out, int base,
                                              int n, float w) {
  constexpr int kWin = ITEMS + 2 * R;
  float v[kWin];
  const int o0 = threadIdx.x * ITEMS;
#if ITEMS % 4 == 0
  constexpr int kVec = (kWin + 3) / 4;
  float4 t[kVec];
  const float4* tile4 = reinterpret_cast<const float4*>(tile + o0);
#pragma unroll
  for (int q = 0; q < kVec; ++q) t[q] = tile4[q];
#pragma unroll
  for (int q = 0; q < kWin; ++q) {
    const float4 x = t[q / 4];
    v[q] = (q % 4 == 0) ? x.x : (q % 4 == 1) ? x.y : (q % 4 == 2) ? x.z : x.w;
  }
#else
#pragma unroll
  for (int q = 0; q < kWin; ++q) v[q] = tile[o0 + q];
#endif
  float acc[ITEMS];
#pragma unroll
  for (int m = 0; m < ITEMS; ++m) {
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j <= 2 * R; ++j) s += v[m + j];
    acc[m] = s * w;
  }
  const int i0 = base + o0;
#if ITEMS % 4 == 0
  if (i0 + ITEMS <= n) {
#pragma unroll
    for (int m = 0; m < ITEMS; m += 4)
      *reinterpret_cast<float4*>(out + i0 + m) =
          make_float4(acc[m], acc[m + 1], acc[m + 2], acc[m + 3]);
    return;
  }
#endif
#pragma unroll
  for (int m = 0; m < ITEMS; ++m)
    if (i0 + m < n) out[i0 + m] = acc[m];
}
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
stencil_1d(const float* __restrict__ in, float* __restrict__ out, int n, int r) {
  const float w = 1.0f / static_cast<float>(2 * r + 1);
  const int base = blockIdx.x * TILE_OUT;
#if !SHARED
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int i = base + k * BLOCK + threadIdx.x;
    if (i < n) {
      float s = 0.0f;
      for (int j = -r; j <= r; ++j) {
        const int g = i + j;
        if (g >= 0 && g < n) s += in[g];
      }
      out[i] = s * w;
    }
  }
#else
  TT_DYNAMIC_SHARED(float4, tile_storage);
  float* tile = reinterpret_cast<float*>(tile_storage);
  // Stage in[base - r, base + TILE_OUT + r + 4) (4 floats of slack for the float4 window).
  const int first = base - r;
#pragma unroll
  for (int q = 0; q < ITEMS; ++q) {
    const int k = q * BLOCK + threadIdx.x;
    const int g = first + k;
    tile[k] = (g >= 0 && g < n) ? in[g] : 0.0f;
  }
  for (int k = TILE_OUT + threadIdx.x; k < TILE_OUT + 2 * r + 4; k += BLOCK) {
    const int g = first + k;
    tile[k] = (g >= 0 && g < n) ? in[g] : 0.0f;
  }
  __syncthreads();
  switch (r) {
    case 1: window<1>(tile, out, base, n, w); break;
    case 2: window<2>(tile, out, base, n, w); break;
    case 3: window<3>(tile, out, base, n, w); break;
    case 4: window<4>(tile, out, base, n, w); break;
    case 8: window<8>(tile, out, base, n, w); break;
    case 16: window<16>(tile, out, base, n, w); break;
    default: {
      const int o0 = threadIdx.x * ITEMS;
      for (int m = 0; m < ITEMS; ++m) {
        const int i = base + o0 + m;
        if (i >= n) break;
        float s = 0.0f;
        for (int j = 0; j <= 2 * r; ++j) s += tile[o0 + m + j];
        out[i] = s * w;
      }
    }
  }
#endif
}
