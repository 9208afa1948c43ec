"""Kernel Tuner's backend modules (kernel_tuner.backends.pycuda, .nvcuda, .cupy, .hip, .opencl,
.c, .compiler, .backend), so that a script importing a backend class reaches the point where it
uses it: constructing one raises KernelTunerArgumentError naming it. A backend drives a GPU (or a
host compiler) from Python; tiletune's worker does that for CUDA, and the other languages are
outside CUDA kernel tuning. run_kernel and tune_kernel are the way in."""
import sys
import types

from ._errors import KernelTunerArgumentError

# module -> its classes, and what each backend is for
_BACKENDS = {
    "pycuda": (("PyCudaFunctions",), "CUDA through PyCUDA"),
    "nvcuda": (("CudaFunctions",), "CUDA through NVIDIA's cuda-python"),
    "cupy": (("CupyFunctions",), "CUDA through CuPy"),
    "hip": (("HipFunctions",), "HIP (AMD GPUs)"),
    "opencl": (("OpenCLFunctions",), "OpenCL"),
    "c": (("CFunctions",), "host code in C, C++ or Fortran"),
    "compiler": (("CompilerFunctions",), "host code built with a C, C++ or Fortran compiler"),
    "backend": (("Backend", "GPUBackend", "CompilerBackend"), "the base classes of Kernel Tuner's backends"),
}


def _refusing(module, name, what):
    """A class whose construction raises, naming module.name (module relative to this package)."""
    def __init__(self, *args, **kwargs):
        raise KernelTunerArgumentError(
            f"{module}.{name}", f"Kernel Tuner's backend for {what} drives the device from Python; tiletune's "
                                         "worker compiles and runs CUDA kernels: use run_kernel or tune_kernel "
                                         "(lang='CUDA', 'nvcuda' or 'cupy')")
    return type(name, (), {"__init__": __init__, "__module__": f"{__package__}.{module}"})


for _module, (_classes, _what) in _BACKENDS.items():
    _mod = types.ModuleType(f"{__name__}.{_module}", f"Kernel Tuner's backend module for {_what}; refused when used.")
    for _class in _classes:
        setattr(_mod, _class, _refusing("backends." + _module, _class, _what))
    globals()[_module] = sys.modules[_mod.__name__] = _mod
