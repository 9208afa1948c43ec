#!/usr/bin/env python3
"""constant_memory: a 2D filter in a fixed __constant__ array of 33 x 33 floats (as Kernel Tuner's
convolution examples declare it), filled through cmem_args with a 7 x 7 filter: Kernel Tuner copies
the 49 floats into the start of the symbol, and so does tiletune (the rest stays zero). Then a
filter larger than the symbol (35 x 35) is one error before any config is measured, on a GPU: the
tuning stops with one line naming the symbol and both sizes, instead of a failure per config."""
import numpy

import tiletune.kernel_tuner as kernel_tuner
from _checks import check_measured, every_config

FW = FH = 7
kernel_string = """
// out[y][x] = sum over the FW x FH filter of in[y + j][x + i] * filter[j][i]; the filter lives in
// a __constant__ array large enough for any filter up to 33 x 33, row-major with FW columns.
__constant__ float d_filter[33 * 33];

__global__ void filter2d(float *out, const float *in, int w, int h) {
    int x = blockIdx.x * block_size_x + threadIdx.x;
    int y = blockIdx.y * block_size_y + threadIdx.y;
    if (x >= w || y >= h) return;
    float sum = 0.0f;
    for (int j = 0; j < FH; j++)
        for (int i = 0; i < FW; i++)
            sum += in[(y + j) * (w + FW - 1) + x + i] * d_filter[j * FW + i];
    out[y * w + x] = sum;
}
"""

w, h = 1024, 768
rng = numpy.random.default_rng(7)
image = rng.integers(-4, 5, (h + FH - 1, w + FW - 1)).astype(numpy.float32)  # small integers: exact sums
filt = rng.integers(-2, 3, (FH, FW)).astype(numpy.float32)
reference = numpy.zeros((h, w), dtype=numpy.float32)
for j in range(FH):
    for i in range(FW):
        reference += image[j:j + h, i:i + w] * filt[j, i]

args = [numpy.zeros((h, w), dtype=numpy.float32), image, numpy.int32(w), numpy.int32(h)]
tune_params = {"block_size_x": [16, 32, 64], "block_size_y": [2, 4, 8]}
options = ["-DFW=%d" % FW, "-DFH=%d" % FH]

results, env = kernel_tuner.tune_kernel("filter2d", kernel_string, (w, h), args, tune_params,
                                        cmem_args={"d_filter": filt}, answer=[reference, None, None, None],
                                        compiler_options=options)
expected = every_config(tune_params)
if kernel_tuner.dry_run():
    assert '"d_filter": {type: float, count: 49,' in env["space"], env["space"]
    rows = env["plan"]["rows"]
    assert len(rows) == len(expected) and all(r["status"] == "ok" for r in rows), rows
    print("constant_memory: dry run OK, a 7x7 filter for a 33x33 symbol,", len(rows), "configs planned")
else:
    check_measured(results, expected)
    best = {k: env["best_config"][k] for k in tune_params}
    print("constant_memory: a 7x7 filter in a 33x33 __constant__ array: every config OK, best", best)

    # A filter larger than the symbol: one error before any config is recorded.
    big = numpy.ones((35, 35), dtype=numpy.float32)
    try:
        kernel_tuner.tune_kernel("filter2d", kernel_string, (w, h), args, tune_params, cmem_args={"d_filter": big},
                                 compiler_options=options, quiet=True)
    except Exception as e:  # tiletune stopped: its one line is the error
        message = str(e)
        assert "module global 'd_filter'" in message and "smaller than the 1225 x float" in message, message
        assert "every config would fail the same way" in message, message
        print("constant_memory: a 35x35 filter for a 33x33 symbol stops at once:", message.splitlines()[0][:160])
    else:
        raise AssertionError("a filter larger than its __constant__ symbol was accepted")
