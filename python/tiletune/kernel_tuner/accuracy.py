"""Kernel Tuner's accuracy module (kernel_tuner.accuracy): Tunable and TunablePrecision arguments
(one array per value of a param, e.g. the same data as half, float and double) and
ErrorMetricObserver. They construct as in Kernel Tuner, so that a script reaches tune_kernel,
which refuses them naming the argument or observer: a tiletune buffer has one type and one
content per space, and tiletune records no Python-side error metric of the outputs. Tune each
precision as a tune_kernel call of its own, with answer= and atol= (or verify=) for the check."""
from collections import UserDict

from .observers import AccuracyObserver


class Tunable(UserDict):
    """An argument that is one of several arrays, chosen per config by a param (its name, an
    expression of the params, or a function of them)."""

    def __init__(self, param_key, arrays):
        if isinstance(arrays, (tuple, list)):
            arrays = dict(enumerate(arrays))
        super().__init__(arrays)
        self.param_key = param_key

    def select_for_configuration(self, params):
        if callable(self.param_key):
            key = self.param_key(params)
        elif self.param_key in params:
            key = params[self.param_key]
        else:
            key = eval(self.param_key, dict(params), dict(params))  # Kernel Tuner's rule: an expression
        if key not in self:
            raise KeyError(f"'{key}' is not a valid parameter value, should be one of: "
                           + ", ".join(map(str, self.keys())))
        return self[key]

    def __call__(self, params):
        return self.select_for_configuration(params)


class TunablePrecision(Tunable):
    """The same data in several precisions (half, float and double by default), chosen per config
    by a param."""

    def __init__(self, param_key, array, dtypes=None):
        import numpy
        if not dtypes:
            dtypes = {"half": numpy.half, "float": numpy.single, "double": numpy.double}
        if isinstance(dtypes, (list, tuple)):
            dtypes = {name: numpy.dtype(name) for name in dtypes}
        if not isinstance(array, numpy.generic):
            array = numpy.array(array)
        super().__init__(param_key, {name: array.astype(dtype) for name, dtype in dtypes.items()})


class ErrorMetricObserver(AccuracyObserver):
    """Kernel Tuner's observer of an error metric (the mean squared error by default) between
    the answer and each config's outputs."""

    def __init__(self, metric=None, key="error"):
        super().__init__()
        self.metric = metric
        self.key = key


__all__ = ["Tunable", "TunablePrecision", "ErrorMetricObserver"]
