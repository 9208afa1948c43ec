"""Kernel Tuner's file_utils with its names and behaviour: tune_kernel's results as T4 results
(the open autotuning results format, schema 1.0.0: get_t4_results, store_output_file), the
machine they came from as T4 metadata (get_t4_metadata, store_metadata_file), and a T1 input file
read (get_input_file).

The metadata differ from Kernel Tuner's where Kernel Tuner shells out to tools a tiletune host
may lack: the hardware description is lshw's where lshw runs, else one line saying so (as Kernel
Tuner writes when it fails); the GPUs are what `tiletune devices --format json` reports (name,
UUID, compute capability, SMs, memory, clocks, driver, NVRTC), under device_query["tiletune"]
(Kernel Tuner's nvidia-smi query is there too where nvidia-smi runs and its XML reader, xmltodict,
is installed); the requirements are the installed versions of what the module uses."""
import json
import os
import subprocess
import sys
from pathlib import Path

from . import util

SCHEMA_VERSION = "1.0.0"   # T4 results and metadata
TIMING_KEYS = ("compile_time", "benchmark_time", "framework_time", "strategy_time", "verification_time")
# Every other result key is a measurement, as Kernel Tuner writes them: tiletune's own status and
# detail go in as strings (T4 1.0.0 takes numbers, strings and arrays as values).


def filename_ensure_json_extension(filename):
    """The file name with .json appended where it lacks it."""
    filename = os.fspath(filename)
    return filename if filename.endswith(".json") else filename + ".json"


def make_filenamepath(filenamepath):
    """Creates the folder of a file name where it does not exist yet."""
    folder = Path(filenamepath).parent
    if not folder.exists():
        folder.mkdir(parents=True)


def get_configuration_validity(objective):
    """T4's invalidity of a result's objective value: correct, compile, runtime or constraints.
    An ErrorConfig, or the name of its kind as a cache file holds it, is a failure."""
    if isinstance(objective, util.ErrorConfig):
        name = type(objective).__name__
    elif isinstance(objective, str) and objective in util.ERROR_KINDS:
        name = objective
    else:
        return "correct"
    return {"CompilationFailedConfig": "compile", "RuntimeFailedConfig": "runtime",
            "InvalidConfig": "constraints"}[name]


def _measurement_value(value):
    """A value as T4 1.0.0 takes it (a number, a string or an array), or None to leave it out:
    numpy scalars as numbers, ErrorConfig as its name; a None (an observable NVML did not read)
    or a bool has no T4 type and is left out."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, util.ErrorConfig):
        return str(value)
    item = getattr(value, "item", None)
    if item is not None and not isinstance(value, (list, tuple, str)):
        value = item() if getattr(value, "ndim", 0) == 0 else value.tolist()
    if isinstance(value, (int, float, str, list, tuple)) and not isinstance(value, bool):
        return list(value) if isinstance(value, tuple) else value
    return None


def get_t4_results(results, tune_params, objective="time"):
    """tune_kernel's results as a T4 results document (a dict): per result its timestamp, its
    configuration (the tune_params), its times (compilation, benchmark, framework,
    search_algorithm, validation, runtimes), its invalidity, correctness 1 (as Kernel Tuner: a
    config whose output is wrong is a runtime failure), every other key as a measurement (unit ms
    for keys starting with time) and the objective."""
    not_measurements = set(tune_params) | set(TIMING_KEYS) | {"timestamp", "times"}
    output = []
    for result in results:
        out = {}
        if "timestamp" in result:
            out["timestamp"] = str(result["timestamp"])
        out["configuration"] = {k: v for k, v in result.items() if k in tune_params}
        out["times"] = {"compilation": result["compile_time"], "benchmark": result["benchmark_time"],
                        "framework": result["framework_time"], "search_algorithm": result["strategy_time"],
                        "validation": result["verification_time"], "runtimes": list(result.get("times", []))}
        out["invalidity"] = get_configuration_validity(result[objective])
        out["correctness"] = 1
        measurements = []
        for key, value in result.items():
            if key in not_measurements:
                continue
            value = _measurement_value(value)
            if value is not None:
                measurements.append({"name": key, "value": value, "unit": "ms" if key.startswith("time") else ""})
        out["measurements"] = measurements
        out["objectives"] = [objective]
        output.append(out)
    return {"results": output, "schema_version": SCHEMA_VERSION}


def store_output_file(output_filename, results, tune_params, objective="time"):
    """Writes get_t4_results to output_filename (.json appended where missing, its folder made)."""
    path = Path(filename_ensure_json_extension(output_filename))
    make_filenamepath(path)
    document = get_t4_results(results, tune_params, objective)
    with open(path, "w+", encoding="utf-8") as f:
        json.dump(document, f, cls=util.NpEncoder)


def get_dependencies(package="tiletune"):
    """The installed versions of what the module uses ("name==version"); a missing one is left
    out (it cannot have made these results)."""
    from importlib.metadata import PackageNotFoundError, version
    depends = []
    for name in (package, "numpy"):
        try:
            depends.append(f"{name}=={version(name)}")
        except PackageNotFoundError:
            pass
    return depends


def get_device_query(target):
    """The GPUs of this host: "tiletune" (tiletune devices --format json: a list, empty without a
    GPU), or Kernel Tuner's "nvidia" (nvidia-smi's XML query, needs nvidia-smi and xmltodict)."""
    if target == "tiletune":
        from . import _engine
        return _engine.devices()
    if target == "nvidia":
        import xmltodict  # Kernel Tuner's dependency for this query; ImportError where it is missing
        done = subprocess.run(["nvidia-smi", "--query", "-x"], capture_output=True)
        query = xmltodict.parse(done.stdout)
        gpus = query["nvidia_smi_log"]["gpu"]
        for gpu in gpus if isinstance(gpus, list) else [gpus]:
            gpu.pop("processes", None)
        return query
    raise ValueError("get_device_query target not supported")


def _hardware_description():
    """lshw's JSON as a list (its output is a dict or a list of one), and the operating system."""
    if sys.platform != "linux":
        return ["error retrieving hardware description"], "unidentified OS"
    try:
        done = subprocess.run(["lshw", "-json"], capture_output=True, timeout=60)
        text = done.stdout.decode("utf-8").strip()
        if text.startswith("{") and text.endswith("}"):
            text = "[" + text + "]"
        return json.loads(text), "Linux"
    except (OSError, ValueError, subprocess.SubprocessError):
        return ["error retrieving hardware description"], "Linux"


def get_t4_metadata():
    """The T4 metadata document (a dict) of this host: operating system, hardware description,
    the GPUs (device_query) and the requirements."""
    description, operating_system = _hardware_description()
    device_query = {"tiletune": get_device_query("tiletune")}
    try:
        device_query["nvidia-smi"] = get_device_query("nvidia")
    except Exception:  # noqa: BLE001 - no nvidia-smi or no xmltodict: as Kernel Tuner, left out
        pass
    metadata = {"operating_system": operating_system, "hardware": {"hardware_description": description},
                "environment": {"device_query": device_query, "requirements": get_dependencies()}}
    return {"metadata": metadata, "schema_version": SCHEMA_VERSION}


def store_metadata_file(metadata_filename):
    """Writes get_t4_metadata to metadata_filename (.json appended where missing, its folder made)."""
    path = Path(filename_ensure_json_extension(metadata_filename))
    make_filenamepath(path)
    with open(path, "w+", encoding="utf-8") as f:
        json.dump(get_t4_metadata(), f, indent="  ")


def get_input_file(filepath, validate=True):
    """A T1 input file (JSON) as a dict. validate: the sections a tuning needs are checked
    (ConfigurationSpace and KernelSpecification); `tiletune import-t1` reads the whole file into
    a tiletune space."""
    with open(filepath, encoding="utf-8") as f:
        document = json.load(f)
    if validate:
        if not isinstance(document, dict):
            raise ValueError(f"{os.fspath(filepath)}: a T1 input file is a JSON object")
        missing = [k for k in ("ConfigurationSpace", "KernelSpecification") if k not in document]
        if missing:
            raise ValueError(f"{os.fspath(filepath)}: not a T1 input file: no {', '.join(missing)}")
    return document
