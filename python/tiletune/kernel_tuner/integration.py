"""Kernel Tuner's integration module with its names, file format and header: how a Kernel Tuner
user hands tuned configs to a C/C++ program. store_results keeps the top configs (within `top`
percent of the best) per device and problem size in a JSON results file (format 1.0, the same
keys Kernel Tuner writes and reads); create_device_targets writes a header that #defines one
config per device (`-DTARGET_<device>` picks it) and a default for every other device, all inside
`#ifndef kernel_tuner`, so that the kernel still tunes with the header included.

tiletune's own way is richer: its result cache keeps every trial per device, kernel version and
problem size, and a program asks `tiletune best` or the C/C++ query API (tiletune/query.h) at run
time for the best config with a match level and fallbacks (docs/guides/kernel-tuner.md)."""
import json
import os
import re

from ._results import objective_defaults
from .util import get_instance_string, looks_like_a_filename, read_file

RESULTS_FORMAT = "1.0"
# What a results file must hold (Kernel Tuner validates it with this JSON schema, draft 7).
RESULTS_SCHEMA = {
    "$schema": "https://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "version_number": {"type": "string"},
        "tunable_parameters": {"type": "array", "items": {"type": "string"}},
        "kernel_name": {"type": "string"},
        "kernel_string": {"type": "string"},
        "objective": {"type": "string"},
        "objective_higher_is_better": {"type": "boolean"},
        "data": {"type": "array", "items": {"type": "object",
                                            "properties": {"device_name": {"type": "string"},
                                                           "problem_size": {"type": "string"}},
                                            "required": ["device_name", "problem_size", "tunable_parameters"]}},
    },
    "required": ["version_number", "tunable_parameters", "kernel_name", "objective", "data"],
}


def get_objective_defaults(objective, objective_higher_is_better):
    """("time", False) by default; the direction of Kernel Tuner's known objectives, else an
    error asking for it."""
    return objective_defaults(objective, objective_higher_is_better)


def _device_key(device_name):
    """A device name as the results file and the header spell it: every run of characters that
    are not letters or digits becomes one underscore."""
    return re.sub("[^0-9a-zA-Z]+", "_", device_name.strip())


def _problem_size_key(problem_size):
    if isinstance(problem_size, str):
        return problem_size
    if not isinstance(problem_size, (list, tuple)):
        problem_size = (problem_size,)
    return "x".join(str(i) for i in problem_size)


def _check_results_file(data, path):
    """Kernel Tuner's checks of a results file: the schema's required keys and types, then every
    entry's keys (its device, problem size, every tunable parameter and the objective)."""
    if "version_number" not in data:
        raise ValueError("Results fileformat not recognized")
    if data["version_number"] != RESULTS_FORMAT:
        raise ValueError(f"Unknown results file version_number: {data['version_number']}")
    try:
        import jsonschema
    except ImportError:  # the checks below still hold the file to the format
        jsonschema = None
    if jsonschema is not None:
        jsonschema.Draft7Validator(RESULTS_SCHEMA).validate(data)
    for key in RESULTS_SCHEMA["required"]:
        if key not in data:
            raise ValueError(f"{path}: a results file has {key!r}")
    meta = {k: data[k] for k in ("kernel_name", "tunable_parameters", "objective", "version_number")}
    meta["objective_higher_is_better"] = data.get("objective_higher_is_better", False)
    meta["kernel_string"] = data.get("kernel_string", "")
    needed = ["tunable_parameters", meta["objective"], "device_name", "problem_size"]
    for entry in data["data"]:
        if not all(k in entry for k in needed):
            raise ValueError(f"Error while parsing results file, missing keys in: {entry}")
        if not all(k in entry["tunable_parameters"] for k in meta["tunable_parameters"]):
            raise ValueError(f"Error while parsing results file, missing tunable parameter keys in: {entry}")
    return meta, data["data"]


def _read_results_file(path):
    with open(path, encoding="utf-8") as f:
        return _check_results_file(json.load(f), path)


def _best_of(entries, objective, higher_is_better):
    pick = max if higher_is_better else min
    return dict(pick(entries, key=lambda e: e[objective])["tunable_parameters"])


def _best_common(entries, objective, higher_is_better):
    """Kernel Tuner's default: the config that is among the top configs most often (over devices
    and problem sizes), ties broken by the best sum of the objective."""
    count, total, params = {}, {}, {}
    for entry in entries:
        key = get_instance_string(entry["tunable_parameters"])
        count[key] = count.get(key, 0) + 1
        total[key] = total.get(key, 0) + entry[objective]
        params[key] = entry["tunable_parameters"]
    most = max(count.values())
    candidates = [k for k in count if count[k] == most]
    pick = max if higher_is_better else min
    return dict(params[pick(candidates, key=lambda k: total[k])])


class TuneResults:
    """A results file written by store_results, read and checked."""

    def __init__(self, results_filename):
        if not os.path.isfile(results_filename):
            raise ValueError("Error: results_filename does not exist")
        meta, data = _read_results_file(results_filename)
        if len(data) < 1:
            raise ValueError("results file seems to be empty or did not load correctly")
        self.data = data
        self.meta = meta
        self.objective = meta["objective"]
        self.objective_higher_is_better = meta.get("objective_higher_is_better", False)

    def get_best_config(self, gpu_name="default", problem_size=None):
        """The best config for a device and problem size: that problem's best on that device;
        without a problem size (or one not tuned) the device's common best; for a device not in
        the file the common best over all."""
        gpu_name = gpu_name.replace("-", "_").replace(" ", "_")
        on_gpu = [e for e in self.data if e["device_name"] == gpu_name]
        higher = self.objective_higher_is_better
        if on_gpu:
            if problem_size:
                size = _problem_size_key(problem_size)
                exact = [e for e in on_gpu if e["problem_size"] == size]
                if exact:
                    return _best_of(exact, self.objective, higher)
            return _best_common(on_gpu, self.objective, higher)
        return _best_common(self.data, self.objective, higher)


def store_results(results_filename, kernel_name, kernel_string, tune_params, problem_size, results, env, top=3,
                  objective=None, objective_higher_is_better=None):
    """Stores the configs within `top` percent of the best (by the objective) in the results
    file, for the device of env["device_name"] and this problem size, replacing what the file
    held for both; a new file records the kernel's name, its source (where kernel_string is
    code or a file name), the objective and the tunable parameters."""
    objective, higher = get_objective_defaults(objective, objective_higher_is_better)
    measured = [r for r in results if objective in r and isinstance(r[objective], (int, float))
                and not isinstance(r[objective], bool)]
    if not measured:
        raise ValueError(f"no result has a value of the objective {objective!r} to store")
    best = (max if higher else min)(r[objective] for r in measured)
    margin = top / 100.0

    def in_top(r):
        return r[objective] > best * (1 - margin) if higher else r[objective] < best * (1 + margin)

    # The best itself always qualifies (a best of 0 would otherwise fail the strict comparison).
    top_results = [r for r in measured if in_top(r) or r[objective] == best]

    if os.path.isfile(results_filename):
        meta, data = _read_results_file(results_filename)
        if kernel_name != meta["kernel_name"]:
            raise ValueError("Mismatch between given kernel_name and results file")
        if not all(p in meta["tunable_parameters"] for p in tune_params):
            raise ValueError("Mismatch between tunable_parameters in results file and tune_params")
        if objective != meta["objective"]:
            raise ValueError("Mismatch between given objective and results file")
        meta = {k: v for k, v in meta.items() if k != "kernel_string" or v}
    else:
        meta = {"version_number": RESULTS_FORMAT, "kernel_name": kernel_name}
        if kernel_string and not callable(kernel_string) and not isinstance(kernel_string, (list, tuple)):
            text = os.fspath(kernel_string)
            meta["kernel_string"] = read_file(text) if looks_like_a_filename(text) else text
            if meta["kernel_string"] is None:
                del meta["kernel_string"]
        meta["objective"] = objective
        meta["objective_higher_is_better"] = higher
        meta["tunable_parameters"] = list(tune_params)
        data = []

    size = _problem_size_key(problem_size)
    device = _device_key(env["device_name"])
    data = [d for d in data if not (d["device_name"] == device and d["problem_size"] == size)]
    for r in top_results:
        record = {"device_name": device, "problem_size": size,
                  "tunable_parameters": {k: _plain(r[k]) for k in tune_params if k in r}}
        record[objective] = _plain(r[objective])
        data.append(record)
    meta["data"] = data
    with open(results_filename, "w", encoding="utf-8") as f:
        f.write(json.dumps(meta, indent=""))


def _plain(value):
    """numpy scalars as the Python numbers json writes."""
    item = getattr(value, "item", None)
    return item() if item is not None and not isinstance(value, (str, bytes)) else value


def _defines(params):
    return "\n".join(f"#define {k} {v}" for k, v in params.items())


def create_device_targets(header_filename, results_filename, objective=None, objective_higher_is_better=None):
    """Writes a header for the kernel: per device of the results file its best config under
    `#ifdef TARGET_<device>` (compile with -DTARGET_<device>, the device's name with every run of
    other characters than letters and digits as one underscore), and a default config good on
    every device and problem size otherwise; all of it only when not tuning (#ifndef
    kernel_tuner)."""
    get_objective_defaults(objective, objective_higher_is_better)  # Kernel Tuner checks it, the file decides
    results = TuneResults(results_filename)
    targets = {}
    for entry in results.data:  # in the file's order: the header is the same for the same file
        name = entry["device_name"]
        if name not in targets:
            targets[name] = results.get_best_config(name)
    default = results.get_best_config()
    if_block = ""
    for i, (name, params) in enumerate(targets.items()):
        if_block += f"\n#ifdef TARGET_{name}\n" if i == 0 else f"\n#elif TARGET_{name}\n"
        if_block += _defines(params) + "\n"
    header = f"""/* header file generated by tiletune.kernel_tuner in Kernel Tuner's format, do not modify by hand */
#pragma once
#ifndef kernel_tuner /* only use these when not tuning */

{if_block}
#else /* default configuration */
{_defines(default)}
#endif /* GPU TARGETS */

#endif /* kernel_tuner */
"""
    with open(header_filename, "w", encoding="utf-8") as f:
        f.write(header)
