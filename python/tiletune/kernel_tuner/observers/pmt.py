"""Kernel Tuner's module path kernel_tuner.observers.pmt."""
from . import PMTObserver  # noqa: F401
