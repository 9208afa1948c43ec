"""Kernel Tuner's pre-1.0 module path kernel_tuner.cuda (its PyCUDA backend, CudaFunctions), which
an older revision of its convolution_correct example imports to run a naive kernel itself:
constructing CudaFunctions raises KernelTunerArgumentError naming it; run_kernel does that job."""
from .backends import _refusing

CudaFunctions = _refusing("cuda", "CudaFunctions", "CUDA through PyCUDA (Kernel Tuner before 1.0)")
