"""simulation_mode: a Kernel Tuner cache answers every config, no GPU is touched, and tiletune's
own strategy searches it (`import-kt-cache` makes the cache a recording, `tune --replay` runs the
strategy on it). The results are the cache's entries in the order the strategy asked for them."""
import os
import time

from . import _engine, _kt_cache
from ._results import best_config, config_line, parse_assignments, totals


def simulate(a):
    """tune_kernel's simulation_mode; `a` holds tune_kernel's arguments and what it derived."""
    from . import UNITS, _Workdir
    from ._space import Space

    cache_file = a["cache_file"]
    if not cache_file or not os.path.exists(cache_file):
        raise ValueError(f"Simulation mode requires an existing cachefile: file {cache_file} does not exist")
    tune_params, quiet = a["tune_params"], a["quiet"]
    cached = _kt_cache.read(cache_file)
    _kt_cache.check(cached, cache_file, a["kernel_name"], a["problem_size"], tune_params)
    device_name = cached.get("device_name", "Simulation")
    if not quiet:
        print("Simulating: " + str(device_name))
    entries = cached["cache"]
    plan = a["plan"]
    with _Workdir() as workdir:
        space = Space(workdir, a["kernel_name"], a["source"], a["lang"], a["problem_size"], a["arguments"],
                      tune_params, grid_div=(a["grid_div_x"], a["grid_div_y"], a["grid_div_z"]),
                      block_size_names=a["block_size_names"], restrictions=a["restrictions"], smem_args=a["smem_args"],
                      cmem_args=a["cmem_args"], compiler_options=a["compiler_options"], defines=a["defines"],
                      simulation=True)
        recording = os.path.join(workdir, "recording.csv")
        _engine.run(["import-kt-cache", cache_file, "-o", recording, "--name", space.family, "--space",
                     os.path.join(workdir, "recorded_space.yaml")], True)
        argv = ["tune", space.yaml_path, "--replay", recording, "--strategy", plan.strategy, "--format", "json"]
        if plan.budget:
            argv += ["--budget", plan.budget]
        _, out = _engine.run(argv, True)
    import json
    trace = json.loads(out)
    results = []
    simulated_ms = 0.0
    keys = list(tune_params) + ["time"] + list(a["metrics"] or {})
    for problem in trace.get("problems", []):
        for evaluation in problem.get("evaluations", []):
            labels = parse_assignments(evaluation["params"])
            config = {p.name: p.value_of_label[labels[p.name]] for p in space.params}
            key = _kt_cache.entry_key(tune_params, config)
            if key not in entries:
                raise ValueError(f"kernel configuration {key} not in cache, does not pass extra restriction check - "
                                 "in simulation mode, all configurations must be present in the cache")
            r = dict(entries[key])
            simulated_ms += sum(float(r.get(k, 0) or 0) for k in ("compile_time", "verification_time", "benchmark_time"))
            results.append(r)
            if not quiet:
                print(config_line(r, keys, UNITS))
    env = {"device_name": device_name, "iterations": a["iterations"], "compiler_options": a["compiler_options"],
           "simulation": True, "simulated_time": simulated_ms}
    best = best_config(results, a["objective"], a["higher"])
    if best is not None:
        env["best_config"] = best
        if not quiet:
            print("best performing configuration:")
            print(config_line(best, keys, UNITS))
    elif not quiet:
        print("no results to report")
    return results, totals(results, env, 1000 * (time.perf_counter() - a["started"]) + simulated_ms)
