#!/usr/bin/env python3
"""nvml_clocks: NVMLObserver(["core_freq", "mem_freq", "temperature"]) (imported from Kernel
Tuner's module path kernel_tuner.nvml): each result carries the SM clock and the memory clock in
MHz and the GPU's temperature in degrees C, read while tiletune times the config (no energy
measurement asked for). The kernel is a compute-bound polynomial so that the clock is the one the
GPU holds under load; the metric MFLOP per SM clock cycle uses core_freq."""
import math
from collections import OrderedDict

import numpy

import tiletune.kernel_tuner as kernel_tuner
from tiletune.kernel_tuner.nvml import NVMLObserver

from _checks import every_config

kernel_string = """
// y[i] = p(x[i]) evaluated `rounds` times (Horner, degree 4): rounds * 8 flops per element.
__global__ void horner(float *y, const float *x, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    for (int r = 0; r < rounds; r++) v = (((0.1f * v + 0.2f) * v - 0.3f) * v + 0.4f) * v * 0.5f;
    y[i] = v;
}
"""

n = 2_000_003
x = numpy.random.uniform(-1, 1, n).astype(numpy.float32)
tune_params = {"block_size_x": [128, 256, 512], "rounds": [64, 128]}


def reference(rounds):
    v = x.copy()
    for _ in range(rounds):
        v = (((numpy.float32(0.1) * v + numpy.float32(0.2)) * v - numpy.float32(0.3)) * v + numpy.float32(0.4)) * v \
            * numpy.float32(0.5)
    return v


answers = {r: reference(r) for r in tune_params["rounds"]}


def verify(answer, result_host, atol=None):
    """The output of whichever rounds the config ran: one of the two references."""
    return any(numpy.allclose(result_host[0], want, atol=atol) for want in answers.values())


metrics = OrderedDict()
metrics["flop_per_cycle"] = lambda p: p["rounds"] * 8 * n / (p["time"] / 1e3) / (p["core_freq"] * 1e6)

results, env = kernel_tuner.tune_kernel("horner", kernel_string, n, [numpy.zeros_like(x), x, numpy.int32(n)],
                                        tune_params, verify=verify, atol=1e-4, metrics=metrics,
                                        observers=[NVMLObserver(["core_freq", "mem_freq", "temperature"])],
                                        quiet=True)

if not kernel_tuner.dry_run():
    assert [{k: r[k] for k in tune_params} for r in results] == every_config(tune_params)
    for r in results:
        assert r.get("status", "ok") == "ok", r
        assert isinstance(r["core_freq"], float) and 100 < r["core_freq"] < 5000, r
        assert isinstance(r["mem_freq"], float) and 100 < r["mem_freq"] < 20000, r
        assert isinstance(r["temperature"], float) and 5 < r["temperature"] < 120, r
        assert "nvml_energy" not in r and "nvml_power" not in r, r   # not asked for: not measured
        assert r["flop_per_cycle"] > 0, r
    print("nvml_clocks: OK, SM clock %.0f-%.0f MHz, memory %.0f MHz, %.0f-%.0f C" % (
        min(r["core_freq"] for r in results), max(r["core_freq"] for r in results), results[0]["mem_freq"],
        min(r["temperature"] for r in results), max(r["temperature"] for r in results)))
else:
    rows = env["plan"]["rows"]
    assert [r["params"] for r in rows] == every_config(tune_params), rows
    for row in rows:
        assert row["status"] == "ok" and row["grid"] == [math.ceil(n / row["params"]["block_size_x"]), 1, 1], row
    print("nvml_clocks: dry run OK,", len(rows), "configs planned")
