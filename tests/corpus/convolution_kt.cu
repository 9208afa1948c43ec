// A 2D convolution the size of Kernel Tuner's convolution example (its examples/cuda/
// convolution.cu, rewritten here from its public description): a FILTER_H x FILTER_W filter
// (17 x 17 in the space) in __constant__ memory, an image whose input is given with its border
// ((WIDTH + FILTER_W - 1) x (HEIGHT + FILTER_H - 1) floats, so no output needs a bounds test
// on the input), and Kernel Tuner's six tunables: block_size_x, block_size_y (the thread
// block), tile_size_x, tile_size_y (outputs per thread in x and y, block_size apart so that a
// warp's loads stay contiguous), use_padding (one extra float per shared-memory row, against
// bank conflicts) and read_only (input loads through the read-only cache, __ldg). Each block
// stages its tile and border in dynamic shared memory (up to 190 KB: the sweep raises the
// limit past 48 KB). out[y][x] = sum over i < FILTER_H, j < FILTER_W of
// in[y + i][x + j] * d_filter[i][j], the cross-correlation Kernel Tuner computes.
// convolution_naive reads global memory directly: the reference kernel.
// Planted bug (-DCORPUS_PLANT_BUG=1): the filter is read transposed (d_filter[j][i]).
#ifndef CORPUS_PLANT_BUG
#define CORPUS_PLANT_BUG 0
#endif
#ifndef FILTER_W
#define FILTER_W 17  // the space's filter when the file is built alone
#endif
#ifndef FILTER_H
#define FILTER_H 17
#endif
#ifndef block_size_x
#define block_size_x 16  // the tunables' defaults when the file is built alone
#endif
#ifndef block_size_y
#define block_size_y 16
#endif
#ifndef tile_size_x
#define tile_size_x 1
#endif
#ifndef tile_size_y
#define tile_size_y 1
#endif
#ifndef use_padding
#define use_padding 0
#endif
#ifndef read_only
#define read_only 0
#endif

#define KT_TILE_W (block_size_x * tile_size_x + FILTER_W - 1)
#define KT_TILE_H (block_size_y * tile_size_y + FILTER_H - 1)
#define KT_ROW (KT_TILE_W + use_padding)  // floats per shared-memory row

__constant__ float d_filter[FILTER_H * FILTER_W];

__device__ __forceinline__ float filter_at(int i, int j) {
#if CORPUS_PLANT_BUG
  return d_filter[j * FILTER_W + i];
#else
  return d_filter[i * FILTER_W + j];
#endif
}

__device__ __forceinline__ float load_input(const float* p) {
#if read_only
  return __ldg(p);
#else
  return *p;
#endif
}

extern "C" __global__ void convolution_kernel(float* out, const float* __restrict__ in, int width, int height) {
  extern __shared__ float sh_input[];
  const int in_width = width + FILTER_W - 1;
  const int in_height = height + FILTER_H - 1;
  const int x0 = blockIdx.x * block_size_x * tile_size_x;
  const int y0 = blockIdx.y * block_size_y * tile_size_y;
  // The block's tile and its border; the last blocks of a row or column stop at the input's edge.
  const int rows = min(KT_TILE_H, in_height - y0);
  const int columns = min(KT_TILE_W, in_width - x0);
  for (int i = threadIdx.y; i < rows; i += block_size_y)
    for (int j = threadIdx.x; j < columns; j += block_size_x)
      sh_input[i * KT_ROW + j] = load_input(in + (y0 + i) * in_width + (x0 + j));
  __syncthreads();

  float sum[tile_size_y][tile_size_x];
  for (int yi = 0; yi < tile_size_y; ++yi)
    for (int xi = 0; xi < tile_size_x; ++xi) sum[yi][xi] = 0.0f;
  for (int i = 0; i < FILTER_H; ++i) {
    for (int j = 0; j < FILTER_W; ++j) {
      const float w = filter_at(i, j);
      for (int yi = 0; yi < tile_size_y; ++yi)
        for (int xi = 0; xi < tile_size_x; ++xi)
          sum[yi][xi] += sh_input[(threadIdx.y + yi * block_size_y + i) * KT_ROW + threadIdx.x + xi * block_size_x + j] * w;
    }
  }
  for (int yi = 0; yi < tile_size_y; ++yi) {
    for (int xi = 0; xi < tile_size_x; ++xi) {
      const int y = y0 + threadIdx.y + yi * block_size_y;
      const int x = x0 + threadIdx.x + xi * block_size_x;
      if (y < height && x < width) out[y * width + x] = sum[yi][xi];
    }
  }
}

extern "C" __global__ void convolution_naive(float* out, const float* in, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  const int in_width = width + FILTER_W - 1;
  float sum = 0.0f;
  for (int i = 0; i < FILTER_H; ++i)
    for (int j = 0; j < FILTER_W; ++j) sum += in[(y + i) * in_width + (x + j)] * d_filter[i * FILTER_W + j];
  out[y * width + x] = sum;
}
