// Sparse matrix-vector product y = A x over a CSR matrix (row offsets, column indices,
// values), the "vector" kernel of Bell and Garland (2008): THREADS_PER_ROW threads share a
// row and combine their partial sums with warp shuffles. spmv_scalar, one thread per row, is
// the reference kernel. The matrix comes from tiletune's CSR generators (sorted, in-range
// columns; rows of varying length).
// Planted bug (-DCORPUS_PLANT_BUG=1): the last entry of every row is skipped.
#ifndef CORPUS_PLANT_BUG
#define CORPUS_PLANT_BUG 0
#endif
#ifndef THREADS_PER_ROW
#define THREADS_PER_ROW 32  // the tunable's default when the file is built alone
#endif

__global__ void spmv_vector(const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                            const float* __restrict__ vals, const float* __restrict__ x, float* __restrict__ y,
                            int rows) {
  const int thread = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = thread / THREADS_PER_ROW;
  const int lane = thread % THREADS_PER_ROW;
  float sum = 0.0f;
  if (row < rows) {
    const int end = row_ptr[row + 1] - CORPUS_PLANT_BUG;
    for (int k = row_ptr[row] + lane; k < end; k += THREADS_PER_ROW) sum += vals[k] * x[col_idx[k]];
  }
  // Every thread of the warp takes part in the shuffles, also those past the last row.
  for (int offset = THREADS_PER_ROW / 2; offset > 0; offset >>= 1)
    sum += __shfl_down_sync(0xffffffffu, sum, offset, THREADS_PER_ROW);
  if (row < rows && lane == 0) y[row] = sum;
}

__global__ void spmv_scalar(const int* row_ptr, const int* col_idx, const float* vals, const float* x, float* y,
                            int rows) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k) sum += vals[k] * x[col_idx[k]];
  y[row] = sum;
}
