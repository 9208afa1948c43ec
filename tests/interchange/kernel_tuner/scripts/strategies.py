#!/usr/bin/env python3
"""strategies: one space (a transpose, 288 configs after a restriction) searched by Kernel
Tuner's strategies with their options: random_sample (fraction), greedy_ils and greedy_mls
(max_fevals and their own options), genetic_algorithm (time_limit, popsize, maxiter) and
bayes_opt (max_fevals, method). Each search stays inside its budget and the space's valid configs."""
import itertools
import math
import time

import numpy

import tiletune.kernel_tuner as kernel_tuner

kernel_string = """
// out (W x H) = transpose of in (H x W); each thread moves tile_size_x x tile_size_y elements,
// strided by the block; the edges are guarded. use_ldg: read through the read-only cache.
__global__ void transpose(float *out, const float *in, int W, int H) {
    int x0 = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
    int y0 = blockIdx.y * block_size_y * tile_size_y + threadIdx.y;
#pragma unroll
    for (int j = 0; j < tile_size_y; j++) {
#pragma unroll
        for (int i = 0; i < tile_size_x; i++) {
            int x = x0 + i * block_size_x, y = y0 + j * block_size_y;
            if (x < W && y < H) {
#if use_ldg
                out[x * H + y] = __ldg(&in[y * W + x]);
#else
                out[x * H + y] = in[y * W + x];
#endif
            }
        }
    }
}
"""

W, H = 2000, 1500
x = numpy.random.randn(H, W).astype(numpy.float32)
args = [numpy.zeros((W, H), dtype=numpy.float32), x, numpy.int32(W), numpy.int32(H)]
answer = [numpy.ascontiguousarray(x.T), None, None, None]

tune_params = dict()
tune_params["block_size_x"] = [16, 32, 64]
tune_params["block_size_y"] = [1, 2, 4, 8, 16, 32]
tune_params["tile_size_x"] = [1, 2, 4]
tune_params["tile_size_y"] = [1, 2, 4]
tune_params["use_ldg"] = [0, 1]
restrictions = ["block_size_x * block_size_y >= 32"]


def valid(c):
    return c["block_size_x"] * c["block_size_y"] <= 1024 and c["block_size_x"] * c["block_size_y"] >= 32


space = [dict(zip(tune_params, v)) for v in itertools.product(*tune_params.values())]
space = [c for c in space if valid(c)]
assert len(space) == 288, len(space)

runs = [
    ("random_sample", {"fraction": 0.1}),
    ("greedy_ils", {"max_fevals": 20, "neighbor": "Hamming", "no_improvement": 10}),
    ("greedy_mls", {"max_fevals": 20, "restart": True}),
    ("genetic_algorithm", {"time_limit": 5, "popsize": 10, "maxiter": 5}),
    ("bayes_opt", {"max_fevals": 25, "method": "ei"}),
]

for strategy, options in runs:
    started = time.perf_counter()
    results, env = kernel_tuner.tune_kernel("transpose", kernel_string, (W, H), args, tune_params,
                                            grid_div_x=["block_size_x", "tile_size_x"],
                                            grid_div_y=["block_size_y", "tile_size_y"], restrictions=restrictions,
                                            answer=answer, strategy=strategy, strategy_options=options, quiet=True)
    wall = time.perf_counter() - started
    if not kernel_tuner.dry_run():
        configs = [tuple(r[k] for k in tune_params) for r in results]
        distinct = set(configs)
        assert distinct, strategy
        assert all(valid(dict(zip(tune_params, c))) for c in distinct), strategy
        assert all(r.get("status", "ok") == "ok" and isinstance(r["time"], float) for r in results), \
            [r for r in results if r.get("status") != "ok"]
        if strategy == "random_sample":
            assert len(distinct) == len(results) == math.ceil(len(space) * options["fraction"]), len(results)
        elif "max_fevals" in options:
            assert len(distinct) <= options["max_fevals"], (strategy, len(distinct))
        else:
            assert wall < options["time_limit"] + 60, (strategy, wall)  # the time limit, and the startup
        best = env["best_config"]
        assert best["time"] == min(r["time"] for r in results)
        print(f"transpose {strategy}: OK, {len(distinct)} configs in {wall:.1f} s, best",
              {k: best[k] for k in tune_params})
    else:
        rows = env["plan"]["rows"]
        assert len(rows) == len(space), (len(rows), len(space))
        for row in rows:
            p = row["params"]
            assert row["grid"] == [math.ceil(W / (p["block_size_x"] * p["tile_size_x"])),
                                   math.ceil(H / (p["block_size_y"] * p["tile_size_y"])), 1], row
        print(f"transpose {strategy}: dry run OK, {len(rows)} configs planned")
