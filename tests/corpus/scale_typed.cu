// out[i] = alpha * in[i], a kernel templated on its element type the way libraries write them
// (float, double and half, chosen by the text param T: entry scale<T>, the buffers follow it;
// alpha is a float, converted to the type). Arithmetic goes through float for half
// (cuda_fp16.h), the others in their own type. scale_naive<T> is the reference kernel; it runs
// with the candidate's type.
// Planted bug (-DCORPUS_PLANT_BUG=1): the last element is copied, not scaled.
#include <cuda_fp16.h>

#ifndef CORPUS_PLANT_BUG
#define CORPUS_PLANT_BUG 0
#endif
#ifndef ITEMS
#define ITEMS 1  // the tunable's default when the file is built alone
#endif

template <class V>
struct Arith {
  static __device__ V mul(float a, V b) { return static_cast<V>(a) * b; }
};
template <>
struct Arith<__half> {
  static __device__ __half mul(float a, __half b) { return __float2half(a * __half2float(b)); }
};

template <class V>
__global__ void scale(const V* __restrict__ in, V* __restrict__ out, float alpha, int n) {
  const int first = (blockIdx.x * blockDim.x + threadIdx.x) * ITEMS;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int i = first + k;
    if (i >= n) break;
    out[i] = (CORPUS_PLANT_BUG && i == n - 1) ? in[i] : Arith<V>::mul(alpha, in[i]);
  }
}

template <class V>
__global__ void scale_naive(const V* in, V* out, float alpha, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = Arith<V>::mul(alpha, in[i]);
}
