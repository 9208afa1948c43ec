"""tiletune.kernel_tuner's parts that need no engine: Kernel Tuner's cache file read (also as an
interrupted run leaves it), checked and written; the strategy mapping; which restriction strings
tiletune evaluates itself; the grid and launch Kernel Tuner computes, as the space says them."""
import json
import os

import numpy
import pytest

from tiletune.kernel_tuner import KernelTunerArgumentError, _kt_cache, _strategies
from tiletune.kernel_tuner._params import Restrictions, in_tiletune_subset, make_params
from tiletune.kernel_tuner._source import KernelSource, looks_like_a_filename
from tiletune.kernel_tuner._space import Space, _kt_grid

KERNEL = "__global__ void k(float* out, int n) { int i = blockIdx.x * block_size_x + threadIdx.x; if (i < n) out[i] = i; }"


def test_cache_round_trip_and_the_format_tools_read(tmp_path):
    path = str(tmp_path / "cache.json")
    params = {"block_size_x": [32, 64], "dtype": ["float", "double"], "alpha": [0.5, 1.0]}
    entries = {
        "32,float,0.5": {"block_size_x": 32, "dtype": "float", "alpha": 0.5, "time": 0.1, "times": [0.1, 0.1]},
        "64,double,1.0": {"block_size_x": 64, "dtype": "double", "alpha": 1.0, "time": "InvalidConfig"},
    }
    _kt_cache.write(path, "NVIDIA H200", "k", (100, 1), params, "time", entries)
    text = open(path).read()
    assert text.endswith("}\n}")
    whole = json.loads(text)  # valid JSON: tools that read the format read it
    assert whole["device_name"] == "NVIDIA H200"
    assert whole["tune_params_keys"] == ["block_size_x", "dtype", "alpha"]
    assert whole["problem_size"] == [100, 1]
    assert whole["cache"] == entries
    # One entry per line, as Kernel Tuner appends them.
    assert sum(1 for line in text.splitlines() if line.startswith('"32,float,0.5"')) == 1
    assert _kt_cache.read(path) == whole
    _kt_cache.check(whole, path, "k", (100, 1), params, "NVIDIA H200")


def test_a_cache_left_open_by_an_interrupted_run_reads(tmp_path):
    path = tmp_path / "open.json"
    path.write_text('{\n"device_name": "X",\n"kernel_name": "k",\n"tune_params_keys": ["a"],\n'
                    '"tune_params": {"a": [1, 2]},\n"cache": {\n"1": {"a": 1, "time": 0.5},')
    cached = _kt_cache.read(str(path))
    assert cached["cache"] == {"1": {"a": 1, "time": 0.5}}
    with pytest.raises(ValueError, match="different kernel"):
        _kt_cache.check(cached, str(path), "other", 10, {"a": [1, 2]})
    with pytest.raises(ValueError, match="different device"):
        _kt_cache.check(cached, str(path), "k", 10, {"a": [1, 2]}, "Y")
    with pytest.raises(ValueError, match="order is wrong"):
        cached["tune_params_keys"] = ["b", "a"]
        _kt_cache.check(cached, str(path), "k", 10, {"a": [1], "b": [2]})
    assert _kt_cache.cache_path("results") == "results.json"


def test_strategies_map_with_their_budgets():
    assert (_strategies.plan(None, None).strategy, _strategies.plan(None, None).budget) == ("exhaustive", None)
    random = _strategies.plan("random_sample", None)
    assert (random.strategy, random.budget) == ("random", "10%")   # Kernel Tuner's default fraction
    assert _strategies.plan("random_sample", {"fraction": 0.25}).budget == "25%"
    assert _strategies.plan("greedy_ils", None).budget == "100"     # Kernel Tuner's default max_fevals
    assert _strategies.plan("bayes_opt", {"max_fevals": 40}).strategy == "forest"
    assert _strategies.plan("genetic_algorithm", {"time_limit": 30}).budget == "30s"
    assert _strategies.plan("pso", {"popsize": 10}).notes  # a knob of Kernel Tuner's own algorithm: said
    with pytest.raises(ValueError, match="Unrecognized option frobnicate"):
        _strategies.plan("mls", {"frobnicate": 1})
    with pytest.raises(ValueError, match="Unkown strategy"):
        _strategies.plan("simplex", None)
    with pytest.raises(KernelTunerArgumentError, match="strategy"):
        _strategies.plan(object(), None)
    with pytest.raises(KernelTunerArgumentError, match="x0"):
        _strategies.plan("minimize", {"x0": [1]})


def test_restrictions_that_tiletune_evaluates_itself():
    params = make_params({"bx": [16, 32], "tile": [0, 1, 2], "alpha": [0.5, 1.5], "dtype": ["float", "half"],
                          "flag": [True, False]})
    assert in_tiletune_subset("32 <= bx * tile <= 1024", params)
    assert in_tiletune_subset("dtype == 'float' or alpha * bx / 2 > 8", params)
    assert in_tiletune_subset("bx % 32 == 0 and max(bx, 64) // 16 >= 2", params)
    assert in_tiletune_subset("[t for t in range(3) if t < bx][0] == 0", params)
    assert not in_tiletune_subset("bx / tile > 2", params)            # tile may be 0: Kernel Tuner keeps, tiletune drops
    assert not in_tiletune_subset("flag and bx > 16", params)         # booleans are words to tiletune
    assert in_tiletune_subset("np.log2(bx) > 4", params)              # the interpreter's functions as np.NAME
    assert not in_tiletune_subset("np.exp2(bx) > 4", params)          # and no others
    assert not in_tiletune_subset("bx.bit_length() > 4", params)
    assert not in_tiletune_subset("other > 1", params)
    assert not in_tiletune_subset("bx > 1 # why", params)
    r = Restrictions(["bx > 16", "bx>16", lambda p: p["tile"] > 0, (lambda tile: tile < 2, ["tile"])], params)
    assert r.constraints == ["bx > 16"]              # a repeat (spaces aside) counts once
    assert [k for k, _ in r.in_python] == ["dict", "tuple"]
    assert r.check({"bx": 32, "tile": 1}, {})
    assert not r.check({"bx": 32, "tile": 2}, {})
    assert Restrictions("bx / tile > 2", params).check({"bx": 32, "tile": 0, "alpha": 0.5}, {"__builtins__": __builtins__})


def test_kernel_sources_as_kernel_tuner_tells_them_apart(tmp_path):
    assert looks_like_a_filename("kernel.cu")
    assert not looks_like_a_filename("__global__ void k() {}")
    (tmp_path / "k.cu").write_text(KERNEL)
    assert KernelSource(str(tmp_path / "k.cu"), None).path == str(tmp_path / "k.cu")
    assert KernelSource(KERNEL, None).code == KERNEL
    with pytest.raises(TypeError, match="specify language"):
        KernelSource(lambda p: KERNEL, None)
    with pytest.raises(KernelTunerArgumentError, match="does not exist"):
        KernelSource("missing.cu", None)


def test_grids_are_kernel_tuners():
    names = ["block_size_x", "block_size_y", "block_size_z"]
    # A grid divisor defaults to the block param, 1 when it is not tuned; strings are int(eval(...)).
    assert _kt_grid({"block_size_x": 48}, 1000, None, 0, names) == 21
    assert _kt_grid({"tile": 4}, 1000, None, 0, names) == 1000
    assert _kt_grid({"block_size_x": 64}, (1000, 7), ["block_size_x/32"], 0, names) == 500
    assert _kt_grid({"b": 3}, (1000,), lambda p: p["b"] * 2.5, 0, names) == 134
    assert _kt_grid({"b": 3}, (1000, 7), [], 1, names) == 7


def test_the_space_says_kernel_tuners_launch(tmp_path):
    n = 1000
    args = [numpy.zeros(n, dtype=numpy.float32), numpy.int32(n)]
    space = Space(str(tmp_path), "k", KernelSource(KERNEL, None), "CUDA", n, args,
                  {"block_size_x": [32, 48], "tile": [1, 2]}, grid_div=(["block_size_x", "tile"], None, None),
                  restrictions=["block_size_x * tile >= 48"])
    text = open(space.yaml_path).read()
    assert "kernel: kt_k" in text
    assert 'grid: ["ceil_div(problem_size_x, block_size_x * tile)", "1", "1"]' in text
    assert '"-Dgrid_size_x=${ceil_div(problem_size_x, block_size_x * tile)}"' in text
    assert '"-Dblock_size_y=1"' in text and '"-Dkernel_tuner=1"' in text
    assert '- {python: "block_size_x * tile >= 48"}' in text
    assert "args: [arg0, {value: 1000, type: int}]" in text
    assert numpy.array_equal(numpy.load(tmp_path / "arg0.npy"), args[0])
    with pytest.raises(KernelTunerArgumentError, match="texmem_args"):
        Space(str(tmp_path), "k", KernelSource(KERNEL, None), "CUDA", n, args, {"block_size_x": [32]},
              texmem_args={"t": args[0]})
    # Kernel Tuner's TypeError, named as every argument error is (never a bare TypeError).
    with pytest.raises(KernelTunerArgumentError,
                       match=r"^tiletune.kernel_tuner: arguments\[1\]: Argument at position 1 of type") as refused:
        Space(str(tmp_path), "k", KernelSource(KERNEL, None), "CUDA", n, [args[0], 5], {"block_size_x": [32]})
    assert isinstance(refused.value, TypeError) and refused.value.argument == "arguments[1]"
    with pytest.raises(ValueError, match="forbidden name"):
        Space(str(tmp_path), "k", KernelSource(KERNEL, None), "CUDA", n, args, {"time": [1]})
