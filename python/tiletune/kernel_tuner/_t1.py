"""Kernel Tuner's tune_kernel_T1: a T1 input file tuned through tune_kernel, as Kernel Tuner 1.4
reads one (interface.tune_kernel_T1). The file's params, conditions, arguments (float vectors
filled with a constant or randn, float and int32 scalars, constant memory), ProblemSize and
GridDiv, Search and Budget become tune_kernel's arguments; what Kernel Tuner does not read from a
T1 file is refused by name, as it refuses it. `tiletune import-t1` reads every field of the
schema into a tiletune space instead (docs/reference/import-t1.md)."""
import ast
import os

from ._errors import KernelTunerArgumentError

# What a Values or Size string may call: Kernel Tuner evaluates them in Python; here only these.
_NAMES = {"__builtins__": {}, "range": range, "list": list, "len": len, "min": min, "max": max, "int": int,
          "float": float, "sum": sum, "abs": abs, "round": round}


def _evaluated(text, names, where):
    if not isinstance(text, str):
        return text
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        pass
    try:
        return eval(text, dict(_NAMES), dict(names))  # noqa: S307: the names above only, as Kernel Tuner evaluates it
    except Exception as e:
        raise KernelTunerArgumentError(where, f"{text[:80]!r} does not evaluate: {type(e).__name__}: {e}") from None


def _kernel_source(spec, input_filepath):
    """KernelFile where Kernel Tuner looks for it: as given, beside the T1 file, one folder up."""
    name = spec["KernelFile"]
    here = os.path.dirname(os.path.abspath(input_filepath))
    for candidate in (name, os.path.join(here, name), os.path.join(os.path.dirname(here), name)):
        if os.path.isfile(candidate):
            return candidate
    raise KernelTunerArgumentError("KernelSpecification.KernelFile", f"{name!r} is not beside {input_filepath} "
                                                                     "nor one folder up")


def _tune_params(space):
    params = {}
    for i, p in enumerate(space["TuningParameters"]):
        where = f"ConfigurationSpace.TuningParameters[{i}]"
        if p.get("Type") not in ("int", "float", "string"):
            raise KernelTunerArgumentError(where, f"Type {p.get('Type')!r}: Kernel Tuner converts int, float and "
                                                  "string params (`tiletune import-t1` maps the others)")
        values = _evaluated(p["Values"], {}, where + ".Values")
        if not isinstance(values, (list, tuple)) or not values:
            raise KernelTunerArgumentError(where + ".Values", "not a non-empty list of values")
        params[p["Name"]] = list(values)
    return params


def _arguments(spec, tune_params, problem_size):
    import numpy
    arguments, cmem = [], {}
    for i, arg in enumerate(spec["Arguments"]):
        where = f"KernelSpecification.Arguments[{i}]"
        kind, type_ = arg.get("MemoryType"), arg.get("Type")
        if kind == "Vector" and type_ == "float":
            size = _evaluated(arg["Size"], {**tune_params, "ProblemSize": problem_size}, where + ".Size")
            if isinstance(size, float) and size.is_integer():
                size = int(size)
            if not isinstance(size, int) or size < 1:
                raise KernelTunerArgumentError(where + ".Size", f"{size!r} is not a whole number of elements")
            if arg.get("FillType") == "Constant":
                value = numpy.full(size, arg.get("FillValue", 0)).astype(numpy.float32)
            elif arg.get("FillType") == "Random":
                value = numpy.random.randn(size).astype(numpy.float32)
            else:
                raise KernelTunerArgumentError(where + ".FillType", f"{arg.get('FillType')!r}: Kernel Tuner fills "
                                                                    "Constant and Random (`tiletune import-t1` more)")
        elif kind == "Scalar" and type_ in ("float", "int32"):
            value = (numpy.float32 if type_ == "float" else numpy.int32)(arg["FillValue"])
        else:
            raise KernelTunerArgumentError(where, f"a {kind} of {type_}: Kernel Tuner converts float vectors and float "
                                                  "and int32 scalars (`tiletune import-t1` maps every numeric type)")
        arguments.append(value)
        if arg.get("MemType") == "Constant":
            cmem[arg["Name"]] = value
    return arguments, cmem


def _search(document, strategy, strategy_options):
    options = dict(strategy_options or {})
    if strategy is None and "Search" in document:
        strategy = document["Search"].get("Name")
        for attribute in document["Search"].get("Attributes", []):
            options[attribute["Name"]] = attribute["Value"]
    if "Budget" in document:
        budget = document["Budget"][0]
        if budget.get("Type") == "ConfigurationCount":
            options["max_fevals"] = budget["BudgetValue"]
        elif budget.get("Type") == "TuningDuration":
            options["time_limit"] = budget["BudgetValue"]
        else:
            raise KernelTunerArgumentError("Budget[0].Type", f"{budget.get('Type')!r}: ConfigurationCount or "
                                                             "TuningDuration")
    if "custom_search_method_path" in options:
        raise KernelTunerArgumentError("strategy_options", "custom_search_method_path: a search class of your own "
                                                           "runs inside Kernel Tuner's loop; tiletune's strategies "
                                                           "are in `tiletune tune --strategy`")
    return strategy, options


def tune_kernel_t1(tune_kernel, input_filepath, cache_filepath, objective, objective_higher_is_better,
                   simulation_mode, output_T4, iterations, device, strategy, strategy_options):
    """Kernel Tuner's tune_kernel_T1 on tune_kernel: (results, env), or with output_T4 the T4
    metadata and results."""
    from . import file_utils
    document = file_utils.get_input_file(input_filepath)
    spec = document["KernelSpecification"]
    if "ProblemSize" not in spec:
        raise KernelTunerArgumentError("KernelSpecification.ProblemSize", "Kernel Tuner's T1 reader needs one (a "
                                                                          "GlobalSize alone: `tiletune import-t1`)")
    problem_size = spec["ProblemSize"]
    problem_size = tuple(problem_size) if isinstance(problem_size, list) else problem_size
    if device is None or isinstance(device, str):
        device = 0  # Kernel Tuner takes the file's Device.Name; tiletune tunes the GPU of this ordinal
    strategy, options = _search(document, strategy, strategy_options)
    if cache_filepath is None and "SimulationInput" in spec:
        cache_filepath = spec["SimulationInput"]
    tune_params = _tune_params(document["ConfigurationSpace"])
    restrictions = []
    for i, condition in enumerate(document["ConfigurationSpace"].get("Conditions", [])):
        if not isinstance(condition.get("Expression"), str):
            raise KernelTunerArgumentError(f"ConfigurationSpace.Conditions[{i}].Expression", "not a string")
        restrictions.append(condition["Expression"])
    arguments, cmem = _arguments(spec, tune_params, problem_size)
    grid = {d: (spec.get(f"GridDiv{d.upper()}") or None) for d in "xyz"}
    results, env = tune_kernel(spec["KernelName"], _kernel_source(spec, input_filepath), problem_size, arguments,
                               tune_params, device=device, grid_div_x=grid["x"], grid_div_y=grid["y"],
                               grid_div_z=grid["z"], cmem_args=cmem or None, restrictions=restrictions or None,
                               lang=spec.get("Language"), cache=cache_filepath, simulation_mode=simulation_mode,
                               quiet=True, verbose=False, iterations=iterations, strategy=strategy,
                               strategy_options=options, objective=objective,
                               objective_higher_is_better=objective_higher_is_better)
    if output_T4:
        return file_utils.get_t4_metadata(), file_utils.get_t4_results(results, tune_params, objective=objective)
    return results, env
