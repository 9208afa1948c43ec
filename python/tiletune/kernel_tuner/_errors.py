"""The error of an argument that does not map onto tiletune: one line that names it."""


class KernelTunerArgumentError(ValueError):
    """A tune_kernel / run_kernel argument tiletune cannot honour. str(e) is
    "tiletune.kernel_tuner: ARGUMENT: what does not map, and what to do"."""

    def __init__(self, argument, why):
        super().__init__(f"tiletune.kernel_tuner: {argument}: {why}")
        self.argument = argument
