"""Kernel Tuner's module path kernel_tuner.observers.register."""
from . import RegisterObserver  # noqa: F401
