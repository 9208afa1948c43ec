#!/usr/bin/env python3
"""aux_header: kernel_source as a list, the primary file and an auxiliary header it includes
(Kernel Tuner's [primary, aux...] form), lang left to Kernel Tuner's detection (None -> CUDA),
compiler_options defining a macro the header needs (-DRADIUS=3), grid_div_x a list."""
import os

import numpy

import tiletune.kernel_tuner as kernel_tuner

import _checks as checks  # the scripts' own folder (a name with _: not a script)

here = os.path.dirname(os.path.realpath(__file__))
kernel_source = [os.path.join(here, "stencil1d.cu"), os.path.join(here, "stencil1d_helpers.cuh")]

radius = 3
n = 500009
x = numpy.random.randn(n).astype(numpy.float32)
out = numpy.zeros_like(x)

# The numpy reference: sum over k of x[clamp(i + k)] / (1 + |k|).
idx = numpy.arange(n)
reference = numpy.zeros(n, dtype=numpy.float64)
for k in range(-radius, radius + 1):
    reference += x[numpy.clip(idx + k, 0, n - 1)].astype(numpy.float64) / (1.0 + abs(k))
reference = reference.astype(numpy.float32)

args = [out, x, numpy.int32(n)]
tune_params = {"block_size_x": [32, 128, 256, 1024], "items_per_thread": [1, 2, 3, 4]}

results, env = kernel_tuner.tune_kernel("stencil1d", kernel_source, n, args, tune_params,
                                        grid_div_x=["block_size_x", "items_per_thread"],
                                        compiler_options=[f"-DRADIUS={radius}"],
                                        answer=[reference, None, None], atol=1e-4)

expected = checks.every_config(tune_params)

if not kernel_tuner.dry_run():
    checks.check_measured(results, expected)
    assert env["compiler_options"] == [f"-DRADIUS={radius}"], env["compiler_options"]
    print("aux_header: OK, best", {k: env["best_config"][k] for k in tune_params})
else:
    rows = checks.check_planned(env, expected, n, lambda p: p["block_size_x"] * p["items_per_thread"])
    assert "-DRADIUS=3" in env["space"], env["space"]
    print("aux_header: dry run OK,", len(rows), "configs planned")
