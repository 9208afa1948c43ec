"""Kernel Tuner's module path kernel_tuner.observers.powersensor."""
from . import PowerSensorObserver  # noqa: F401
