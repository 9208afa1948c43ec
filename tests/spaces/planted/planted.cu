// A kernel with planted failures, one per MODE, to check that a sweep records each with its
// status and goes on: 0 good (out = 2 * in), 1 illegal address, 2 infinite loop, 3 __trap(),
// 4 wrong result, 5 good code launched with too much shared memory (pruned by the space),
// 6 a compile error.
#ifndef MODE
#define MODE 0
#endif

extern "C" __global__ void planted(const float* __restrict__ in, float* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
#if MODE == 1
  if (i == 0) out[static_cast<size_t>(1) << 40] = 1.0f;
#elif MODE == 2
  if (i == 0) {
    volatile int spin = 1;
    while (spin) {
    }
  }
#elif MODE == 3
  if (i == 0) __trap();
#elif MODE == 6
#error "planted compile error (MODE=6)"
#endif
  if (i < n) {
#if MODE == 4
    out[i] = in[i] * 2.0f + (i == n / 2 ? 1.0f : 0.0f);
#else
    out[i] = in[i] * 2.0f;
#endif
  }
}
