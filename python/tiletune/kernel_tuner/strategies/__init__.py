"""Kernel Tuner's strategy modules (kernel_tuner.strategies.minimize, ...), so that a script may
pass one as `strategy=` instead of its name, as Kernel Tuner's vector_add_custom_strategy example
does: tune_kernel maps the module to its name and runs tiletune's strategy of that family
(docs/guides/kernel-tuner.md). Each name is a module here, importable as Kernel Tuner's is
(`import ...strategies.minimize`, `from ...strategies import minimize`); calling its `tune`
directly is Kernel Tuner's own machinery, which tiletune does not have, and is refused."""
import sys
import types

from .._errors import KernelTunerArgumentError
from .._strategies import STRATEGIES


def _module(name):
    module = types.ModuleType(f"{__name__}.{name}", f"Kernel Tuner's {name} strategy, run as tiletune's "
                                                   f"{STRATEGIES[name][0]} search when passed as strategy=.")
    module.kernel_tuner_strategy = name  # what tune_kernel reads to map the module to its name
    module._options = {k: (f"Kernel Tuner's {name} option", None) for k in STRATEGIES[name][2]}

    def tune(searchspace, runner, tuning_options):
        raise KernelTunerArgumentError(f"strategies.{name}.tune", "Kernel Tuner's search loop is not here: pass "
                                                                  f"strategy={name!r} (or the module) to tune_kernel")
    module.tune = tune
    return module


for _name in STRATEGIES:
    globals()[_name] = sys.modules[f"{__name__}.{_name}"] = _module(_name)

__all__ = list(STRATEGIES)
