"""Kernel Tuner's observer base classes (kernel_tuner.observers.observer), so that a script's
imports resolve; an observer of a script's own runs inside Kernel Tuner's benchmark loop, which
tiletune does not have, and tune_kernel refuses it naming the class."""
from . import BenchmarkObserver, _Refused


class ContinuousObserver(_Refused):
    why = "an observer of your own runs inside Kernel Tuner's benchmark loop, which tiletune does not have"


class OutputObserver(_Refused):
    why = "an observer of your own runs inside Kernel Tuner's benchmark loop; use verify= to check outputs"


class PrologueObserver(_Refused):
    why = "an observer of your own runs inside Kernel Tuner's benchmark loop, which tiletune does not have"


__all__ = ["BenchmarkObserver", "ContinuousObserver", "OutputObserver", "PrologueObserver"]
