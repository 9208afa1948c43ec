// FP32 SGEMM, row-major: C[M][N] = A[M][K] * B[K][N] (no alpha/beta), fp32 FFMA only.
// Each block computes a BM x BN tile of C, stepping over K in slices of BK: the A slice is
// stored transposed in shared memory (As[k][m]), the B slice as is (Bs[k][n]). Each thread
// accumulates a TM x TN register tile; per k it reads TM values of A and TN of B from shared
// memory as float4 and does TM*TN FFMAs, k in order (every config sums in the same order).
//
// Warp tiling: the 32 threads of a warp form a 4 x 8 grid (8 x 4 when BN/TN == 4) and own a
// compact (4*TM) x (8*TN) sub-tile of C; a thread's rows (columns) are groups of 4
// consecutive ones, 16 (32) apart inside it. Per k a warp then reads 4 float4 of A and 8 of B,
// one shared-memory wavefront each, broadcast to the other lanes. (A thread grid with no such
// warp shape is one grid of BM/TM x BN/TN threads.) The k loop is unrolled fully, by 16 at
// most. The kernel body is compiled twice: float4 paths without per-element checks (VEC=4,
// K % 4 == 0, N % 4 == 0) and scalar paths for the rest.
//
// Global -> shared: B by cp.async (sm_80+: 16 bytes, 4 on the scalar paths, zero-filled
// outside the matrix), with no registers in between. A through registers, since it is
// transposed on the way: a warp loads 16 rows x 8 floats (2 quads of k) and stores scalars.
// Those stores are conflict-free because the rows of odd quads land 4 float4 chunks further
// round the banks: by the padding (PAD = 4), or, when the padding is a multiple of 8 floats,
// by an XOR swizzle of the chunk index (chunk ^ 4 where k % 8 >= 4), which the reads undo at
// compile time (or with one more base register for some warp shapes).
//   VEC=4: float4 global loads (and C stores) where the 4 elements are in bounds and the row
//          length allows it (K % 4 == 0 for A, N % 4 == 0 for B and C); else scalar.
//   PAD:   extra floats per shared row (0 or 4, keeping float4 alignment); see above.
//   PREFETCH=1: two shared stages, one __syncthreads per slice. While a slice is multiplied,
//          the next one's B is in flight by cp.async into the other stage and its A comes
//          through registers in A_PARTS parts, each loaded before and stored after its
//          K_PART = BK / A_PARTS values of k (parts of at most 8 floats, 4 where BK >= 32, as
//          far as K_PART stays >= 8).
//          PREFETCH=0: one stage, load then multiply.
// Blocks take tiles in groups of 8 tile rows, column by column inside a group, for L2 reuse.
// Registers: at most 128 (2 blocks of 256 threads per SM) where TM*TN >= 32, the block has at
// most 512 threads and BN/TN > 4. Correct for any M, N, K: loads outside the matrices read 0
// and stores are bounds-checked. Without cp.async (below sm_80, or the CPU emulation when
// asked), B is copied synchronously.
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

// The warp's thread grid (WY x WX threads, WG of them).
#if TX % 8 == 0 && TY % 4 == 0
#define WX 8
#define WY 4
#elif TX == 4 && TY % 8 == 0
#define WX 4
#define WY 8
#else
#define WX TX
#define WY TY
#endif
#define WG (WX * WY)

// Which part of a slice the i-th load of a thread takes. A, VEC=4: the threads go in pairs
// (A_HP = 2) over pairs of k quads, then down the rows, so that a warp loads 16 rows x 8
// floats; the float4 of thread tid is row a_row + A_DR(i), k a_k + A_DK(i). VEC=1: one float,
// along k, then down. B: along the row, then down: k b_row + B_DR(i), column b_col + B_DC(i).
// The deltas are compile-time where the thread count and the tile divide each other ("regular":
// always in the shipped space), so that all loads of a thread share one offset; else the
// position is computed from the load's index.
#if VEC == 4
#if BK >= 8
#define A_HP 2
#else
#define A_HP 1
#endif
#define A_TH (THREADS / A_HP)
#define A_REGULAR (THREADS % A_HP == 0 && (A_TH % BM == 0 || BM % A_TH == 0))
#define A_DR(i) (((i) * A_TH) % BM)
#define A_DK(i) (((i) * A_TH) / BM * A_HP * 4)
#else
#define A_HP 1
#define A_REGULAR (THREADS % BK == 0 || BK % THREADS == 0)
#define A_DR(i) (((i) * THREADS) / BK)
#define A_DK(i) (((i) * THREADS) % BK)
#endif
#define B_TH (BN / VEC)
#define B_REGULAR (THREADS % B_TH == 0 || B_TH % THREADS == 0)
#define B_DR(i) (((i) * THREADS) / B_TH)
#define B_DC(i) (((i) * THREADS) % B_TH * VEC)

// XOR applied to the float4 chunk index of A rows for k % 8 >= 4 (0: none). Needs rows of a
// multiple of 8 chunks, and is not needed when the padding shifts odd quads by 4 chunks.
#if PAD % 8 == 0 && BM % 32 == 0
#define A_SWZ 4
#else
#define A_SWZ 0
#endif

// At most 128 registers (2 blocks of 256 threads per SM) where the thread tile is large
// enough to need it; not for warps of 8 x 4 threads (BN/TN == 4: that A read form needs more).
#if THREADS <= 512 && TM * TN >= 32 && WX != 4
#define MIN_BLOCKS (512 / THREADS)
#else
#define MIN_BLOCKS 1
#endif

#define GROUP_M 8

// Offset in an A row of shared memory of the thread's g-th float4 at a k of swizzle x (0 or
// A_SWZ): its float4 chunk a_c0 + g * WY, XOR x.
#if A_SWZ != 0 && WY == 4 && (WY * TM / 4) % 8 == 0
// a_c0 has bit 2 clear: XOR 4 swaps the groups g and g ^ 1, known at compile time.
#define A_OFF(g, x) (a_c0 * 4 + 16 * ((g) ^ ((x) >> 2)))
#elif A_SWZ != 0 && (WY % 8 == 0 || TM == 4)
// XOR 4 touches a_c0 only.
#define A_OFF(g, x) (((x) != 0 ? (a_c0 ^ 4) * 4 : a_c0 * 4) + 4 * (g) * WY)
#elif A_SWZ != 0
#define A_OFF(g, x) (((a_c0 + (g) * WY) ^ (x)) * 4)
#else
#define A_OFF(g, x) (a_c0 * 4 + 4 * (g) * WY)
#endif
// PREFETCH=1: the next A slice is loaded and stored in A_PARTS parts of at most A_PART_REGS
// registers (but at least 8 values of k of the current slice to hide each part's latency),
// one part per K_PART values of k; the k loop is unrolled by K_PART, at most 16.
#ifndef A_PART_REGS
#if BK >= 32
#define A_PART_REGS 4
#else
#define A_PART_REGS 8
#endif
#endif
#define A_PARTS_WANT (A_PER * VEC > A_PART_REGS ? A_PER * VEC / A_PART_REGS : 1)
#define A_PARTS_MAX (BK >= 16 ? BK / 8 : 1)
#define A_PARTS_TRY (A_PARTS_WANT < A_PARTS_MAX ? A_PARTS_WANT : A_PARTS_MAX)
#if PREFETCH && A_PARTS_TRY > 1 && A_PER % A_PARTS_TRY == 0 && BK % A_PARTS_TRY == 0
#define A_PARTS A_PARTS_TRY
#else
#define A_PARTS 1
#endif
#define K_PART (BK / A_PARTS)
#define K_UNROLL (K_PART <= 16 ? K_PART : 16)

// cp.async: tt_cp_async16/4(dst, src, bytes) copy 16 (4) bytes to shared memory, the first
// `bytes` of them from global memory and the rest zeros (bytes = 0: nothing is read);
// tt_cp_async_wait_all waits for this thread's copies.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define TT_CP_ASYNC 1
static __device__ __forceinline__ void tt_cp_async16(float* dst, const float* src, int bytes) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s), "l"(src), "r"(bytes)
               : "memory");
}
static __device__ __forceinline__ void tt_cp_async4(float* dst, const float* src, int bytes) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(s), "l"(src), "r"(bytes)
               : "memory");
}
static __device__ __forceinline__ void tt_cp_async_wait_all() {
  asm volatile("cp.async.wait_all;" ::: "memory");
}
#elif defined(TT_EMULATED_CP_ASYNC)  // the CPU emulation's (tests/kernels/cuda_shim.hpp)
#define TT_CP_ASYNC 1
#else  // older GPUs: B is copied synchronously
#define TT_CP_ASYNC 0
#endif

// The thread and block indices, read afresh where called (so that values derived from them
// need not stay in registers through the main loop).
#ifdef __CUDA_ARCH__
#define TT_SREG(name, reg)                                  \
  static __device__ __forceinline__ int name() {           \
    int v;                                                  \
    asm volatile("mov.u32 %0, %%" reg ";" : "=r"(v)); \
    return v;                                               \
  }
TT_SREG(tt_tid, "tid.x")
TT_SREG(tt_bx, "ctaid.x")
TT_SREG(tt_by, "ctaid.y")
TT_SREG(tt_gx, "nctaid.x")
TT_SREG(tt_gy, "nctaid.y")
#else
static inline int tt_tid() { return static_cast<int>(threadIdx.x); }
static inline int tt_bx() { return static_cast<int>(blockIdx.x); }
static inline int tt_by() { return static_cast<int>(blockIdx.y); }
static inline int tt_gx() { return static_cast<int>(gridDim.x); }
static inline int tt_gy() { return static_cast<int>(gridDim.y); }
#endif

// Block -> tile: groups of GROUP_M tile rows, walked column by column (a bijection). Returns
// the tile's first row and column.
static __device__ __forceinline__ void tt_tile(int& m0, int& n0) {
  const int gx = tt_gx();
  const int gy = tt_gy();
  const int bid = tt_by() * gx + tt_bx();
  const int first = bid / (GROUP_M * gx) * GROUP_M;
  const int rows = gy - first < GROUP_M ? gy - first : GROUP_M;
  const int r = bid - first * gx;
  m0 = (first + r % rows) * BM;
  n0 = r / rows * BN;
}

// This thread's sub-tile of C: rows 4 * (a_c0 + g * WY) + i, columns b_n0 + 4 * g * WX + j.
static __device__ __forceinline__ void tt_subtile(int tid, int& a_c0, int& b_n0) {
  const int lane = tid % WG;
  const int warp = tid / WG;
  a_c0 = (warp / (TX / WX)) * (WY * TM / 4) + lane / WX;
  b_n0 = (warp % (TX / WX)) * (WX * TN) + (lane % WX) * 4;
}

// The kernel's body, compiled twice: V = true with float4 everywhere and no per-element checks
// (VEC=4, K % 4 == 0, N % 4 == 0), V = false with the scalar paths.
template <bool V>
static __device__ __forceinline__ void matmul_tile(const float* __restrict__ A,
                                                   const float* __restrict__ B,
                                                   float* __restrict__ C, int M, int N, int K) {
  TT_DYNAMIC_SHARED(float4, smem4);
  float* smem = reinterpret_cast<float*>(smem4);

  const int tid = tt_tid();
  int m0, n0, a_c0, b_n0;
  tt_tile(m0, n0);
  tt_subtile(tid, a_c0, b_n0);

  // Element (row, k) of an A slice in a stage: As[k][m], float4 chunks swizzled.
  auto a_at = [](int row, int k) {
    return k * LDA_S + (((row >> 2) ^ (A_SWZ * ((k >> 2) & 1))) << 2) + (row & 3);
  };

  // The loads' positions in the slice (see A_REGULAR).
#if VEC == 4
  const int a_row = A_REGULAR ? (tid / A_HP) % BM : 0;
  const int a_k = A_REGULAR ? ((tid / A_HP) / BM * A_HP + tid % A_HP) * 4 : 0;
#else
  const int a_row = A_REGULAR ? tid / BK : 0;
  const int a_k = A_REGULAR ? tid % BK : 0;
#endif
  const int b_row = B_REGULAR ? tid / B_TH : 0;
  const int b_col = B_REGULAR ? (tid % B_TH) * VEC : 0;
  auto a_slot = [&](int i, int& row, int& kc) {
    if (A_REGULAR) {
      row = a_row + A_DR(i);
      kc = a_k + A_DK(i);
    } else {
      const int f = tid + i * THREADS;
      const int t = f / A_HP;
      row = VEC == 4 ? t % BM : f / BK;
      kc = VEC == 4 ? (t / BM * A_HP + f % A_HP) * 4 : f % BK;
    }
  };
  auto b_slot = [&](int i, int& row, int& col) {
    if (B_REGULAR) {
      row = b_row + B_DR(i);
      col = b_col + B_DC(i);
    } else {
      const int f = tid + i * THREADS;
      row = f / B_TH;
      col = (f % B_TH) * VEC;
    }
  };
  const int a_soff = a_at(a_row, a_k);

  float ra[A_PER / A_PARTS][VEC];

  // Global -> registers: part p of A slice k0 (BM x BK), zeros outside.
  auto load_a = [&](int k0, int p) {
    const bool full = k0 + BK <= K;
#pragma unroll
    for (int ii = 0; ii < A_PER / A_PARTS; ++ii) {
      const int i = p * (A_PER / A_PARTS) + ii;
      if (A_VECS % THREADS == 0 || tid + i * THREADS < A_VECS) {
        int row, kc;
        a_slot(i, row, kc);
        const int gm = m0 + row;
        const int gk = k0 + kc;
        const float* src = A + gm * K + gk;
        if (V) {  // gk and K multiples of 4: gk < K covers the quad
          float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
          if (gm < M && (full || gk < K)) v = *reinterpret_cast<const float4*>(src);
          ra[ii][0] = v.x;
          ra[ii][VEC > 1 ? 1 : 0] = v.y;
          ra[ii][VEC > 2 ? 2 : 0] = v.z;
          ra[ii][VEC > 3 ? 3 : 0] = v.w;
        } else {
#pragma unroll
          for (int c = 0; c < VEC; ++c) ra[ii][c] = (gm < M && gk + c < K) ? src[c] : 0.0f;
        }
      }
    }
  };

  // Registers -> shared stage: part p of A, transposed.
  auto store_a = [&](int stage, int p) {
    float* As = smem + stage * STAGE_FLOATS;
#pragma unroll
    for (int ii = 0; ii < A_PER / A_PARTS; ++ii) {
      const int i = p * (A_PER / A_PARTS) + ii;
      if (A_VECS % THREADS == 0 || tid + i * THREADS < A_VECS) {
        if (A_REGULAR && VEC == 4 && (A_SWZ == 0 || (A_DR(i) % 32 == 0 && A_DK(i) % 8 == 0))) {
          // The same swizzle as the thread's first float4: a constant offset from it.
#pragma unroll
          for (int c = 0; c < VEC; ++c) As[a_soff + (A_DK(i) + c) * LDA_S + A_DR(i)] = ra[ii][c];
        } else {
          int row, kc;
          a_slot(i, row, kc);
#pragma unroll
          for (int c = 0; c < VEC; ++c) As[a_at(row, kc + c)] = ra[ii][c];
        }
      }
    }
  };

  // Global -> shared stage: B slice k0 (BK x BN) as is, zeros outside; asynchronous with
  // cp.async (complete after tt_cp_async_wait_all), else synchronous.
  auto load_b = [&](int k0, int stage) {
    float* Bs = smem + stage * STAGE_FLOATS + BK * LDA_S;
    const bool full = k0 + BK <= K;
#pragma unroll
    for (int i = 0; i < B_PER; ++i) {
      if (B_VECS % THREADS == 0 || tid + i * THREADS < B_VECS) {
        int row, col;
        b_slot(i, row, col);
        const int gk = k0 + row;
        const int gn = n0 + col;
        const float* src = B + gk * N + gn;
        float* dst = Bs + row * LDB_S + col;
        if (V) {  // gn and N multiples of 4: gn < N covers the quad
          const bool ok = (full || gk < K) && gn < N;
#if TT_CP_ASYNC
          tt_cp_async16(dst, ok ? src : B, ok ? 16 : 0);
#else
          *reinterpret_cast<float4*>(dst) =
              ok ? *reinterpret_cast<const float4*>(src) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#endif
        } else {
#pragma unroll
          for (int c = 0; c < VEC; ++c) {
            const bool ok = gk < K && gn + c < N;
#if TT_CP_ASYNC
            tt_cp_async4(dst + c, ok ? src + c : B, ok ? 4 : 0);
#else
            dst[c] = ok ? src[c] : 0.0f;
#endif
          }
        }
      }
    }
  };

  auto wait_b = [] {
#if TT_CP_ASYNC
    tt_cp_async_wait_all();
#endif
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  // Multiplies part p of a stage, k in [p * K_PART, (p + 1) * K_PART): per k, TM/4 float4 of
  // A, TN/4 of B, TM*TN FFMAs.
  auto compute = [&](int stage, int p) {
    const float* As = smem + stage * STAGE_FLOATS;
    const float* Bs = As + BK * LDA_S + b_n0;
#pragma unroll 1
    for (int kb = p * K_PART; kb < (p + 1) * K_PART; kb += K_UNROLL) {
#pragma unroll
      for (int kk = 0; kk < K_UNROLL; ++kk) {
        const int k = kb + kk;
        // Where K_UNROLL is a multiple of 8, so is kb; else kb is known (one round).
        const int x = A_SWZ * ((((K_UNROLL % 8 == 0) ? kk : k) >> 2) & 1);
        float a[TM];
        float b[TN];
#pragma unroll
        for (int g = 0; g < TM / 4; ++g) {
          const float4 v = *reinterpret_cast<const float4*>(As + k * LDA_S + A_OFF(g, x));
          a[g * 4 + 0] = v.x;
          a[g * 4 + 1] = v.y;
          a[g * 4 + 2] = v.z;
          a[g * 4 + 3] = v.w;
        }
#pragma unroll
        for (int g = 0; g < TN / 4; ++g) {
          const float4 v = *reinterpret_cast<const float4*>(Bs + k * LDB_S + g * 4 * WX);
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
    }
  };

  const int slices = (K + BK - 1) / BK;
#if PREFETCH
  load_b(0, 0);
#pragma unroll
  for (int p = 0; p < A_PARTS; ++p) {
    load_a(0, p);
    store_a(0, p);
  }
  wait_b();
  __syncthreads();
  for (int t = 0; t < slices; ++t) {
    const int stage = t & 1;
    const bool more = t + 1 < slices;
    // The other stage is free (last read before the previous barrier): the next slice's B
    // goes there by cp.async, its A part by part through registers, while this one is
    // multiplied.
    if (more) load_b((t + 1) * BK, stage ^ 1);
#pragma unroll
    for (int p = 0; p < A_PARTS; ++p) {
      if (more) load_a((t + 1) * BK, p);
      compute(stage, p);
      if (more) store_a(stage ^ 1, p);
    }
    if (more) wait_b();
    __syncthreads();
  }
#else
  for (int t = 0; t < slices; ++t) {
    load_b(t * BK, 0);
#pragma unroll
    for (int p = 0; p < A_PARTS; ++p) {
      load_a(t * BK, p);
      store_a(0, p);
    }
    wait_b();
    __syncthreads();
#pragma unroll
    for (int p = 0; p < A_PARTS; ++p) compute(0, p);
    __syncthreads();
  }
#endif

  // Registers -> C, bounds-checked (the positions computed anew rather than kept in registers
  // through the loop).
  tt_tile(m0, n0);
  tt_subtile(tt_tid(), a_c0, b_n0);
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int gm = m0 + 4 * (a_c0 + (i / 4) * WY) + (i % 4);
    if (gm >= M) continue;
    float* crow = C + gm * N;
#pragma unroll
    for (int g = 0; g < TN / 4; ++g) {
      const int gn = n0 + b_n0 + g * 4 * WX;
      if (V) {
        if (gn < N)
          *reinterpret_cast<float4*>(crow + gn) = make_float4(
              acc[i][g * 4], acc[i][g * 4 + 1], acc[i][g * 4 + 2], acc[i][g * 4 + 3]);
      } else {
#pragma unroll
        for (int c = 0; c < 4; ++c)
          if (gn + c < N) crow[gn + c] = acc[i][g * 4 + c];
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
matmul(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
       int N, int K) {
  if (VEC == 4 && (K % 4) == 0 && (N % 4) == 0)
    matmul_tile<VEC == 4>(A, B, C, M, N, K);
  else
    matmul_tile<false>(A, B, C, M, N, K);
}
