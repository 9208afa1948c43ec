// y = a * x with ITEMS elements per thread: the kernel of the README's five-minute walkthrough.
// BLOCK and ITEMS are the params of scale.yaml; tiletune passes each as a macro (-DITEMS=4).
extern "C" __global__ void scale(const float* x, float* y, float a, int n) {
  const int first = blockIdx.x * blockDim.x * ITEMS + threadIdx.x;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int k = first + i * blockDim.x;
    if (k < n) y[k] = a * x[k];
  }
}
