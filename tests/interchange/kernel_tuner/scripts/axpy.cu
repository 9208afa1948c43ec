// axpy with several elements per thread, for axpy_nvcuda.py: z = alpha * x + y in double precision.
// Thread t of block b handles elements (b * block_size_x * tile_size_x) + t + k * block_size_x,
// k < tile_size_x, so the loads of a warp stay coalesced; the last block is guarded.
extern "C" __global__ void axpy(double *z, const double *x, const double *y, double alpha, int n) {
    int base = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
#pragma unroll
    for (int k = 0; k < tile_size_x; k++) {
        int i = base + k * block_size_x;
        if (i < n) {
            z[i] = alpha * x[i] + y[i];
        }
    }
}
