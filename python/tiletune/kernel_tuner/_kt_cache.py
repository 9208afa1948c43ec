"""Kernel Tuner's cache file (its util.process_cache / store_cache / close_cache): read to resume,
repaired as Kernel Tuner repairs a file an interrupted run left open, checked as Kernel Tuner
checks it, and written so that tools reading that format read it (each entry on a line of its
own, the file closed)."""
import json
import os
import tempfile

ERROR_STRINGS = ("InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig")


def cache_path(cache):
    path = os.fspath(cache)
    if isinstance(cache, os.PathLike):
        path = os.path.abspath(path)
    return path if path.endswith(".json") else path + ".json"


def read(path):
    """The cache as a dict, its "cache" entries keyed as Kernel Tuner keys them."""
    with open(path, encoding="utf-8") as f:
        text = f.read().strip()
    if text[-3:] not in ("}\n}", "}}}"):
        if text.endswith(","):
            text = text[:-1]
        text += "}\n}"
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a Kernel Tuner cache file ({e})") from None


def check(cached, path, kernel_name, problem_size, tune_params, device_name=None):
    """Kernel Tuner's checks when an existing cache is opened, with its messages."""
    if device_name is not None and cached.get("device_name") != device_name:
        raise ValueError(f"Cannot load cache which contains results for different device (cache: "
                         f"{cached.get('device_name')}, actual: {device_name})")
    if cached.get("kernel_name") != kernel_name:
        raise ValueError(f"Cannot load cache which contains results for different kernel (cache: "
                         f"{cached.get('kernel_name')}, actual: {kernel_name})")
    if "problem_size" in cached and not callable(problem_size):
        mine = list(problem_size) if isinstance(problem_size, (list, tuple)) else [problem_size]
        theirs = cached["problem_size"] if isinstance(cached["problem_size"], list) else [cached["problem_size"]]
        if [str(x) for x in mine] != [str(x) for x in theirs]:
            raise ValueError(f"Cannot load cache which contains results for different problem_size, cache: "
                             f"{cached['problem_size']}, requested: {problem_size}")
    keys = cached.get("tune_params_keys")
    if keys != list(tune_params):
        if keys is not None and sorted(keys) == sorted(tune_params):
            raise ValueError("All tunable parameters are present, but the order is wrong. Cannot load cache which "
                             "contains results obtained with different tunable parameters.")
        raise ValueError(f"Cannot load cache which contains results obtained with different tunable parameters. "
                         f"Cache at '{path}' has parameters {keys}, expected {list(tune_params)}.")
    if not isinstance(cached.get("cache"), dict):
        raise ValueError(f"{path}: the cache file has no 'cache' object")


def entry_key(tune_params, config):
    return ",".join(str(config[name]) for name in tune_params)


def write(path, device_name, kernel_name, problem_size, tune_params, objective, entries):
    """The whole cache, replacing `path` atomically (a temp file in its directory, renamed)."""
    header = {
        "device_name": device_name,
        "kernel_name": kernel_name,
        "problem_size": "callable" if callable(problem_size) else
        list(problem_size) if isinstance(problem_size, tuple) else problem_size,
        "tune_params_keys": list(tune_params),
        "tune_params": {k: list(v) for k, v in tune_params.items()},
        "objective": objective,
        "cache": {},
    }
    text = json.dumps(header, indent="", default=_plain)[:-3]
    lines = ["\n" + json.dumps({key: entry}, default=_plain)[1:-1] + "," for key, entry in entries.items()]
    text += "".join(lines)
    text = (text[:-1] if lines else text) + "}\n}"
    directory = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(prefix=".tiletune-", suffix=".json", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        if os.path.exists(path):
            os.chmod(temp, os.stat(path).st_mode & 0o777)
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def _plain(value):
    item = getattr(value, "item", None)
    if item is not None:
        return item()
    tolist = getattr(value, "tolist", None)
    if tolist is not None:
        return tolist()
    return str(value)
