#!/usr/bin/env python3
"""axpy_nvcuda: the kernel read from a file (kernel_source is a file name), lang "nvcuda" (the
source has its own extern "C"), double precision arrays and a numpy.float64 scalar, problem size
as a tuple (n, 1), grid_div_x as a list of two params, iterations=32, quiet=True."""
import itertools
import math
import os

import numpy

import tiletune.kernel_tuner as kernel_tuner

here = os.path.dirname(os.path.realpath(__file__))
kernel_file = os.path.join(here, "axpy.cu")

n = 3 * 2**20 + 77
x = numpy.random.randn(n)
y = numpy.random.randn(n)
z = numpy.zeros(n, dtype=numpy.float64)
alpha = numpy.float64(2.5)

args = [z, x, y, alpha, numpy.int32(n)]
answer = [alpha * x + y, None, None, None, None]

tune_params = {"block_size_x": [64, 128, 256, 512, 1024], "tile_size_x": [1, 2, 4, 8]}

results, env = kernel_tuner.tune_kernel("axpy", kernel_file, (n, 1), args, tune_params,
                                        grid_div_x=["block_size_x", "tile_size_x"], answer=answer, atol=1e-12,
                                        lang="nvcuda", iterations=32, quiet=True)

expected = [dict(zip(tune_params, v)) for v in itertools.product(*tune_params.values())]

if not kernel_tuner.dry_run():
    assert len(results) == len(expected), len(results)
    assert [(r["block_size_x"], r["tile_size_x"]) for r in results] == \
        [(e["block_size_x"], e["tile_size_x"]) for e in expected]
    assert all(r.get("status", "ok") == "ok" and isinstance(r["time"], float) for r in results), results
    assert env["iterations"] == 32
    assert all(len(r["times"]) >= 1 for r in results)
    best = env["best_config"]
    assert best["time"] == min(r["time"] for r in results)
    print("axpy_nvcuda: OK, best", best["block_size_x"], best["tile_size_x"])
else:
    rows = env["plan"]["rows"]
    assert len(rows) == len(expected), (len(rows), len(expected))
    for row in rows:
        p = row["params"]
        assert row["status"] == "ok", row
        assert row["grid"] == [math.ceil(n / (p["block_size_x"] * p["tile_size_x"])), 1, 1], row
        assert row["block"] == [p["block_size_x"], 1, 1], row
    assert kernel_file in env["space"]  # the file itself, so that its includes resolve
    assert "type: double" in env["space"] and "{value: 2.5, type: double}" in env["space"], env["space"]
    print("axpy_nvcuda: dry run OK,", len(rows), "configs planned")
