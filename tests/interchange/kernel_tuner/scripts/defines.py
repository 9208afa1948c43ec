#!/usr/bin/env python3
"""defines: Kernel Tuner's defines dict replaces its own #defines: an int (VEC), a string that
names a param (BLOCK -> the value of block_size_x), a lambda of the params (HALF_BLOCK) and a
string naming a float param (SCALE). tune_params has floats (scale); grid_div_x is a list of a
param and an int."""

import numpy

import tiletune.kernel_tuner as kernel_tuner

import _checks as checks  # the scripts' own folder (a name with _: not a script)

kernel_string = """
// Each block copies BLOCK * VEC elements, each thread VEC of them strided by BLOCK, scaled by
// SCALE and back (exact: SCALE is a power of two). Only the names of `defines` are used.
__global__ void scale_copy(float *y, const float *x, int n) {
    static_assert(2 * HALF_BLOCK == BLOCK, "HALF_BLOCK must be half of BLOCK");
    int base = blockIdx.x * BLOCK * VEC + threadIdx.x;
    for (int k = 0; k < VEC; k++) {
        int i = base + k * BLOCK;
        if (i < n) {
            y[i] = (float)((x[i] * SCALE) / SCALE);
        }
    }
}
"""

n = 1_000_001
x = numpy.random.randn(n).astype(numpy.float32)
args = [numpy.zeros_like(x), x, numpy.int32(n)]
tune_params = {"block_size_x": [64, 128, 256], "scale": [0.5, 2.0, 4.0]}
defines = {"VEC": 4, "BLOCK": "block_size_x", "HALF_BLOCK": lambda p: p["block_size_x"] // 2, "SCALE": "scale"}

results, env = kernel_tuner.tune_kernel("scale_copy", kernel_string, n, args, tune_params,
                                        grid_div_x=["block_size_x", 4], defines=defines, answer=[x, None, None],
                                        atol=0)

expected = checks.every_config(tune_params)

if not kernel_tuner.dry_run():
    assert [{k: r[k] for k in tune_params} for r in results] == expected
    assert all(isinstance(r["scale"], float) for r in results)  # the param's values as listed
    checks.check_measured(results, expected)
    print("defines: OK, best", {k: env["best_config"][k] for k in tune_params})
else:
    rows = checks.check_planned(env, expected, n, lambda p: p["block_size_x"] * 4, one_block_row=True)
    assert "-DVEC=4" in env["space"], env["space"]
    assert "-Dkernel_tuner=1" not in env["space"]  # defines given: none of Kernel Tuner's own
    print("defines: dry run OK,", len(rows), "configs planned")
