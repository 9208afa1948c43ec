// 256-bin histogram of n bytes into 256 uint32 counts, in one launch. Three ways to count,
// chosen by PRIVATE, each a step of the lesson:
//   PRIVATE=0: the textbook version: every byte is an atomicAdd on a global bin.
//   PRIVATE=1: each block counts into COPIES sub-histograms in shared memory, bin-major
//              (bins[b]; warp w uses copy w % COPIES, which spreads same-bin collisions), then
//              merges them with one global atomicAdd per non-empty bin. Its limit is the
//              shared-memory pipe, not DRAM: a warp's 32 random bytes land in 32 random bins,
//              and bins b and b + 32 share a bank, so one atomicAdd instruction takes about
//              3.5 bank passes on uniform data (more on skewed data: same-bin lanes serialize).
//   PRIVATE=2: lane columns: one block-wide set of counters laid out bins[b][lane] (256 x 32
//              words, 32 KiB), so lane l always adds into bank l: the 32 atomics of one warp
//              instruction hit 32 different banks and 32 different words, whatever the data
//              (one pass; no same-address collision inside a warp). Warps of the block share
//              the columns (the adds stay atomic for that). The merge sums the 32 columns of a
//              bin, reading them skewed ((b + c) % 32) so that a warp's reads also hit 32 banks.
// Input is read as uint4 (16 bytes per load, ITEMS loads in flight per thread, grid-stride);
// the last n % 16 bytes are a scalar tail. The global bins are the scratch buffer `acc`: the
// LAST block to finish (ticket from `counter` after a __threadfence) moves acc[] into out[]
// with atomicExch(acc[b], 0) and resets counter, so acc and counter are zero again for the
// next launch: only one zeroing at allocation is needed, repeated launches are correct, and
// all 256 bins of out are plain-written (a poisoned out is overwritten).
//
// Tunables (-D): PRIVATE (0/1/2), COPIES (sub-histograms per block, PRIVATE=1; 1 otherwise:
// the lane columns already take 32 KiB of the 48 KiB of static shared memory), BLOCK, ITEMS.
// The grid comes from the launch. n must be below 2^31 (so no 32-bit counter can overflow).
#ifndef PRIVATE
#define PRIVATE 1
#endif
#ifndef COPIES
#define COPIES 1
#endif
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 4
#endif

#define BINS 256
// Words between the counters of bins b and b + 1 in one sub-histogram: 32 in lane columns.
#if PRIVATE == 2
#define HG_STRIDE 32
#else
#define HG_STRIDE 1
#endif

// The four bytes of a word, each one count. (b * HG_STRIDE compiles to a shift and a mask.)
static __device__ __forceinline__ void count_word(unsigned int* bins, unsigned int w) {
  atomicAdd(&bins[(w & 0xFFu) * HG_STRIDE], 1u);
  atomicAdd(&bins[((w >> 8) & 0xFFu) * HG_STRIDE], 1u);
  atomicAdd(&bins[((w >> 16) & 0xFFu) * HG_STRIDE], 1u);
  atomicAdd(&bins[(w >> 24) * HG_STRIDE], 1u);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
histogram(const unsigned char* __restrict__ in, unsigned int* acc, unsigned int* counter,
          unsigned int* __restrict__ out, int n) {
  __shared__ bool am_last;
  const int tid = threadIdx.x;
#if PRIVATE == 1
  __shared__ unsigned int shared_bins[COPIES * BINS];
  for (int i = tid; i < COPIES * BINS; i += BLOCK) shared_bins[i] = 0u;
  __syncthreads();
  unsigned int* bins = shared_bins + ((tid / 32) % COPIES) * BINS;
#elif PRIVATE == 2
  // cols[b * 32 + lane]: this thread's counters are bins[b * 32], b = 0..255.
  __shared__ uint4 lane_cols[BINS * 32 / 4];
  for (int i = tid; i < BINS * 32 / 4; i += BLOCK) lane_cols[i] = make_uint4(0u, 0u, 0u, 0u);
  __syncthreads();
  unsigned int* cols = reinterpret_cast<unsigned int*>(lane_cols);
  unsigned int* bins = cols + (tid & 31);
#else
  unsigned int* bins = acc;
#endif

  const uint4* __restrict__ in16 = reinterpret_cast<const uint4*>(in);
  const long long n16 = n / 16;
  const long long chunk = static_cast<long long>(BLOCK) * ITEMS;
  const long long stride = static_cast<long long>(gridDim.x) * chunk;
  for (long long base = static_cast<long long>(blockIdx.x) * chunk + tid; base - tid < n16;
       base += stride) {
    // All ITEMS loads are issued before the first byte is counted: that is what keeps enough
    // bytes in flight to cover the DRAM latency.
    uint4 v[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const long long i = base + k * BLOCK;
      if (i < n16) v[k] = in16[i];
    }
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      if (base + k * BLOCK < n16) {
        count_word(bins, v[k].x);
        count_word(bins, v[k].y);
        count_word(bins, v[k].z);
        count_word(bins, v[k].w);
      }
    }
  }
  // The scalar tail: the last n % 16 bytes.
  const long long t = n16 * 16 + static_cast<long long>(blockIdx.x) * BLOCK + tid;
  if (t < n) atomicAdd(&bins[in[t] * HG_STRIDE], 1u);

#if PRIVATE == 1
  __syncthreads();
  for (int b = tid; b < BINS; b += BLOCK) {
    unsigned int sum = 0u;
#pragma unroll
    for (int c = 0; c < COPIES; ++c) sum += shared_bins[c * BINS + b];
    if (sum != 0u) atomicAdd(&acc[b], sum);
  }
#elif PRIVATE == 2
  __syncthreads();
  for (int b = tid; b < BINS; b += BLOCK) {
    unsigned int sum = 0u;
    // Column (b + c) % 32 of bin b: the 32 threads of a warp (consecutive b) read 32 banks.
#pragma unroll 8
    for (int c = 0; c < 32; ++c) sum += cols[b * 32 + ((b + c) & 31)];
    if (sum != 0u) atomicAdd(&acc[b], sum);
  }
#endif

  __threadfence();
  __syncthreads();
  if (tid == 0) am_last = atomicAdd(counter, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!am_last) return;
  __threadfence();
  for (int b = tid; b < BINS; b += BLOCK) out[b] = atomicExch(&acc[b], 0u);
  if (tid == 0) *counter = 0u;
}
