"""Kernel Tuner's strategies mapped onto tiletune's (docs: "Coming from Kernel Tuner").

Each Kernel Tuner strategy runs as the tiletune strategy of its family; max_fevals and time_limit
become tiletune's budget; random_sample's fraction (0.1 by default, as in Kernel Tuner) becomes a
budget of that share of the configs. The options that tune the inner workings of Kernel Tuner's
own algorithms (popsize, maxiter, T, ...) are accepted where Kernel Tuner accepts them and said to
have no effect; any other option is refused, as Kernel Tuner refuses it."""
from ._errors import KernelTunerArgumentError

# Kernel Tuner name -> (tiletune strategy, Kernel Tuner's default max_fevals or None,
#                       the strategy's own options Kernel Tuner accepts)
STRATEGIES = {
    "brute_force": ("exhaustive", None, ()),
    "random_sample": ("random", None, ("fraction",)),
    "greedy_mls": ("local", 100, ("neighbor", "restart", "order", "randomize")),
    "mls": ("local", 100, ("neighbor", "restart", "order", "randomize")),
    "ordered_greedy_mls": ("local", 100, ("neighbor", "restart", "order", "randomize")),
    "greedy_ils": ("local", 100, ("neighbor", "restart", "no_improvement", "random_walk")),
    "simulated_annealing": ("local", None, ("T", "T_min", "alpha", "maxiter", "constraint_aware")),
    "minimize": ("local", None, ("method", "maxiter")),
    "basinhopping": ("local", None, ("method", "T", "maxiter")),
    "dual_annealing": ("local", None, ("method", "maxiter")),
    "genetic_algorithm": ("genetic", None, ("popsize", "maxiter", "method", "mutation_chance", "constraint_aware")),
    "diff_evo": ("genetic", None, ("method", "popsize", "maxiter")),
    "pso": ("genetic", None, ("popsize", "maxiter", "w", "c1", "c2")),
    "firefly_algorithm": ("genetic", None, ("popsize", "maxiter", "B0", "gamma", "alpha")),
    "bayes_opt": ("forest", None, ("popsize", "maxiter", "method", "samplingmethod", "covariancekernel",
                                   "covariancelengthscale")),
    "skopt": ("forest", None, ("method", "maxiter", "popsize")),
}
COMMON_OPTIONS = ("max_fevals", "time_limit", "x0", "searchspace_construction_options", "constraint_aware")


class Plan:
    """What the tune command gets: --strategy and --budget, plus notes to print."""

    def __init__(self, strategy, budget, notes):
        self.strategy = strategy
        self.budget = budget
        self.notes = notes


def plan(strategy, strategy_options):
    name = strategy or "brute_force"
    if isinstance(getattr(name, "kernel_tuner_strategy", None), str):  # a module of .strategies
        name = name.kernel_tuner_strategy
    if not isinstance(name, str):
        if hasattr(name, "tune"):  # a module or object of one's own with Kernel Tuner's tune(...)
            raise KernelTunerArgumentError("strategy", "a strategy object of your own does not map: tiletune runs its "
                                                       "own strategies (exhaustive, random, local, genetic, forest)")
        raise KernelTunerArgumentError("strategy", f"expected a strategy's name, got {type(name).__name__}")
    if name not in STRATEGIES:
        if name == "pyatf_strategies":
            raise KernelTunerArgumentError("strategy", "pyatf_strategies does not map: choose one of "
                                                       + ", ".join(STRATEGIES))
        raise ValueError(f"Unkown strategy {name}, must be one of: {', '.join(STRATEGIES)}")
    tiletune_strategy, default_fevals, own = STRATEGIES[name]
    options = dict(strategy_options or {})
    notes = []
    for key in options:
        if key not in COMMON_OPTIONS and key not in own:
            raise ValueError(f"Unrecognized option {key} in strategy_options (allowed: "
                             f"{list(COMMON_OPTIONS) + list(own)})")
    for key in ("x0", "searchspace_construction_options"):
        if key in options:
            raise KernelTunerArgumentError(f"strategy_options[{key!r}]", "does not map onto tiletune's strategies")
    ignored = [k for k in options if k in own and k != "fraction"] + \
              (["constraint_aware"] if "constraint_aware" in options else [])
    if ignored:
        notes.append(f"strategy_options {', '.join(ignored)}: Kernel Tuner's {name} knobs, no effect on tiletune's "
                     f"{tiletune_strategy} search")
    budget = None
    if name == "brute_force":
        if "max_fevals" in options or "time_limit" in options:
            notes.append("brute_force evaluates every config: max_fevals and time_limit are ignored, as in Kernel "
                         "Tuner 1.4")
        return Plan(tiletune_strategy, None, notes)
    fevals = options.get("max_fevals", default_fevals)
    if name == "random_sample" and "max_fevals" not in options:
        fraction = options.get("fraction", 0.1)
        if not 0 < float(fraction) <= 1:
            raise KernelTunerArgumentError("strategy_options['fraction']", f"{fraction!r} is not in (0, 1]")
        budget = f"{float(fraction) * 100:g}%"
    if fevals is not None:
        if int(fevals) != fevals or fevals < 1:
            raise KernelTunerArgumentError("strategy_options['max_fevals']", f"{fevals!r} is not a whole number >= 1")
        budget = str(int(fevals))
    if "time_limit" in options:
        limit = float(options["time_limit"])
        if not limit > 0:
            raise KernelTunerArgumentError("strategy_options['time_limit']", f"{limit!r} is not a positive time")
        if budget is not None:
            notes.append(f"time_limit {limit:g} s and a count of {budget}: tiletune takes one budget, the time limit")
        budget = f"{limit:g}s"
    return Plan(tiletune_strategy, budget, notes)
