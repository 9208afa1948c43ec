// out = the transpose of in (n x n floats, row-major) through a shared-memory tile, for the
// capture example (examples/capture_app). Both global sides are coalesced; the tile's column
// reads hit one bank per row unless TT_PAD adds a column (tile[32][33]).
//
// Tunables (-D): TT_TILE (tile edge), TT_ROWS (blockDim.y: each thread moves TT_TILE / TT_ROWS
// elements of a column), TT_PAD (0 or 1).
#ifndef TT_TILE
#define TT_TILE 32
#endif
#ifndef TT_ROWS
#define TT_ROWS 8
#endif
#ifndef TT_PAD
#define TT_PAD 0
#endif

extern "C" __global__ void __launch_bounds__(TT_TILE * TT_ROWS)
tile_transpose(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float tile[TT_TILE][TT_TILE + TT_PAD];
  const int x = blockIdx.x * TT_TILE + threadIdx.x;
  for (int j = threadIdx.y; j < TT_TILE; j += TT_ROWS) {
    const int y = blockIdx.y * TT_TILE + j;
    if (x < n && y < n) tile[j][threadIdx.x] = in[static_cast<size_t>(y) * n + x];
  }
  __syncthreads();
  const int ox = blockIdx.y * TT_TILE + threadIdx.x;
  for (int j = threadIdx.y; j < TT_TILE; j += TT_ROWS) {
    const int oy = blockIdx.x * TT_TILE + j;
    if (ox < n && oy < n) out[static_cast<size_t>(oy) * n + ox] = tile[threadIdx.x][j];
  }
}
