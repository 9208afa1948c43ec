"""Kernel Tuner's module path kernel_tuner.observers.ncu."""
from . import NCUObserver  # noqa: F401
