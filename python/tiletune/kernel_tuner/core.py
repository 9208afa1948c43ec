"""Kernel Tuner's internal module kernel_tuner.core (KernelSource, DeviceInterface, KernelInstance),
so that a script importing it reaches the point where it uses it: these compile and launch a
kernel from Python, which tiletune's worker does, so constructing one raises
KernelTunerArgumentError naming it. run_kernel (one config, run once, its outputs back) and
tune_kernel are the way in."""
from ._errors import KernelTunerArgumentError


class _Internal:
    def __init__(self, *args, **kwargs):
        raise KernelTunerArgumentError(
            f"core.{type(self).__name__}", "Kernel Tuner's machinery for compiling and launching kernels from Python "
                                           "does not map: tiletune's worker runs them; use run_kernel (one config, "
                                           "run once, the arguments back) or tune_kernel")


class KernelSource(_Internal):
    pass


class DeviceInterface(_Internal):
    pass


class KernelInstance(_Internal):
    pass


__all__ = ["KernelSource", "DeviceInterface", "KernelInstance"]
