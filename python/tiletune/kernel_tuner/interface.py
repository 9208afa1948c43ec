"""Kernel Tuner's module kernel_tuner.interface, where its tune_kernel, run_kernel and
tune_kernel_T1 live (the same functions as the package's), with the names of its option groups
(Options, _kernel_options, _device_options, _tuning_options) that some scripts import.
_check_user_input is Kernel Tuner's internal check before its own compile-and-launch machinery,
which tiletune does not have: it raises KernelTunerArgumentError naming itself."""
from collections import OrderedDict

from . import run_kernel, tune_kernel, tune_kernel_T1  # noqa: F401
from ._errors import KernelTunerArgumentError


class Options(dict):
    """A dict whose keys read as attributes (Kernel Tuner's option groups)."""

    def __getattr__(self, name):
        if name in self:
            return self[name]
        raise AttributeError(name)

    def __setattr__(self, name, value):
        self[name] = value


def _names(*names):
    return OrderedDict((n, (f"tune_kernel's {n}", "")) for n in names)


# The arguments of each group, as Kernel Tuner sorts tune_kernel's arguments.
_kernel_options = _names("kernel_name", "kernel_source", "problem_size", "arguments", "grid_div_x", "grid_div_y",
                         "grid_div_z", "smem_args", "cmem_args", "texmem_args", "block_size_names", "defines")
_tuning_options = _names("tune_params", "restrictions", "answer", "atol", "verify", "strategy", "strategy_options",
                         "cache", "metrics", "simulation_mode", "objective", "objective_higher_is_better")
_device_options = _names("device", "platform", "quiet", "compiler", "compiler_options", "iterations", "observers",
                         "lang", "verbose")


def _check_user_input(kernel_name, kernelsource, arguments, block_size_names):
    raise KernelTunerArgumentError("interface._check_user_input", "Kernel Tuner's internal check before its own "
                                   "compile-and-launch machinery, which tiletune does not have: tune_kernel and "
                                   "run_kernel check their arguments themselves")
