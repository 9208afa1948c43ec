"""tiletune's trials as Kernel Tuner's results: one dict per evaluated config, in evaluation
order, with Kernel Tuner's keys (the params, time in ms, times, compile_time, verification_time,
benchmark_time, the metrics, strategy_time, framework_time, timestamp) and tiletune's own
(status, detail, occupancy, registers); the best config by the objective; the printed lines."""
import datetime
import json
import sys

from .util import error_config

# tiletune's statuses as Kernel Tuner's error strings (a failed config's objective value).
ERROR_OF_STATUS = {
    "pruned": "InvalidConfig",
    "compile_failed": "CompilationFailedConfig",
    "launch_failed": "RuntimeFailedConfig",
    "runtime_fault": "RuntimeFailedConfig",
    "timeout": "RuntimeFailedConfig",
    "wrong_result": "RuntimeFailedConfig",
    "suspect": "RuntimeFailedConfig",
}
# Objectives whose direction Kernel Tuner knows (integration.get_objective_defaults).
HIGHER_IS_BETTER = {"time": False, "energy": False, "GFLOP/s": True, "TFLOP/s": True, "GB/s": True, "TB/s": True,
                    "GFLOPS/W": True, "TFLOPS/W": True, "GFLOP/J": True, "TFLOP/J": True}


def objective_defaults(objective, objective_higher_is_better):
    objective = objective or "time"
    if objective_higher_is_better is None:
        if objective not in HIGHER_IS_BETTER:
            raise ValueError(f"Please specify objective_higher_is_better for objective {objective}")
        objective_higher_is_better = HIGHER_IS_BETTER[objective]
    return objective, objective_higher_is_better


def parse_assignments(text):
    """"A=1;B=float" -> {"A": "1", "B": "float"} (labels)."""
    out = {}
    for part in filter(None, (text or "").split(";")):
        name, _, value = part.partition("=")
        out[name] = value
    return out


def _timestamp(created_at):
    """tiletune's created_at (2026-12-02T10:00:00.123Z) as Kernel Tuner writes timestamps."""
    try:
        t = datetime.datetime.strptime(created_at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    except (TypeError, ValueError):
        return created_at
    return str(t)


def _seconds(created_at):
    try:
        return datetime.datetime.strptime(created_at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
            tzinfo=datetime.timezone.utc).timestamp()
    except (TypeError, ValueError):
        return None


def compute_metrics(result, metrics):
    """Kernel Tuner's metrics, in order, each seeing the ones before (util.process_metrics)."""
    if not metrics:
        return
    for name, metric in metrics.items():
        if callable(metric):
            result[name] = metric(result)
        else:
            import builtins
            import math
            import re

            import numpy
            text = "".join(str(result[t]) if t in result else t for t in re.split("([a-zA-Z0-9_]+)", metric))
            result[name] = eval(text, {"__builtins__": builtins, "np": numpy, "numpy": numpy, "math": math})


def check_metrics(metrics):
    if metrics is None:
        return
    if not isinstance(metrics, dict):
        raise ValueError("metrics should be a dictionary to preserve order and support composability")
    for v in metrics.values():
        if not (isinstance(v, str) or callable(v)):
            raise ValueError("metric dicts values should be strings or callable")


# NVMLObserver's observables as trial keys of `tiletune show --format json`: (trial key, factor).
# Energy and power come from `tune --energy`; the clocks and the temperature from the samples the
# worker reads while it times every trial.
OBSERVABLE_OF_TRIAL = {
    "nvml_energy": ("energy_mj", 1e-3),    # J per run
    "nvml_power": ("power_w", 1.0),         # W
    "core_freq": ("sm_clock_mhz", 1.0),     # MHz
    "mem_freq": ("mem_clock_mhz", 1.0),     # MHz
    "temperature": ("temperature_c", 1.0),  # degrees C
}


def observed(result, trial, observer_keys):
    """The observables asked for, from the trial; None where the trial has no reading (a value of
    0 is what tiletune stores for "not read")."""
    for key in observer_keys:
        if key not in OBSERVABLE_OF_TRIAL:
            continue
        column, factor = OBSERVABLE_OF_TRIAL[key]
        value = trial.get(column)
        result[key] = float(value) * factor if isinstance(value, (int, float)) and value > 0 else None


class ResultBuilder:
    """Builds result dicts from `tiletune show --format json` trials of one space."""

    def __init__(self, space, objective, metrics, observer_keys, start_seconds, exhaustive):
        self.space = space
        self.objective = objective
        self.metrics = metrics
        self.observer_keys = observer_keys
        self.start = start_seconds
        self.exhaustive = exhaustive

    def config(self, trial):
        labels = parse_assignments(trial["params"])
        return {p.name: p.value_of_label[labels[p.name]] for p in self.space.params}

    def results(self, trials):
        """The trials (one problem) in the order they were first measured."""
        out = []
        previous = self.start
        for trial in sorted(trials, key=lambda t: t["id"]):
            result = self.result(trial, previous)
            done = _seconds(trial.get("created_at"))
            if done is not None:
                previous = done
            out.append(result)
        return out

    def result(self, trial, previous_done):
        r = dict(self.config(trial))
        status = trial["status"]
        ok = status == "ok"
        if ok:
            observed(r, trial, self.observer_keys)
            r["time"] = float(trial["time_ms"])
            times = trial.get("times_ms")
            r["times"] = json.loads(times) if isinstance(times, str) else list(times or [])
        else:
            # Kernel Tuner's ErrorConfig kinds: isinstance(r["time"], util.ErrorConfig) holds, and the
            # value still equals the kind's name, as Kernel Tuner's caches and printouts have it.
            r[self.objective] = error_config(ERROR_OF_STATUS.get(status, "RuntimeFailedConfig"))
        compile_ms = trial.get("compile_ms") or 0.0
        verify_ms = trial.get("verify_ms") or 0.0
        benchmark_ms = trial.get("measure_ms") or 0.0
        r["compile_time"] = compile_ms
        r["verification_time"] = verify_ms
        r["benchmark_time"] = benchmark_ms
        if ok:
            compute_metrics(r, self.metrics)
        # tiletune does not time its strategy apart from the rest: its time is in framework_time.
        r["strategy_time"] = 0
        done = _seconds(trial.get("created_at"))
        gap_ms = (done - previous_done) * 1000.0 if done is not None and previous_done is not None else 0.0
        r["framework_time"] = max(gap_ms - verify_ms - benchmark_ms, 0.0)
        r["timestamp"] = _timestamp(trial.get("created_at"))
        r["status"] = status
        if not ok:
            r["detail"] = trial.get("detail", "")
        for key, column in (("registers", "registers"), ("occupancy", "occupancy_driver")):
            if trial.get(column) is not None:
                r[key] = trial[column]
        if r.get("occupancy") is None and trial.get("occupancy_offline") is not None:
            r["occupancy"] = trial["occupancy_offline"]
        return r


def kt_keys(result, params):
    """A result as Kernel Tuner stores it in its cache (tiletune's own keys left out)."""
    return {k: v for k, v in result.items() if k not in ("status", "detail", "registers", "occupancy")}


def best_config(results, objective, higher_is_better):
    """Kernel Tuner's util.get_best_config: only float objective values count."""
    if not results:
        return None
    worst = -sys.float_info.max if higher_is_better else sys.float_info.max

    def key(r):
        v = r.get(objective)
        return v if isinstance(v, float) else worst

    return (max if higher_is_better else min)(results, key=key)


def config_line(result, keys, units):
    """One config as Kernel Tuner prints it: k=v pairs, floats to 3 decimals, units on measurements."""
    parts = []
    wanted = set(keys)
    for k, v in result.items():  # in the result's order, as Kernel Tuner's get_config_string
        if k not in wanted:
            continue
        if isinstance(v, float):
            text = "{:.3f}".format(round(v, 3))
            text += units.get(k, "")
        else:
            text = str(v)
        parts.append(f"{k}={text}")
    return ", ".join(parts)


def totals(results, env, overhead_ms):
    """Kernel Tuner's util.get_total_timings."""
    keys = ("framework_time", "strategy_time", "compile_time", "verification_time", "benchmark_time")
    if not all(all(k in r for k in keys) for r in results):
        return env
    sums = {k: sum(r[k] for r in results) for k in keys}
    env["total_framework_time"] = sums["framework_time"]
    env["total_strategy_time"] = sums["strategy_time"]
    env["total_compile_time"] = sums["compile_time"]
    env["total_verification_time"] = sums["verification_time"]
    env["total_benchmark_time"] = sums["benchmark_time"]
    env["overhead_time"] = overhead_ms - sum(sums.values())
    return env
