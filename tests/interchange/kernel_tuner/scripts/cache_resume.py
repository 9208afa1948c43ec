#!/usr/bin/env python3
"""cache_resume: cache= writes Kernel Tuner's cache file (JSON with its header keys, one entry per
config keyed "v1,v2") as configs are measured, and a later call with the same cache measures only
what the file does not have: a random half first, then the whole space (the other half
measured, the first half served with compile/verification/benchmark times 0), then nothing left to
measure. Metrics are computed again for served configs."""
import itertools
import json
import math
import os
import shutil
import tempfile
from collections import OrderedDict

import numpy

import tiletune.kernel_tuner as kernel_tuner

kernel_string = """
// y = a polynomial of x (Horner, degree 8), unroll elements per thread strided by the block.
__global__ void poly(float *y, const float *x, int n) {
    int base = blockIdx.x * block_size_x * unroll + threadIdx.x;
#pragma unroll
    for (int k = 0; k < unroll; k++) {
        int i = base + k * block_size_x;
        if (i < n) {
            float v = x[i], r = 0.5f;
            for (int d = 0; d < 8; d++) r = r * v + 0.25f;
            y[i] = r;
        }
    }
}
"""

n = 2_000_003
x = numpy.random.uniform(-1, 1, n).astype(numpy.float32)
r = numpy.full(n, 0.5, dtype=numpy.float64)
for _ in range(8):
    r = r * x + 0.25
args = [numpy.zeros_like(x), x, numpy.int32(n)]
answer = [r.astype(numpy.float32), None, None]
tune_params = OrderedDict([("block_size_x", [32, 64, 128, 256, 512, 1024]), ("unroll", [1, 2, 4])])
metrics = OrderedDict([("GB/s", lambda p: 8.0 * n / 1e9 / (p["time"] / 1e3))])
space = [dict(zip(tune_params, v)) for v in itertools.product(*tune_params.values())]
HEADER = ["device_name", "kernel_name", "problem_size", "tune_params_keys", "tune_params", "objective", "cache"]

workdir = tempfile.mkdtemp(prefix="kt_cache_resume_")
cache = os.path.join(workdir, "poly_cache")  # Kernel Tuner appends .json
cache_file = cache + ".json"


def tune(strategy, options=None):
    return kernel_tuner.tune_kernel("poly", kernel_string, n, args, tune_params, answer=answer, atol=1e-5,
                                    metrics=metrics, cache=cache, strategy=strategy, strategy_options=options)


def read_cache():
    with open(cache_file) as f:
        text = f.read()
    assert text.rstrip().endswith("}\n}"), text[-20:]  # closed, as Kernel Tuner closes it
    c = json.loads(text)
    assert list(c)[:len(HEADER)] == HEADER, list(c)
    assert c["kernel_name"] == "poly" and c["tune_params_keys"] == list(tune_params) and c["objective"] == "time"
    assert c["problem_size"] == n and c["tune_params"] == {k: list(v) for k, v in tune_params.items()}
    for key, entry in c["cache"].items():
        assert key == ",".join(str(entry[k]) for k in tune_params), key
        assert isinstance(entry["time"], float) and isinstance(entry["times"], list), entry
        for k in ("compile_time", "verification_time", "benchmark_time", "GB/s", "timestamp"):
            assert k in entry, (k, entry)
    return c


try:
    if not kernel_tuner.dry_run():
        first, env1 = tune("random_sample", {"fraction": 0.5})
        assert len(first) == math.ceil(len(space) * 0.5), len(first)
        c1 = read_cache()
        assert set(c1["cache"]) == {f"{r['block_size_x']},{r['unroll']}" for r in first}
        assert c1["device_name"] == env1["device_name"]

        second, _ = tune("brute_force")
        served = [r for r in second if r["compile_time"] == 0 and r["benchmark_time"] == 0]
        measured = [r for r in second if r not in served]
        assert len(second) == len(space), len(second)
        # brute_force evaluates the space in order; Kernel Tuner serves cached configs in their place
        assert [{k: r[k] for k in tune_params} for r in second] == space, "not in brute_force's order"
        assert len(served) == len(first) and len(measured) == len(space) - len(first), (len(served), len(measured))
        assert {(r["block_size_x"], r["unroll"]) for r in served} == {(r["block_size_x"], r["unroll"]) for r in first}
        c2 = read_cache()
        assert len(c2["cache"]) == len(space)

        third, env3 = tune("brute_force")
        assert len(third) == len(space) and all(r["compile_time"] == 0 and r["benchmark_time"] == 0 for r in third)
        assert [{k: r[k] for k in tune_params} for r in third] == space, "not in brute_force's order"
        by_key = {f"{r['block_size_x']},{r['unroll']}": r for r in third}
        for key, entry in c2["cache"].items():
            assert by_key[key]["time"] == entry["time"], key
            assert abs(by_key[key]["GB/s"] - 8.0 * n / 1e9 / (entry["time"] / 1e3)) < 1e-9, key
        assert env3["best_config"]["time"] == min(e["time"] for e in c2["cache"].values())

        # A budgeted search over a cache that holds the whole space: Kernel Tuner returns the cached
        # configs its strategy visits (ceil(18 * 0.2) = 4); tiletune.kernel_tuner counts the cached
        # configs against the budget too, so it measures nothing more, but returns every cached
        # config of the space (docs/guides/kernel-tuner.md: what differs). Then the space
        # narrowed to two block sizes (Kernel Tuner checks the names of tune_params against the
        # cache, not their values): only its configs come back.
        sample, _ = tune("random_sample", {"fraction": 0.2})
        assert len(sample) == len(space), len(sample)
        assert all(r["compile_time"] == 0 and r["benchmark_time"] == 0 for r in sample)
        narrow = OrderedDict([("block_size_x", [128, 256]), ("unroll", [1, 2, 4])])
        narrowed, _ = kernel_tuner.tune_kernel("poly", kernel_string, n, args, narrow, answer=answer, atol=1e-5,
                                               metrics=metrics, cache=cache)
        assert [(r["block_size_x"], r["unroll"]) for r in narrowed] == list(itertools.product(*narrow.values())), \
            [(r["block_size_x"], r["unroll"]) for r in narrowed]
        print("cache_resume: OK,", len(first), "then", len(measured), "then 0 configs measured")
    else:
        # A cache holding a third of the space, in Kernel Tuner's format: the space handed to the
        # engine leaves those configs out.
        held = space[::3]
        entries = {f"{c['block_size_x']},{c['unroll']}": dict(c, time=0.5, times=[0.5] * 7, compile_time=100.0,
                                                                verification_time=1.0, benchmark_time=4.0,
                                                                strategy_time=0, framework_time=1.0,
                                                                timestamp="2025-01-01 00:00:00.000000+00:00")
                   for c in held}
        header = {"device_name": "NVIDIA H200", "kernel_name": "poly", "problem_size": n,
                  "tune_params_keys": list(tune_params), "tune_params": dict(tune_params), "objective": "time",
                  "cache": {}}
        text = json.dumps(header, indent="")[:-3]
        text += "".join("\n" + json.dumps({k: e})[1:-1] + "," for k, e in entries.items())
        with open(cache_file, "w") as f:
            f.write(text[:-1] + "}\n}")
        results, env = tune("brute_force")
        rows = env["plan"]["rows"]
        planned = {(r["params"]["block_size_x"], r["params"]["unroll"]) for r in rows}
        assert planned == {(c["block_size_x"], c["unroll"]) for c in space if c not in held}, planned
        print("cache_resume: dry run OK,", len(rows), "configs planned,", len(held), "served by the cache")
finally:
    shutil.rmtree(workdir, ignore_errors=True)
