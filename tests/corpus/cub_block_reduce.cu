// Per-block sums with CUB's block primitive (cub::BlockReduce, as CUB's own examples use it):
// a kernel templated on its block size and items per thread, instantiated by the name
// expression block_reduce_sum<BLOCK, ITEMS>, and the reduction algorithm chosen by a text
// param (ALGO: RAKING or WARP_REDUCTIONS). The partials are checked by their sum against the
// built-in `reduction`.
// Planted bug (-DCORPUS_PLANT_BUG=1): the last block returns without writing its partial.
#include <cub/block/block_reduce.cuh>

#ifndef CORPUS_PLANT_BUG
#define CORPUS_PLANT_BUG 0
#endif
#define CORPUS_CAT(a, b) a##b
#define CORPUS_ALGORITHM(name) CORPUS_CAT(cub::BLOCK_REDUCE_, name)

template <int BLOCK_THREADS, int ITEMS_PER_THREAD>
__global__ void __launch_bounds__(BLOCK_THREADS) block_reduce_sum(const float* in, float* partials, int n) {
  using BlockReduce = cub::BlockReduce<float, BLOCK_THREADS, CORPUS_ALGORITHM(ALGO)>;
  __shared__ typename BlockReduce::TempStorage temp;
  if (CORPUS_PLANT_BUG && gridDim.x > 1 && blockIdx.x == gridDim.x - 1) return;
  float items[ITEMS_PER_THREAD];
  const int base = blockIdx.x * BLOCK_THREADS * ITEMS_PER_THREAD + threadIdx.x;
#pragma unroll
  for (int k = 0; k < ITEMS_PER_THREAD; ++k) {
    const int i = base + k * BLOCK_THREADS;  // striped: coalesced loads
    items[k] = i < n ? in[i] : 0.0f;
  }
  const float total = BlockReduce(temp).Sum(items);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}
