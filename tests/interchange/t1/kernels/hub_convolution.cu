// A 2D convolution in the style of the FAIR benchmark hub's convolution (for the T1 import
// fixture hub_convolution.json): the filter in constant memory, tiles of tile_size_x x
// tile_size_y outputs per thread; compiled by the tests, not tuned.
__constant__ float d_filter[filter_height * filter_width];

extern "C" __global__ void convolution_kernel(float* output, const float* input) {
  const int x0 = (blockIdx.x * block_size_x + threadIdx.x) * tile_size_x;
  const int y0 = (blockIdx.y * block_size_y + threadIdx.y) * tile_size_y;
  const int w = 4096 + filter_width - 1;
  for (int ty = 0; ty < tile_size_y; ++ty)
    for (int tx = 0; tx < tile_size_x; ++tx) {
      const int x = x0 + tx, y = y0 + ty;
      if (x >= 4096 || y >= 4096) continue;
      float sum = 0;
      for (int i = 0; i < filter_height; ++i)
        for (int j = 0; j < filter_width; ++j) sum += input[(y + i) * w + x + j] * d_filter[i * filter_width + j];
      output[y * 4096 + x] = use_padding ? sum : sum;
    }
}
