#!/usr/bin/env python3
"""spmv: CSR sparse matrix times vector, a warp per row, as Kernel Tuner's spmv example: the grid
divisor is the string expression "block_size_x/32" (rows per block), the problem size a tuple of
numpy.int32, a string-valued param picks the warp's reduction (shuffles or shared memory)."""
import itertools
import math

import numpy

import tiletune.kernel_tuner as kernel_tuner

kernel_string = """
#define SHFL 1
#define SMEM 2
// y = A x, A in CSR (row_ptr, cols, vals). Warp w of the block handles row
// blockIdx.x * (block_size_x / 32) + w; its lanes stride over the row's nonzeros.
__global__ void spmv_csr_warp(float *y, const int *row_ptr, const int *cols, const float *vals, const float *x,
                              int rows) {
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int row = blockIdx.x * (block_size_x / 32) + warp;
    float sum = 0.0f;
    if (row < rows) {
        for (int k = row_ptr[row] + lane; k < row_ptr[row + 1]; k += 32) sum += vals[k] * x[cols[k]];
    }
#if reduce_kind == SHFL
    for (int s = 16; s > 0; s >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, s);
    if (lane == 0 && row < rows) y[row] = sum;
#else
    __shared__ float sh[block_size_x];
    sh[threadIdx.x] = sum;
    __syncwarp();
    for (int s = 16; s > 0; s >>= 1) {
        if (lane < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncwarp();
    }
    if (lane == 0 && row < rows) y[row] = sh[threadIdx.x];
#endif
}
"""

rows, ncols = 50_021, 40_000
rng = numpy.random.default_rng(7)
per_row = rng.integers(0, 65, rows)
row_ptr = numpy.zeros(rows + 1, dtype=numpy.int32)
row_ptr[1:] = numpy.cumsum(per_row)
nnz = int(row_ptr[-1])
cols = rng.integers(0, ncols, nnz).astype(numpy.int32)
vals = rng.standard_normal(nnz).astype(numpy.float32)
x = rng.standard_normal(ncols).astype(numpy.float32)
products = vals.astype(numpy.float64) * x[cols]
reference = numpy.add.reduceat(numpy.append(products, 0.0), row_ptr[:-1])  # empty rows: fixed below
reference[per_row == 0] = 0.0
reference = reference.astype(numpy.float32)

args = [numpy.zeros(rows, dtype=numpy.float32), row_ptr, cols, vals, x, numpy.int32(rows)]
answer = [reference, None, None, None, None, None]
tune_params = {"block_size_x": [32, 64, 128, 256, 512, 1024], "reduce_kind": ["SHFL", "SMEM"]}

results, env = kernel_tuner.tune_kernel("spmv_csr_warp", kernel_string, (numpy.int32(rows), 1), args, tune_params,
                                        grid_div_x=["block_size_x/32"], answer=answer, atol=1e-4)

expected = [dict(zip(tune_params, v)) for v in itertools.product(*tune_params.values())]

if not kernel_tuner.dry_run():
    assert [{k: r[k] for k in tune_params} for r in results] == expected
    assert all(r.get("status", "ok") == "ok" and isinstance(r["time"], float) for r in results), \
        [r for r in results if r.get("status") != "ok"]
    print("spmv: OK, best", {k: env["best_config"][k] for k in tune_params})
else:
    rows_planned = env["plan"]["rows"]
    assert len(rows_planned) == len(expected)
    for row in rows_planned:
        p = row["params"]
        assert row["status"] == "ok", row
        # Kernel Tuner: int(eval("block_size_x/32")) rows per block, the grid rounded up
        assert row["grid"] == [math.ceil(rows / int(p["block_size_x"] / 32)), 1, 1], row
    print("spmv: dry run OK,", len(rows_planned), "configs planned")
