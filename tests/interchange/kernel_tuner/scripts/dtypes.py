#!/usr/bin/env python3
"""dtypes: one kernel over arrays of every numpy dtype Kernel Tuner passes to CUDA (int8, uint16,
int32, int64, uint64, float16, float32, float64, bool, complex64) and numpy scalars of five
types (float32, float64, int64, uint8, int32); each output checked against numpy's answer. The
answer has None for every input."""

import numpy

import tiletune.kernel_tuner as kernel_tuner

import _checks as checks  # the scripts' own folder (a name with _: not a script)

kernel_string = """
#include <cuda_fp16.h>

// Every output element i computed from the inputs of element i and the scalars; each thread does
// elems_per_thread elements strided by the block.
__global__ void mixed_types(signed char *o_i8, const signed char *i_i8,
                            unsigned short *o_u16, const unsigned short *i_u16,
                            long long *o_i64, const long long *i_i64,
                            unsigned long long *o_u64, const unsigned long long *i_u64,
                            half *o_f16, const half *i_f16,
                            bool *o_b, const double *i_f64,
                            float2 *o_c64, const float2 *i_c64,
                            int *o_i32, const int *i_i32,
                            float s_f32, double s_f64, long long s_i64, unsigned char s_u8, int n) {
    int base = blockIdx.x * block_size_x * elems_per_thread + threadIdx.x;
    for (int k = 0; k < elems_per_thread; k++) {
        int i = base + k * block_size_x;
        if (i >= n) return;
        o_i8[i] = (signed char)(i_i8[i] + s_u8);
        o_u16[i] = (unsigned short)(i_u16[i] ^ 0xA5A5u);
        o_i64[i] = i_i64[i] * s_i64 + i;
        o_u64[i] = (i_u64[i] >> 3) | (1ull << 63);
        o_f16[i] = __float2half(__half2float(i_f16[i]) * s_f32);
        o_b[i] = i_f64[i] > s_f64;
        float2 c = i_c64[i];
        o_c64[i] = make_float2(2.0f * c.x - c.y, 2.0f * c.y + c.x);
        o_i32[i] = i_i32[i] * 3 - 7;
    }
}
"""

n = 100_003
rng = numpy.random.default_rng(21)
i_i8 = rng.integers(-128, 128, n).astype(numpy.int8)
i_u16 = rng.integers(0, 2**16, n).astype(numpy.uint16)
i_i64 = rng.integers(-2**40, 2**40, n).astype(numpy.int64)
i_u64 = rng.integers(0, 2**63, n, dtype=numpy.uint64) * numpy.uint64(2) + numpy.uint64(1)
i_f16 = rng.standard_normal(n).astype(numpy.float16)
i_f64 = rng.standard_normal(n)
i_c64 = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(numpy.complex64)
i_i32 = rng.integers(-2**20, 2**20, n).astype(numpy.int32)
s_f32, s_f64, s_i64, s_u8 = numpy.float32(1.5), numpy.float64(0.25), numpy.int64(-3), numpy.uint8(200)

outputs = [numpy.zeros(n, numpy.int8), numpy.zeros(n, numpy.uint16), numpy.zeros(n, numpy.int64),
           numpy.zeros(n, numpy.uint64), numpy.zeros(n, numpy.float16), numpy.zeros(n, numpy.bool_),
           numpy.zeros(n, numpy.complex64), numpy.zeros(n, numpy.int32)]
inputs = [i_i8, i_u16, i_i64, i_u64, i_f16, i_f64, i_c64, i_i32]
args = [a for pair in zip(outputs, inputs) for a in pair] + [s_f32, s_f64, s_i64, s_u8, numpy.int32(n)]

expected_outputs = [
    (i_i8.astype(numpy.int16) + int(s_u8)).astype(numpy.int8),
    i_u16 ^ numpy.uint16(0xA5A5),
    i_i64 * s_i64 + numpy.arange(n, dtype=numpy.int64),
    (i_u64 >> numpy.uint64(3)) | numpy.uint64(1 << 63),
    (i_f16.astype(numpy.float32) * s_f32).astype(numpy.float16),
    i_f64 > s_f64,
    (i_c64 * numpy.complex64(2 + 1j)).astype(numpy.complex64),
    i_i32 * 3 - 7,
]
answer = [a for pair in zip(expected_outputs, [None] * len(inputs)) for a in pair] + [None] * 5
for out, want in zip(outputs, expected_outputs):
    assert want.dtype == out.dtype, (want.dtype, out.dtype)

tune_params = {"block_size_x": [64, 128, 256, 512], "elems_per_thread": [1, 2]}

results, env = kernel_tuner.tune_kernel("mixed_types", kernel_string, n, args, tune_params,
                                        grid_div_x=["block_size_x", "elems_per_thread"], answer=answer, atol=1e-6)

expected = checks.every_config(tune_params)

if not kernel_tuner.dry_run():
    assert [{k: r[k] for k in tune_params} for r in results] == expected
    checks.check_measured(results, expected)
    print("dtypes: OK, best", {k: env["best_config"][k] for k in tune_params})
else:
    rows = checks.check_planned(env, expected, n, lambda p: p["block_size_x"] * p["elems_per_thread"])
    for t in ("int8", "uint16", "int64", "uint64", "half", "double", "float2", "{value: 200, type: uint8}",
              "{value: -3, type: int64}", "{value: 1.5, type: float}", "{value: 0.25, type: double}"):
        assert t in env["space"], (t, env["space"])
    print("dtypes: dry run OK,", len(rows), "configs planned")
