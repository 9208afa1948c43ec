// A placeholder kernel for the T1 import fixture convolution.json (not tuned by the tests).
extern "C" __global__ void convolution_kernel(float* output, const float* input, const float* filter) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 4096 && y < 4096) output[y * 4096 + x] = input[(y + 8) * 4112 + x + 8] * filter[144];
}
