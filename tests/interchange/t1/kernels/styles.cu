// A kernel for the T1 import fixture python_styles.json: one argument of each numeric T1 type,
// a float and a double scalar, items_per_thread outputs per thread of element type `real`.
#include <cuda_fp16.h>

extern "C" __global__ void styles(real* out, const signed char* a, const short* b, const unsigned short* c,
                                  const long long* d, const unsigned long long* e, const __half* f,
                                  const unsigned char* g, const float4* h, float alpha, double beta, long long n) {
  const long long first = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * items_per_thread;
  for (int k = 0; k < items_per_thread; ++k) {
    const long long i = first + k;
    if (i >= n) return;
    out[i] = static_cast<real>(alpha * a[i] + beta * b[i] + c[i] + d[i] + e[i] + __half2float(f[i]) + g[i] + h[i / 4].x);
  }
}
