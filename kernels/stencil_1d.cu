// 1D stencil: out[i] = w * sum_{j=-r..r} in[i+j] with w = 1 / (2r + 1), in[] read as 0 outside
// [0, n) (the box filter, summed tap by tap as a general stencil would be). r is a runtime
// argument (the problem size R).
//   SHARED=0: the textbook version: each thread computes ITEMS outputs BLOCK apart (coalesced),
//             each reading its 2r + 1 inputs from global memory (the L1 catches the reuse).
//   SHARED=1: the block stages its BLOCK*ITEMS inputs plus an r-wide halo on each side in
//             shared memory (zeros outside the array); each thread then computes ITEMS
//             consecutive outputs from a register window of ITEMS + 2r inputs, so each input
//             is read from shared memory about (ITEMS + 2r) / ITEMS times instead of 2r + 1.
//             With ITEMS % 4 == 0 the body of the tile is staged with 16-byte global loads
//             (float4: a quarter of the load instructions) and the window is read with float4
//             shared loads. Radii 1, 2, 3, 4, 8 and 16 have unrolled code; any other r takes a
//             generic loop.
//   SHARED=2: as SHARED=1, but the tile leaves 4 floats unused after every 32. A thread's window
//             starts ITEMS floats after its neighbour's, so with ITEMS = 8 or 16 the float4
//             window loads of the 8 lanes that share a shared-memory pass start on the same
//             few banks (2- and 4-way conflicts); the skew moves every 32 floats 4 banks on,
//             which spreads them over all 32 banks. With ITEMS = 4 it costs nothing and
//             gains nothing. (A value of SHARED rather than a param of its own, so that the
//             recordings of the earlier space stay points of this one.)
// Wide radii are where the choices matter: at r = 16 each output is 33 adds, so the kernel
// must overlap that arithmetic with the DRAM traffic (occupancy against the registers of a
// long window) and keep the window's shared-memory reads few (large ITEMS) and unconflicted
// (SHARED=2).
// Correct at both ends of the array and for any n (bounds checks on every global access).
//
// Tunables (-D): SHARED (0/1/2), BLOCK (threads), ITEMS (outputs per thread).
// Dynamic shared memory: L floats for SHARED=1, L + 4 * ceil(L / 32) for SHARED=2, where
// L = BLOCK * ITEMS + 2r + 4.
// n must be below 2^31.
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
// Where logical tile element k lives: 4 floats of skew after every 32 with SHARED=2. Groups of
// 4 aligned floats stay together and aligned, so float4 accesses keep working.
#if SHARED == 2
#define ST_AT(k) ((k) + 4 * ((k) >> 5))
#else
#define ST_AT(k) (k)
#endif

#if SHARED
// Outputs o0 .. o0 + ITEMS - 1 of this block (o0 = threadIdx.x * ITEMS) from the staged tile,
// where logical tile[k] holds in[base - r + k]: output o needs tile[o .. o + 2r].
template <int R>
static __device__ __forceinline__ void window(const float* tile, float* __restrict__ out, int base,
                                              int n, float w) {
  constexpr int kWin = ITEMS + 2 * R;
  float v[kWin];
  const int o0 = threadIdx.x * ITEMS;
#if ITEMS % 4 == 0
  constexpr int kVec = (kWin + 3) / 4;
#pragma unroll
  for (int q = 0; q < kVec; ++q) {
    const float4 x = *reinterpret_cast<const float4*>(tile + ST_AT(o0 + 4 * q));
    if (4 * q + 0 < kWin) v[4 * q + 0] = x.x;
    if (4 * q + 1 < kWin) v[4 * q + 1] = x.y;
    if (4 * q + 2 < kWin) v[4 * q + 2] = x.z;
    if (4 * q + 3 < kWin) v[4 * q + 3] = x.w;
  }
#else
#pragma unroll
  for (int q = 0; q < kWin; ++q) v[q] = tile[ST_AT(o0 + q)];
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
  // Stage logical tile[k] = in[base - r + k] for k in [0, TILE_OUT + 2r + 4) (4 floats of slack
  // for the float4 window): the body in[base, base + TILE_OUT) at k = r + m, then the halos.
#if ITEMS % 4 == 0
  // The body in float4s: base is a multiple of 4, so these loads are 16-byte aligned. All
  // ITEMS / 4 loads are issued before the first store to shared memory.
  float4 body[ITEMS / 4];
#pragma unroll
  for (int q = 0; q < ITEMS / 4; ++q) {
    const int g = base + 4 * (q * BLOCK + threadIdx.x);
    if (g + 4 <= n) {
      body[q] = *reinterpret_cast<const float4*>(in + g);
    } else {  // the end of the array
      body[q].x = g + 0 < n ? in[g + 0] : 0.0f;
      body[q].y = g + 1 < n ? in[g + 1] : 0.0f;
      body[q].z = g + 2 < n ? in[g + 2] : 0.0f;
      body[q].w = g + 3 < n ? in[g + 3] : 0.0f;
    }
  }
#pragma unroll
  for (int q = 0; q < ITEMS / 4; ++q) {
    const int k = r + 4 * (q * BLOCK + threadIdx.x);
    if (r % 4 == 0) {  // the group of 4 stays aligned in the tile: one 16-byte store
      *reinterpret_cast<float4*>(tile + ST_AT(k)) = body[q];
    } else {
      tile[ST_AT(k + 0)] = body[q].x;
      tile[ST_AT(k + 1)] = body[q].y;
      tile[ST_AT(k + 2)] = body[q].z;
      tile[ST_AT(k + 3)] = body[q].w;
    }
  }
#else
#pragma unroll
  for (int q = 0; q < ITEMS; ++q) {
    const int m = q * BLOCK + threadIdx.x;
    const int g = base + m;
    tile[ST_AT(r + m)] = g < n ? in[g] : 0.0f;
  }
#endif
  // The halos: r floats before the body, r + 4 after it.
  for (int h = threadIdx.x; h < 2 * r + 4; h += BLOCK) {
    const int k = h < r ? h : TILE_OUT + h;
    const int g = base - r + k;
    tile[ST_AT(k)] = (g >= 0 && g < n) ? in[g] : 0.0f;
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
        for (int j = 0; j <= 2 * r; ++j) s += tile[ST_AT(o0 + m + j)];
        out[i] = s * w;
      }
    }
  }
#endif
}
