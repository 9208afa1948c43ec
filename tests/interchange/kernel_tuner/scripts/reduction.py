#!/usr/bin/env python3
"""reduction: Kernel Tuner's reduction example, written anew. The problem size is the string
"num_blocks" (a param), grid_div_x=[] (no division: the grid is num_blocks blocks), the answer is
a numpy scalar (the total) with None for the other arguments, and a verify function with an atol
parameter sums the partial sums of the blocks and compares them with it."""
import itertools

import numpy

import tiletune.kernel_tuner as kernel_tuner

kernel_string = """
// Each of the num_blocks blocks sums a grid-strided share of the array and writes its partial
// sum to sum_global[blockIdx.x]; the block's reduction is in shared memory, its last 32 values
// either in shared memory too or with warp shuffles (use_shuffle).
__global__ void sum_floats(float *sum_global, const float *array, int n) {
    __shared__ float sh[block_size_x];
    int ti = threadIdx.x;
    float sum = 0.0f;
    for (int i = blockIdx.x * block_size_x + ti; i < n; i += block_size_x * num_blocks) {
        sum += array[i];
    }
    sh[ti] = sum;
    __syncthreads();
#if use_shuffle == 1
    for (int s = block_size_x / 2; s >= 32; s >>= 1) {
        if (ti < s) sh[ti] += sh[ti + s];
        __syncthreads();
    }
    if (ti < 32) {
        float v = sh[ti];
        for (int s = 16; s > 0; s >>= 1) v += __shfl_down_sync(0xffffffffu, v, s);
        if (ti == 0) sum_global[blockIdx.x] = v;
    }
#else
    for (int s = block_size_x / 2; s > 0; s >>= 1) {
        if (ti < s) sh[ti] += sh[ti + s];
        __syncthreads();
    }
    if (ti == 0) sum_global[blockIdx.x] = sh[0];
#endif
}
"""

size = 2**22 + 13
x = numpy.random.randint(0, 4, size).astype(numpy.float32)  # small integers: every partial sum is exact
tune_params = dict()
tune_params["block_size_x"] = [64, 128, 256, 512, 1024]
tune_params["use_shuffle"] = [0, 1]
tune_params["num_blocks"] = [16, 64, 256, 1024]

sum_x = numpy.zeros(max(tune_params["num_blocks"]), dtype=numpy.float32)
args = [sum_x, x, numpy.int32(size)]
reference = [numpy.sum(x, dtype=numpy.float64).astype(numpy.float32), None, None]
atols_seen = []


def verify_partial_reduce(cpu_result, gpu_result, atol=None):
    """The answer list and the outputs list, aligned with the arguments (None where not checked)."""
    atols_seen.append(atol)
    assert gpu_result[1] is None and gpu_result[2] is None and cpu_result[1] is None
    return numpy.isclose(cpu_result[0], numpy.sum(gpu_result[0]), atol=atol)


results, env = kernel_tuner.tune_kernel("sum_floats", kernel_string, "num_blocks", args, tune_params,
                                        grid_div_x=[], answer=reference, verify=verify_partial_reduce, atol=0.5,
                                        verbose=True)

expected = [dict(zip(tune_params, v)) for v in itertools.product(*tune_params.values())]

if not kernel_tuner.dry_run():
    assert [{k: r[k] for k in tune_params} for r in results] == expected
    assert all(r.get("status", "ok") == "ok" and isinstance(r["time"], float) for r in results), \
        [r for r in results if r.get("status") != "ok"]
    assert len(atols_seen) >= len(results), (len(atols_seen), len(results))  # verify ran for every config
    assert set(atols_seen) == {0.5}, set(atols_seen)
    print("sum_floats: OK,", len(results), "configs, best", {k: env["best_config"][k] for k in tune_params})
else:
    rows = env["plan"]["rows"]
    assert len(rows) == len(expected)
    for row in rows:
        p = row["params"]
        assert row["status"] == "ok", row
        assert row["grid"] == [p["num_blocks"], 1, 1], row  # problem_size "num_blocks", grid_div_x=[]
        assert row["block"] == [p["block_size_x"], 1, 1], row
    print("sum_floats: dry run OK,", len(rows), "configs planned")
