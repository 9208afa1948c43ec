"""Kernel Tuner scripts on tiletune: `import tiletune.kernel_tuner as kernel_tuner`.

tune_kernel and run_kernel take Kernel Tuner 1.4's arguments and return what it returns; the
tuning is tiletune's engine (its worker, checks, timing, cache and strategies). The script's
problem becomes a tiletune space (docs/guides/kernel-tuner.md says how each argument maps,
what differs, and what is refused): arrays reach the engine as .npy files, restrictions as
Python constraints or, for callables, as the allowed configs, a verify function runs on each
config's outputs. What does not map raises KernelTunerArgumentError naming the argument.
Kernel Tuner's other module paths are here too: file_utils (T4 results and metadata), util,
integration (a results file and a header of device targets), observers and nvml.

    import numpy
    import tiletune.kernel_tuner as kernel_tuner
    results, env = kernel_tuner.tune_kernel("vector_add", kernel_string, n, [c, a, b, numpy.int32(n)],
                                            {"block_size_x": [128, 256, 512]}, answer=[a + b, None, None, None])
"""
import inspect
import logging
import math
import os
import shutil
import tempfile
import time
from datetime import datetime

from .._cache import TiletuneError
from . import _engine, _kt_cache, _strategies
from ._check import CheckServer, load_output
from ._errors import KernelTunerArgumentError
from ._keywords import compile_threads_argv, device_argv, refuse_extra
from ._results import (ResultBuilder, best_config, check_metrics, compute_metrics, config_line, kt_keys,
                       objective_defaults, totals)
from ._source import KernelSource, detect_language
from ._params import make_params
from ._space import Space
from .observers import NVMLObserver, RegisterObserver, _Refused
from .observers.nvml import MAPPED as NVML_MAPPED, NEEDS_ENERGY

__all__ = ["tune_kernel", "run_kernel", "tune_kernel_T1", "KernelTunerArgumentError"]
__version__ = "1.4.0+tiletune"  # the Kernel Tuner release whose interface this module takes

UNITS = {"time": "ms", "nvml_energy": "J", "nvml_power": "W", "core_freq": "MHz", "mem_freq": "MHz",
         "temperature": "C"}


def dry_run():
    """TILETUNE_KT_DRY_RUN=1: tune_kernel and run_kernel write the space and plan it (compile every
    config, no GPU) instead of tuning; they return ([], env) with env["plan"] and env["space"].
    TILETUNE_KT_DRY_RUN=K (K > 1) plans every K-th config only (`plan --sample K`)."""
    return os.environ.get("TILETUNE_KT_DRY_RUN", "") not in ("", "0")


def _plan(space, quiet):
    """`tiletune plan` of the space: every config (or every K-th) compiled, its launch and
    resources; no GPU."""
    import json
    argv = ["plan", space.yaml_path, "--format", "json", "--arch", "sm_90"]
    sample = os.environ.get("TILETUNE_KT_DRY_RUN", "1")
    if sample.isdigit() and int(sample) > 1:
        argv += ["--sample", sample]
    _, out = _engine.run(argv, True)
    with open(space.yaml_path, encoding="utf-8") as f:
        text = f.read()
    if not quiet:
        print(f"tiletune.kernel_tuner: dry run: the space is {space.yaml_path}")
    return [], {"dry_run": True, "plan": json.loads(out), "space": text, "space_path": space.yaml_path}


class _Workdir:
    """The directory the space is written to: $TILETUNE_KT_WORKDIR (kept, for people who want to
    go on with the CLI), else a temporary one removed at the end."""

    def __enter__(self):
        keep = os.environ.get("TILETUNE_KT_WORKDIR")
        if keep:
            os.makedirs(keep, exist_ok=True)
            self.path, self.temporary = os.path.abspath(keep), False
        else:
            self.path, self.temporary = tempfile.mkdtemp(prefix="tiletune-kt-"), True
        return self.path

    def __exit__(self, *exc):
        if self.temporary:
            shutil.rmtree(self.path, ignore_errors=True)


def _observed(observers):
    """The result keys the observers ask for, and whether energy is measured."""
    keys = []
    for obs in observers or []:
        if isinstance(obs, NVMLObserver):
            if obs.use_locked_clocks:
                raise KernelTunerArgumentError("observers", "NVMLObserver(use_locked_clocks=True): tiletune never "
                                                            "changes the GPU's clocks")
            for o in obs.observables:
                if o not in NVML_MAPPED:
                    raise KernelTunerArgumentError(
                        "observers", f"NVMLObserver observable {o!r} does not map: tiletune measures nvml_energy (J "
                                     "per run), nvml_power (W), core_freq and mem_freq (MHz) and temperature (C) "
                                     "per config")
            keys += obs.observables
        elif isinstance(obs, RegisterObserver):
            keys.append("num_regs")
        elif isinstance(obs, _Refused):
            raise KernelTunerArgumentError("observers", f"{type(obs).__name__} does not map: {obs.why}")
        else:
            raise KernelTunerArgumentError("observers", f"{type(obs).__name__} does not map: tiletune takes "
                                                        "NVMLObserver and RegisterObserver")
    return keys


def _normalize_verify(verify):
    if verify is None:
        return None
    try:
        takes_atol = "atol" in inspect.signature(verify).parameters
    except (TypeError, ValueError):
        takes_atol = True
    return verify if takes_atol else (lambda answer, result_host, atol: verify(answer, result_host))


def _check_iterations(iterations):
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise KernelTunerArgumentError("iterations", f"{iterations!r} is not a whole number >= 1")


def _check_device(device):
    if isinstance(device, bool) or not isinstance(device, int) or device < 0:
        raise KernelTunerArgumentError("device", f"{device!r} is not a CUDA device ordinal")


def _env(dev, iterations, compiler_options):
    major, _, minor = str(dev.get("compute_capability", "")).partition(".")
    return {"device_name": dev.get("name"), "cuda_version": dev.get("driver"),
            "compute_capability": major + minor, "iterations": iterations, "compiler_options": compiler_options,
            "device_properties": dev}


def tune_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None, grid_div_y=None,
                grid_div_z=None, restrictions=None, answer=None, atol=1e-6, verify=None, verbose=False, lang=None,
                device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None, compiler=None,
                compiler_options=None, defines=None, log=None, iterations=7, block_size_names=None, quiet=False,
                strategy=None, strategy_options=None, cache=None, metrics=None, simulation_mode=False,
                observers=None, objective=None, objective_higher_is_better=None, parallel=False,
                parallel_compile=False, **kwargs):
    """Tunes a CUDA kernel as Kernel Tuner 1.4's tune_kernel does, on tiletune's engine.
    Returns (results, env): a dict per evaluated config and the environment. parallel=True tunes
    on every GPU of this host (tiletune's device pool), parallel=N on the first N."""
    refuse_extra(kwargs, "tune_kernel")
    started = time.perf_counter()
    started_wall = time.time()
    if log:
        logging.basicConfig(filename=kernel_name + datetime.now().strftime("%Y%m%d-%H:%M:%S") + ".log", level=log)
    source = KernelSource(kernel_source, lang)
    detect_language(source, lang)
    objective, higher = objective_defaults(objective, objective_higher_is_better)
    check_metrics(metrics)
    observer_keys = _observed(observers)
    plan = _strategies.plan(strategy, strategy_options)
    _check_iterations(iterations)
    _check_device(device)
    device_argv(parallel, device)  # checked now, bounded by the host's GPUs once they are known
    tune_options = compile_threads_argv(parallel_compile)
    verify = _normalize_verify(verify)
    for note in plan.notes:
        _engine.warn(note, quiet)
    cache_file = _kt_cache.cache_path(cache) if cache else None
    if simulation_mode:
        from ._simulate import simulate
        return simulate(locals())
    cached = _read_cache(cache_file, kernel_name, problem_size, tune_params)
    params = make_params(tune_params)
    served_entries = cached["cache"] if cached else {}
    with _Workdir() as workdir:
        server = CheckServer(workdir, None) if verify is not None else None
        try:
            # The arguments are checked (building the space) before the GPU is asked for, as in Kernel Tuner.
            space = Space(workdir, kernel_name, source, lang, problem_size, arguments, tune_params,
                          grid_div=(grid_div_x, grid_div_y, grid_div_z), block_size_names=block_size_names,
                          restrictions=restrictions, answer=answer, verify=verify, atol=atol, smem_args=smem_args,
                          cmem_args=cmem_args, texmem_args=texmem_args, compiler_options=compiler_options,
                          defines=defines, check_command=server.command if server else None,
                          exclude={_entry_key(e, params) for e in served_entries.values()})
            if server is not None:
                server.handle = _verify_handler(space, answer, verify, atol)
            dev = {"name": "dry run", "compute_capability": "9.0"} if dry_run() else _engine.device(device)
            if cached and not dry_run():
                _kt_cache.check(cached, cache_file, kernel_name, problem_size, tune_params, dev["name"])
            if not quiet:
                print("Using: " + dev["name"])
            for note in space.notes:
                _engine.warn(note, quiet)
            if verbose:
                _print_space_size(space)
            if dry_run():
                return _plan(space, quiet)
            served = _served_in_space(served_entries, space, tune_params)
            devices = device_argv(parallel, device, len(_engine.devices()))
            run = _Run(space, plan, devices + tune_options, iterations, observer_keys, objective, metrics, quiet,
                       started_wall, server)
            fresh = []
            try:
                fresh = run.tune(len(served))
            finally:
                if cache_file:
                    entries = dict(served_entries)
                    for r in fresh or run.partial():
                        entries[_kt_cache.entry_key(tune_params, r)] = kt_keys(r, tune_params)
                    _kt_cache.write(cache_file, dev["name"], kernel_name, problem_size, tune_params, objective, entries)
        finally:
            if server is not None:
                server.close()
    results = _in_order(_served_results(served, metrics, objective) + fresh, space, plan)
    _print_results(fresh, tune_params, metrics, quiet, verbose)
    env = _env(dev, iterations, compiler_options)
    best = best_config(results, objective, higher)
    if best is not None:
        env["best_config"] = best
        if not quiet:
            print("best performing configuration:")
            print(config_line(best, list(tune_params) + ["time"] + list(metrics or {}), UNITS))
    elif not quiet:
        print("no results to report")
    return results, totals(results, env, 1000 * (time.perf_counter() - started))


class _Run:
    """One `tiletune tune` of the space, and its trials as Kernel Tuner's results."""

    def __init__(self, space, plan, device_options, iterations, observer_keys, objective, metrics, quiet,
                 started_wall, server):
        self.space, self.plan, self.device_options, self.iterations = space, plan, device_options, iterations
        self.observer_keys, self.objective, self.quiet, self.server = observer_keys, objective, quiet, server
        self.db = os.path.join(space.directory, "tiletune.db")
        self.builder = ResultBuilder(space, objective, metrics, observer_keys, started_wall,
                                     plan.strategy == "exhaustive")
        self.stop = []
        if server is not None:
            server.on_error = lambda: [p.kill() for p in self.stop]
        _empty_cache(self.db)

    def budget(self, served):
        """The strategy's budget less the configs the Kernel Tuner cache answered, which Kernel
        Tuner counts as evaluations; None: nothing left to measure."""
        budget = self.plan.budget
        if not served or budget is None or budget.endswith("s"):
            return budget, True
        if budget.endswith("%"):
            whole = self.space.allowed + served
            count = math.ceil(whole * float(budget[:-1]) / 100.0)
        else:
            count = int(budget)
        return (str(count - served), True) if count > served else (None, False)

    def tune(self, served):
        budget, left = self.budget(served)
        if self.space.allowed == 0 or not left:
            return []
        argv = ["tune", self.space.yaml_path, "--db", self.db, *self.device_options, "--strategy",
                self.plan.strategy, "--min-samples", str(self.iterations)]
        if budget:
            argv += ["--budget", budget]
        if any(k in NEEDS_ENERGY for k in self.observer_keys) or self.objective in ("energy", "nvml_energy"):
            argv += ["--energy"]
        if self.quiet:
            argv += ["-q"]
        try:
            _engine.run(argv, self.quiet, self.stop)
        except TiletuneError:
            if self.server is not None and self.server.error is not None:  # the script's verify raised: that
                raise self.server.error from None                          # is the error, tiletune was stopped
            raise
        if self.server is not None and self.server.error is not None:
            raise self.server.error
        return self.partial()

    def partial(self):
        """The results of what tiletune measured so far (an interrupted run keeps them)."""
        if not os.path.exists(self.db):
            return []
        try:
            fresh = self.builder.results(_engine.trials(self.db, self.space.family))
        except Exception:  # the cache of a run that died half-written: nothing to keep
            return []
        for r in fresh:
            if "num_regs" in self.observer_keys and "registers" in r:
                r["num_regs"] = r["registers"]
        return fresh


def _empty_cache(db):
    """Each call starts from an empty tiletune cache, also in a kept TILETUNE_KT_WORKDIR (a
    second call there would find its config measured and run nothing). Returns db."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(db + suffix):
            os.unlink(db + suffix)
    return db


def _read_cache(cache_file, kernel_name, problem_size, tune_params):
    """An existing Kernel Tuner cache, checked as Kernel Tuner checks it (the device once known)."""
    if not cache_file or not os.path.exists(cache_file):
        return None
    cached = _kt_cache.read(cache_file)
    _kt_cache.check(cached, cache_file, kernel_name, problem_size, tune_params)
    return cached


def _print_space_size(space):
    count = space.count_valid()
    if count is None:
        print("Searchspace: its size is counted by tiletune (more configs than Python counts quickly)")
    else:
        print(f"Searchspace has {count} configurations after restrictions.")


def _print_results(fresh, tune_params, metrics, quiet, verbose):
    if quiet:
        return
    keys = list(tune_params) + ["time"] + list(metrics or {})
    for r in fresh:
        print(config_line(r, keys, UNITS))
        if verbose and r.get("status") not in (None, "ok"):
            print(f"skipping config {'_'.join(str(r[k]) for k in tune_params)} reason: {r['status']}: "
                  f"{r.get('detail', '')[:200]}")


def _entry_key(entry, params):
    """A Kernel Tuner cache entry's config as the space's labels, in tune_params order."""
    return tuple(p.label(entry[p.name]) for p in params)


def _served_in_space(served_entries, space, tune_params):
    """The cache's entries for configs of this space (its values and restrictions): what Kernel
    Tuner's search would find in the cache."""
    keys = set(space.served_keys)
    return [e for e in served_entries.values() if _entry_key(e, space.params) in keys]


def _in_order(results, space, plan):
    """brute_force's results in Kernel Tuner's order (the product, the first param slowest), the
    configs the cache answered among them; other strategies: those first, then what was measured."""
    if plan.strategy != "exhaustive" or not space.served_keys:
        return results
    position = {key: i for i, key in enumerate(space.product_keys())}
    return sorted(results, key=lambda r: position.get(tuple(p.label(r[p.name]) for p in space.params), len(position)))


def _served_results(served, metrics, objective):
    """Configs the cache answers, as Kernel Tuner serves them: as stored, with the compile,
    verification and benchmark times 0, the metrics computed again."""
    out = []
    for entry in served:
        r = dict(entry)
        r["compile_time"] = r["verification_time"] = r["benchmark_time"] = 0
        if isinstance(r.get(objective), float) or isinstance(r.get("time"), float):
            compute_metrics(r, metrics)
        out.append(r)
    return out


def _verify_handler(space, answer, verify, atol):
    def handle(request):
        result_host = [None] * len(space.arguments)
        for i in space.synced:
            arg = space.arguments[i]
            result_host[i] = load_output(request["buffers"][arg.name]["path"], arg)
        if verify(answer, result_host, atol=atol):
            return True, None
        return False, "the verify function returned False"
    return handle


def run_kernel(kernel_name, kernel_source, problem_size, arguments, params, grid_div_x=None, grid_div_y=None,
               grid_div_z=None, lang=None, device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None,
               compiler=None, compiler_options=None, defines=None, block_size_names=None, quiet=False, log=None,
               **kwargs):
    """Compiles the kernel for one config, runs it once on the arguments and returns every
    argument as it is afterwards (arrays as numpy arrays shaped like the inputs, scalars as
    given), as Kernel Tuner 1.4's run_kernel does."""
    refuse_extra(kwargs, "run_kernel")
    if log:
        logging.basicConfig(filename=kernel_name + datetime.now().strftime("%Y%m%d-%H:%M:%S") + ".log", level=log)
    if not isinstance(params, dict):
        raise KernelTunerArgumentError("params", "expected a dict of name -> value")
    source = KernelSource(kernel_source, lang)
    detect_language(source, lang)
    _check_device(device)
    captured = {}
    with _Workdir() as workdir:
        server = CheckServer(workdir, None)
        try:
            space = Space(workdir, kernel_name, source, lang, problem_size, arguments,
                          {k: [v] for k, v in params.items()}, grid_div=(grid_div_x, grid_div_y, grid_div_z),
                          block_size_names=block_size_names, smem_args=smem_args, cmem_args=cmem_args,
                          texmem_args=texmem_args, compiler_options=compiler_options, defines=defines,
                          check_command=server.command)
            dev = None if dry_run() else _engine.device(device)

            def capture(request):
                if not captured:
                    for i in space.synced:
                        arg = space.arguments[i]
                        captured[i] = load_output(request["buffers"][arg.name]["path"], arg).copy()
                return True, None

            server.handle = capture
            if dry_run():
                _plan(space, quiet)
                return list(arguments)
            db = _empty_cache(os.path.join(workdir, "tiletune.db"))
            _engine.run(["tune", space.yaml_path, "--db", db, "--device", str(device), "--strategy", "exhaustive",
                         "--confirm", "0", "--min-samples", "1", "--min-time", "0", "--max-time", "0.001", "-q"],
                        True)
            trials = _engine.trials(db, space.family)
        finally:
            server.close()
    status = trials[0]["status"] if trials else "none"
    if status == "compile_failed":
        raise RuntimeError("cannot compile kernel: " + trials[0].get("detail", "")[:2000])
    if status == "pruned":
        raise RuntimeError("cannot create kernel instance: " + trials[0].get("detail", "")[:500])
    if status != "ok" or len(captured) != len(space.synced):
        detail = trials[0].get("detail", "") if trials else "tiletune measured nothing"
        raise RuntimeError(f"runtime error occured: {status}: {detail[:2000]} (on {dev['name']})")
    return [captured[i] if i in captured else a.original for i, a in enumerate(space.arguments)]


def tune_kernel_T1(input_filepath, cache_filepath=None, objective="time", objective_higher_is_better=False,
                   simulation_mode=False, output_T4=True, iterations=7, device=None, strategy=None,
                   strategy_options=None):
    """Kernel Tuner's T1 entry point: the T1 file's space, arguments, search and budget tuned with
    tune_kernel, as Kernel Tuner reads them; returns the T4 metadata and results (output_T4), else
    (results, env). `tiletune import-t1` maps every field of the schema into a tiletune space."""
    from ._t1 import tune_kernel_t1
    return tune_kernel_t1(tune_kernel, input_filepath, cache_filepath, objective, objective_higher_is_better,
                          simulation_mode, output_T4, iterations, device, strategy, strategy_options)


# Kernel Tuner's package exposes these names and submodules: `kernel_tuner.strategies.minimize` as a
# strategy, `kernel_tuner.util.get_best_config`, `kernel_tuner.store_results`, ...
from . import file_utils, integration, strategies, util  # noqa: E402,F401
from .integration import create_device_targets, store_results  # noqa: E402,F401
