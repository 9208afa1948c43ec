// C = A B for row-major floats (M x K times K x N), the shared-memory tiled matrix product of
// the CUDA programming guide: TILE x TILE blocks, one output element per thread, the k loop
// tile by tile in order. gemm_naive (the guide's first version) is the reference kernel of the
// same file; both add the products in the same order, so they agree to the last bit.
// Planted bug (-DCORPUS_PLANT_BUG=1): the last tile of the k loop is skipped.
#ifndef CORPUS_PLANT_BUG
#define CORPUS_PLANT_BUG 0
#endif
#ifndef TILE
#define TILE 16  // the tunable's default when the file is built alone
#endif

__global__ void gemm_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
                           int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  const int tiles = (K + TILE - 1) / TILE - CORPUS_PLANT_BUG;
  float acc = 0.0f;
  for (int t = 0; t < tiles; ++t) {
    const int ka = t * TILE + threadIdx.x;
    const int kb = t * TILE + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[kb * N + col] : 0.0f;
    __syncthreads();
    const int depth = min(TILE, K - t * TILE);  // the last tile may be partial: add no padding
    for (int k = 0; k < depth; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

__global__ void gemm_naive(const float* A, const float* B, float* C, int M, int N, int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}
