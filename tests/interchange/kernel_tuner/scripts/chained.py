#!/usr/bin/env python3
"""chained: a second tuning built on the first one's best, as Kernel Tuner users chain them with
kernel_tuner.util.get_best_config. A 2D transpose-and-scale kernel is tuned first over its block
shape; the best block shape (get_best_config by time) is then passed as single-value params to a
second tuning over the tile per thread and padding of the shared-memory tile. Every config of the
second tuning must carry the first one's best block shape."""
import numpy

import tiletune.kernel_tuner as kernel_tuner
from tiletune.kernel_tuner import util

from _checks import every_config

kernel_string = """
// out[x][y] = alpha * in[y][x] for a height x width matrix, through a shared-memory tile of
// block_size_y * tile_y rows; pad 1 adds a column against bank conflicts.
__global__ void transpose_scale(float *out, const float *in, float alpha, int width, int height) {
    __shared__ float tile[block_size_x][block_size_x + pad];
    int bx = blockIdx.x * block_size_x, by = blockIdx.y * block_size_x;
    for (int j = threadIdx.y; j < block_size_x; j += block_size_y) {
        int x = bx + threadIdx.x, y = by + j;
        if (x < width && y < height) tile[j][threadIdx.x] = in[y * width + x];
    }
    __syncthreads();
    for (int j = threadIdx.y; j < block_size_x; j += block_size_y) {
        int x = by + threadIdx.x, y = bx + j;
        if (x < height && y < width) out[y * height + x] = alpha * tile[threadIdx.x][j];
    }
}
"""

height, width = 1000, 1500
a = numpy.random.randn(height, width).astype(numpy.float32)
alpha = numpy.float32(1.5)
args = [numpy.zeros((width, height), dtype=numpy.float32), a, alpha, numpy.int32(width), numpy.int32(height)]
answer = [alpha * a.T, None, None, None, None]
problem_size = (width, height)
# The grid: one block per block_size_x x block_size_x tile, whatever block_size_y is.
grid_div = dict(grid_div_x=["block_size_x"], grid_div_y=["block_size_x"])

first_params = {"block_size_x": [16, 32], "block_size_y": [2, 4, 8], "pad": [0]}
first, env1 = kernel_tuner.tune_kernel("transpose_scale", kernel_string, problem_size, args, first_params,
                                       answer=answer, restrictions=["block_size_y <= block_size_x"], quiet=True,
                                       **grid_div)

if not kernel_tuner.dry_run():
    best = util.get_best_config(first, "time")
else:  # a dry run measures nothing: go on with the first config planned
    best = dict(env1["plan"]["rows"][0]["params"])

second_params = {"block_size_x": [best["block_size_x"]], "block_size_y": [best["block_size_y"]], "pad": [0, 1]}
second, env2 = kernel_tuner.tune_kernel("transpose_scale", kernel_string, problem_size, args, second_params,
                                        answer=answer, quiet=True, **grid_div)

expected_first = [c for c in every_config(first_params) if c["block_size_y"] <= c["block_size_x"]]
if not kernel_tuner.dry_run():
    assert [{k: r[k] for k in first_params} for r in first] == expected_first
    assert all(r.get("status", "ok") == "ok" for r in first + second), [r for r in first + second if r["status"] != "ok"]
    assert best["time"] == min(r["time"] for r in first)
    assert [{k: r[k] for k in second_params} for r in second] == every_config(second_params)
    final = util.get_best_config(second, "time")
    print("chained: OK, first best", util.get_config_string(best, list(first_params) + ["time"], {"time": "ms"}),
          "; second best", util.get_config_string(final, list(second_params) + ["time"], {"time": "ms"}))
else:
    rows1, rows2 = env1["plan"]["rows"], env2["plan"]["rows"]
    assert [r["params"] for r in rows1] == expected_first, rows1
    assert [r["params"] for r in rows2] == every_config(second_params), rows2
    for row in rows2:
        assert row["block"] == [best["block_size_x"], best["block_size_y"], 1], row
        assert row["grid"] == [-(-width // best["block_size_x"]), -(-height // best["block_size_x"]), 1], row
    print("chained: dry run OK,", len(rows1), "+", len(rows2), "configs planned")
