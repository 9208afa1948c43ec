"""The error of an argument that does not map onto tiletune: one line that names it."""


class KernelTunerArgumentError(ValueError):
    """A tune_kernel / run_kernel argument tiletune cannot honour. str(e) is
    "tiletune.kernel_tuner: ARGUMENT: what does not map, and what to do"."""

    def __init__(self, argument, why):
        super().__init__(f"tiletune.kernel_tuner: {argument}: {why}")
        self.argument = argument


class KernelTunerTypeError(KernelTunerArgumentError, TypeError):
    """An argument of a type Kernel Tuner refuses with a TypeError: named like every argument
    error (str(e) starts "tiletune.kernel_tuner: ARGUMENT: ", then Kernel Tuner's own words), and
    still a TypeError for a script that catches one."""
