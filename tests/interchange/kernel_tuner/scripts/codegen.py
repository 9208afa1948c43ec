#!/usr/bin/env python3
"""codegen: kernel_source is a code generator (a function of the params returning the source,
lang="CUDA" as Kernel Tuner requires), tune_params mix ints and strings (load_kind: a plain load
or __ldg), the generator unrolls the loop in the text itself. Problem size an int."""

import numpy

import tiletune.kernel_tuner as kernel_tuner

import _checks as checks  # the scripts' own folder (a name with _: not a script)


def generate(params):
    """One kernel per config: `unroll` explicit loads per thread, each a plain load or __ldg."""
    load = "__ldg(&x[i{k}])" if params["load_kind"] == "ldg" else "x[i{k}]"
    body = []
    for k in range(params["unroll"]):
        body.append(f"    int i{k} = base + {k} * {params['block_size_x']};")
        body.append(f"    if (i{k} < n) {{ float v = {load.format(k=k)}; y[i{k}] = v * v + 1.0f; }}")
    return ("__global__ void square_plus_one(float *y, const float *__restrict__ x, int n) {\n"
            f"    int base = blockIdx.x * {params['block_size_x'] * params['unroll']} + threadIdx.x;\n"
            + "\n".join(body) + "\n}\n")


n = 2**20 + 333
x = numpy.random.randn(n).astype(numpy.float32)
y = numpy.zeros_like(x)
args = [y, x, numpy.int32(n)]
answer = [x * x + numpy.float32(1), None, None]

tune_params = dict()
tune_params["block_size_x"] = [128, 256, 512]
tune_params["unroll"] = [1, 2, 4]
tune_params["load_kind"] = ["plain", "ldg"]

results, env = kernel_tuner.tune_kernel("square_plus_one", generate, n, args, tune_params, lang="CUDA",
                                        grid_div_x=["block_size_x", "unroll"], answer=answer, atol=1e-5)

expected = checks.every_config(tune_params)

if not kernel_tuner.dry_run():
    checks.check_measured(results, expected)
    for r, e in zip(results, expected):
        assert {k: r[k] for k in tune_params} == e, (r, e)
        assert not any(k.startswith("tiletune_kt_") for k in r), r  # values derived per config stay inside
    assert isinstance(env["best_config"]["load_kind"], str)
    print("codegen: OK, best", {k: env["best_config"][k] for k in tune_params})
else:
    rows = checks.check_planned(env, expected, n, lambda p: p["block_size_x"] * p["unroll"])
    planned = sorted((r["params"]["block_size_x"], r["params"]["unroll"], r["params"]["load_kind"]) for r in rows)
    assert planned == sorted(tuple(e.values()) for e in expected), planned
    print("codegen: dry run OK,", len(rows), "configs planned")
