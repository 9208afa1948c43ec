"""Kernel Tuner's NVMLObserver, per config as tiletune measures it through NVML: energy
(nvml_energy, J per run) and power (nvml_power, W) with `tune --energy` (the board's energy
counter over a window of back-to-back runs, docs/guides/energy.md); the SM clock (core_freq, MHz),
the memory clock (mem_freq, MHz) and the temperature (temperature, degrees C) as the mean of the
readings the worker takes while it times each trial, with or without --energy. power_readings and
gr_voltage are not measured: tune_kernel refuses them, naming them. The helpers that list clocks
and power limits to set while tuning raise KernelTunerArgumentError: tiletune never sets them."""
from .._errors import KernelTunerArgumentError

SUPPORTED = ["power_readings", "nvml_power", "nvml_energy", "core_freq", "mem_freq", "temperature", "gr_voltage"]
MAPPED = ("nvml_energy", "nvml_power", "core_freq", "mem_freq", "temperature")
NEEDS_ENERGY = ("nvml_energy", "nvml_power")   # measured only by `tune --energy`


class NVMLObserver:
    def __init__(self, observables, device=0, save_all=False, nvidia_smi_fallback=None, use_locked_clocks=False,
                 continuous_duration=1):
        for obs in observables:
            if obs not in SUPPORTED:
                raise ValueError(f"Observable {obs} not in supported: {SUPPORTED}")
        self.observables = list(observables)
        self.device = device
        self.use_locked_clocks = use_locked_clocks
        self.keys = tuple(self.observables)


def get_nvml_pwr_limits(device, n=None, quiet=False):
    """Kernel Tuner's list of power limits to tune over: refused, tiletune never sets one."""
    raise KernelTunerArgumentError("get_nvml_pwr_limits", "it lists power limits to set while tuning; tiletune never "
                                                          "changes the GPU's power limit: tune with the card as it is")


def get_nvml_gr_clocks(device, n=None, quiet=False):
    """Kernel Tuner's list of graphics clocks to tune over: refused, tiletune never sets one."""
    raise KernelTunerArgumentError("get_nvml_gr_clocks", "it lists graphics clocks to set while tuning; tiletune "
                                                         "never changes the GPU's clocks: tune with the card as it is")


def get_nvml_mem_clocks(device, n=None, quiet=False):
    """Kernel Tuner's list of memory clocks to tune over: refused, tiletune never sets one."""
    raise KernelTunerArgumentError("get_nvml_mem_clocks", "it lists memory clocks to set while tuning; tiletune "
                                                          "never changes the GPU's clocks: tune with the card as it is")
