// Sum of n floats into out[0], in one launch, the classic progression as VARIANT:
//   0  global atomics only: each thread sums its grid-stride elements in a register and
//      atomically adds that to its block's slot partials[blockIdx.x] (no shared memory, no
//      shuffles);
//   1  shared-memory tree per block (BLOCK a power of two), one partial per block;
//   2  warp-shuffle tree (__shfl_down_sync), then a shuffle over the warp sums;
//   3  as 2, with ITEMS float4 loads in flight per thread (grid-stride) and a scalar tail.
// The blocks' partials are combined by the LAST block to finish (threadfence reduction: each
// block publishes its partial, __threadfence(), then takes a ticket from `counter`; the block
// that draws gridDim.x - 1 sums partials[0, gridDim.x) in a fixed order and writes out[0]).
// That block also resets partials[] to 0 and counter to 0, so the kernel needs no zeroed
// buffer from the host except once at allocation: repeated launches (the timing loop) are
// all correct, out[0] is plain-written (a poisoned out is overwritten) and, for VARIANT 1-3,
// the result is deterministic for a given config.
//
// Tunables (-D): VARIANT, BLOCK (threads, a power of two >= 32), ITEMS (float4 per thread
// per step, VARIANT 3 only). The grid (blocks) is chosen by the launch: at most the number of
// partials (the space allocates 8192). n must be below 2^31.
#ifndef VARIANT
#define VARIANT 3
#endif
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 4
#endif

#define WARPS (BLOCK / 32)

static __device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// The sum of v over the block, valid in thread 0. s holds at least WARPS floats.
static __device__ __forceinline__ float block_sum_shuffle(float v, float* s) {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  v = warp_sum(v);
  if (lane == 0) s[warp] = v;
  __syncthreads();
  v = 0.0f;
  if (warp == 0) {
    v = lane < WARPS ? s[lane] : 0.0f;
    v = warp_sum(v);
  }
  return v;
}

// The sum of v over the block by a shared-memory tree, valid in thread 0. s holds BLOCK floats.
static __device__ __forceinline__ float block_sum_tree(float v, float* s) {
  s[threadIdx.x] = v;
  __syncthreads();
#pragma unroll
  for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  return s[0];
}

extern "C" __global__ void __launch_bounds__(BLOCK)
reduction(const float* __restrict__ in, float* partials, unsigned int* counter,
          float* __restrict__ out, int n) {
#if VARIANT == 1
  __shared__ float s[BLOCK];
#else
  __shared__ float s[WARPS > 32 ? WARPS : 32];
#endif
  __shared__ bool am_last;
  const int tid = threadIdx.x;

  // 1. Each thread's sum.
  float sum = 0.0f;
#if VARIANT <= 2
  const long long stride = static_cast<long long>(gridDim.x) * BLOCK;
  for (long long i = static_cast<long long>(blockIdx.x) * BLOCK + tid; i < n; i += stride)
    sum += in[i];
#else
  {
    const float4* __restrict__ in4 = reinterpret_cast<const float4*>(in);
    const long long n4 = n / 4;
    const long long chunk = static_cast<long long>(BLOCK) * ITEMS;
    const long long stride = static_cast<long long>(gridDim.x) * chunk;
    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (long long base = static_cast<long long>(blockIdx.x) * chunk + tid; base - tid < n4;
         base += stride) {
      float4 v[ITEMS];
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) {
        const long long i = base + k * BLOCK;
        v[k] = i < n4 ? in4[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) {
        acc.x += v[k].x;
        acc.y += v[k].y;
        acc.z += v[k].z;
        acc.w += v[k].w;
      }
    }
    sum = (acc.x + acc.y) + (acc.z + acc.w);
    // The scalar tail: the last n % 4 elements.
    const long long i = n4 * 4 + static_cast<long long>(blockIdx.x) * BLOCK + tid;
    if (i < n) sum += in[i];
  }
#endif

  // 2. The block's partial.
#if VARIANT == 0
  atomicAdd(&partials[blockIdx.x], sum);
#elif VARIANT == 1
  sum = block_sum_tree(sum, s);
  if (tid == 0) partials[blockIdx.x] = sum;
#else
  sum = block_sum_shuffle(sum, s);
  if (tid == 0) partials[blockIdx.x] = sum;
#endif

  // 3. Publish it, take a ticket; the last block finishes.
  __threadfence();
  __syncthreads();
  if (tid == 0) am_last = atomicAdd(counter, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!am_last) return;
  __threadfence();
  volatile float* p = partials;
  float total = 0.0f;
  for (int i = tid; i < static_cast<int>(gridDim.x); i += BLOCK) {
    total += p[i];
    p[i] = 0.0f;  // ready for the next launch (VARIANT 0 accumulates into it)
  }
  total = block_sum_shuffle(total, s);
  if (tid == 0) {
    out[0] = total;
    *counter = 0u;  // ready for the next launch
  }
}
