// A histogram of integers drawn uniformly from [0, BINS) (an integer range), with private
// bins in shared memory merged into the global counts by atomics, the standard optimisation
// of the CUDA samples' histogram. The counts start at zero (`init: zero` on the output: the
// kernel adds to it, so it is restored to zeros before every launch). histogram_global, one
// global atomic per element, is the reference kernel.
// Planted bug (-DCORPUS_PLANT_BUG=1): the last bin is never merged into the global counts.
#ifndef CORPUS_PLANT_BUG
#define CORPUS_PLANT_BUG 0
#endif

__global__ void histogram_shared(const int* __restrict__ data, unsigned* __restrict__ counts, int n, int bins) {
  extern __shared__ unsigned local[];
  for (int b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;
  __syncthreads();
  const int stride = gridDim.x * blockDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < bins - CORPUS_PLANT_BUG; b += blockDim.x)
    if (local[b] != 0) atomicAdd(&counts[b], local[b]);
}

__global__ void histogram_global(const int* data, unsigned* counts, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&counts[data[i]], 1u);
}
