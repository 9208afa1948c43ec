"""tiletune.plan and tiletune.tune as subprocesses, with parsed results."""
import os

import pytest

import tiletune
from conftest import one_config_space

SOURCE = os.environ.get("TILETUNE_SOURCE_DIR", "")


def test_plan_is_parsed_json():
    plan = tiletune.plan(os.path.join(SOURCE, "configs", "transpose.yaml"), arch="sm_90", sizes={"N": 1024}, sample=40)
    assert isinstance(plan, dict)
    text = repr(plan)
    assert "TILE" in text and "occupancy" in text


def test_plan_error_is_raised(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("kernel: x\n")
    with pytest.raises(tiletune.TiletuneError) as e:
        tiletune.plan(bad)
    assert "bad.yaml" in str(e.value)


def test_tune_reads_back_the_best_of_its_cache(fixture_db, tmp_path):
    # Without a GPU tune plans instead (here a one-config space of the same kernel name, so that
    # it is quick); the best configs come from the cache it names.
    space = one_config_space(tmp_path, "transpose.yaml")
    result = tiletune.tune(space, db=fixture_db, extra=["--arch", "sm_90"])
    assert result.returncode == 0
    assert {b["problem"] for b in result.best} == {"N=1024", "N=4096", "N=8192"}
    with tiletune.Cache(fixture_db) as cache:
        m = cache.best("transpose", {"N": 1024}, device="GPU-dc2af457-36c6-6b6a-4522-234063d451fe")
    mine = next(b for b in result.best if b["problem"] == "N=1024")
    assert mine["params"] == ";".join(f"{k}={v}" for k, v in m.params.items())


def test_tune_replay_runs_without_a_gpu():
    result = tiletune.tune(os.path.join(SOURCE, "configs", "transpose.yaml"),
                           replay=os.path.join(SOURCE, "tests", "data", "landscapes", "transpose.csv"),
                           strategy="random", budget="20")
    assert "evaluations 20" in result.output
    assert result.best == []
