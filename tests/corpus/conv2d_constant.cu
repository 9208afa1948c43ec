// 2D convolution with its filter in __constant__ memory, the classic CUDA optimisation (the
// weights are read by every thread of a warp at once: the constant cache broadcasts them):
// out[y][x] = sum over |dy|, |dx| <= RADIUS of w[dy][dx] * in[y - dy][x - dx], zero outside
// the image. The filter sits in a namespace (the module symbol is conv::weights, mangled);
// RADIUS is a compile-time size (-DRADIUS from the problem, `problem_defines: true`). Each
// block stages a TILE_X x TILE_Y tile and its halo in shared memory. conv2d_naive reads
// global memory directly: the reference kernel.
// Planted bug (-DCORPUS_PLANT_BUG=1): the filter is not flipped (a correlation, not a convolution).
#ifndef CORPUS_PLANT_BUG
#define CORPUS_PLANT_BUG 0
#endif
#ifndef TILE_X
#define TILE_X 32  // the tunable's default when the file is built alone
#endif
#ifndef TILE_Y
#define TILE_Y 8  // the tunable's default when the file is built alone
#endif
#define CONV_TAPS (2 * RADIUS + 1)

namespace conv {
__constant__ float weights[CONV_TAPS * CONV_TAPS];
}

// w[dy][dx], the filter's element at offset (dy, dx), stored row-major from (-RADIUS, -RADIUS).
__device__ __forceinline__ float conv_weight(int dy, int dx) {
#if CORPUS_PLANT_BUG
  return conv::weights[(RADIUS - dy) * CONV_TAPS + (RADIUS - dx)];
#else
  return conv::weights[(RADIUS + dy) * CONV_TAPS + (RADIUS + dx)];
#endif
}

__global__ void conv2d_tiled(const float* __restrict__ in, float* __restrict__ out, int width, int height) {
  __shared__ float tile[TILE_Y + 2 * RADIUS][TILE_X + 2 * RADIUS];
  const int x0 = blockIdx.x * TILE_X;
  const int y0 = blockIdx.y * TILE_Y;
  for (int ty = threadIdx.y; ty < TILE_Y + 2 * RADIUS; ty += TILE_Y) {
    for (int tx = threadIdx.x; tx < TILE_X + 2 * RADIUS; tx += TILE_X) {
      const int gx = x0 + tx - RADIUS;
      const int gy = y0 + ty - RADIUS;
      tile[ty][tx] = (gx >= 0 && gx < width && gy >= 0 && gy < height) ? in[gy * width + gx] : 0.0f;
    }
  }
  __syncthreads();
  const int x = x0 + threadIdx.x;
  const int y = y0 + threadIdx.y;
  if (x >= width || y >= height) return;
  float sum = 0.0f;
  for (int dy = -RADIUS; dy <= RADIUS; ++dy)
    for (int dx = -RADIUS; dx <= RADIUS; ++dx)
      sum += conv_weight(dy, dx) * tile[threadIdx.y + RADIUS - dy][threadIdx.x + RADIUS - dx];
  out[y * width + x] = sum;
}

__global__ void conv2d_naive(const float* in, float* out, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  float sum = 0.0f;
  for (int dy = -RADIUS; dy <= RADIUS; ++dy) {
    for (int dx = -RADIUS; dx <= RADIUS; ++dx) {
      const int gx = x - dx;
      const int gy = y - dy;
      const float v = (gx >= 0 && gx < width && gy >= 0 && gy < height) ? in[gy * width + gx] : 0.0f;
      sum += conv::weights[(RADIUS + dy) * CONV_TAPS + (RADIUS + dx)] * v;
    }
  }
  out[y * width + x] = sum;
}
