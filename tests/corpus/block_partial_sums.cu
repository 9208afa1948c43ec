// A reduction that writes one partial sum per block, the first pass of a two-pass reduction
// (Harris, "Optimizing Parallel Reduction in CUDA": sequential addressing in shared memory,
// ITEMS elements added per thread while loading). The partials differ from config to config;
// only their sum is comparable: the space checks the sum of partials[0, blocks) against the
// built-in `reduction` (out[0] = the sum of the input).
// Planted bug (-DCORPUS_PLANT_BUG=1): the tree stops one step early, dropping half a block.
#ifndef CORPUS_PLANT_BUG
#define CORPUS_PLANT_BUG 0
#endif
#ifndef BLOCK
#define BLOCK 256  // the tunable's default when the file is built alone
#endif
#ifndef ITEMS
#define ITEMS 1  // the tunable's default when the file is built alone
#endif

extern "C" __global__ void block_partial_sums(const float* __restrict__ in, float* __restrict__ partials, int n) {
  __shared__ float share[BLOCK];
  const int base = blockIdx.x * BLOCK * ITEMS + threadIdx.x;
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int i = base + k * BLOCK;
    if (i < n) sum += in[i];
  }
  share[threadIdx.x] = sum;
  __syncthreads();
  for (int s = BLOCK / 2; s > CORPUS_PLANT_BUG; s >>= 1) {
    if (threadIdx.x < s) share[threadIdx.x] += share[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = share[0];
}
