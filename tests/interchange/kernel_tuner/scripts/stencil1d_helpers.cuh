// Helpers of stencil1d.cu (the auxiliary file of aux_header.py's kernel_source list): the index
// clamped to the array and the stencil's weights. Needs RADIUS (compiler_options: -DRADIUS=3).
#pragma once

#ifndef RADIUS
#error "RADIUS is not defined: aux_header.py passes it with compiler_options"
#endif

__device__ __forceinline__ int clamp_index(int i, int n) {
    return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

// 1 / (1 + |k|): the same weights the script's numpy reference uses.
__device__ __forceinline__ float weight(int k) {
    return 1.0f / (1.0f + (float)(k < 0 ? -k : k));
}
