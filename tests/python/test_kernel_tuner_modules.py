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


def test_kernel_tuner_parallel_environment_variable(fake, monkeypatch):
    argvs = fake.argvs
    monkeypatch.setenv("KERNEL_TUNER_PARALLEL", "true")
    tune()
    argv = tune_argv(argvs)
    assert argv[argv.index("--devices") + 1] == "all"


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


def test_tune_kernel_t1_names_the_cli_way(tmp_path):
    with pytest.raises(KernelTunerArgumentError, match=r"^tiletune.kernel_tuner: tune_kernel_T1: a T1 file \(.*t1.json\) "
                                                       r"becomes a tiletune space with `tiletune import-t1"):
        kernel_tuner.tune_kernel_T1(str(tmp_path / "t1.json"))
