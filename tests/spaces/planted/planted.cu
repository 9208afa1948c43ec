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
  // Waits for a NaN that never comes (inputs are in [-1, 1)): a volatile local would be
  // optimized away, a read of global memory the compiler cannot see through is not.
  if (i == 0) {
    const volatile unsigned* first = reinterpret_cast<const volatile unsigned*>(in);
    while (*first != 0x7fc00001u) __nanosleep(1000);
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
