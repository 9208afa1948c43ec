#!/usr/bin/env python3
"""nvcc_options: Kernel Tuner's curand example, with compiler_options written for nvcc: a host-side
optimization level (-O3) and -allow-unsupported-compiler, which NVRTC rejects and tiletune leaves
out with a note, beside --use_fast_math, which it passes on. The kernel includes
<curand_kernel.h>; run_kernel initializes a curandState per thread (lang="nvcuda", an unsigned
long long seed, the states as a uint8 array), and tune_kernel tunes the kernel that draws from
them, a verify function checking each sum of 16 uniform draws is in (0, 16]."""

import numpy

import tiletune.kernel_tuner as kernel_tuner

import _checks as checks  # the scripts' own folder (a name with _: not a script)

kernel_string = """
#define DRAWS_PER_THREAD 16
#include <curand_kernel.h>

extern "C" __global__ void setup_states(curandState *state, unsigned long long seed, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) curand_init(seed, i, 0, &state[i]);
}

extern "C" __global__ void draw_sums(float *output, curandState *state, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        curandState local = state[i];
        float sum = 0.0f;
        #pragma unroll unroll_draws
        for (int j = 0; j < DRAWS_PER_THREAD; j++) sum += curand_uniform(&local);
        output[i] = sum;
        state[i] = local;
    }
}
"""

STATE_BYTES = 48  # sizeof(curandStateXORWOW)
n = 200_000
compiler_options = ["-O3", "-allow-unsupported-compiler", "--use_fast_math"]
state = numpy.zeros(n * STATE_BYTES, dtype=numpy.uint8)
state = kernel_tuner.run_kernel("setup_states", kernel_string, n, [state, numpy.uint64(42), numpy.int32(n)],
                                {"block_size_x": 256, "unroll_draws": 1}, lang="nvcuda",
                                compiler_options=compiler_options, quiet=True)[0]


def sums_in_range(answer, result_host, atol=None):
    out = result_host[0]
    return bool(numpy.all(out > 0.0) and numpy.all(out <= 16.0))


output = numpy.zeros(n, dtype=numpy.float32)
tune_params = dict()
tune_params["block_size_x"] = [32 * i for i in range(1, 33)]
tune_params["unroll_draws"] = [1, 2, 4, 8, 16]
results, env = kernel_tuner.tune_kernel("draw_sums", kernel_string, n, [output, state, numpy.int32(n)], tune_params,
                                        lang="nvcuda", compiler_options=compiler_options, verify=sums_in_range,
                                        quiet=True)

expected = checks.every_config(tune_params)

if not kernel_tuner.dry_run():
    assert state.any(), "run_kernel returned no curand states"
    checks.check_measured(results, expected)
    print("nvcc_options: OK, best", {k: env["best_config"][k] for k in tune_params})
else:
    checks.check_planned(env, expected, n, lambda p: p["block_size_x"], one_block_row=True)
    assert "-O3" not in env["space"] and "allow-unsupported-compiler" not in env["space"], env["space"]
    assert "--use_fast_math" in env["space"], env["space"]
    print("nvcc_options: dry run OK,", len(expected), "configs planned")
