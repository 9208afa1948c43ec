// y = a * x + y in place, for the capture example (examples/capture_app). Each block covers
// BLOCK * ITEMS consecutive elements; thread t of a block does elements t, t + BLOCK, ... so that
// every access of a warp is coalesced whatever ITEMS is.
//
// Tunables (-D): BLOCK (threads per block), ITEMS (elements per thread).
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 1
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
scale_add(const float* __restrict__ x, float* __restrict__ y, float a, int n) {
  const long long base = static_cast<long long>(blockIdx.x) * (BLOCK * ITEMS) + threadIdx.x;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const long long i = base + static_cast<long long>(k) * BLOCK;
    if (i < n) y[i] = a * x[i] + y[i];
  }
}
