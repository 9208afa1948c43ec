#!/usr/bin/env python3
"""strategy_module: Kernel Tuner's strategy modules passed as strategy= (its
vector_add_custom_strategy example passes kernel_tuner.strategies.minimize), imported both ways a
script writes it; the results stored with file_utils.store_output_file and, as most of Kernel
Tuner's examples end, with json.dump of what tune_kernel returned (results and env)."""

import json
import os
import tempfile

import numpy

import tiletune.kernel_tuner as kernel_tuner
from tiletune.kernel_tuner.file_utils import store_output_file
from tiletune.kernel_tuner.strategies import greedy_ils

import _checks as checks  # the scripts' own folder (a name with _: not a script)

kernel_string = """
__global__ void saxpy(float *y, const float *x, float a, int n) {
    int i = blockIdx.x * block_size_x * work_per_thread + threadIdx.x;
    #pragma unroll
    for (int k = 0; k < work_per_thread; k++, i += block_size_x) {
        if (i < n) y[i] = a * x[i] + y[i];
    }
}
"""

n = 1_000_003
x = numpy.random.randn(n).astype(numpy.float32)
y = numpy.random.randn(n).astype(numpy.float32)
a = numpy.float32(2.5)
args = [y, x, a, numpy.int32(n)]
answer = [a * x + y, None, None, None]

tune_params = dict()
tune_params["block_size_x"] = [64, 128, 256, 512, 1024]
tune_params["work_per_thread"] = [1, 2, 4, 8]
grid_div_x = ["block_size_x", "work_per_thread"]

out = tempfile.mkdtemp(prefix="kt-strategy-module-")
runs = {}
for name, strategy, options in (("minimize", kernel_tuner.strategies.minimize, None),
                                ("greedy_ils", greedy_ils, {"max_fevals": 8})):
    results, env = kernel_tuner.tune_kernel("saxpy", kernel_string, n, args, tune_params, grid_div_x=grid_div_x,
                                            answer=answer, atol=1e-5, strategy=strategy, strategy_options=options,
                                            quiet=True)
    with open(os.path.join(out, name + ".json"), "w") as fp:
        json.dump((results, env), fp)  # plain json: every value tune_kernel returns is JSON
    store_output_file(os.path.join(out, name + "-T4.json"), results, tune_params)
    with open(os.path.join(out, name + ".json")) as fp:
        back = json.load(fp)
    assert len(back[0]) == len(results), (len(back[0]), len(results))
    runs[name] = (results, env)

expected = checks.every_config(tune_params)

if not kernel_tuner.dry_run():
    for name, (results, env) in runs.items():
        assert results, name
        assert all(r["status"] == "ok" and isinstance(r["time"], float) for r in results), results
        visited = [{k: r[k] for k in tune_params} for r in results]
        assert all(v in expected for v in visited), visited
        assert env["best_config"]["time"] == min(r["time"] for r in results), env["best_config"]
    assert len(runs["greedy_ils"][0]) <= 8, len(runs["greedy_ils"][0])  # max_fevals is the budget
    print("strategy_module: OK, best", {k: runs["minimize"][1]["best_config"][k] for k in tune_params})
else:
    for name, (results, env) in runs.items():
        checks.check_planned(env, expected, n, lambda p: p["block_size_x"] * p["work_per_thread"])
    print("strategy_module: dry run OK,", len(expected), "configs planned per strategy")
