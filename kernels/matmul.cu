// FP32 SGEMM, row-major: C[M][N] = A[M][K] * B[K][N] (no alpha/beta), fp32 FFMA only.
// Each block computes a BM x BN tile of C, stepping over K in slices of BK: the A slice is
// stored transposed in shared memory (As[k][m], so that a thread's TM rows are one float4
// read), the B slice as is (Bs[k][n]). Each thread accumulates a TM x TN register tile: per k
// it reads TM values of A and TN of B from shared memory and does TM*TN FFMAs. A thread's
// rows (columns) are groups of 4 consecutive ones, 4*TY (4*TX) apart, so that the float4
// shared reads of a warp hit consecutive addresses (no bank conflicts) and the block's
// threads cover the tile exactly.
//   VEC=4: float4 global loads (and C stores) where the 4 elements are in bounds and the row
//          length allows it (K % 4 == 0 for A, N % 4 == 0 for B and C); else scalar.
//   PAD:   extra floats per shared row (0 or 4, keeping float4 alignment) against the bank
//          conflicts of the transposed A stores.
//   PREFETCH=1: two shared stages; the next slice is loaded from global memory into
//          registers while the current one is multiplied (one __syncthreads per slice).
// Correct for any M, N, K: loads outside the matrices read 0 and stores are bounds-checked.
//
// Tunables (-D): BM, BN, BK, TM, TN (TM, TN multiples of 4; BM % TM == BN % TN == 0),
// PAD, VEC (1 or 4; BK % VEC == 0), PREFETCH. Threads per block: (BM/TM) * (BN/TN).
// Dynamic shared memory: (PREFETCH + 1) * BK * (BM + BN + 2 * PAD) * 4 bytes.
// Launch: grid (ceil(N/BN), ceil(M/BM)). M*K, K*N and M*N must be below 2^31.
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
#ifndef PAD
#define PAD 4
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef PREFETCH
#define PREFETCH 1
#endif
#ifndef TT_DYNAMIC_SHARED
#define TT_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#endif

#define TX (BN / TN)
#define TY (BM / TM)
#define THREADS (TX * TY)
#define LDA_S (BM + PAD)
#define LDB_S (BN + PAD)
#define STAGE_FLOATS (BK * (LDA_S + LDB_S))
// Vectors of VEC floats per thread per slice (the last round is guarded when the slice does
// not divide evenly among the threads).
#define A_VECS (BM * BK / VEC)
#define B_VECS (BK * BN / VEC)
#define A_PER ((A_VECS + THREADS - 1) / THREADS)
#define B_PER ((B_VECS + THREADS - 1) / THREADS)

#if TM % 4 != 0 || TN % 4 != 0 || BM % TM != 0 || BN % TN != 0 || BK % VEC != 0
#error "need TM % 4 == TN % 4 == 0, BM % TM == BN % TN == 0 and BK % VEC == 0"
#endif
#if VEC != 1 && VEC != 4
#error "VEC must be 1 or 4"
#endif
#if PAD % 4 != 0
#error "PAD must keep float4 alignment (0, 4, 8, ...)"
#endif

extern "C" __global__ void __launch_bounds__(THREADS)
matmul(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
       int N, int K) {
  TT_DYNAMIC_SHARED(float4, smem4);
  float* smem = reinterpret_cast<float*>(smem4);

  const int tid = threadIdx.x;
  const int tx = tid % TX;
  const int ty = tid / TX;
  const int m0 = blockIdx.y * BM;
  const int n0 = blockIdx.x * BN;
  const bool a_vec = VEC == 4 && (K % 4) == 0;
  const bool b_vec = VEC == 4 && (N % 4) == 0;

  float ra[A_PER][VEC];
  float rb[B_PER][VEC];

  // Global -> registers: slice k0 of A (BM x BK) and B (BK x BN), zeros outside.
  auto load = [&](int k0) {
#pragma unroll
    for (int i = 0; i < A_PER; ++i) {
      const int f = tid + i * THREADS;
      const int row = f / (BK / VEC);
      const int kv = (f % (BK / VEC)) * VEC;
      const int gm = m0 + row;
      const int gk = k0 + kv;
      if (A_VECS % THREADS == 0 || f < A_VECS) {
        if (a_vec && gm < M && gk + 3 < K) {
          const float4 v = *reinterpret_cast<const float4*>(A + static_cast<long long>(gm) * K + gk);
          ra[i][0] = v.x;
          ra[i][VEC > 1 ? 1 : 0] = v.y;
          ra[i][VEC > 2 ? 2 : 0] = v.z;
          ra[i][VEC > 3 ? 3 : 0] = v.w;
        } else {
#pragma unroll
          for (int c = 0; c < VEC; ++c)
            ra[i][c] = (gm < M && gk + c < K) ? A[static_cast<long long>(gm) * K + gk + c] : 0.0f;
        }
      }
    }
#pragma unroll
    for (int i = 0; i < B_PER; ++i) {
      const int f = tid + i * THREADS;
      const int row = f / (BN / VEC);
      const int col = (f % (BN / VEC)) * VEC;
      const int gk = k0 + row;
      const int gn = n0 + col;
      if (B_VECS % THREADS == 0 || f < B_VECS) {
        if (b_vec && gk < K && gn + 3 < N) {
          const float4 v = *reinterpret_cast<const float4*>(B + static_cast<long long>(gk) * N + gn);
          rb[i][0] = v.x;
          rb[i][VEC > 1 ? 1 : 0] = v.y;
          rb[i][VEC > 2 ? 2 : 0] = v.z;
          rb[i][VEC > 3 ? 3 : 0] = v.w;
        } else {
#pragma unroll
          for (int c = 0; c < VEC; ++c)
            rb[i][c] = (gk < K && gn + c < N) ? B[static_cast<long long>(gk) * N + gn + c] : 0.0f;
        }
      }
    }
  };

  // Registers -> shared stage: A transposed (As[k][m]), B as is (Bs[k][n]).
  auto store = [&](int stage) {
    float* As = smem + stage * STAGE_FLOATS;
    float* Bs = As + BK * LDA_S;
#pragma unroll
    for (int i = 0; i < A_PER; ++i) {
      const int f = tid + i * THREADS;
      if (A_VECS % THREADS == 0 || f < A_VECS) {
        const int row = f / (BK / VEC);
        const int kv = (f % (BK / VEC)) * VEC;
#pragma unroll
        for (int c = 0; c < VEC; ++c) As[(kv + c) * LDA_S + row] = ra[i][c];
      }
    }
#pragma unroll
    for (int i = 0; i < B_PER; ++i) {
      const int f = tid + i * THREADS;
      if (B_VECS % THREADS == 0 || f < B_VECS) {
        const int row = f / (BN / VEC);
        const int col = (f % (BN / VEC)) * VEC;
#if VEC == 4
        *reinterpret_cast<float4*>(Bs + row * LDB_S + col) =
            make_float4(rb[i][0], rb[i][1], rb[i][2], rb[i][3]);
#else
        Bs[row * LDB_S + col] = rb[i][0];
#endif
      }
    }
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  auto compute = [&](int stage) {
    const float* As = smem + stage * STAGE_FLOATS;
    const float* Bs = As + BK * LDA_S;
    // Unrolled by 8 (all of BK <= 8): enough to hide the loop, and a BK=64 config compiles
    // in reasonable time.
#pragma unroll 8
    for (int k = 0; k < BK; ++k) {
      float a[TM];
      float b[TN];
#pragma unroll
      for (int g = 0; g < TM / 4; ++g) {
        const float4 v = *reinterpret_cast<const float4*>(As + k * LDA_S + g * 4 * TY + ty * 4);
        a[g * 4 + 0] = v.x;
        a[g * 4 + 1] = v.y;
        a[g * 4 + 2] = v.z;
        a[g * 4 + 3] = v.w;
      }
#pragma unroll
      for (int g = 0; g < TN / 4; ++g) {
        const float4 v = *reinterpret_cast<const float4*>(Bs + k * LDB_S + g * 4 * TX + tx * 4);
        b[g * 4 + 0] = v.x;
        b[g * 4 + 1] = v.y;
        b[g * 4 + 2] = v.z;
        b[g * 4 + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
  };

  const int slices = (K + BK - 1) / BK;
#if PREFETCH
  load(0);
  store(0);
  __syncthreads();
  for (int t = 0; t < slices; ++t) {
    const int stage = t & 1;
    const bool more = t + 1 < slices;
    if (more) load((t + 1) * BK);  // in flight while this slice is multiplied
    compute(stage);
    if (more) store(stage ^ 1);  // the other stage: last read before the previous barrier
    __syncthreads();
  }
#else
  for (int t = 0; t < slices; ++t) {
    load(t * BK);
    store(0);
    __syncthreads();
    compute(0);
    __syncthreads();
  }
#endif

  // Registers -> C, bounds-checked.
  const bool c_vec = VEC == 4 && (N % 4) == 0;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int gm = m0 + (i / 4) * 4 * TY + ty * 4 + (i % 4);
    if (gm >= M) continue;
    float* crow = C + static_cast<long long>(gm) * N;
#pragma unroll
    for (int g = 0; g < TN / 4; ++g) {
      const int gn = n0 + g * 4 * TX + tx * 4;
      if (c_vec && gn + 3 < N) {
        *reinterpret_cast<float4*>(crow + gn) =
            make_float4(acc[i][g * 4], acc[i][g * 4 + 1], acc[i][g * 4 + 2], acc[i][g * 4 + 3]);
      } else {
#pragma unroll
        for (int c = 0; c < 4; ++c)
          if (gn + c < N) crow[gn + c] = acc[i][g * 4 + c];
      }
    }
  }
}
