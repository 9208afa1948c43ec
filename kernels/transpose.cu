// Matrix transpose through a shared-memory tile: out[x][y] = in[y][x] for an n x n matrix
// of floats (row-major). Reads and writes are both coalesced because the tile is read by
// rows and written by columns; PAD=1 makes the column reads of the tile hit 32 different
// banks (tile[32][33]) instead of one. Correct for any n: edge tiles are bounds-checked.
//
// Tunables (-D): TILE (tile edge, = blockDim.x), BLOCK_ROWS (= blockDim.y; each thread
// moves TILE / BLOCK_ROWS elements), PAD (0 or 1 extra column in the shared tile).
#ifndef TILE
#define TILE 32
#endif
#ifndef BLOCK_ROWS
#define BLOCK_ROWS 8
#endif
#ifndef PAD
#define PAD 1
#endif

extern "C" __global__ void __launch_bounds__(TILE * BLOCK_ROWS)
transpose(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float tile[TILE][TILE + PAD];

  const int x = blockIdx.x * TILE + threadIdx.x;
  const int y0 = blockIdx.y * TILE;
#pragma unroll
  for (int j = threadIdx.y; j < TILE; j += BLOCK_ROWS) {
    const int y = y0 + j;
    if (x < n && y < n) tile[j][threadIdx.x] = in[static_cast<size_t>(y) * n + x];
  }
  __syncthreads();

  // The block writes the mirrored tile: its columns become rows of the output.
  const int ox = blockIdx.y * TILE + threadIdx.x;
  const int oy0 = blockIdx.x * TILE;
#pragma unroll
  for (int j = threadIdx.y; j < TILE; j += BLOCK_ROWS) {
    const int oy = oy0 + j;
    if (ox < n && oy < n) out[static_cast<size_t>(oy) * n + ox] = tile[threadIdx.x][j];
  }
}
