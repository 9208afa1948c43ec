"""Kernel Tuner's module path kernel_tuner.observers.tegra."""
from . import TegraObserver  # noqa: F401
