#!/usr/bin/env python3
"""cupy_vector_add: lang="cupy" with the arguments and the answer as cupy arrays (Kernel Tuner's
vector_add_cupy example, written anew), the problem size an int. Where cupy cannot be imported
(or sees no GPU) the script says so and exits 0."""
import math
import sys

import numpy

import tiletune.kernel_tuner as kernel_tuner

try:
    import cupy
    cupy.cuda.runtime.getDeviceCount()
except Exception as e:  # no cupy, or no CUDA device for it
    print(f"cupy_vector_add: skipped, cupy is not usable here ({type(e).__name__}: {e})")
    sys.exit(0)

kernel_string = """
__global__ void vector_add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""

size = 10_000_019
a = cupy.random.randn(size, dtype=cupy.float32)
b = cupy.random.randn(size, dtype=cupy.float32)
c = cupy.zeros_like(b)
n = numpy.int32(size)
args = [c, a, b, n]
answer = [a + b, None, None, None]
tune_params = {"block_size_x": [128 + 64 * i for i in range(8)]}

results, env = kernel_tuner.tune_kernel("vector_add", kernel_string, size, args, tune_params, answer=answer,
                                        lang="cupy")

if not kernel_tuner.dry_run():
    assert [r["block_size_x"] for r in results] == tune_params["block_size_x"]
    assert all(r.get("status", "ok") == "ok" and isinstance(r["time"], float) for r in results), results
    print("cupy_vector_add: OK, best", env["best_config"]["block_size_x"])
else:
    rows = env["plan"]["rows"]
    assert len(rows) == len(tune_params["block_size_x"])
    for row in rows:
        assert row["grid"] == [math.ceil(size / row["params"]["block_size_x"]), 1, 1], row
    print("cupy_vector_add: dry run OK,", len(rows), "configs planned")
