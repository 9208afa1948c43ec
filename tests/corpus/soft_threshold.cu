// The soft-thresholding operator of ISTA-type solvers, applied in place:
// x[i] = sign(x[i]) * max(|x[i]| - t, 0), with the threshold t a float argument. The buffer is
// an output initialised from an input (`init: {copy: ...}`), restored before every launch; the
// input comes from an .npy file and the expected output from another (`verify: {files: ...}`):
// data made outside tiletune (tests/corpus/data, see test_corpus.cpp). VEC elements per
// thread through float2/float4 accesses, the tail one by one.
// Planted bug (-DCORPUS_PLANT_BUG=1): the sign is lost (|x| shrunk, negatives come out positive).
#ifndef CORPUS_PLANT_BUG
#define CORPUS_PLANT_BUG 0
#endif
#ifndef VEC
#define VEC 1  // the tunable's default when the file is built alone
#endif

__device__ __forceinline__ float shrink(float v, float t) {
  const float magnitude = fmaxf(fabsf(v) - t, 0.0f);
  return CORPUS_PLANT_BUG ? magnitude : copysignf(magnitude, v);
}

template <int W>
struct Vec;
template <>
struct Vec<1> { typedef float T; };
template <>
struct Vec<2> { typedef float2 T; };
template <>
struct Vec<4> { typedef float4 T; };

__device__ __forceinline__ void shrink_all(float& v, float t) { v = shrink(v, t); }
__device__ __forceinline__ void shrink_all(float2& v, float t) {
  v.x = shrink(v.x, t);
  v.y = shrink(v.y, t);
}
__device__ __forceinline__ void shrink_all(float4& v, float t) {
  v.x = shrink(v.x, t);
  v.y = shrink(v.y, t);
  v.z = shrink(v.z, t);
  v.w = shrink(v.w, t);
}

extern "C" __global__ void soft_threshold(float* x, float t, int n) {
  typedef Vec<VEC>::T V;
  const int vectors = n / VEC;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < vectors) {
    V v = reinterpret_cast<V*>(x)[i];
    shrink_all(v, t);
    reinterpret_cast<V*>(x)[i] = v;
  }
  const int tail = vectors * VEC + i;  // the n % VEC elements past the last vector
  if (tail < n && i < VEC) x[tail] = shrink(x[tail], t);
}
