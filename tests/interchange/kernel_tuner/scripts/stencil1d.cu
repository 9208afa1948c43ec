// A 1D weighted stencil of radius RADIUS, for aux_header.py: the primary file of a kernel_source
// list; its helpers come from the auxiliary file stencil1d_helpers.cuh. Each thread computes
// items_per_thread outputs, strided by block_size_x; the ends are clamped.
#include "stencil1d_helpers.cuh"

__global__ void stencil1d(float *out, const float *in, int n) {
    int base = blockIdx.x * block_size_x * items_per_thread + threadIdx.x;
    for (int j = 0; j < items_per_thread; j++) {
        int i = base + j * block_size_x;
        if (i < n) {
            float sum = 0.0f;
            for (int k = -RADIUS; k <= RADIUS; k++) {
                sum += weight(k) * in[clamp_index(i + k, n)];
            }
            out[i] = sum;
        }
    }
}
