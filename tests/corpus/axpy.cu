// axpy (BLAS level 1): y = a * x + y for n floats, in the style of a hand-written CUDA library:
// C++ linkage (no extern "C": tiletune finds the entry by its name), a float scalar, y updated
// in place, ITEMS elements per thread in a grid-stride loop. axpy_naive, one element per
// thread, is the reference kernel of the same file.
// Planted bug (-DCORPUS_PLANT_BUG=1): the last element is never updated.
#ifndef CORPUS_PLANT_BUG
#define CORPUS_PLANT_BUG 0
#endif
#ifndef ITEMS
#define ITEMS 1  // the tunable's default when the file is built alone
#endif

__global__ void axpy(float a, const float* __restrict__ x, float* __restrict__ y, int n) {
  const int stride = gridDim.x * blockDim.x * ITEMS;
  for (int base = blockIdx.x * blockDim.x * ITEMS + threadIdx.x; base < n; base += stride) {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const int i = base + k * blockDim.x;
      if (i < n - CORPUS_PLANT_BUG) y[i] = a * x[i] + y[i];
    }
  }
}

__global__ void axpy_naive(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
