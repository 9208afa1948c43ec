#!/usr/bin/env python3
"""vector_add: Kernel Tuner's first example as a user writes it. The kernel is a string, the
problem size an int, the arguments float32 arrays and a numpy.int32, the answer has None for the
inputs, lang "CUDA", device 0, verbose, brute force. Block sizes over 1024 threads are dropped
from the search space (Kernel Tuner's max_threads), so 7 of the 8 values are tuned."""
import itertools
import math

import numpy

import tiletune.kernel_tuner as kernel_tuner

kernel_string = """
__global__ void vector_add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""

size = 1000003  # a prime: no block size divides it
a = numpy.random.randn(size).astype(numpy.float32)
b = numpy.random.randn(size).astype(numpy.float32)
c = numpy.zeros_like(b)
n = numpy.int32(size)

args = [c, a, b, n]
answer = [a + b, None, None, None]
tune_params = dict()
tune_params["block_size_x"] = [32, 64, 96, 128, 256, 512, 1024, 2048]

results, env = kernel_tuner.tune_kernel("vector_add", kernel_string, size, args, tune_params, answer=answer,
                                        atol=1e-6, lang="CUDA", device=0, verbose=True, strategy="brute_force")

# What Kernel Tuner tunes: every value whose block has at most 1024 threads, in the listed order.
expected = [dict(zip(tune_params, values)) for values in itertools.product(*tune_params.values())
            if values[0] <= 1024]

if not kernel_tuner.dry_run():
    assert [r["block_size_x"] for r in results] == [e["block_size_x"] for e in expected], results
    for r in results:
        assert r.get("status", "ok") == "ok", r
        assert isinstance(r["time"], float) and r["time"] > 0, r
        assert len(r["times"]) >= 1 and all(t > 0 for t in r["times"]), r
        for key in ("compile_time", "verification_time", "benchmark_time", "strategy_time", "framework_time",
                    "timestamp"):
            assert key in r, (key, r)
        assert r["verification_time"] > 0, r  # the answer was checked for every config
    best = env["best_config"]
    assert best["time"] == min(r["time"] for r in results), best
    for key in ("device_name", "iterations", "compute_capability", "best_config", "total_compile_time",
                "overhead_time"):
        assert key in env, key
    assert env["iterations"] == 7
    print("vector_add: OK,", len(results), "configs, best", best["block_size_x"])
else:
    rows = env["plan"]["rows"]
    assert len(rows) == len(expected), (len(rows), len(expected))
    for row in rows:
        bs = row["params"]["block_size_x"]
        assert row["status"] == "ok", row
        assert row["grid"] == [math.ceil(size / bs), 1, 1], row
        assert row["block"] == [bs, 1, 1], row
    assert "verify:" in env["space"] and "answer0.npy" in env["space"]
    print("vector_add: dry run OK,", len(rows), "configs planned")
