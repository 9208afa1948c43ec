"""Kernel Tuner 1.4's other module paths and keywords, end to end on the CPU against
fake_tiletune.py: parallel=True / N as tiletune's device pool (the argv the module builds), the
keywords refused by name (never a bare TypeError), the verify function handed only what Kernel
Tuner hands it (command_buffers), NVMLObserver's clocks and temperature without --energy,
failed configs as util.ErrorConfig kinds, file_utils' T4 results (checked against the T4 results
schema shipped in tests/interchange/kernel_tuner/schema) and metadata, util.get_best_config
chaining a second tuning, and integration's results file read back as Kernel Tuner reads it."""
import json
import os

import numpy
import pytest

import tiletune.kernel_tuner as kernel_tuner
from conftest import KT_KERNEL, kt_problem
from tiletune.kernel_tuner import KernelTunerArgumentError, file_utils, integration, util
from tiletune.kernel_tuner.observers import NVMLObserver

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("TILETUNE_SOURCE_DIR", os.path.join(HERE, "..", ".."))
T4_SCHEMA = os.path.join(SOURCE, "tests", "interchange", "kernel_tuner", "schema", "T4-1.0.0-results-schema.json")


def tune(**kwargs):
    call = dict(kernel_name="scale", kernel_source=KT_KERNEL, problem_size=1000, arguments=kt_problem(),
                tune_params={"block_size_x": [32, 64, 128]}, quiet=True)
    call.update(kwargs)
    return kernel_tuner.tune_kernel(**call)


def tune_argv(argvs):
    return next(a for a in argvs() if a[0] == "tune")


# -- parallel ---------------------------------------------------------------------------------

def test_parallel_true_tunes_on_every_gpu_of_the_host(fake):
    argvs = fake.argvs
    results, _ = tune(parallel=True)
    argv = tune_argv(argvs)
    assert argv[argv.index("--devices") + 1] == "all" and "--device" not in argv
    assert [r["status"] for r in results] == ["ok"] * 3


def test_parallel_n_takes_the_first_n_gpus(fake, monkeypatch):
    argvs = fake.argvs
    monkeypatch.setenv("FAKE_TILETUNE_DEVICES", "3")
    tune(parallel=2, parallel_compile=4)
    argv = tune_argv(argvs)
    assert argv[argv.index("--devices") + 1] == "0,1"
    assert argv[argv.index("--threads") + 1] == "4"


def test_parallel_more_gpus_than_the_host_has(fake, monkeypatch):
    monkeypatch.setenv("FAKE_TILETUNE_DEVICES", "2")
    with pytest.raises(KernelTunerArgumentError, match=r"^tiletune.kernel_tuner: parallel: 3 GPUs asked for; this "
                                                       r"host has 2$"):
        tune(parallel=3)


def test_without_parallel_one_device(fake):
    argvs = fake.argvs
    tune(device=0)
    argv = tune_argv(argvs)
    assert argv[argv.index("--device") + 1] == "0" and "--devices" not in argv and "--threads" not in argv


@pytest.mark.parametrize("keyword, words", [
    ("parallel_workers", ["parallel_workers", "parallel=True"]),
    ("remote_mode", ["remote_mode", "--shard"]),
    ("num_gpus", ["num_gpus", "parallel=N"]),
    ("parallel_runner", ["parallel_runner"]),
    ("call_function", ["call_function", "outside CUDA kernel tuning"]),
    ("no_such_option", ["no_such_option", "not an argument of Kernel Tuner 1.4's tune_kernel"]),
])
def test_keywords_tiletune_does_not_take_are_named(fake, keyword, words):
    argvs = fake.argvs
    with pytest.raises(KernelTunerArgumentError) as raised:
        tune(**{keyword: 4})
    assert raised.value.argument == keyword
    for w in words:
        assert w in str(raised.value)
    assert not any(a[0] == "tune" for a in argvs())  # refused before anything ran


def test_run_kernel_names_an_unknown_keyword(fake):
    with pytest.raises(KernelTunerArgumentError, match="run_kernel"):
        kernel_tuner.run_kernel("scale", KT_KERNEL, 1000, kt_problem(), {"block_size_x": 32}, iterations=3)


# -- what the verify function is handed -------------------------------------------------------

def test_verify_gets_only_the_answered_arguments(fake):
    requests = fake.requests
    args = kt_problem()
    seen = []

    def verify(answer, result_host, atol=None):
        seen.append([r is not None for r in result_host])
        return True

    tune(arguments=args, answer=[args[1] * 2, None, None, None], verify=verify)
    assert seen == [[True, False, False, False]] * 3
    assert requests() == [["arg0"]] * 3  # the input (arg1) never leaves the GPU for the check


def test_verify_without_answer_gets_every_array(fake):
    requests = fake.requests
    seen = []
    tune(verify=lambda answer, result_host: seen.append([r is not None for r in result_host]) or True)
    assert seen == [[True, True, False, False]] * 3
    assert requests() == [["arg0", "arg1"]] * 3


def test_the_space_names_the_command_buffers(tmp_path, monkeypatch, fake):
    monkeypatch.setenv("TILETUNE_KT_WORKDIR", str(tmp_path / "space"))
    args = kt_problem()
    tune(arguments=args, answer=[args[1] * 2, None, None, None], verify=lambda a, b: True)
    space = (tmp_path / "space" / "space.yaml").read_text()
    assert "  command_buffers: [arg0]\n" in space, space


# -- NVMLObserver -----------------------------------------------------------------------------

def test_clocks_and_temperature_without_energy(fake):
    argvs = fake.argvs
    results, _ = tune(observers=[NVMLObserver(["core_freq", "mem_freq", "temperature"])])
    assert "--energy" not in tune_argv(argvs)
    for i, r in enumerate(results):  # the fake's readings: 1980 - i MHz, 2619 MHz, 40 + i C
        assert (r["core_freq"], r["mem_freq"], r["temperature"]) == (1980.0 - i, 2619.0, 40.0 + i), r


def test_energy_and_power_ask_for_energy(fake):
    argvs = fake.argvs
    results, _ = tune(observers=[NVMLObserver(["nvml_energy", "nvml_power", "core_freq"])])
    assert "--energy" in tune_argv(argvs)
    r = results[0]
    assert r["nvml_power"] == 300.0 and r["nvml_energy"] == pytest.approx(r["time"] * 300.0 / 1000.0)


def test_a_reading_the_trial_lacks_is_none(monkeypatch):
    from tiletune.kernel_tuner._results import observed
    result = {}
    observed(result, {"sm_clock_mhz": 1755.0, "temperature_c": None}, ["core_freq", "mem_freq", "temperature"])
    assert result == {"core_freq": 1755.0, "mem_freq": None, "temperature": None}


@pytest.mark.parametrize("observable", ["power_readings", "gr_voltage"])
def test_observables_not_measured_are_refused(fake, observable):
    with pytest.raises(KernelTunerArgumentError, match=f"observers: NVMLObserver observable '{observable}' does "
                                                       "not map"):
        tune(observers=[NVMLObserver(["core_freq", observable])])


def test_locked_clocks_are_refused(fake):
    with pytest.raises(KernelTunerArgumentError, match="use_locked_clocks"):
        tune(observers=[NVMLObserver(["core_freq"], use_locked_clocks=True)])


# -- results, file_utils, util, integration ---------------------------------------------------

def test_a_failed_config_holds_an_error_config(fake):
    results, env = tune(verify=lambda answer, result_host: False)
    assert all(isinstance(r["time"], util.RuntimeFailedConfig) for r in results)
    assert all(r["time"] == "RuntimeFailedConfig" and str(r["time"]) == "RuntimeFailedConfig" for r in results)
    assert "best_config" not in env or not isinstance(env["best_config"]["time"], float)


def t4_validator():
    jsonschema = pytest.importorskip("jsonschema")
    with open(T4_SCHEMA) as f:
        return jsonschema.Draft202012Validator(json.load(f))


def test_t4_results_validate_and_say_which_configs_failed(fake, tmp_path):
    calls = []

    def verify(answer, result_host):
        calls.append(1)
        return len(calls) != 2  # the second config computes a "wrong" result

    tune_params = {"block_size_x": [32, 64, 128]}
    results, _ = tune(tune_params=tune_params, verify=verify, observers=[NVMLObserver(["core_freq"])])
    file_utils.store_output_file(str(tmp_path / "out" / "t4"), results, tune_params)
    with open(tmp_path / "out" / "t4.json") as f:
        t4 = json.load(f)
    t4_validator().validate(t4)
    assert t4["schema_version"] == "1.0.0"
    assert [e["configuration"] for e in t4["results"]] == [{"block_size_x": v} for v in (32, 64, 128)]
    assert [e["invalidity"] for e in t4["results"]] == ["correct", "runtime", "correct"]
    first = {m["name"]: m for m in t4["results"][0]["measurements"]}
    assert first["time"]["value"] == results[0]["time"] and first["time"]["unit"] == "ms"
    assert first["core_freq"]["value"] == results[0]["core_freq"]
    assert t4["results"][0]["times"]["runtimes"] == results[0]["times"]
    assert file_utils.get_t4_results(results, tune_params) == t4


def test_t4_leaves_out_a_reading_that_is_none(tmp_path):
    result = {"block_size_x": 32, "time": 0.5, "times": [0.5], "compile_time": 1.0, "benchmark_time": 2.0,
              "framework_time": 0.1, "strategy_time": 0, "verification_time": 0, "timestamp": "t",
              "temperature": None, "GFLOP/s": numpy.float64(7.0)}
    t4 = file_utils.get_t4_results([result], {"block_size_x": [32]})
    t4_validator().validate(t4)
    assert [m["name"] for m in t4["results"][0]["measurements"]] == ["time", "GFLOP/s"]


def test_metadata_names_the_gpus_tiletune_sees(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_TILETUNE_DEVICES", "2")
    file_utils.store_metadata_file(str(tmp_path / "meta"))
    with open(tmp_path / "meta.json") as f:
        meta = json.load(f)
    assert meta["schema_version"] == "1.0.0"
    assert [d["uuid"] for d in meta["metadata"]["environment"]["device_query"]["tiletune"]] == \
        ["GPU-fake-0", "GPU-fake-1"]
    assert isinstance(meta["metadata"]["hardware"]["hardware_description"], list)
    assert any(r.startswith("numpy==") for r in meta["metadata"]["environment"]["requirements"])


def test_get_best_config_chains_a_second_tuning(fake):
    first, _ = tune(tune_params={"block_size_x": [128, 32, 64]})
    best = util.get_best_config(first, "time")
    assert best["block_size_x"] == 32  # the fake's time grows with block_size_x
    second, env = tune(tune_params={"block_size_x": [best["block_size_x"]], "unroll": [1, 2]})
    assert [(r["block_size_x"], r["unroll"]) for r in second] == [(32, 1), (32, 2)]
    assert util.get_config_string(best, ["block_size_x", "time"], {"time": "ms"}) == \
        f"block_size_x=32, time={best['time']:.3f}ms"


def test_store_results_keeps_the_top_configs_per_device_and_size(tmp_path):
    path = str(tmp_path / "results.json")
    tune_params = {"block_size_x": [32, 64, 128]}
    results = [{"block_size_x": 32, "time": 1.0}, {"block_size_x": 64, "time": 1.02},
               {"block_size_x": 128, "time": 2.0}, {"block_size_x": 256, "time": util.RuntimeFailedConfig()}]
    integration.store_results(path, "scale", KT_KERNEL, tune_params, 1000, results, {"device_name": "Fake GPU"})
    integration.store_results(path, "scale", KT_KERNEL, tune_params, (20, 50), results[::-1][1:],
                              {"device_name": "Other GPU-2"})
    with open(path) as f:
        data = json.load(f)
    assert data["version_number"] == "1.0" and data["kernel_string"] == KT_KERNEL and data["objective"] == "time"
    assert [(d["device_name"], d["problem_size"], d["tunable_parameters"]["block_size_x"]) for d in data["data"]] == \
        [("Fake_GPU", "1000", 32), ("Fake_GPU", "1000", 64), ("Other_GPU_2", "20x50", 64),
         ("Other_GPU_2", "20x50", 32)]
    read = integration.TuneResults(path)
    assert read.get_best_config("Fake GPU", 1000) == {"block_size_x": 32}
    with pytest.raises(ValueError, match="Mismatch between given kernel_name"):
        integration.store_results(path, "other", KT_KERNEL, tune_params, 1000, results, {"device_name": "Fake GPU"})


def write_t1(folder, search=None, budget=None):
    """A T1 file of scale (KT_KERNEL) in Kernel Tuner's reading: a float vector out, a Random float
    vector in, float and int32 scalars; block_size_x over four values, one of them ruled out."""
    (folder / "scale.cu").write_text(KT_KERNEL)
    document = {
        "ConfigurationSpace": {
            "TuningParameters": [{"Name": "block_size_x", "Type": "int", "Values": "[32, 64, 128]"}],
            "Conditions": [{"Parameters": ["block_size_x"], "Expression": "block_size_x <= 1024"}]},
        "KernelSpecification": {
            "Language": "CUDA", "KernelName": "scale", "KernelFile": "scale.cu", "ProblemSize": [1000],
            "Arguments": [
                {"Name": "out", "Type": "float", "MemoryType": "Vector", "Size": "ProblemSize[0]",
                 "FillType": "Constant", "FillValue": 0.0},
                {"Name": "in", "Type": "float", "MemoryType": "Vector", "Size": 1000, "FillType": "Random"},
                {"Name": "alpha", "Type": "float", "MemoryType": "Scalar", "FillValue": 2.0},
                {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "FillValue": 1000}]}}
    if search:
        document["Search"] = search
    if budget:
        document["Budget"] = budget
    path = folder / "scale.json"
    path.write_text(json.dumps(document))
    return str(path)


def test_tune_kernel_t1_tunes_the_file_as_kernel_tuner_reads_it(fake, tmp_path):
    t1 = write_t1(tmp_path, search={"Name": "random_sample"}, budget=[{"Type": "ConfigurationCount",
                                                                      "BudgetValue": 2}])
    results, env = kernel_tuner.tune_kernel_T1(t1, output_T4=False)
    tune = [argv for argv in fake.argvs() if argv[0] == "tune"]
    assert len(tune) == 1 and tune[0][tune[0].index("--strategy") + 1] == "random", tune
    assert tune[0][tune[0].index("--budget") + 1] == "2", tune  # Budget.ConfigurationCount: max_fevals
    assert {r["block_size_x"] for r in results} <= {32, 64, 128} and env["best_config"]["block_size_x"] in (32, 64, 128)
    metadata, t4 = kernel_tuner.tune_kernel_T1(write_t1(tmp_path))   # output_T4: Kernel Tuner's default
    assert metadata["schema_version"] == "1.0.0" and "environment" in metadata["metadata"], metadata
    assert [r["configuration"]["block_size_x"] for r in t4["results"]] == [32, 64, 128], t4
    if os.path.exists(T4_SCHEMA):
        import jsonschema
        with open(T4_SCHEMA) as f:
            jsonschema.validate(t4, json.load(f))


def test_tune_kernel_t1_refuses_what_kernel_tuner_does_not_read(fake, tmp_path):
    t1 = write_t1(tmp_path)
    document = json.loads(open(t1).read())
    document["KernelSpecification"]["Arguments"][1]["Type"] = "int8"
    (tmp_path / "scale.json").write_text(json.dumps(document))
    with pytest.raises(KernelTunerArgumentError, match=r"KernelSpecification.Arguments\[1\]: a Vector of int8"):
        kernel_tuner.tune_kernel_T1(t1)
    document["KernelSpecification"]["Arguments"][1]["Type"] = "float"
    document["ConfigurationSpace"]["TuningParameters"][0]["Values"] = "__import__('os').getcwd()"
    (tmp_path / "scale.json").write_text(json.dumps(document))
    with pytest.raises(KernelTunerArgumentError, match=r"TuningParameters\[0\].Values: .* does not evaluate"):
        kernel_tuner.tune_kernel_T1(t1)