"""Kernel Tuner's observer base classes (kernel_tuner.observers.observer), so that a script's
imports resolve and its own subclasses of them construct; an observer of a script's own runs
inside Kernel Tuner's benchmark loop, which tiletune does not have, and tune_kernel refuses it
naming the class."""
from . import BenchmarkObserver, _Refused


class IterationObserver(BenchmarkObserver):
    why = "an observer of your own runs inside Kernel Tuner's benchmark loop, which tiletune does not have"


class AccuracyObserver(BenchmarkObserver):
    why = ("an accuracy observer computes an error metric of each config's outputs in Python inside Kernel Tuner's "
           "benchmark loop; tiletune checks outputs as pass or fail (answer= with atol=, or verify=) and records no "
           "Python-side metric of them")


class ContinuousObserver(_Refused):
    why = "an observer of your own runs inside Kernel Tuner's benchmark loop, which tiletune does not have"


class OutputObserver(_Refused):
    why = "an observer of your own runs inside Kernel Tuner's benchmark loop; use verify= to check outputs"


class PrologueObserver(_Refused):
    why = "an observer of your own runs inside Kernel Tuner's benchmark loop, which tiletune does not have"


__all__ = ["BenchmarkObserver", "IterationObserver", "AccuracyObserver", "ContinuousObserver", "OutputObserver",
           "PrologueObserver"]
