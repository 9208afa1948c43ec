"""Kernel Tuner's observers, as far as tiletune measures the same things: NVMLObserver's energy
and power (tiletune's NVML energy measurement, `tune --energy`), its SM and memory clocks and
temperature (read while each trial is timed) and RegisterObserver's register count (every trial
records it). The others are accepted by their constructors, so that a script
imports as it is, and refused by tune_kernel with the reason."""

from .nvml import NVMLObserver


class _Refused:
    """An observer tiletune has no measurement for."""

    why = "tiletune has no such measurement"

    def __init__(self, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs


class RegisterObserver:
    """Registers per thread of each config: the result key num_regs."""

    keys = ("num_regs",)


class PowerSensorObserver(_Refused):
    why = "it reads an external PowerSensor device; tiletune measures energy through NVML (NVMLObserver)"


class PMTObserver(_Refused):
    why = "it reads the PMT library's sensors; tiletune measures energy through NVML (NVMLObserver)"


class NCUObserver(_Refused):
    why = "it runs Nsight Compute per config; tiletune records registers, occupancy and time, not counters"


class TegraObserver(_Refused):
    why = "it reads a Jetson's sensors and clocks; tiletune measures energy through NVML"


class BenchmarkObserver(_Refused):
    why = "an observer class of your own runs inside Kernel Tuner's benchmark loop, which tiletune does not have"


# Kernel Tuner's base classes (kernel_tuner.observers exports them), after BenchmarkObserver they build on.
from .observer import (AccuracyObserver, ContinuousObserver, IterationObserver, OutputObserver,  # noqa: E402
                       PrologueObserver)

__all__ = ["NVMLObserver", "RegisterObserver", "PowerSensorObserver", "PMTObserver", "NCUObserver", "TegraObserver",
           "BenchmarkObserver", "IterationObserver", "ContinuousObserver", "OutputObserver", "PrologueObserver",
           "AccuracyObserver"]
