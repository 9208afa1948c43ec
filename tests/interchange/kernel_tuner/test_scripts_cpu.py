"""The Kernel Tuner scripts of tests/interchange/kernel_tuner/scripts/ run through tiletune.kernel_tuner on
a machine without a GPU (issue 21):

(a) every script under TILETUNE_KT_DRY_RUN=1, where tune_kernel / run_kernel write the space and
    plan it with NVRTC: the script's own dry-run checks (configs, grids, shared memory) must hold;
(b) the simulation-mode script fully (a Kernel Tuner cache answers every config: no GPU);
(c) tune_kernel calls Kernel Tuner refuses, or that tiletune cannot honour: each raises, with the
    exception type Kernel Tuner raises and a message that names the argument;
(d) the inputs the engine receives: with TILETUNE_KT_WORKDIR the module keeps its space, whose
    .npy files must hold the script's arrays byte for byte (dtype and values), whose scalars are
    exact, and whose expected-output files are the answer;
(e) the scripts of Kernel Tuner's other module paths (file_utils, util, integration, nvml,
    parallel=True) end to end on tests/python/fake_tiletune.py standing in for the CLI: the argv
    the module builds, the T4 results file against Kernel Tuner's T4 schema (schema/), the
    generated header compiled with gcc and g++;
(f) bench/kt_verify_cost.py as a dry run with a small N.

Paths come from the environment ctest sets (TILETUNE_SOURCE_DIR, TILETUNE_CLI), as in
tests/python/conftest.py; without them, this checkout and its build/tuner/tiletune."""
import json
import os
import re
import shutil
import subprocess
import sys

import numpy
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("TILETUNE_SOURCE_DIR", os.path.abspath(os.path.join(HERE, "..", "..", "..")))
SCRIPTS = os.path.join(SOURCE, "tests", "interchange", "kernel_tuner", "scripts")
sys.path.insert(0, os.path.join(SOURCE, "python"))
NAMES = sorted(f[:-3] for f in os.listdir(SCRIPTS) if f.endswith(".py") and not f.startswith("_"))


def _cli():
    cli = os.environ.get("TILETUNE_CLI") or os.path.join(SOURCE, "build", "tuner", "tiletune")
    if not os.path.exists(cli):
        pytest.fail(f"no tiletune executable at {cli}: set TILETUNE_CLI (ctest does)")
    return cli


def _env(**extra):
    env = dict(os.environ)
    env.update(PYTHONPATH=os.path.join(SOURCE, "python"), TILETUNE_CLI=_cli(), PYTHONDONTWRITEBYTECODE="1",
               PYTHONUNBUFFERED="1")
    env.pop("TILETUNE_KT_WORKDIR", None)
    env.update(extra)
    return env


def _run(name, **extra):
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, name + ".py")], env=_env(**extra), cwd=SOURCE,
                          capture_output=True, text=True, timeout=600)


def test_there_are_enough_scripts():
    assert len(NAMES) >= 15, NAMES


# -- (a) every script, dry run ---------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_script_dry_run(name):
    done = _run(name, TILETUNE_KT_DRY_RUN="1")
    assert done.returncode == 0, f"{name}.py exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    assert "OK" in done.stdout or "skipped" in done.stdout, done.stdout[-2000:]


# -- (b) simulation mode, not a dry run ------------------------------------------------------

def test_simulation_script_runs_fully_without_a_gpu():
    done = _run("simulation")
    assert done.returncode == 0, f"exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    for strategy in ("brute_force", "random_sample", "greedy_mls"):
        assert f"simulation {strategy}: OK" in done.stdout, done.stdout
    assert "Simulating: NVIDIA H200" in done.stdout


# -- (c) the errors --------------------------------------------------------------------------

KERNEL = """
__global__ void vector_add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""


@pytest.fixture
def kt(monkeypatch):
    """The module, in dry-run mode: the errors come before anything is planned."""
    monkeypatch.setenv("TILETUNE_CLI", _cli())
    monkeypatch.setenv("TILETUNE_KT_DRY_RUN", "1")
    monkeypatch.delenv("TILETUNE_KT_WORKDIR", raising=False)
    import tiletune.kernel_tuner as kernel_tuner
    return kernel_tuner


def _problem(n=1000):
    a = numpy.random.randn(n).astype(numpy.float32)
    b = numpy.random.randn(n).astype(numpy.float32)
    return [numpy.zeros_like(a), a, b, numpy.int32(n)], [a + b, None, None, None]


def _tune(kt, **kwargs):
    args, _ = _problem()
    call = dict(kernel_name="vector_add", kernel_source=KERNEL, problem_size=1000, arguments=args,
                tune_params={"block_size_x": [64, 128]}, quiet=True)
    call.update(kwargs)
    return kt.tune_kernel(**call)


def _kt_cache(path, kernel_name="vector_add", tune_params=None, problem_size=1000):
    tune_params = tune_params or {"block_size_x": [64, 128]}
    header = {"device_name": "NVIDIA H200", "kernel_name": kernel_name, "problem_size": problem_size,
              "tune_params_keys": list(tune_params), "tune_params": tune_params, "objective": "time", "cache": {}}
    text = json.dumps(header, indent="")[:-3]
    for v in tune_params["block_size_x"]:
        entry = {"block_size_x": v, "time": 0.01 * v, "times": [0.01 * v] * 7, "compile_time": 100.0,
                 "verification_time": 0, "benchmark_time": 1.0, "strategy_time": 0, "framework_time": 0.5,
                 "timestamp": "2025-01-01 00:00:00.000000+00:00"}
        text += "\n" + json.dumps({str(v): entry})[1:-1] + ","
    with open(path, "w") as f:
        f.write(text[:-1] + "}\n}")
    return str(path)


def kt_error():
    from tiletune.kernel_tuner import KernelTunerArgumentError
    return KernelTunerArgumentError


def _observers():
    from tiletune.kernel_tuner.observers import NVMLObserver, PowerSensorObserver
    return NVMLObserver, PowerSensorObserver


ERRORS = [
    # (id, tune_kernel arguments, exception type, words the message must contain)
    ("lang OpenCL", lambda kt, tmp: dict(lang="OpenCL"), ValueError, ["lang", "OpenCL"]),
    ("texmem_args", lambda kt, tmp: dict(texmem_args={"tex": numpy.zeros(16, numpy.float32)}), ValueError,
     ["texmem_args"]),
    ("unknown strategy", lambda kt, tmp: dict(strategy="hill_climbing"), ValueError,
     ["Unkown strategy hill_climbing", "brute_force"]),
    ("strategy option Kernel Tuner rejects",
     lambda kt, tmp: dict(strategy="greedy_ils", strategy_options={"popsize": 10}), ValueError,
     ["Unrecognized option popsize in strategy_options"]),
    ("PowerSensorObserver", lambda kt, tmp: dict(observers=[_observers()[1](["ps_energy"])]), ValueError,
     ["observers", "PowerSensorObserver"]),
    ("NVMLObserver gr_voltage", lambda kt, tmp: dict(observers=[_observers()[0](["temperature", "gr_voltage"])]),
     kt_error(), ["observers", "'gr_voltage' does not map"]),
    ("NVMLObserver power_readings", lambda kt, tmp: dict(observers=[_observers()[0](["power_readings"])]),
     kt_error(), ["observers", "'power_readings' does not map"]),
    ("NVMLObserver locked clocks",
     lambda kt, tmp: dict(observers=[_observers()[0](["core_freq"], use_locked_clocks=True)]), kt_error(),
     ["observers", "use_locked_clocks"]),
    ("parallel_workers", lambda kt, tmp: dict(parallel_workers=4), kt_error(), ["parallel_workers: ", "parallel=True"]),
    ("remote_mode", lambda kt, tmp: dict(remote_mode=True), kt_error(), ["remote_mode: ", "remote GPUs"]),
    ("num_gpus", lambda kt, tmp: dict(num_gpus=2), kt_error(), ["num_gpus: ", "parallel=N"]),
    ("a Python kernel", lambda kt, tmp: dict(call_function=print), kt_error(),
     ["call_function: ", "outside CUDA kernel tuning"]),
    ("an unknown keyword", lambda kt, tmp: dict(block_size=[64]), kt_error(),
     ["block_size: not an argument of Kernel Tuner 1.4's tune_kernel"]),
    ("parallel 0", lambda kt, tmp: dict(parallel=0), kt_error(), ["parallel: 0 is neither True/False"]),
    ("parallel of a string", lambda kt, tmp: dict(parallel="all"), kt_error(), ["parallel: 'all'"]),
    ("parallel_compile 0", lambda kt, tmp: dict(parallel_compile=0), kt_error(), ["parallel_compile: 0"]),
    ("param named time", lambda kt, tmp: dict(tune_params={"block_size_x": [64], "time": [1, 2]}), ValueError,
     ["Tune parameter time with value [1, 2] has a forbidden name!"]),
    ("param nvml_gr_clock", lambda kt, tmp: dict(tune_params={"block_size_x": [64], "nvml_gr_clock": [1000, 1500]}),
     ValueError, ["nvml_gr_clock"]),
    ("problem_size float", lambda kt, tmp: dict(problem_size=1.5), TypeError,
     ["problem_size should only contain strings or integers"]),
    ("answer of the wrong length", lambda kt, tmp: dict(answer=_problem()[1][:3]), TypeError,
     ["The length of argument list and provided results do not match."]),
    ("answer of an incompatible dtype",
     lambda kt, tmp: dict(arguments=[numpy.zeros(1000), numpy.ones(1000), numpy.ones(1000), numpy.int32(1000)],
                          answer=[numpy.ones(1000, numpy.float32), None, None, None]),
     TypeError, ["Element 0 of the expected results list has a dtype that is not compatible", "float32 != float64"]),
    ("metrics a list", lambda kt, tmp: dict(metrics=["GFLOP/s"]), ValueError,
     ["metrics should be a dictionary to preserve order and support composability"]),
    ("metric value not str or callable", lambda kt, tmp: dict(metrics={"GB/s": 3}), ValueError,
     ["metric dicts values should be strings or callable"]),
    ("objective without direction", lambda kt, tmp: dict(objective="foo"), ValueError,
     ["Please specify objective_higher_is_better for objective foo"]),
    ("iterations 0", lambda kt, tmp: dict(iterations=0), ValueError, ["iterations"]),
    ("a Python int argument", lambda kt, tmp: dict(arguments=_problem()[0][:3] + [1000]), TypeError,
     ["Argument at position 3 of type: <class 'int'> should be of type np.ndarray, numpy scalar"]),
    ("an empty array", lambda kt, tmp: dict(arguments=[numpy.zeros(0, numpy.float32)] + _problem()[0][1:]),
     ValueError, ["arguments[0]", "empty"]),
    ("simulation without a cache", lambda kt, tmp: dict(simulation_mode=True), ValueError,
     ["Simulation mode requires an existing cachefile"]),
    ("simulation with a missing cache file",
     lambda kt, tmp: dict(simulation_mode=True, cache=str(tmp / "missing.json")), ValueError,
     ["Simulation mode requires an existing cachefile", "missing.json"]),
    ("cache of another kernel", lambda kt, tmp: dict(cache=_kt_cache(tmp / "other.json", kernel_name="other")),
     ValueError, ["Cannot load cache which contains results for different kernel (cache: other, actual: vector_add)"]),
    ("cache of other tune params",
     lambda kt, tmp: dict(cache=_kt_cache(tmp / "params.json"), tune_params={"block_size_x": [64], "tile": [1]}),
     ValueError, ["Cannot load cache which contains results obtained with different tunable parameters"]),
    ("cache of another problem size", lambda kt, tmp: dict(cache=_kt_cache(tmp / "size.json", problem_size=77)),
     ValueError, ["Cannot load cache which contains results for different problem_size"]),
    ("code generator without lang", lambda kt, tmp: dict(kernel_source=lambda p: KERNEL), TypeError,
     ["Please specify language when using a code generator function"]),
    ("kernel_source of another type", lambda kt, tmp: dict(kernel_source=42), TypeError,
     ["kernel_source is not a string nor a callable function"]),
    ("secondary source not a file name", lambda kt, tmp: dict(kernel_source=[KERNEL, KERNEL]), ValueError,
     ["When passing multiple kernel sources, the secondary entries must be filenames"]),
    ("block_size_names of four", lambda kt, tmp: dict(block_size_names=["a", "b", "c", "d"]), ValueError,
     ["block_size_names should not contain more than 3 names!"]),
    ("restriction of an unknown type", lambda kt, tmp: dict(restrictions=[42]), ValueError,
     ["Unknown restriction type"]),
    ("grid divisor of an unknown type", lambda kt, tmp: dict(grid_div_x=[1.5]), ValueError,
     ["unrecognized type in grid divisor list"]),
    ("param name not an identifier", lambda kt, tmp: dict(tune_params={"block_size_x": [64], "tile-x": [1]}),
     ValueError, ["name is not a valid identifier: tile-x"]),
    # what Kernel Tuner's own examples use that does not map (docs/guides/kernel-tuner-examples.md)
    ("TunablePrecision argument (accuracy.py)", lambda kt, tmp: dict(arguments=_tunable_precision()),
     kt_error(), ["arguments[1]: a TunablePrecision", "'float_type'"]),
    ("ErrorMetricObserver (accuracy tuning)", lambda kt, tmp: dict(observers=[_accuracy().ErrorMetricObserver()]),
     kt_error(), ["observers: ErrorMetricObserver does not map", "error metric"]),
    ("an IterationObserver of one's own", lambda kt, tmp: dict(observers=[_own_observer()]),
     kt_error(), ["observers: CountingObserver does not map", "benchmark loop"]),
    ("lang C, host code (pnpoly.py, convolution_streams.py)", lambda kt, tmp: dict(lang="C"),
     kt_error(), ["lang: 'C' does not map: host code in C"]),
    ("scheduler, old Dask (vector_add_parallel.py before 1.0)", lambda kt, tmp: dict(scheduler="tcp://x:8786"),
     kt_error(), ["scheduler: Kernel Tuner's old Dask scheduler"]),
]


def _accuracy():
    from tiletune.kernel_tuner import accuracy
    return accuracy


def _tunable_precision():
    args, _ = _problem()
    return [args[0], _accuracy().TunablePrecision("float_type", args[1]), args[2], args[3]]


def _own_observer():
    from tiletune.kernel_tuner.observers import IterationObserver

    class CountingObserver(IterationObserver):
        def get_results(self):
            return {}
    return CountingObserver()


@pytest.mark.parametrize("case", ERRORS, ids=[e[0] for e in ERRORS])
def test_tune_kernel_refuses(kt, tmp_path, case):
    _, kwargs, error, words = case
    with pytest.raises(error) as raised:
        _tune(kt, **kwargs(kt, tmp_path))
    for w in words:
        assert w in str(raised.value), (w, str(raised.value))


def test_at_least_fifteen_error_cases():
    assert len(ERRORS) >= 15


def test_run_kernel_refuses(kt):
    args, _ = _problem()
    with pytest.raises(ValueError, match="lang"):
        kt.run_kernel("vector_add", KERNEL, 1000, args, {"block_size_x": 64}, lang="OpenCL")
    with pytest.raises(TypeError, match="Argument at position 3"):
        kt.run_kernel("vector_add", KERNEL, 1000, args[:3] + [7], {"block_size_x": 64})
    with pytest.raises(ValueError, match="texmem_args"):
        kt.run_kernel("vector_add", KERNEL, 1000, args, {"block_size_x": 64}, texmem_args={"t": args[1]})


def test_argument_errors_come_before_the_device(monkeypatch):
    """Kernel Tuner checks the arguments (_check_user_input) before it opens the device: a Python
    int argument is a TypeError also on a machine without a GPU."""
    monkeypatch.setenv("TILETUNE_CLI", _cli())
    monkeypatch.delenv("TILETUNE_KT_DRY_RUN", raising=False)
    import tiletune.kernel_tuner as kernel_tuner
    args, _ = _problem()
    with pytest.raises(TypeError, match="Argument at position 3"):
        kernel_tuner.tune_kernel("vector_add", KERNEL, 1000, args[:3] + [1000], {"block_size_x": [64]}, quiet=True)


def test_kernel_tuner_module_paths():
    """The imports Kernel Tuner 1.4 scripts write, with kernel_tuner replaced by tiletune.kernel_tuner."""
    import importlib
    for module, name in (("observers.nvml", "NVMLObserver"), ("observers.register", "RegisterObserver"),
                         ("observers.powersensor", "PowerSensorObserver"), ("observers.pmt", "PMTObserver"),
                         ("observers.ncu", "NCUObserver"), ("observers.tegra", "TegraObserver"),
                         ("observers", "BenchmarkObserver"), ("nvml", "NVMLObserver"),
                         ("file_utils", "store_output_file"), ("file_utils", "store_metadata_file"),
                         ("file_utils", "get_t4_results"), ("file_utils", "get_t4_metadata"),
                         ("file_utils", "get_input_file"), ("util", "get_best_config"),
                         ("util", "get_config_string"), ("util", "ErrorConfig"), ("integration", "store_results"),
                         ("integration", "create_device_targets"), ("integration", "TuneResults")):
        m = importlib.import_module("tiletune.kernel_tuner." + module)
        assert hasattr(m, name), (module, name)


# What Kernel Tuner's example scripts (examples/cuda) import, beyond the modules above: each path
# resolves, so that a script reaches the call that uses it and is refused there with a message.
EXAMPLE_IMPORTS = [
    ("accuracy", ["Tunable", "TunablePrecision", "ErrorMetricObserver"]),
    ("observers", ["IterationObserver", "ContinuousObserver", "OutputObserver", "PrologueObserver",
                   "AccuracyObserver"]),
    ("observers.observer", ["BenchmarkObserver", "IterationObserver"]),
    ("kernelbuilder", ["PythonKernel"]),
    ("energy", ["energy"]), ("energy.energy", ["create_performance_frequency_model",
                                               "get_frequency_range_around_ridge"]),
    ("nvml", ["get_nvml_gr_clocks", "get_nvml_mem_clocks", "get_nvml_pwr_limits"]),
    ("strategies", ["minimize", "brute_force", "greedy_ils", "bayes_opt"]), ("strategies.minimize", ["tune"]),
    ("core", ["KernelSource", "DeviceInterface"]),
    ("interface", ["tune_kernel", "run_kernel", "Options", "_kernel_options", "_device_options",
                   "_check_user_input"]),
    ("backends.pycuda", ["PyCudaFunctions"]), ("backends.nvcuda", ["CudaFunctions"]),
    ("backends.cupy", ["CupyFunctions"]), ("backends.c", ["CFunctions"]), ("cuda", ["CudaFunctions"]),
    ("", ["tune_kernel", "run_kernel", "tune_kernel_T1", "store_results", "create_device_targets", "__version__",
          "strategies", "util", "integration", "file_utils"]),
]


@pytest.mark.parametrize("module, names", EXAMPLE_IMPORTS, ids=[m or "kernel_tuner" for m, _ in EXAMPLE_IMPORTS])
def test_example_script_imports(module, names):
    import importlib
    m = importlib.import_module("tiletune.kernel_tuner" + ("." + module if module else ""))
    missing = [n for n in names if not hasattr(m, n)]
    assert not missing, (module, missing)


def _call_refused(call):
    import importlib
    kt = importlib.import_module("tiletune.kernel_tuner")
    from tiletune.kernel_tuner.energy import energy
    from tiletune.kernel_tuner import backends, core, interface, nvml
    return {
        "energy.create_performance_frequency_model": lambda: energy.create_performance_frequency_model(device=0),
        "get_nvml_gr_clocks": lambda: nvml.get_nvml_gr_clocks(0),
        "get_nvml_pwr_limits": lambda: nvml.get_nvml_pwr_limits(0),
        "core.DeviceInterface": lambda: core.DeviceInterface(None, device=0),
        "core.KernelSource": lambda: core.KernelSource("vector_add", KERNEL, None, None),
        "backends.pycuda.PyCudaFunctions": lambda: backends.pycuda.PyCudaFunctions(0),
        "backends.c.CFunctions": lambda: backends.c.CFunctions(),
        "cuda.CudaFunctions": lambda: importlib.import_module("tiletune.kernel_tuner.cuda").CudaFunctions(0),
        "interface._check_user_input": lambda: interface._check_user_input("k", None, [], None),
        "strategies.minimize.tune": lambda: kt.strategies.minimize.tune(None, None, {}),
    }[call]


@pytest.mark.parametrize("call", ["energy.create_performance_frequency_model", "get_nvml_gr_clocks",
                                  "get_nvml_pwr_limits", "core.DeviceInterface", "core.KernelSource",
                                  "backends.pycuda.PyCudaFunctions", "backends.c.CFunctions",
                                  "cuda.CudaFunctions",
                                  "interface._check_user_input", "strategies.minimize.tune"])
def test_example_script_features_refused_when_used(call):
    """Clocks and power limits set from Python, Kernel Tuner's own compile-and-launch machinery:
    one KernelTunerArgumentError naming what was called."""
    with pytest.raises(kt_error(), match=r"^tiletune.kernel_tuner: " + re.escape(call) + ": "):
        _call_refused(call)()


def test_strategy_module_runs_as_its_name(kt):
    """strategy=kernel_tuner.strategies.minimize (vector_add_custom_strategy.py) is Kernel Tuner's
    minimize, tiletune's local search; a module of one's own with a tune() is refused."""
    from tiletune.kernel_tuner import _strategies
    assert _strategies.plan(kt.strategies.minimize, None).strategy == "local"
    assert _strategies.plan(kt.strategies.greedy_ils, {"max_fevals": 5}).budget == "5"
    _, env = _tune(kt, strategy=kt.strategies.minimize)
    assert all(row["status"] == "ok" for row in env["plan"]["rows"])
    import types
    own = types.ModuleType("my_strategy")
    own.tune = lambda searchspace, runner, tuning_options: []
    with pytest.raises(kt_error(), match="strategy: a strategy object of your own"):
        _tune(kt, strategy=own)


def test_nvcc_host_options_are_left_out(kt):
    """compiler_options written for nvcc's host side (-O3, -allow-unsupported-compiler, -ccbin g++)
    would make NVRTC fail every config; they are left out with a note, the others passed on."""
    _, env = _tune(kt, compiler_options=["-O3", "-allow-unsupported-compiler", "-ccbin", "g++", "--use_fast_math"])
    assert all(row["status"] == "ok" for row in env["plan"]["rows"]), env["plan"]["rows"]
    for gone in ("-O3", "allow-unsupported-compiler", "g++"):
        assert gone not in env["space"], (gone, env["space"])
    assert "--use_fast_math" in env["space"]


# -- (d) the inputs the engine receives ------------------------------------------------------

# numpy dtype -> (the .npy file's dtype, the space's element type)
STORED = {"bool": ("uint8", "uint8"), "int8": ("int8", "int8"), "uint8": ("uint8", "uint8"),
          "int16": ("int16", "int16"), "uint16": ("uint16", "uint16"), "int32": ("int32", "int"),
          "uint32": ("uint32", "uint"), "int64": ("int64", "int64"), "uint64": ("uint64", "uint64"),
          "float16": ("float16", "half"), "float32": ("float32", "float"), "float64": ("float64", "double"),
          "complex64": ("float32", "float2"), "complex128": ("float64", "double2")}


def _run_in_process(name, workdir, monkeypatch):
    """Runs the script here (its globals are the arrays to compare); a failure after the space is
    written (the plan, the script's own checks: test_script_dry_run reports those) is kept."""
    monkeypatch.setenv("TILETUNE_CLI", _cli())
    monkeypatch.setenv("TILETUNE_KT_DRY_RUN", "1")
    monkeypatch.setenv("TILETUNE_KT_WORKDIR", str(workdir))
    monkeypatch.syspath_prepend(SCRIPTS)  # as `python SCRIPT` does: the scripts import _checks
    path = os.path.join(SCRIPTS, name + ".py")
    g = {"__name__": "__main__", "__file__": path}
    with open(path) as f:
        code = compile(f.read(), path, "exec")
    try:
        exec(code, g)
        error = None
    except Exception as e:  # noqa: BLE001 - reported below only if the space was not written
        error = e
    assert os.path.exists(workdir / "space.yaml"), f"{name}.py wrote no space: {error!r}"
    with open(workdir / "space.yaml") as f:
        return g, f.read(), error


def _buffer_line(space, i):
    m = re.search(r"^  arg%d: \{type: (\w+), count: (\d+), init: \{file: (arg%d\.npy)\}(, output: true)?\}$" % (i, i),
                  space, re.M)
    assert m, (i, space)
    return m.group(1), int(m.group(2)), m.group(3), bool(m.group(4))


def _scalar_entries(space):
    line = re.search(r"^args: \[(.*)\]$", space, re.M).group(1)
    return re.findall(r"arg\d+|\{value: [^,]+, type: \w+\}", line)


INPUT_SCRIPTS = ["dtypes", "vector_add", "axpy_nvcuda", "matmul", "convolution", "reduction", "spmv"]


@pytest.mark.parametrize("name", INPUT_SCRIPTS)
def test_inputs_reach_the_engine_exactly(name, tmp_path, monkeypatch):
    g, space, error = _run_in_process(name, tmp_path, monkeypatch)
    if error is not None and ("args" not in g or name != "reduction" and "answer" not in g):
        pytest.fail(f"{name}.py stopped before its tune_kernel call: {error!r}")
    args = g["args"]
    entries = _scalar_entries(space)
    assert len(entries) == len(args), (entries, len(args))
    for i, arg in enumerate(args):
        if isinstance(arg, numpy.ndarray):
            file_dtype, element = STORED[arg.dtype.name]
            type_, count, file, _ = _buffer_line(space, i)
            assert entries[i] == f"arg{i}", entries[i]
            assert (type_, count) == (element, arg.size), (i, type_, count, arg.dtype)
            stored = numpy.load(tmp_path / file, allow_pickle=False)
            assert stored.dtype == numpy.dtype(file_dtype) and stored.ndim == 1, (i, stored.dtype)
            assert stored.tobytes() == numpy.ascontiguousarray(arg).tobytes(), f"arg{i}.npy differs from the array"
        else:
            value, type_ = re.match(r"\{value: ([^,]+), type: (\w+)\}", entries[i]).groups()
            assert type_ == STORED[arg.dtype.name][1], (i, type_, arg.dtype)
            exact = float(value) if isinstance(arg, numpy.floating) else int(value)
            assert arg.dtype.type(exact) == arg and exact == arg.item(), (i, value, arg)
    answer = g.get("answer")
    if name == "reduction":  # a numpy-scalar answer checked by the script's verify function
        assert "command: [" in space and "reference: none" in space and not list(tmp_path.glob("answer*.npy"))
        # the check is handed what Kernel Tuner hands verify: the answered partial sums, not the input
        assert "  command_buffers: [arg0]\n" in space, space
        assert _buffer_line(space, 0)[3] and not _buffer_line(space, 1)[3]
        return
    assert answer is not None
    for i, (arg, want) in enumerate(zip(args, answer)):
        if not isinstance(arg, numpy.ndarray):
            continue
        output = _buffer_line(space, i)[3]
        assert output == (want is not None), (i, output)
        if want is None:
            assert not (tmp_path / f"answer{i}.npy").exists()
            continue
        stored = numpy.load(tmp_path / f"answer{i}.npy", allow_pickle=False)
        expected = numpy.ascontiguousarray(numpy.asarray(want).astype(arg.dtype))
        assert stored.tobytes() == expected.tobytes(), f"answer{i}.npy differs from the answer"
        assert f"arg{i}: answer{i}.npy" in space
    if name == "convolution":  # cmem_args: the filter as a module global
        filt = g["cmem_args"]["d_filter"]
        assert '"d_filter": {type: float, count: %d, init: {file: cmem0.npy}}' % filt.size in space, space
        assert numpy.load(tmp_path / "cmem0.npy").tobytes() == filt.tobytes()


# -- Kernel Tuner behaviours the scripts do not reach -----------------------------------------

def test_source_list_with_code_primary(kt, monkeypatch):
    """[code, "aux.cuh"]: Kernel Tuner copies the auxiliary file and points the primary's
    #include at the copy, so the include resolves wherever the code came from."""
    monkeypatch.chdir(SCRIPTS)
    with open("stencil1d.cu") as f:
        code = f.read()
    n = 1000
    x = numpy.random.randn(n).astype(numpy.float32)
    _, env = kt.tune_kernel("stencil1d", [code, "stencil1d_helpers.cuh"], n,
                            [numpy.zeros_like(x), x, numpy.int32(n)],
                            {"block_size_x": [32, 64], "items_per_thread": [1]},
                            grid_div_x=["block_size_x", "items_per_thread"], compiler_options=["-DRADIUS=3"],
                            quiet=True)
    assert [r["status"] for r in env["plan"]["rows"]] == ["ok", "ok"], env["plan"]["rows"]


def test_uppercase_block_size_names(kt):
    """block_size_names=None: Kernel Tuner takes BLOCK_SIZE_X (any case) as the block's x."""
    n = 10000
    src = ("__global__ void k(float *c, const float *a, int n) {"
           " int i = blockIdx.x * BLOCK_SIZE_X + threadIdx.x; if (i < n) c[i] = a[i]; }")
    a = numpy.random.randn(n).astype(numpy.float32)
    _, env = kt.tune_kernel("k", src, n, [numpy.zeros_like(a), a, numpy.int32(n)], {"BLOCK_SIZE_X": [64, 128]},
                            quiet=True)
    got = [(r["params"]["BLOCK_SIZE_X"], r["block"], r["grid"]) for r in env["plan"]["rows"]]
    assert got == [(64, [64, 1, 1], [157, 1, 1]), (128, [128, 1, 1], [79, 1, 1])], got


def test_simulation_allows_nvml_params(monkeypatch, tmp_path):
    """Kernel Tuner simulates caches with nvml_* params without an NVMLObserver: they are data."""
    monkeypatch.setenv("TILETUNE_CLI", _cli())
    monkeypatch.delenv("TILETUNE_KT_DRY_RUN", raising=False)
    import tiletune.kernel_tuner as kernel_tuner
    tune_params = {"block_size_x": [64, 128], "nvml_pwr_limit": [300, 400]}
    header = {"device_name": "NVIDIA H200", "kernel_name": "k", "problem_size": 1000,
              "tune_params_keys": list(tune_params), "tune_params": tune_params, "objective": "time", "cache": {}}
    text = json.dumps(header, indent="")[:-3]
    for b in tune_params["block_size_x"]:
        for p in tune_params["nvml_pwr_limit"]:
            t = 0.1 + b / 1e4 - p / 1e5
            entry = {"block_size_x": b, "nvml_pwr_limit": p, "time": t, "times": [t] * 7, "compile_time": 10.0,
                     "verification_time": 0, "benchmark_time": 1.0, "strategy_time": 0, "framework_time": 0.1,
                     "timestamp": "2025-01-01 00:00:00.000000+00:00"}
            text += "\n" + json.dumps({f"{b},{p}": entry})[1:-1] + ","
    cache = tmp_path / "nvml.json"
    cache.write_text(text[:-1] + "}\n}")
    src = "__global__ void k(float *c, int n) { int i = blockIdx.x * block_size_x + threadIdx.x; if (i < n) c[i] = 1; }"
    results, env = kernel_tuner.tune_kernel("k", src, 1000, [numpy.zeros(1000, numpy.float32), numpy.int32(1000)],
                                            tune_params, cache=str(cache), simulation_mode=True, quiet=True)
    assert len(results) == 4
    assert (env["best_config"]["block_size_x"], env["best_config"]["nvml_pwr_limit"]) == (64, 400)


# -- Kernel Tuner's other module paths, run end to end on a stand-in for the CLI ---------------

FAKE = os.path.join(SOURCE, "tests", "python", "fake_tiletune.py")
T4_SCHEMA = os.path.join(HERE, "schema", "T4-1.0.0-results-schema.json")
MODULE_SCRIPTS = ["t4_output", "chained", "nvml_clocks", "parallel_tune", "integration_header"]


@pytest.fixture
def fake_cli(tmp_path):
    """An executable that runs tests/python/fake_tiletune.py: each config a trial whose outputs are
    its inputs (the kernel is not run), so that the scripts' non-dry-run half runs on the CPU."""
    wrapper = tmp_path / "tiletune"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {FAKE} \"$@\"\n")
    wrapper.chmod(0o755)
    return str(wrapper)


@pytest.mark.parametrize("name", MODULE_SCRIPTS)
def test_module_script_on_the_fake_cli(name, fake_cli, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    log = tmp_path / "argv.log"
    done = subprocess.run([sys.executable, os.path.join(SCRIPTS, name + ".py")], cwd=SOURCE, capture_output=True,
                          text=True, timeout=600,
                          env=_env(TILETUNE_CLI=fake_cli, T4_OUT=str(out), INTEGRATION_OUT=str(out),
                                   FAKE_TILETUNE_LOG=str(log)))
    assert done.returncode == 0, f"{name}.py exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    assert f"{name}: OK" in done.stdout, done.stdout
    tunes = [json.loads(line) for line in log.read_text().splitlines() if json.loads(line)[0] == "tune"]
    assert tunes, "the script ran no tune"
    if name == "parallel_tune":  # parallel=True: tiletune's device pool, every GPU of the host
        assert all(a[a.index("--devices") + 1] == "all" and "--device" not in a for a in tunes), tunes
    else:
        assert all("--devices" not in a for a in tunes), tunes
    if name == "nvml_clocks":  # clocks and temperature are read while timing: no energy measurement
        assert all("--energy" not in a for a in tunes), tunes
    if name == "t4_output":
        _check_t4_files(out)
    if name == "integration_header":
        _check_header(out)


def _check_t4_files(out):
    """The script's T4 results file against Kernel Tuner's T4 results schema (1.0.0), here too."""
    jsonschema = pytest.importorskip("jsonschema")
    with open(T4_SCHEMA) as f:
        validator = jsonschema.Draft202012Validator(json.load(f))
    with open(out / "clamp_floats_results.json") as f:
        t4 = json.load(f)
    validator.validate(t4)
    assert len(t4["results"]) == 8 and {e["invalidity"] for e in t4["results"]} == {"correct"}
    assert [sorted(e["configuration"]) for e in t4["results"]] == [["block_size_x", "vec"]] * 8
    with open(out / "clamp_floats_metadata.json") as f:
        meta = json.load(f)
    assert meta["metadata"]["environment"]["device_query"]["tiletune"][0]["name"] == "Fake GPU"
    # a validator that takes anything would pass the above: a broken file must fail it
    broken = dict(t4, results=[dict(t4["results"][0], invalidity="maybe")])
    assert not validator.is_valid(broken)


def _check_header(out):
    """The generated header, compiled here with gcc and g++ into a program whose printed macros are
    the results file's configs (the default, and -DTARGET_Fake_GPU's)."""
    from tiletune.kernel_tuner.integration import TuneResults
    read = TuneResults(str(out / "saxpy_results.json"))
    header = (out / "saxpy_targets.h").read_text()
    assert "#ifndef kernel_tuner" in header and "#ifdef TARGET_Fake_GPU" in header, header
    program = out / "check_header.c"
    program.write_text('#include "saxpy_targets.h"\n#include <stdio.h>\n'
                       'int main(void) { printf("%d %d\\n", block_size_x, per_thread); return 0; }\n')
    compilers = [c for c in ("gcc", "g++") if shutil.which(c)]
    if not compilers:
        pytest.fail("neither gcc nor g++ is installed: the generated header cannot be compiled")
    for compiler in compilers:
        for flags, params in (([], read.get_best_config()), (["-DTARGET_Fake_GPU"], read.get_best_config("Fake GPU"))):
            exe = out / f"check_{compiler}"
            subprocess.run([compiler, "-Wall", "-Werror", "-I", str(out), *flags,
                            *(["-x", "c++"] if compiler == "g++" else []), str(program), "-o", str(exe)],
                           check=True, capture_output=True)
            printed = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
            assert printed == [str(params["block_size_x"]), str(params["per_thread"])], (compiler, flags, printed)


@pytest.mark.parametrize("all_buffers", [False, True], ids=["command_buffers", "all_buffers"])
def test_verify_cost_bench_dry_run(all_buffers):
    """bench/kt_verify_cost.py on the CPU: both spaces written and planned, the verify one naming
    only the partial sums for the check (or, with --all-buffers, nothing: every buffer)."""
    argv = [sys.executable, os.path.join(SOURCE, "bench", "kt_verify_cost.py"), "2e5", "--partials", "512"]
    done = subprocess.run(argv + (["--all-buffers"] if all_buffers else []), cwd=SOURCE, capture_output=True,
                          text=True, timeout=600, env=_env(TILETUNE_KT_DRY_RUN="1"))
    assert done.returncode == 0, f"exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    lines = done.stdout.splitlines()
    assert lines[0].startswith("kt_verify_cost: N=200000 (0.00 GB input), 512 partials, 12 configs"), lines
    assert ("every buffer" in lines[0]) == all_buffers, lines[0]
    assert [line.split()[0] for line in lines[2:]] == ["without", "with", "verify"], lines
