#!/usr/bin/env python3
"""verify_compact: stream compaction with atomics, whose output order differs from run to run,
so the default comparison cannot check it: a verify function does. Tuned twice: first with a
verify function of two parameters (Kernel Tuner wraps it, leaving atol out), then with one that
takes atol and a param `bug` whose value 1 computes a wrong result: those configs fail the check
(tiletune records them as failed configs; Kernel Tuner 1.4 would stop the tuning there) and the
best config is a correct one. No answer: every array is handed to verify."""
import itertools

import numpy

import tiletune.kernel_tuner as kernel_tuner

kernel_string = """
// Appends the positive elements of `in` to `out` in any order; *count ends as their number.
// aggregate=1: one atomicAdd per warp (warp-aggregated), else one per element. bug=1 adds 1 to
// every element it copies (a wrong result, for the verify function to catch).
__global__ void compact_positive(int *out, int *count, const int *in, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    bool keep = i < n && in[i] > 0;
    int value = keep ? in[i] + bug : 0;
#if aggregate == 1
    unsigned mask = __ballot_sync(0xffffffffu, keep);
    int lane = threadIdx.x % 32;
    int leader = __ffs(mask) - 1;
    int base = 0;
    if (mask != 0 && lane == leader) base = atomicAdd(count, __popc(mask));
    base = __shfl_sync(0xffffffffu, base, leader < 0 ? 0 : leader);
    if (keep) {
        int pos = base + __popc(mask & ((1u << lane) - 1u));
        if (pos < n) out[pos] = value;
    }
#else
    if (keep) {
        int pos = atomicAdd(count, 1);
        if (pos < n) out[pos] = value;  // a launch on a count left over cannot write out of bounds
    }
#endif
}
"""

n = 1_000_003
data = numpy.random.randint(-1000, 1000, n).astype(numpy.int32)
positives = numpy.sort(data[data > 0])
args = [numpy.zeros(n, dtype=numpy.int32), numpy.zeros(1, dtype=numpy.int32), data, numpy.int32(n)]

calls = []


def verify_two(answer, result_host):
    """Kernel Tuner calls this as verify(answer, result_host, atol=...) through a wrapper."""
    calls.append(("two", answer))
    out, count = result_host[0], result_host[1]
    c = int(count[0])
    return c == len(positives) and numpy.array_equal(numpy.sort(out[:c]), positives)


def verify_atol(answer, result_host, atol):
    calls.append(("atol", atol))
    out, count = result_host[0], result_host[1]
    c = int(count[0])
    return c == len(positives) and numpy.allclose(numpy.sort(out[:c]), positives, atol=atol)


tune_params = {"block_size_x": [32, 64, 128, 256, 512, 1024], "aggregate": [0, 1], "bug": [0]}
results, env = kernel_tuner.tune_kernel("compact_positive", kernel_string, n, args, tune_params, verify=verify_two)

expected = [dict(zip(tune_params, v)) for v in itertools.product(*tune_params.values())]
if not kernel_tuner.dry_run():
    assert [{k: r[k] for k in tune_params} for r in results] == expected
    assert all(r.get("status", "ok") == "ok" and isinstance(r["time"], float) for r in results), \
        [r for r in results if r.get("status") != "ok"]
    assert len([c for c in calls if c[0] == "two"]) >= len(results) and all(c[1] is None for c in calls)
    print("verify_compact (verify without atol): OK, best", {k: env["best_config"][k] for k in tune_params})
else:
    assert len(env["plan"]["rows"]) == len(expected)
    assert "output: true" in env["space"] and "command:" in env["space"]

tune_params = {"block_size_x": [128, 256], "aggregate": [0, 1], "bug": [0, 1]}
results, env = kernel_tuner.tune_kernel("compact_positive", kernel_string, n, args, tune_params, verify=verify_atol,
                                        atol=0.25)
expected = [dict(zip(tune_params, v)) for v in itertools.product(*tune_params.values())]
if not kernel_tuner.dry_run():
    assert [{k: r[k] for k in tune_params} for r in results] == expected
    for r in results:
        if r["bug"] == 0:
            assert r.get("status", "ok") == "ok" and isinstance(r["time"], float), r
        else:  # the expected failure: the verify function said no
            assert r.get("status") == "wrong_result" and r["time"] == "RuntimeFailedConfig", r
    assert env["best_config"]["bug"] == 0, env["best_config"]
    assert {c[1] for c in calls if c[0] == "atol"} == {0.25}
    print("verify_compact (verify with atol): OK, best", {k: env["best_config"][k] for k in tune_params})
else:
    assert len(env["plan"]["rows"]) == len(expected)
    print("verify_compact: dry run OK")
