#!/usr/bin/env python3
"""axpy_nvcuda: the kernel read from a file (kernel_source is a file name), lang "nvcuda" (the
source has its own extern "C"), double precision arrays and a numpy.float64 scalar, problem size
as a tuple (n, 1), grid_div_x as a list of two params, iterations=32, quiet=True."""
import os

import numpy

import tiletune.kernel_tuner as kernel_tuner

import _checks as checks  # the scripts' own folder (a name with _: not a script)

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

expected = checks.every_config(tune_params)

if not kernel_tuner.dry_run():
    checks.check_measured(results, expected)
    assert [(r["block_size_x"], r["tile_size_x"]) for r in results] == \
        [(e["block_size_x"], e["tile_size_x"]) for e in expected]
    assert env["iterations"] == 32
    assert all(len(r["times"]) >= 1 for r in results)
    best = env["best_config"]
    assert best["time"] == min(r["time"] for r in results)
    print("axpy_nvcuda: OK, best", best["block_size_x"], best["tile_size_x"])
else:
    rows = checks.check_planned(env, expected, n, lambda p: p["block_size_x"] * p["tile_size_x"],
                                       one_block_row=True)
    assert kernel_file in env["space"]  # the file itself, so that its includes resolve
    assert "type: double" in env["space"] and "{value: 2.5, type: double}" in env["space"], env["space"]
    print("axpy_nvcuda: dry run OK,", len(rows), "configs planned")
