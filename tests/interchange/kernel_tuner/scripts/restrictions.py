#!/usr/bin/env python3
"""restrictions: Kernel Tuner's forms of restrictions, one tune each: a single function of the
params dict; a list mixing a lambda (first, as Kernel Tuner asks) and strings; a list of a
(function, [param names]) tuple and a function whose parameters are the params. The thread block
has custom names (block_size_names=["bx", "by"]), grid_div_x is a function and grid_div_y a list;
the objective is a metric of our own with objective_higher_is_better. With custom names Kernel
Tuner does not cap the block at 1024 threads in the search space: such configs come back as
InvalidConfig, the expected failure."""
import itertools
import math
from collections import OrderedDict

import numpy

import tiletune.kernel_tuner as kernel_tuner

kernel_string = """
// y[r][c] = 2 x[r][c] + (r - c) over an H x W matrix; a block is bx x by threads, each thread
// does `tile` columns strided by bx.
__global__ void shift_add(float *y, const float *x, int W, int H) {
    int c0 = blockIdx.x * bx * tile + threadIdx.x;
    int r = blockIdx.y * by + threadIdx.y;
    if (r >= H) return;
    for (int t = 0; t < tile; t++) {
        int c = c0 + t * bx;
        if (c < W) y[r * W + c] = 2.0f * x[r * W + c] + (float)(r - c);
    }
}
"""

W, H = 1500, 1001
x = numpy.random.randn(H, W).astype(numpy.float32)
rows, cols = numpy.indices((H, W))
answer = [(2 * x + (rows - cols)).astype(numpy.float32), None, None, None]
args = [numpy.zeros_like(x), x, numpy.int32(W), numpy.int32(H)]

tune_params = OrderedDict([("bx", [16, 32, 64, 128]), ("by", [1, 2, 4, 8, 16]), ("tile", [1, 2, 3, 4])])
space = [dict(zip(tune_params, v)) for v in itertools.product(*tune_params.values())]
metrics = OrderedDict([("bandwidth", lambda p: 8.0 * W * H / 1e9 / (p["time"] / 1e3))])


def restrict(p):
    """One function of the whole config (Kernel Tuner calls it with the params dict)."""
    return p["bx"] * p["by"] >= 64 and p["tile"] != 3


def divisible(bx, tile):
    return (bx * tile) % 64 == 0


def fits(bx, by, tile):
    """In a list, Kernel Tuner calls a function with every param, by position."""
    return bx * by * tile <= 1024


forms = [
    ("single function", restrict, restrict),
    ("lambda and strings", [lambda p: p["bx"] >= 2 * p["by"], "tile * bx <= 256", "bx * by <= 512"],
     lambda p: p["bx"] >= 2 * p["by"] and p["tile"] * p["bx"] <= 256 and p["bx"] * p["by"] <= 512),
    ("tuple and function", [(divisible, ["bx", "tile"]), fits],
     lambda p: divisible(p["bx"], p["tile"]) and fits(p["bx"], p["by"], p["tile"])),
]

for label, restrictions, check in forms:
    results, env = kernel_tuner.tune_kernel("shift_add", kernel_string, (W, H), args, tune_params,
                                            block_size_names=["bx", "by"],
                                            grid_div_x=lambda p: p["bx"] * p["tile"], grid_div_y=["by"],
                                            restrictions=restrictions, answer=answer, metrics=metrics,
                                            objective="bandwidth", objective_higher_is_better=True, quiet=True)
    expected = [c for c in space if check(c)]
    assert 5 <= len(expected) <= 60, (label, len(expected))
    too_big = [c for c in expected if c["bx"] * c["by"] > 1024]
    if not kernel_tuner.dry_run():
        assert [{k: r[k] for k in tune_params} for r in results] == expected, label
        for r in results:
            if r["bx"] * r["by"] > 1024:  # the expected failure
                assert r["bandwidth"] == "InvalidConfig" and "time" not in r, r
            else:
                assert r.get("status", "ok") == "ok" and isinstance(r["time"], float), r
        best = env["best_config"]
        assert best["bandwidth"] == max(r["bandwidth"] for r in results if isinstance(r.get("bandwidth"), float))
        print(f"restrictions ({label}): OK, {len(results)} configs ({len(too_big)} over 1024 threads), best",
              {k: best[k] for k in tune_params})
    else:
        rows_planned = env["plan"]["rows"]
        assert sorted(tuple(r["params"][k] for k in tune_params) for r in rows_planned) == \
            sorted(tuple(c.values()) for c in expected), (label, len(rows_planned), len(expected))
        for row in rows_planned:
            p = row["params"]
            assert row["grid"] == [math.ceil(W / (p["bx"] * p["tile"])), math.ceil(H / p["by"]), 1], row
            assert row["block"] == [p["bx"], p["by"], 1], row
            assert (row["status"] == "ok") == (p["bx"] * p["by"] <= 1024), row
        print(f"restrictions ({label}): dry run OK, {len(rows_planned)} configs planned ({len(too_big)} over 1024 "
              "threads)")
