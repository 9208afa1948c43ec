"""tune_kernel and run_kernel end to end on the CPU, against fake_tiletune.py standing in for the
tiletune executable: the script's verify function really runs on every config's outputs (through
the check command and its relay, as on a GPU) and decides wrong_result, an exception it raises is
the one tune_kernel raises, results carry Kernel Tuner's keys in evaluation order, a cache is
written in Kernel Tuner's format and answers a second call without tuning, and run_kernel gives
back every argument."""
import json

import numpy
import pytest

import tiletune.kernel_tuner as kernel_tuner
from conftest import KT_KERNEL, kt_problem

def test_the_verify_function_judges_every_config(fake):
    args = kt_problem()
    calls = []

    def verify(answer, result_host, atol=None):
        calls.append((answer, [None if r is None else r.copy() for r in result_host], atol))
        return not (result_host[0][0] == 0 and len(calls) == 2)  # the second config is "wrong"

    results, env = kernel_tuner.tune_kernel("scale", KT_KERNEL, 1000, args, {"block_size_x": [32, 64, 128]},
                                            verify=verify, atol=0.25, quiet=True)
    assert len(calls) == 3
    answer, host, atol = calls[0]
    assert answer is None and atol == 0.25
    # every array argument is synced without an answer; scalars are None; shapes and dtypes as given
    assert host[0].dtype == numpy.float32 and host[0].shape == (1000,) and numpy.array_equal(host[1], args[1])
    assert host[2] is None and host[3] is None
    assert [r["block_size_x"] for r in results] == [32, 64, 128]
    assert [r["status"] for r in results] == ["ok", "wrong_result", "ok"]
    assert results[1]["time"] == "RuntimeFailedConfig" and "verify function returned False" in results[1]["detail"]
    for key in ("time", "times", "compile_time", "verification_time", "benchmark_time", "strategy_time",
                "framework_time", "timestamp"):
        assert key in results[0], key
    assert env["best_config"]["block_size_x"] == 32
    assert env["device_name"] == "Fake GPU"
    assert "total_framework_time" in env and "overhead_time" in env


def test_an_exception_in_verify_is_what_tune_kernel_raises(fake):
    def verify(answer, result_host):
        raise ZeroDivisionError("the script's own bug")

    with pytest.raises(ZeroDivisionError, match="the script's own bug"):
        kernel_tuner.tune_kernel("scale", KT_KERNEL, 1000, kt_problem(), {"block_size_x": [32, 64]}, verify=verify,
                                 quiet=True)


def test_a_cache_is_written_in_kernel_tuners_format_and_answers_the_next_call(fake, tmp_path):
    cache = str(tmp_path / "scale_cache")
    tune_params = {"block_size_x": [32, 64, 128]}
    first, _ = kernel_tuner.tune_kernel("scale", KT_KERNEL, 1000, kt_problem(), tune_params, cache=cache, quiet=True)
    with open(cache + ".json") as f:
        written = json.load(f)
    assert written["kernel_name"] == "scale" and written["device_name"] == "Fake GPU"
    assert written["tune_params_keys"] == ["block_size_x"] and written["problem_size"] == 1000
    assert sorted(written["cache"]) == ["128", "32", "64"]
    assert written["cache"]["64"]["time"] == first[1]["time"]
    assert "status" not in written["cache"]["64"]  # tiletune's own keys stay in the results
    tunes = sum(1 for argv in fake.argvs() if argv[0] == "tune")
    second, env = kernel_tuner.tune_kernel("scale", KT_KERNEL, 1000, kt_problem(), tune_params, cache=cache, quiet=True)
    assert sum(1 for argv in fake.argvs() if argv[0] == "tune") == tunes  # nothing left to measure
    assert [r["block_size_x"] for r in second] == [32, 64, 128]
    assert all(r["compile_time"] == 0 and r["benchmark_time"] == 0 for r in second)
    assert env["best_config"]["block_size_x"] == 32
    with pytest.raises(ValueError, match="different kernel"):
        kernel_tuner.tune_kernel("other", KT_KERNEL.replace("scale", "other"), 1000, kt_problem(), tune_params,
                                 cache=cache, quiet=True)


def test_run_kernel_gives_back_every_argument(fake):
    args = kt_problem()
    out = kernel_tuner.run_kernel("scale", KT_KERNEL, 1000, args, {"block_size_x": 128}, quiet=True)
    assert len(out) == 4
    assert numpy.array_equal(out[1], args[1]) and out[0].dtype == numpy.float32 and out[0].shape == (1000,)
    assert out[2] is args[2] and out[3] is args[3]
    tune = next(argv for argv in fake.argvs() if argv[0] == "tune")
    assert "--confirm" in tune and tune[tune.index("--confirm") + 1] == "0"


def test_run_kernel_twice_in_a_kept_workdir_runs_twice(fake, tmp_path, monkeypatch):
    """TILETUNE_KT_WORKDIR keeps the space and its cache between calls: each call starts from an
    empty cache, or the second would find its config measured, run nothing and return nothing."""
    monkeypatch.setenv("TILETUNE_KT_WORKDIR", str(tmp_path / "work"))
    for _ in range(2):
        args = kt_problem()
        out = kernel_tuner.run_kernel("scale", KT_KERNEL, 1000, args, {"block_size_x": 128}, quiet=True)
        assert len(out) == 4 and out[0].shape == (1000,)
    assert sum(1 for argv in fake.argvs() if argv[0] == "tune") == 2
