#!/usr/bin/env python3
"""python_kernel: kernelbuilder.PythonKernel (Kernel Tuner's python_kernel example): one config of a
CUDA kernel built once and called like a Python function, inputs and outputs marked, the outputs
returned as a list of arrays; called twice with new inputs, each call runs the kernel on them."""

import numpy

import tiletune.kernel_tuner as kernel_tuner
from tiletune.kernel_tuner.kernelbuilder import PythonKernel

kernel_string = """
__global__ void scale_add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) c[i] = 2.0f * a[i] + b[i];
}
"""

n = 100_003
a = numpy.random.randn(n).astype(numpy.float32)
b = numpy.random.randn(n).astype(numpy.float32)
c = numpy.zeros_like(b)
args = [c, a, b, numpy.int32(n)]
inputs = [False, True, True, True]
outputs = [not i for i in inputs]

scale_add = PythonKernel("scale_add", kernel_string, n, args, {"block_size_x": 256}, inputs=inputs, outputs=outputs,
                         verbose=False)
first = scale_add(c, a, b, numpy.int32(n))
a2 = numpy.random.randn(n).astype(numpy.float32)
second = scale_add(c, a2, b, numpy.int32(n))

assert isinstance(first, list) and len(first) == 1, first  # only the outputs, always a list
assert first[0].shape == c.shape and first[0].dtype == c.dtype, (first[0].shape, first[0].dtype)

if not kernel_tuner.dry_run():
    assert numpy.allclose(first[0], 2 * a + b, atol=1e-6)
    assert numpy.allclose(second[0], 2 * a2 + b, atol=1e-6)  # the second call ran on the new input
    assert not c.any()  # a numpy argument is not written in place (Kernel Tuner copies it to the GPU)
    print("python_kernel: OK")
else:
    print("python_kernel: dry run OK, the kernel planned for both calls")
