#!/usr/bin/env python3
"""parallel_tune: parallel=True, Kernel Tuner 1.4's tuning on several GPUs, here on every GPU of
the host through tiletune's device pool (`tiletune tune --devices all`). A histogram kernel with
shared-memory privatization (bins per block in shared memory, or straight to global atomics) is
tuned over its block size, items per thread and privatization (privatize; a param may not be
named shared: NVRTC spells __shared__ with it); every config must be measured
once and pass the answer, whichever GPU measured it."""
import math

import numpy

import tiletune.kernel_tuner as kernel_tuner

from _checks import every_config

kernel_string = """
// counts[b] = number of x[i] == b for 256 bins; each thread takes items_per_thread elements
// strided by the grid; privatize 1: per-block counts in shared memory, added to global at the end.
__global__ void histogram256(unsigned int *counts, const unsigned char *x, int n) {
#if privatize == 1
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += block_size_x) local[b] = 0;
    __syncthreads();
#endif
    int stride = gridDim.x * block_size_x;
    for (int k = 0; k < items_per_thread; k++) {
        int i = blockIdx.x * block_size_x + threadIdx.x + k * stride;
        if (i < n) {
#if privatize == 1
            atomicAdd(&local[x[i]], 1u);
#else
            atomicAdd(&counts[x[i]], 1u);
#endif
        }
    }
#if privatize == 1
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += block_size_x) atomicAdd(&counts[b], local[b]);
#endif
}
"""

n = 8_000_001
x = numpy.random.randint(0, 256, n).astype(numpy.uint8)
counts = numpy.zeros(256, dtype=numpy.uint32)
answer = [numpy.bincount(x, minlength=256).astype(numpy.uint32), None, None]
tune_params = {"block_size_x": [128, 256, 512], "items_per_thread": [1, 4, 16], "privatize": [0, 1]}

results, env = kernel_tuner.tune_kernel("histogram256", kernel_string, n, [counts, x, numpy.int32(n)], tune_params,
                                        grid_div_x=["block_size_x", "items_per_thread"], answer=answer,
                                        parallel=True, quiet=True)

expected = every_config(tune_params)
if not kernel_tuner.dry_run():
    assert sorted(tuple(r[k] for k in tune_params) for r in results) == sorted(tuple(c.values()) for c in expected)
    bad = [r for r in results if r.get("status", "ok") != "ok" or not isinstance(r["time"], float)]
    assert not bad, bad
    best = env["best_config"]
    print("parallel_tune: OK,", len(results), "configs on every GPU of the host, best",
          {k: best[k] for k in tune_params}, "%.3f ms" % best["time"])
else:
    rows = env["plan"]["rows"]
    assert [r["params"] for r in rows] == expected, rows
    for row in rows:
        p = row["params"]
        assert row["status"] == "ok", row
        assert row["grid"] == [math.ceil(n / (p["block_size_x"] * p["items_per_thread"])), 1, 1], row
    print("parallel_tune: dry run OK,", len(rows), "configs planned")
