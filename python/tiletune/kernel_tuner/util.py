"""The helpers of Kernel Tuner's util module that scripts call themselves, with Kernel Tuner 1.4's
names and behaviour: the best config of a list of results (to chain a second tuning to the first
one's best), a config as a string, the total timings, the metrics, the error values of failed
configs (ErrorConfig and its kinds, what a failed config's objective holds), JSON of numpy values,
and the small file helpers. What Kernel Tuner keeps here for its own runners (device checks,
restriction solvers, grid computations) is done by tiletune's engine and not repeated here."""
import json
import os
import sys
import tempfile

default_block_size_names = ["block_size_x", "block_size_y", "block_size_z"]


class ErrorConfig(str):
    """The objective value of a config that did not give a measurement. Its text is its kind's
    name, so that it compares equal to the string Kernel Tuner writes to caches and prints."""

    def __new__(cls, text=None):
        return super().__new__(cls, cls.__name__ if text is None else text)

    def __str__(self):
        return self.__class__.__name__

    def __repr__(self):
        return self.__class__.__name__


class InvalidConfig(ErrorConfig):
    """Pruned: a restriction or a resource limit."""


class CompilationFailedConfig(ErrorConfig):
    """The kernel did not compile for this config."""


class RuntimeFailedConfig(ErrorConfig):
    """Launch failure, fault, timeout or a wrong result."""


ERROR_KINDS = {k.__name__: k for k in (InvalidConfig, CompilationFailedConfig, RuntimeFailedConfig)}


def error_config(name):
    """The ErrorConfig of a kind's name ("RuntimeFailedConfig"), as tune_kernel's results hold it."""
    return ERROR_KINDS.get(name, RuntimeFailedConfig)()


class NpEncoder(json.JSONEncoder):
    """json.dump's encoder for numpy scalars and arrays (as Kernel Tuner's)."""

    def default(self, obj):
        import numpy
        if isinstance(obj, numpy.integer):
            return int(obj)
        if isinstance(obj, numpy.floating):
            return float(obj)
        if isinstance(obj, numpy.ndarray):
            return obj.tolist()
        return super().default(obj)


def get_best_config(results, objective, objective_higher_is_better=False):
    """The result with the best objective value; only float values count (a failed config's
    ErrorConfig never wins), as in Kernel Tuner."""
    func = max if objective_higher_is_better else min
    ignore = -sys.float_info.max if objective_higher_is_better else sys.float_info.max
    return func(results, key=lambda r: r[objective] if isinstance(r[objective], float) else ignore)


def get_config_string(params, keys=None, units=None):
    """"k=v, ..." for the keys (all when None), floats to three decimals, a unit after a value
    where units names one."""
    from ._results import config_line
    return config_line(params, list(params) if not keys else list(keys), units or {})


def get_instance_string(params):
    """A config's values joined by "_" (Kernel Tuner's name for a kernel instance)."""
    return "_".join(str(v) for v in params.values())


def get_total_timings(results, env, overhead_time):
    """The sums of the results' timing keys in env (total_framework_time, ...), and overhead_time
    less them."""
    from ._results import totals
    return totals(results, env, overhead_time)


def process_metrics(params, metrics):
    """Computes the metrics (strings or functions of the result) into params, in order, each
    seeing the ones before; returns params."""
    from ._results import check_metrics, compute_metrics
    check_metrics(metrics)
    compute_metrics(params, metrics)
    return params


def normalize_verify_function(v):
    """A verify function as one taking atol (Kernel Tuner calls it with atol=...)."""
    from . import _normalize_verify
    return _normalize_verify(v)


def looks_like_a_filename(kernel_source):
    """Whether kernel_source is a file name rather than code (Kernel Tuner's heuristic)."""
    from ._source import looks_like_a_filename as looks
    return looks(kernel_source)


def read_file(filename):
    """The text of a file, or None where there is none."""
    if not os.path.isfile(filename):
        return None
    with open(filename, "r", encoding="utf-8") as f:
        return f.read()


def write_file(filename, string):
    """Writes string to filename (replacing it)."""
    with open(filename, "w", encoding="utf-8") as f:
        f.write(string)


def get_temp_filename(suffix=None):
    """The name of a new, closed temporary file."""
    fd, name = tempfile.mkstemp(suffix=suffix or "", prefix="temp_", dir=os.getcwd())
    os.close(fd)
    return name


def delete_temp_file(filename):
    """Removes a file; one that is gone already is not an error."""
    try:
        os.remove(filename)
    except FileNotFoundError:
        pass


def read_cache(cache, open_cache=True):
    """A Kernel Tuner cache file as a dict (one an interrupted run left open reads too)."""
    from ._kt_cache import read
    return read(cache)


def get_objective_defaults(objective, objective_higher_is_better):
    """("time", False) by default; the direction of Kernel Tuner's known objectives."""
    from ._results import objective_defaults
    return objective_defaults(objective, objective_higher_is_better)
