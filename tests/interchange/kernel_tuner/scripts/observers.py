#!/usr/bin/env python3
"""observers: NVMLObserver(["nvml_energy", "nvml_power"]) and RegisterObserver (imported from
Kernel Tuner's module paths), metrics built on the energy (GFLOPS/W) and the objective "GFLOPS/W"
(higher is better by Kernel Tuner's defaults), iterations=16. Each result carries nvml_energy (J
per run), nvml_power (W) and num_regs."""
import itertools
import math
from collections import OrderedDict

import numpy

import tiletune.kernel_tuner as kernel_tuner
from tiletune.kernel_tuner.observers.nvml import NVMLObserver
from tiletune.kernel_tuner.observers.register import RegisterObserver

kernel_string = """
// y = sin-like polynomial iterated `rounds` times per element: compute-bound, so that the runs
// draw power. Each thread does `unroll` elements strided by the block.
__global__ void iterate_poly(float *y, const float *x, int n) {
    int base = blockIdx.x * block_size_x * unroll + threadIdx.x;
#pragma unroll
    for (int k = 0; k < unroll; k++) {
        int i = base + k * block_size_x;
        if (i < n) {
            float v = x[i];
            for (int r = 0; r < 256; r++) v = v - v * v * v * (1.0f / 6.0f);
            y[i] = v;
        }
    }
}
"""

n = 4_000_037
x = numpy.random.uniform(-0.5, 0.5, n).astype(numpy.float32)
v = x.copy()
for _ in range(256):
    v = v - v * v * v * numpy.float32(1.0 / 6.0)
args = [numpy.zeros_like(x), x, numpy.int32(n)]
answer = [v, None, None]
tune_params = {"block_size_x": [64, 128, 256, 512, 1024], "unroll": [1, 2]}

gflop = 256 * 4 * n / 1e9
metrics = OrderedDict()
metrics["GFLOP/s"] = lambda p: gflop / (p["time"] / 1e3)
metrics["GFLOPS/W"] = lambda p: gflop / p["nvml_energy"]

observers = [NVMLObserver(["nvml_energy", "nvml_power"]), RegisterObserver()]
results, env = kernel_tuner.tune_kernel("iterate_poly", kernel_string, n, args, tune_params,
                                        grid_div_x=["block_size_x", "unroll"], answer=answer,
                                        atol=1e-4, observers=observers, metrics=metrics, objective="GFLOPS/W",
                                        iterations=16)

expected = [dict(zip(tune_params, v)) for v in itertools.product(*tune_params.values())]

if not kernel_tuner.dry_run():
    assert [{k: r[k] for k in tune_params} for r in results] == expected
    for r in results:
        assert r.get("status", "ok") == "ok", r
        assert isinstance(r["nvml_energy"], float) and r["nvml_energy"] > 0, r
        assert isinstance(r["nvml_power"], float) and 20 < r["nvml_power"] < 1500, r
        assert isinstance(r["num_regs"], int) and r["num_regs"] > 0, r
        assert abs(r["GFLOPS/W"] - gflop / r["nvml_energy"]) <= 1e-9 * r["GFLOPS/W"], r
        # energy per run and power over the run agree with the time, to NVML's precision
        assert 0.2 < r["nvml_energy"] / (r["nvml_power"] * r["time"] / 1e3) < 5, r
    best = env["best_config"]
    assert best["GFLOPS/W"] == max(r["GFLOPS/W"] for r in results), best
    assert env["iterations"] == 16
    print("observers: OK, best", {k: best[k] for k in tune_params}, "%.1f GFLOPS/W" % best["GFLOPS/W"])
else:
    rows = env["plan"]["rows"]
    assert len(rows) == len(expected)
    for row in rows:
        p = row["params"]
        assert row["status"] == "ok" and row["registers"] > 0, row
        assert row["grid"] == [math.ceil(n / (p["block_size_x"] * p["unroll"])), 1, 1], row
    print("observers: dry run OK,", len(rows), "configs planned")
