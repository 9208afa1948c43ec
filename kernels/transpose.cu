// Matrix transpose through a shared-memory tile: out[x][y] = in[y][x] for an n x n matrix
// of floats (row-major). Reads and writes are both coalesced because the tile is read by
// rows and written by columns; PAD=1 makes the column reads of the tile hit 32 different
// banks (tile[32][33]) instead of one. Correct for any n: edge tiles are bounds-checked.
//
// Tunables (-D): TILE (tile edge), VEC (1, 2 or 4 floats per global access: blockDim.x is
// TILE / VEC, so a warp moves 16-byte pieces of a row instead of 4-byte ones), BLOCK_ROWS
// (= blockDim.y; each thread moves TILE / BLOCK_ROWS rows of VEC elements), PAD (the layout of
// the shared tile: 0 plain, 1 one extra column, 2 swizzled, see below).
//
// PAD=2, the swizzled tile (issue 38): padding breaks the 16-byte alignment of the tile's rows,
// so with PAD=1 every shared access is a 4-byte one, VEC of them per global float4. The
// swizzled tile has no padding: group g of VEC floats of row r is stored at group
// g ^ swz(r) of that row (an XOR with the row's number over VEC: a permutation inside the
// row, so a row is still VEC-aligned groups). Both phases then move VEC floats per shared access:
//  - load phase: a thread stores its VEC floats of an input row as one vector;
//  - store phase: a thread reads VEC rows of the tile (one vector each), which is a VEC x VEC
//    block, transposes it in registers and writes VEC output rows, one vector each.
// swz(r) = (r / VEC) % (a power of two up to 32 / VEC) spreads the groups that one wavefront
// reads (the same logical group of VEC consecutive rows, for 32 / VEC threads) over all 32
// banks. That is VEC times fewer shared-memory instructions than PAD=1 at VEC > 1, with no bank
// conflicts (for every shape but TILE=16 VEC=2, whose 8-group rows leave the tile reads 2-way
// conflicted; a Python model of the banks, not a profile, says so).
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
#if PAD < 0 || PAD > 2
#error "PAD must be 0, 1 or 2"
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

#if PAD == 2
// The swizzled tile: TT_GROUPS groups of VEC floats per row; swz(r) as in the header. The
// mask keeps g ^ swz(r) inside the row (TILE / VEC groups) and inside the 32 banks' worth of
// groups (32 / VEC) that one wavefront of vector accesses covers.
#define TT_GROUPS (TILE / VEC)
#define TT_SWZ_MASK ((TT_GROUPS < 32 / VEC ? TT_GROUPS : 32 / VEC) - 1)
__device__ __forceinline__ int tt_swz(int r) { return (r / VEC) & TT_SWZ_MASK; }

// VEC floats of one row from column x on: one vector access where the group lies inside the
// matrix and rows start on a VEC boundary, else element by element (zeros past the edge).
__device__ __forceinline__ tt_vec tt_load_group(const float* row, int x, int n, bool aligned) {
  tt_vec v;
  if (aligned && x + VEC <= n) {
    v = *reinterpret_cast<const tt_vec*>(row + x);
  } else {
#pragma unroll
    for (int k = 0; k < VEC; ++k) tt_lane(v, k) = x + k < n ? row[x + k] : 0.0f;
  }
  return v;
}

__device__ __forceinline__ void tt_store_group(float* row, int x, int n, bool aligned, tt_vec v) {
  if (aligned && x + VEC <= n) {
    *reinterpret_cast<tt_vec*>(row + x) = v;
  } else {
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      if (x + k < n) row[x + k] = tt_lane(v, k);
  }
}

__device__ __forceinline__ void transpose_swizzled(const float* __restrict__ in, float* __restrict__ out, int n) {
  // Declared as vectors so that the tile is VEC-aligned; tile[r * TT_GROUPS + g] is group g
  // (stored place) of row r.
  __shared__ tt_vec tile[TILE * TT_GROUPS];
  const bool aligned = (n % VEC) == 0;
  const int g = threadIdx.x;  // this thread's group of VEC columns (load phase) or rows (store phase)

  // Load phase: the thread's rows in batches of up to 8, every global load of a batch issued
  // before the first shared store, so that each thread keeps several loads in flight.
  constexpr int kRows = TILE / BLOCK_ROWS;
  constexpr int kBatch = kRows < 8 ? kRows : 8;
  const int x = blockIdx.x * TILE + g * VEC;
  const int y0 = blockIdx.y * TILE;
#pragma unroll
  for (int i0 = 0; i0 < kRows; i0 += kBatch) {
    tt_vec v[kBatch] = {};
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int y = y0 + threadIdx.y + (i0 + b) * BLOCK_ROWS;
      if (y < n) v[b] = tt_load_group(in + static_cast<size_t>(y) * n, x, n, aligned);
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int j = threadIdx.y + (i0 + b) * BLOCK_ROWS;  // rows past n are never read back
      if (y0 + j < n) tile[j * TT_GROUPS + (g ^ tt_swz(j))] = v[b];
    }
  }
  __syncthreads();

  // Store phase: the thread writes output rows oy0 + j .. + VEC - 1 at columns ox .. + VEC - 1,
  // which are the tile's rows g * VEC + k (k < VEC) at columns j .. j + VEC - 1, i.e. group
  // j / VEC of VEC consecutive rows. Those rows share swz = g & mask, so the VEC reads of one
  // thread and the same group read by the threads beside it land in different banks.
  const int ox = blockIdx.y * TILE + g * VEC;
  const int oy0 = blockIdx.x * TILE;
  constexpr int kQuads = (TT_GROUPS + BLOCK_ROWS - 1) / BLOCK_ROWS;  // groups of VEC rows per thread
#pragma unroll
  for (int i = 0; i < kQuads; ++i) {
    const int j = (threadIdx.y + i * BLOCK_ROWS) * VEC;
    if (j >= TILE) break;  // BLOCK_ROWS > TILE / VEC: the last threads have no rows here
    tt_vec a[VEC];
#pragma unroll
    for (int k = 0; k < VEC; ++k) a[k] = tile[(g * VEC + k) * TT_GROUPS + ((j / VEC) ^ tt_swz(g * VEC + k))];
#pragma unroll
    for (int m = 0; m < VEC; ++m) {  // output row oy0 + j + m is element m of each a[k]
      const int oy = oy0 + j + m;
      if (oy >= n) break;
      tt_vec o;
#pragma unroll
      for (int k = 0; k < VEC; ++k) tt_lane(o, k) = tt_lane(a[k], m);
      tt_store_group(out + static_cast<size_t>(oy) * n, ox, n, aligned, o);
    }
  }
}
#endif

extern "C" __global__ void __launch_bounds__((TILE / VEC) * BLOCK_ROWS)
transpose(const float* __restrict__ in, float* __restrict__ out, int n) {
#if PAD == 2
  transpose_swizzled(in, out, n);
#else
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
#endif  // PAD
}
