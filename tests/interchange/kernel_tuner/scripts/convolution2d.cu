// 2D convolution with a FW x FH filter, for convolution.py (Kernel Tuner's convolution_correct
// example written anew): the output is W x H, the input (W + FW - 1) x (H + FH - 1), row-major.
// convolution_naive reads the filter from its argument and is run once with run_kernel to make
// the answer; convolution_kernel reads it from __constant__ d_filter (cmem_args) and computes
// tile_size_x x tile_size_y outputs per thread, strided by the block; the edges are guarded.
#define FW 7
#define FH 7
// run_kernel compiles the whole file with the naive kernel's params only (block sizes).
#ifndef tile_size_x
#define tile_size_x 1
#endif
#ifndef tile_size_y
#define tile_size_y 1
#endif

__constant__ float d_filter[FW * FH];

__global__ void convolution_naive(float *output, const float *input, const float *filter, int W, int H) {
    int x = blockIdx.x * block_size_x + threadIdx.x;
    int y = blockIdx.y * block_size_y + threadIdx.y;
    if (x < W && y < H) {
        float sum = 0.0f;
        for (int j = 0; j < FH; j++)
            for (int i = 0; i < FW; i++)
                sum += input[(y + j) * (W + FW - 1) + x + i] * filter[j * FW + i];
        output[y * W + x] = sum;
    }
}

__global__ void convolution_kernel(float *output, const float *input, const float *filter, int W, int H) {
    int x0 = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
    int y0 = blockIdx.y * block_size_y * tile_size_y + threadIdx.y;
#pragma unroll
    for (int ty = 0; ty < tile_size_y; ty++) {
#pragma unroll
        for (int tx = 0; tx < tile_size_x; tx++) {
            int x = x0 + tx * block_size_x;
            int y = y0 + ty * block_size_y;
            if (x < W && y < H) {
                float sum = 0.0f;
                for (int j = 0; j < FH; j++)
                    for (int i = 0; i < FW; i++)
                        sum += input[(y + j) * (W + FW - 1) + x + i] * d_filter[j * FW + i];
                output[y * W + x] = sum;
            }
        }
    }
}
