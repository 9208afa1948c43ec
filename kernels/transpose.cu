// Matrix transpose through a shared-memory tile: out[x][y] = in[y][x] for an n x n matrix
// of floats (row-major). Reads and writes are both coalesced because the tile is read by
// rows and written by columns; PAD=1 makes the column reads of the tile hit 32 different
// banks (tile[32][33]) instead of one. Correct for any n: edge tiles are bounds-checked.
//
// Tunables (-D): TILE (tile edge), VEC (1, 2 or 4 floats per global access: blockDim.x is
// TILE / VEC, so a warp moves 16-byte pieces of a row instead of 4-byte ones), BLOCK_ROWS
// (= blockDim.y; each thread moves TILE / BLOCK_ROWS rows of VEC elements), PAD (0 or 1 extra
// column in the shared tile).
#ifndef TILE
#define TILE 32
#endif
#ifndef BLOCK_ROWS
#define BLOCK_ROWS 8
#endif
#ifndef PAD
#define PAD 1
#endif
#ifndef VEC
#define VEC 1
#endif

#if VEC == 4
typedef float4 tt_vec;
#elif VEC == 2
typedef float2 tt_vec;
#elif VEC == 1
typedef float tt_vec;
#else
#error "VEC must be 1, 2 or 4"
#endif

// Element k of a vector of VEC floats (the array view is how the compiler sees float2/float4).
__device__ __forceinline__ float& tt_lane(tt_vec& v, int k) { return reinterpret_cast<float*>(&v)[k]; }

extern "C" __global__ void __launch_bounds__((TILE / VEC) * BLOCK_ROWS)
transpose(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float tile[TILE][TILE + PAD];

  // Vector accesses need every row to start on a VEC boundary; otherwise each thread falls
  // back to VEC scalar accesses (same coalescing, more instructions).
  const bool aligned = (n % VEC) == 0;
  const int tx = threadIdx.x * VEC;  // first column of this thread inside the tile

  const int x = blockIdx.x * TILE + tx;
  const int y0 = blockIdx.y * TILE;
#pragma unroll
  for (int j = threadIdx.y; j < TILE; j += BLOCK_ROWS) {
    const int y = y0 + j;
    if (y >= n) break;
    const float* row = in + static_cast<size_t>(y) * n;
    if (aligned && x + VEC <= n) {
      tt_vec v = *reinterpret_cast<const tt_vec*>(row + x);
#pragma unroll
      for (int k = 0; k < VEC; ++k) tile[j][tx + k] = tt_lane(v, k);
    } else {
#pragma unroll
      for (int k = 0; k < VEC; ++k)
        if (x + k < n) tile[j][tx + k] = row[x + k];
    }
  }
  __syncthreads();

  // The block writes the mirrored tile: its columns become rows of the output.
  const int ox = blockIdx.y * TILE + tx;
  const int oy0 = blockIdx.x * TILE;
#pragma unroll
  for (int j = threadIdx.y; j < TILE; j += BLOCK_ROWS) {
    const int oy = oy0 + j;
    if (oy >= n) break;
    float* row = out + static_cast<size_t>(oy) * n;
    if (aligned && ox + VEC <= n) {
      tt_vec v;
#pragma unroll
      for (int k = 0; k < VEC; ++k) tt_lane(v, k) = tile[tx + k][j];
      *reinterpret_cast<tt_vec*>(row + ox) = v;
    } else {
#pragma unroll
      for (int k = 0; k < VEC; ++k)
        if (ox + k < n) row[ox + k] = tile[tx + k][j];
    }
  }
}
