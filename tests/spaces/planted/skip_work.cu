// A planted bug for the physics guard (issue 24): out = 2 * in over n floats, ITEMS elements per
// thread, BLOCK apart. The configs with ITEMS >= 4 stop at the first n / ITEMS elements (a
// bound mistaken for the chunk count), so they do a quarter or an eighth of the work, and
// skip_work.yaml checks only the first 4096 elements of out, which they do compute: the check
// passes them, and they run 4 to 8 times faster than the copy allows. The physics guard must
// flag them `suspect` and never make one the best.
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 1
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
skip_work(const float* __restrict__ in, float* __restrict__ out, int n) {
  const long long limit = ITEMS >= 4 ? n / ITEMS : n;  // the planted bug: should be n
  const long long base = static_cast<long long>(blockIdx.x) * BLOCK * ITEMS + threadIdx.x;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const long long i = base + static_cast<long long>(k) * BLOCK;
    if (i < limit) out[i] = 2.0f * in[i];
  }
}
