// One explicit step of the 2D heat equation on a fixed grid (a 5-point Jacobi stencil), in
// the style of codes whose sizes are compile-time constants: NX and NY come from #define
// (the problem sizes, `problem_defines: true`), the diffusion number ALPHA from a real param
// (-DALPHA=0.125). Boundary cells keep their value. Each block stages its BX x BY tile and a
// one-cell halo in shared memory. heat_naive reads global memory: the reference kernel.
// Planted bug (-DCORPUS_PLANT_BUG=1): the right halo column of each tile is never loaded.
#ifndef CORPUS_PLANT_BUG
#define CORPUS_PLANT_BUG 0
#endif
#ifndef BX
#define BX 32  // the tunable's default when the file is built alone
#endif
#ifndef BY
#define BY 8  // the tunable's default when the file is built alone
#endif

__global__ void heat_tiled(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float tile[BY + 2][BX + 2];
  const int x = blockIdx.x * BX + threadIdx.x;
  const int y = blockIdx.y * BY + threadIdx.y;
  const int tx = threadIdx.x + 1;
  const int ty = threadIdx.y + 1;
  const bool inside = x < NX && y < NY;
  tile[ty][tx] = inside ? in[y * NX + x] : 0.0f;
  if (threadIdx.x == 0) tile[ty][0] = (inside && x > 0) ? in[y * NX + x - 1] : 0.0f;
  if (!CORPUS_PLANT_BUG && (threadIdx.x == BX - 1 || x == NX - 1))
    tile[ty][tx + 1] = (inside && x + 1 < NX) ? in[y * NX + x + 1] : 0.0f;
  if (threadIdx.y == 0) tile[0][tx] = (inside && y > 0) ? in[(y - 1) * NX + x] : 0.0f;
  if (threadIdx.y == BY - 1 || y == NY - 1) tile[ty + 1][tx] = (inside && y + 1 < NY) ? in[(y + 1) * NX + x] : 0.0f;
  __syncthreads();
  if (!inside) return;
  const float c = tile[ty][tx];
  if (x == 0 || y == 0 || x == NX - 1 || y == NY - 1) {
    out[y * NX + x] = c;
    return;
  }
  out[y * NX + x] = c + ALPHA * (tile[ty][tx - 1] + tile[ty][tx + 1] + tile[ty - 1][tx] + tile[ty + 1][tx] - 4.0f * c);
}

__global__ void heat_naive(const float* in, float* out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= NX || y >= NY) return;
  const float c = in[y * NX + x];
  if (x == 0 || y == 0 || x == NX - 1 || y == NY - 1) {
    out[y * NX + x] = c;
    return;
  }
  out[y * NX + x] = c + ALPHA * (in[y * NX + x - 1] + in[y * NX + x + 1] + in[(y - 1) * NX + x] + in[(y + 1) * NX + x] -
                                 4.0f * c);
}
