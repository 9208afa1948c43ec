"""T1 files imported by `tiletune import-t1` launch as Kernel Tuner launches them: for every config
tiletune plans, its grid is Kernel Tuner's (util.get_grid_dimensions through tune_kernel_T1:
ceil(ProblemSize / product of int(eval(divisor))) per dimension, each GridDiv defaulting to the param
block_size_x/_y/_z), computed here in Python the way Kernel Tuner computes it, and its block is the
T1's LocalSize."""
import json
import math
import os
import re
import subprocess

import pytest

SOURCE = os.environ.get("TILETUNE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
T1 = os.path.join(SOURCE, "tests", "interchange", "t1")


def cli():
    exe = os.environ.get("TILETUNE_CLI")
    if not exe:
        pytest.fail("TILETUNE_CLI is not set: run these tests through ctest (test_python)")
    return exe


def replace_param_occurrences(text, params):
    """Kernel Tuner's util.replace_param_occurrences."""
    return "".join(str(params[t]) if t in params else t for t in re.split("([a-zA-Z0-9_]+)", text))


def kernel_tuner_grid(spec, params):
    """Kernel Tuner's grid for one config of a T1 file (interface.tune_kernel_T1 and util)."""
    sizes = list(spec["ProblemSize"]) + [1, 1, 1]
    grid = []
    for d, key in enumerate(("GridDivX", "GridDivY", "GridDivZ")):
        divisors = spec.get(key) or None
        if divisors is None:
            divisor = params.get(("block_size_x", "block_size_y", "block_size_z")[d], 1)
        else:
            divisor = 1
            for item in divisors:
                divisor *= int(eval(replace_param_occurrences(item, params)))
        grid.append(int(math.ceil(float(sizes[d]) / float(divisor))))
    return grid


def local_size(spec, params):
    return [int(eval(replace_param_occurrences(spec["LocalSize"].get(d, "1"), params))) for d in ("X", "Y", "Z")]


def planned_rows(tmp_path, name, sample):
    yaml = tmp_path / f"{name}.yaml"
    subprocess.run([cli(), "import-t1", os.path.join(T1, f"{name}.json"), "-o", str(yaml)], check=True,
                   capture_output=True, text=True)
    done = subprocess.run([cli(), "plan", str(yaml), "--format", "json", "--arch", "sm_90", "--sample", str(sample)],
                          capture_output=True, text=True)
    assert done.returncode in (0, 4), done.stderr
    return json.loads(done.stdout)["rows"]


@pytest.mark.parametrize("name,sample", [("hub_convolution", 9), ("python_styles", 97)])
def test_every_planned_grid_is_kernel_tuners(tmp_path, name, sample):
    with open(os.path.join(T1, f"{name}.json")) as f:
        spec = json.load(f)["KernelSpecification"]
    rows = planned_rows(tmp_path, name, sample)
    assert len(rows) >= 10
    for row in rows:
        params = row["params"]
        assert row["grid"] == kernel_tuner_grid(spec, params), params
        assert row["block"] == local_size(spec, params), params


def test_the_problem_is_problem_size(tmp_path):
    yaml = tmp_path / "hub.yaml"
    subprocess.run([cli(), "import-t1", os.path.join(T1, "hub_convolution.json"), "-o", str(yaml), "--name", "hub"],
                   check=True, capture_output=True)
    done = subprocess.run([cli(), "plan", str(yaml), "--format", "json", "--arch", "sm_90", "--sample", "1000"],
                          capture_output=True, text=True)
    plan = json.loads(done.stdout)
    assert plan["kernel"] == "hub"
    assert plan["problem"] == {"problem_size_x": 4096, "problem_size_y": 4096}
