"""Kernel Tuner's frequency model (kernel_tuner.energy.energy, the "going green" example): it sets
the GPU's application or locked clocks to a series of frequencies and fits power to them.
tiletune never changes the GPU's clocks or power limit (it measures the card as it is), so each
function raises KernelTunerArgumentError naming itself."""
from .._errors import KernelTunerArgumentError

_WHY = ("sets the GPU's clocks to a series of frequencies; tiletune never changes clocks or the power limit: it "
        "measures the card as it is (NVMLObserver's nvml_energy, nvml_power, core_freq per config)")


def create_performance_frequency_model(device=0, n_samples=10, verbose=False, nvidia_smi_fallback=None,
                                       use_locked_clocks=False):
    raise KernelTunerArgumentError("energy.create_performance_frequency_model", _WHY)


def get_frequency_range_around_ridge(ridge_frequency, all_frequencies, freq_range, number_of_freqs, verbose=False):
    raise KernelTunerArgumentError("energy.get_frequency_range_around_ridge", "it selects clocks to set for "
                                   "energy tuning; tiletune never changes the GPU's clocks")


def get_frequency_power_relation_fp32(device, n_samples=10, nvidia_smi_fallback=None, use_locked_clocks=False,
                                      cache=None, simulation_mode=None):
    raise KernelTunerArgumentError("energy.get_frequency_power_relation_fp32", _WHY)


def estimated_voltage(clocks, clock_threshold, voltage_scale):
    raise KernelTunerArgumentError("energy.estimated_voltage", "part of Kernel Tuner's clock sweep model, which "
                                                               "tiletune does not have")


def estimated_power(clocks, clock_threshold, voltage_scale, clock_scale, power_max):
    raise KernelTunerArgumentError("energy.estimated_power", "part of Kernel Tuner's clock sweep model, which "
                                                             "tiletune does not have")
