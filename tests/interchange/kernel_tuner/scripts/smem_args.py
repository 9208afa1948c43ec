#!/usr/bin/env python3
"""smem_args: a box filter staging its block and halo in dynamic shared memory, tuned three
times with smem_args' three forms of size: an int (the largest block's bytes), a string
expression over the params, and a function of the params. Kernel Tuner sets the launch's dynamic
shared memory from it for each config."""
import math

import numpy

import tiletune.kernel_tuner as kernel_tuner

R = 4
kernel_string = """
// out[i] = sum of in[i-R .. i+R] (clamped at the ends), the block's inputs and halo staged in
// dynamic shared memory (block_size_x + 2 R floats).
#define R %d
__global__ void box_filter(float *out, const float *in, int n) {
    extern __shared__ float tile[];
    int i = blockIdx.x * block_size_x + threadIdx.x;
    for (int t = threadIdx.x; t < block_size_x + 2 * R; t += block_size_x) {
        int g = blockIdx.x * block_size_x + t - R;
        g = g < 0 ? 0 : (g >= n ? n - 1 : g);
        tile[t] = in[g];
    }
    __syncthreads();
    if (i < n) {
        float sum = 0.0f;
        for (int k = 0; k <= 2 * R; k++) sum += tile[threadIdx.x + k];
        out[i] = sum;
    }
}
""" % R

n = 1 << 20
x = numpy.random.randint(-8, 8, n).astype(numpy.float32)  # small integers: exact sums
padded = numpy.concatenate([numpy.full(R, x[0]), x, numpy.full(R, x[-1])])
reference = sum(padded[k:k + n] for k in range(2 * R + 1)).astype(numpy.float32)

args = [numpy.zeros_like(x), x, numpy.int32(n)]
answer = [reference, None, None]
tune_params = {"block_size_x": [32, 64, 128, 256, 512, 1024]}

forms = [
    ("int", {"size": (1024 + 2 * R) * 4}),
    ("string", {"size": "(block_size_x + 2 * %d) * 4" % R}),
    ("callable", {"size": lambda p: (p["block_size_x"] + 2 * R) * 4}),
]

for label, smem_args in forms:
    results, env = kernel_tuner.tune_kernel("box_filter", kernel_string, n, args, tune_params, smem_args=smem_args,
                                            answer=answer)
    if not kernel_tuner.dry_run():
        assert [r["block_size_x"] for r in results] == tune_params["block_size_x"], results
        assert all(r.get("status", "ok") == "ok" and isinstance(r["time"], float) for r in results), results
        print(f"box_filter smem_args {label}: OK, best", env["best_config"]["block_size_x"])
    else:
        rows = env["plan"]["rows"]
        assert len(rows) == len(tune_params["block_size_x"]), rows
        for row in rows:
            bs = row["params"]["block_size_x"]
            want = (1024 + 2 * R) * 4 if label == "int" else (bs + 2 * R) * 4
            assert row["status"] == "ok", row
            assert row["dynamic_shared_bytes"] == want, (label, row)
            assert row["grid"] == [math.ceil(n / bs), 1, 1], row
        print(f"box_filter smem_args {label}: dry run OK,", len(rows), "configs planned")
