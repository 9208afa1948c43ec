"""Kernel Tuner's older module path for NVMLObserver (kernel_tuner.nvml)."""
from .observers.nvml import NVMLObserver, get_nvml_gr_clocks, get_nvml_mem_clocks, get_nvml_pwr_limits  # noqa: F401
