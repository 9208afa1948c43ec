#!/usr/bin/env python3
"""simulation: simulation_mode=True answers every config from a Kernel Tuner cache file and
touches no GPU, so this script runs anywhere. The cache is the file named on the command line,
or else a small synthetic one written here in Kernel Tuner 1.4's exact format (header, one entry
per line, failed configs as "CompilationFailedConfig" / "RuntimeFailedConfig"). Searched by
brute_force, random_sample and greedy_mls: every result is the cache's entry, the best is the
cache's fastest valid config."""
import itertools
import json
import math
import os
import shutil
import sys
import tempfile

import numpy

import tiletune.kernel_tuner as kernel_tuner

kernel_string = """
__global__ void scale(float *y, const float *x, int n) {
    int base = blockIdx.x * block_size_x * tile + threadIdx.x;
    for (int k = 0; k < tile; k++) {
        int i = base + k * block_size_x;
        if (i < n) y[i] = 2.0f * x[i];
    }
}
"""
n = 1 << 24
args = [numpy.zeros(16, dtype=numpy.float32), numpy.ones(16, dtype=numpy.float32), numpy.int32(n)]
tune_params = {"block_size_x": [32, 64, 128, 256, 512, 1024], "tile": [1, 2, 4, 8]}
space = [dict(zip(tune_params, v)) for v in itertools.product(*tune_params.values())]
FAILED = {(1024, 8): "CompilationFailedConfig", (32, 8): "RuntimeFailedConfig"}


def synthetic_cache(path):
    """Kernel Tuner 1.4's util.process_cache / store_cache / close_cache output for `space`."""
    header = {"device_name": "NVIDIA H200", "kernel_name": "scale", "problem_size": n,
              "tune_params_keys": list(tune_params), "tune_params": tune_params, "objective": "time", "cache": {}}
    text = json.dumps(header, indent="")[:-3]
    for c in space:
        bs, tile = c["block_size_x"], c["tile"]
        entry = dict(c)
        if (bs, tile) in FAILED:
            entry["time"] = FAILED[(bs, tile)]
        else:
            t = 0.08 + 0.01 * abs(math.log2(bs) - 7) + 0.004 * abs(tile - 2) + 0.0001 * (bs % 7)
            entry["time"] = t
            entry["times"] = [t * (1 + 0.001 * k) for k in range(7)]
        entry.update(compile_time=400.0 + bs / 10, verification_time=0, benchmark_time=1.5, strategy_time=0,
                     framework_time=0.8, timestamp="2025-03-01 12:00:00.000000+00:00")
        text += "\n" + json.dumps({f"{bs},{tile}": entry})[1:-1] + ","
    with open(path, "w") as f:
        f.write(text[:-1] + "}\n}")


workdir = None
if len(sys.argv) > 1:
    cache = sys.argv[1]
else:
    workdir = tempfile.mkdtemp(prefix="kt_simulation_")
    cache = os.path.join(workdir, "scale_h200.json")
    synthetic_cache(cache)
with open(cache) as f:
    entries = json.load(f)["cache"]
valid = {k: e for k, e in entries.items() if isinstance(e["time"], float)}
fastest = min(valid.values(), key=lambda e: e["time"])

try:
    for strategy, options in (("brute_force", None), ("random_sample", {"fraction": 0.25}),
                              ("greedy_mls", {"max_fevals": 10})):
        results, env = kernel_tuner.tune_kernel("scale", kernel_string, n, args, tune_params,
                                                grid_div_x=["block_size_x", "tile"], strategy=strategy,
                                                strategy_options=options, cache=cache, simulation_mode=True)
        assert env["simulation"] is True and env["device_name"] == "NVIDIA H200", env
        for r in results:
            key = f"{r['block_size_x']},{r['tile']}"
            assert r == entries[key], (r, entries[key])  # the cache's entry as it is
        distinct = {(r["block_size_x"], r["tile"]) for r in results}
        if strategy == "brute_force":
            assert [{k: r[k] for k in tune_params} for r in results] == space
            assert env["best_config"] == fastest, env["best_config"]
            assert env["simulated_time"] > 0
        elif strategy == "random_sample":
            assert len(distinct) == len(results) == math.ceil(len(space) * 0.25), len(results)
        else:
            assert 1 <= len(distinct) <= 10, distinct
        assert isinstance(env["best_config"]["time"], float)
        print(f"simulation {strategy}: OK, {len(distinct)} configs, best",
              {k: env["best_config"][k] for k in tune_params})
finally:
    if workdir:
        shutil.rmtree(workdir, ignore_errors=True)
