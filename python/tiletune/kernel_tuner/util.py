"""The helpers of Kernel Tuner's util module that scripts call themselves."""


def get_config_string(params, keys=None, units=None):
    """Kernel Tuner's util.get_config_string: "k=v, ..." for the keys (all when None), floats to
    three decimals, a unit after a value where units names one."""
    from ._results import config_line
    return config_line(params, list(params) if keys is None else list(keys), units or {})
