// For each query point, the squared distance to its nearest reference point, brute force (the
// first step of a k-nearest-neighbour search): points in 2D packed as float2, all in a small
// box ([0, 0.01)^2, close to each other, so that the distances are small and a wrong one
// shows), the reference points staged TILE at a time in shared memory. nearest_naive, one
// thread per query reading global memory, is the reference kernel.
// Planted bug (-DCORPUS_PLANT_BUG=1): the last tile of reference points is skipped.
#ifndef CORPUS_PLANT_BUG
#define CORPUS_PLANT_BUG 0
#endif
#ifndef TILE
#define TILE 256  // the tunable's default when the file is built alone
#endif

__device__ __forceinline__ float squared_distance(float2 a, float2 b) {
  const float dx = a.x - b.x;
  const float dy = a.y - b.y;
  return dx * dx + dy * dy;
}

__global__ void nearest_tiled(const float2* __restrict__ queries, const float2* __restrict__ points,
                              float* __restrict__ best, int nq, int np) {
  __shared__ float2 tile[TILE];
  const int q = blockIdx.x * blockDim.x + threadIdx.x;
  const float2 me = q < nq ? queries[q] : make_float2(0.0f, 0.0f);
  float nearest = 3.4e38f;
  const int tiles = (np + TILE - 1) / TILE - CORPUS_PLANT_BUG;
  for (int t = 0; t < tiles; ++t) {
    for (int j = threadIdx.x; j < TILE; j += blockDim.x)
      if (t * TILE + j < np) tile[j] = points[t * TILE + j];
    __syncthreads();
    const int count = min(TILE, np - t * TILE);
    for (int j = 0; j < count; ++j) nearest = fminf(nearest, squared_distance(me, tile[j]));
    __syncthreads();
  }
  if (q < nq) best[q] = nearest;
}

__global__ void nearest_naive(const float2* queries, const float2* points, float* best, int nq, int np) {
  const int q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= nq) return;
  float nearest = 3.4e38f;
  for (int j = 0; j < np; ++j) nearest = fminf(nearest, squared_distance(queries[q], points[j]));
  best[q] = nearest;
}
