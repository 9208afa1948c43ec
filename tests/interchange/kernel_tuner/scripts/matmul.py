#!/usr/bin/env python3
"""matmul: a 2D problem size as a tuple, grid_div_x/y as lists of two params each, restrictions
as a list of Python strings (a chained comparison, and/or, %, //), metrics as an OrderedDict of a
string expression and lambdas that build on the metrics before them, objective "GFLOP/s" (higher is
better by Kernel Tuner's defaults). M, N and K are no multiples of the tiles: the kernel guards."""
import itertools
import math
from collections import OrderedDict

import numpy

import tiletune.kernel_tuner as kernel_tuner

kernel_string = """
// C (M x N) = A (M x K) * B (K x N), row-major. Each thread computes tile_size_y x tile_size_x
// outputs, strided by the block so that a warp's loads of B stay coalesced.
__global__ void matmul(float *C, const float *A, const float *B, int M, int N, int K) {
    int col0 = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
    int row0 = blockIdx.y * block_size_y * tile_size_y + threadIdx.y;
    float acc[tile_size_y][tile_size_x];
#pragma unroll
    for (int j = 0; j < tile_size_y; j++)
#pragma unroll
        for (int i = 0; i < tile_size_x; i++)
            acc[j][i] = 0.0f;
    for (int k = 0; k < K; k++) {
#pragma unroll
        for (int j = 0; j < tile_size_y; j++) {
            int row = row0 + j * block_size_y;
            float a = row < M ? A[row * K + k] : 0.0f;
#pragma unroll
            for (int i = 0; i < tile_size_x; i++) {
                int col = col0 + i * block_size_x;
                float b = col < N ? B[k * N + col] : 0.0f;
                acc[j][i] += a * b;
            }
        }
    }
#pragma unroll
    for (int j = 0; j < tile_size_y; j++)
#pragma unroll
        for (int i = 0; i < tile_size_x; i++) {
            int row = row0 + j * block_size_y;
            int col = col0 + i * block_size_x;
            if (row < M && col < N)
                C[row * N + col] = acc[j][i];
        }
}
"""

M, N, K = 500, 520, 384
A = numpy.random.randn(M, K).astype(numpy.float32)
B = numpy.random.randn(K, N).astype(numpy.float32)
C = numpy.zeros((M, N), dtype=numpy.float32)
reference = (A.astype(numpy.float64) @ B.astype(numpy.float64)).astype(numpy.float32)

args = [C, A, B, numpy.int32(M), numpy.int32(N), numpy.int32(K)]
answer = [reference, None, None, None, None, None]

tune_params = OrderedDict()
tune_params["block_size_x"] = [16, 32, 64]
tune_params["block_size_y"] = [1, 2, 4, 8, 16]
tune_params["tile_size_x"] = [1, 2, 4]
tune_params["tile_size_y"] = [1, 2, 4]

restrictions = [
    "32 <= block_size_x * block_size_y <= 512",
    "tile_size_x * tile_size_y <= 8 and (tile_size_x == tile_size_y or block_size_y > 1)",
    "block_size_x % (8 * tile_size_y) == 0",
    "(block_size_x * tile_size_x) // 16 >= 2",
]

flops = 2.0 * M * N * K
metrics = OrderedDict()
metrics["seconds"] = "time / 1000"
metrics["GFLOP/s"] = lambda p: flops / 1e9 / p["seconds"]
metrics["TFLOP/s"] = lambda p: p["GFLOP/s"] / 1000

results, env = kernel_tuner.tune_kernel("matmul", kernel_string, (N, M), args, tune_params,
                                        grid_div_x=["block_size_x", "tile_size_x"],
                                        grid_div_y=["block_size_y", "tile_size_y"], restrictions=restrictions,
                                        answer=answer, atol=1e-3, metrics=metrics, objective="GFLOP/s")


def allowed(bx, by, tx, ty):
    return (32 <= bx * by <= 512 and tx * ty <= 8 and (tx == ty or by > 1) and bx % (8 * ty) == 0
            and (bx * tx) // 16 >= 2)


expected = [dict(zip(tune_params, v)) for v in itertools.product(*tune_params.values()) if allowed(*v)]
assert 20 <= len(expected) <= 200, len(expected)

if not kernel_tuner.dry_run():
    assert [{k: r[k] for k in tune_params} for r in results] == expected, "not Kernel Tuner's configs or order"
    for r in results:
        assert r.get("status", "ok") == "ok", r
        assert abs(r["seconds"] - r["time"] / 1000) < 1e-12, r
        assert abs(r["GFLOP/s"] - flops / 1e9 / (r["time"] / 1000)) < 1e-6 * r["GFLOP/s"], r
        assert abs(r["TFLOP/s"] * 1000 - r["GFLOP/s"]) < 1e-9 * r["GFLOP/s"], r
    best = env["best_config"]
    assert best["GFLOP/s"] == max(r["GFLOP/s"] for r in results), best
    print("matmul: OK,", len(results), "configs, best", {k: best[k] for k in tune_params},
          "%.1f GFLOP/s" % best["GFLOP/s"])
else:
    rows = env["plan"]["rows"]
    assert sorted(tuple(r["params"][k] for k in tune_params) for r in rows) == \
        sorted(tuple(e.values()) for e in expected), (len(rows), len(expected))
    for row in rows:
        p = row["params"]
        assert row["status"] == "ok", row
        assert row["grid"] == [math.ceil(N / (p["block_size_x"] * p["tile_size_x"])),
                               math.ceil(M / (p["block_size_y"] * p["tile_size_y"])), 1], row
        assert row["block"] == [p["block_size_x"], p["block_size_y"], 1], row
    print("matmul: dry run OK,", len(rows), "configs planned")
