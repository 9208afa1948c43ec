#!/usr/bin/env python3
"""convolution: Kernel Tuner's convolution_correct example written anew. run_kernel runs a naive
kernel once and its output becomes the answer of the tune; the filter reaches the tuned kernel as
__constant__ memory (cmem_args); the problem size is a tuple of numpy.int32; 2D arrays; grid
divisors are lists for x and y; verbose."""
import itertools
import math
import os

import numpy

import tiletune.kernel_tuner as kernel_tuner

here = os.path.dirname(os.path.realpath(__file__))
with open(os.path.join(here, "convolution2d.cu")) as f:
    kernel_string = f.read()

W, H, FW, FH = 1000, 777, 7, 7
problem_size = (numpy.int32(W), numpy.int32(H))
output = numpy.zeros((H, W), dtype=numpy.float32)
image = numpy.random.randn(H + FH - 1, W + FW - 1).astype(numpy.float32)
filt = numpy.random.randn(FH * FW).astype(numpy.float32)
cmem_args = {"d_filter": filt}
args = [output, image, filt, numpy.int32(W), numpy.int32(H)]

# The answer: a naive kernel run once.
params = {"block_size_x": 16, "block_size_y": 16}
res = kernel_tuner.run_kernel("convolution_naive", kernel_string, problem_size, args, params,
                              grid_div_x=["block_size_x"], grid_div_y=["block_size_y"])
answer = [res[0], None, None, None, None]

tune_params = dict()
tune_params["block_size_x"] = [16, 32, 64, 128]
tune_params["block_size_y"] = [1, 2, 4, 8]
tune_params["tile_size_x"] = [1, 2]
tune_params["tile_size_y"] = [1, 2]

results, env = kernel_tuner.tune_kernel("convolution_kernel", kernel_string, problem_size, args, tune_params,
                                        grid_div_x=["block_size_x", "tile_size_x"],
                                        grid_div_y=["block_size_y", "tile_size_y"], cmem_args=cmem_args,
                                        answer=answer, atol=1e-4, verbose=True)

expected = [dict(zip(tune_params, v)) for v in itertools.product(*tune_params.values())]

if not kernel_tuner.dry_run():
    # run_kernel's output: shaped like the argument, as numpy computes it.
    assert res[0].shape == output.shape and res[0].dtype == numpy.float32
    reference = numpy.zeros((H, W), dtype=numpy.float64)
    for j in range(FH):
        for i in range(FW):
            reference += image[j:j + H, i:i + W].astype(numpy.float64) * filt[j * FW + i]
    assert numpy.allclose(res[0], reference, atol=1e-4), numpy.abs(res[0] - reference).max()
    assert res[3] is args[3] and res[4] is args[4]  # scalars come back as given
    assert not numpy.any(output)  # run_kernel leaves the host arrays alone
    assert [{k: r[k] for k in tune_params} for r in results] == expected
    assert all(r.get("status", "ok") == "ok" and isinstance(r["time"], float) for r in results), \
        [r for r in results if r.get("status") != "ok"]
    print("convolution: OK,", len(results), "configs, best", {k: env["best_config"][k] for k in tune_params})
else:
    rows = env["plan"]["rows"]
    assert len(rows) == len(expected), (len(rows), len(expected))
    for row in rows:
        p = row["params"]
        assert row["status"] == "ok", row
        assert row["grid"] == [math.ceil(W / (p["block_size_x"] * p["tile_size_x"])),
                               math.ceil(H / (p["block_size_y"] * p["tile_size_y"])), 1], row
    assert "globals:" in env["space"] and '"d_filter": {type: float, count: 49' in env["space"], env["space"]
    print("convolution: dry run OK,", len(rows), "configs planned")
