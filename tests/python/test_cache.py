"""tiletune.Cache over the C API: lookups at every match level and objective, trials as records
and as a pandas frame, and clear errors."""
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

import tiletune

H200 = "GPU-dc2af457-36c6-6b6a-4522-234063d451fe"  # the recording's device


def fastest(rows, problem):
    ok = [r for r in rows if r["problem"] == problem and r["status"] == "ok"]
    return min(ok, key=lambda r: float(r["time_ms"]))


def params_dict(text):
    return {k: int(v) for k, v in (p.split("=") for p in text.split(";"))}


def test_exact_match_is_the_recordings_fastest(fixture_db, landscape_rows):
    with tiletune.Cache(fixture_db) as cache:
        m = cache.best("transpose", {"N": 8192}, device=H200)
    best = fastest(landscape_rows, "N=8192")
    assert m.match == "exact" and m.found
    assert m.params == params_dict(best["params"])
    assert m.time_ms == pytest.approx(float(best["time_ms"]))
    assert m.problem == {"N": 8192}
    assert m.device == "NVIDIA H200"


def test_fallback_levels(fixture_db, landscape_rows):
    with tiletune.Cache(fixture_db) as cache:
        nearest = cache.best("transpose", {"N": 5000}, device=H200)  # nearer 4096 than 8192 in log space
        arch = cache.best("transpose", {"N": 4096}, device="sm_90")
        portable = cache.best("transpose", {"N": 4096}, device="sm_80")
    assert nearest.match == "nearest_problem" and nearest.problem == {"N": 4096}
    assert nearest.params == params_dict(fastest(landscape_rows, "N=4096")["params"])
    assert arch.match == "same_architecture"
    assert portable.match == "portable_default" and portable.params and portable.time_ms is None


def test_the_cli_agrees(fixture_db):
    cli = os.environ["TILETUNE_CLI"]
    out = subprocess.run([cli, "best", "--db", str(fixture_db), "--kernel", "transpose", "--size", "N=1024",
                          "--device", H200, "--format", "json"], capture_output=True, text=True, check=True)
    with tiletune.Cache(fixture_db) as cache:
        m = cache.best("transpose", {"N": 1024}, device=H200)
    assert json.loads(out.stdout)["params"] == m.params


def test_energy_objective_is_the_least_energy(fixture_db):
    with tiletune.Cache(fixture_db) as cache:
        m = cache.best("transpose", {"N": 8192}, device=H200, objective="energy")
        trials = cache.trials(kernel="transpose", status="ok")
    least = min((t for t in trials if t["problem"] == {"N": 8192}), key=lambda t: t["energy_mj"])
    assert m.params == least["params"]
    assert m.energy_mj == pytest.approx(least["energy_mj"])
    with tiletune.Cache(fixture_db) as cache:
        edp = cache.best("transpose", {"N": 8192}, device=H200, objective="edp")
    least_edp = min((t for t in trials if t["problem"] == {"N": 8192}), key=lambda t: t["energy_mj"] * t["time_ms"])
    assert edp.params == least_edp["params"]
    with pytest.raises(ValueError):
        tiletune.Cache(fixture_db).best("transpose", {"N": 8192}, device=H200, objective="power")


def test_unknown_kernel_and_no_match(fixture_db):
    with tiletune.Cache(fixture_db) as cache:
        with pytest.raises(tiletune.TiletuneError) as e:
            cache.best("nope", {"N": 1}, device=H200)
        assert "no kernel 'nope'" in str(e.value) and "transpose" in str(e.value)


def test_trials_as_records(fixture_db, landscape_rows):
    with tiletune.Cache(fixture_db) as cache:
        trials = cache.trials()
        ok = cache.trials(kernel="transpose", status="ok")
        none = cache.trials(kernel="nope")
    assert len(trials) == len(landscape_rows)
    assert len(ok) == sum(r["status"] == "ok" for r in landscape_rows)
    assert none == []
    by_key = {(r["problem"], r["params"]): r for r in landscape_rows}
    for t in trials:
        problem = ";".join(f"{k}={v}" for k, v in t["problem"].items())
        params = ";".join(f"{k}={v}" for k, v in t["params"].items())
        row = by_key[(problem, params)]
        assert t["status"] == row["status"]
        if row["status"] == "ok":
            assert t["time_ms"] == pytest.approx(float(row["time_ms"]))
    assert sum(t["best"] for t in trials) == 3  # one per problem


def test_trials_as_a_pandas_frame(fixture_db):
    pandas = pytest.importorskip("pandas")
    with tiletune.Cache(fixture_db) as cache:
        frame = cache.trials(kernel="transpose", frame=True)
    assert isinstance(frame, pandas.DataFrame)
    assert len(frame) == 276
    for column in ("TILE", "BLOCK_ROWS", "PAD", "VEC", "N", "time_ms", "energy_mj", "status"):
        assert column in frame.columns
    best = frame[frame.status == "ok"].groupby("N").time_ms.min()
    assert list(best.index) == [1024, 4096, 8192]


def test_open_errors(tmp_path):
    with pytest.raises(tiletune.TiletuneError) as e:
        tiletune.Cache(tmp_path / "missing.db")
    assert "no tiletune cache there" in str(e.value)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(tiletune.TiletuneError) as e:
        tiletune.Cache(junk)
    assert e.value.status == "not a tiletune cache"


def _tie_floor():
    """tie_relative_floor, read from tiletune/answers.hpp, where it is declared."""
    header = Path(__file__).resolve().parents[2] / "tuner" / "include" / "tiletune" / "answers.hpp"
    found = re.search(r"tie_relative_floor = ([0-9.]+);", header.read_text())
    assert found, f"{header}: no tie_relative_floor"
    return float(found.group(1))


def _tied_with(fastest, other):
    """The tie test of tiletune/answers.hpp for trials without noise columns: the floor."""
    return other - fastest <= _tie_floor() * fastest


def test_the_answer_is_in_the_tie_set_and_says_how_many_tied(fixture_db, landscape_rows):
    with tiletune.Cache(fixture_db) as cache:
        m = cache.best("transpose", {"N": 8192}, device=H200)
        portable = cache.best("transpose", {"N": 4096}, device="sm_80")
    best = fastest(landscape_rows, "N=8192")
    ok = [float(r["time_ms"]) for r in landscape_rows if r["problem"] == "N=8192" and r["status"] == "ok"]
    fast = float(best["time_ms"])
    assert m.fastest_ms == pytest.approx(fast)
    assert m.tie_count == sum(_tied_with(fast, t) for t in ok) and m.tie_count >= 1
    assert _tied_with(fast, m.time_ms)
    assert 0.0 <= m.tie_spread <= _tie_floor() + 1e-12
    assert m.pin_scope is None and m.pin_reason is None
    assert portable.tie_count == 0 and portable.fastest_ms is None


def test_a_pin_answers_python_lookups(fixture_db, tmp_path):
    db = tmp_path / "pinned.db"
    db.write_bytes(fixture_db.read_bytes())
    cli = os.environ["TILETUNE_CLI"]
    subprocess.run([cli, "pin", "--db", str(db), "--kernel", "transpose", "--size", "N=8192", "--params",
                    "TILE=16;BLOCK_ROWS=8;PAD=0;VEC=1", "--device", H200, "--reason", "bitwise as v1"],
                   capture_output=True, text=True, check=True)
    with tiletune.Cache(db) as cache:
        m = cache.best("transpose", {"N": 8192}, device=H200)
        other = cache.best("transpose", {"N": 4096}, device=H200)
        by_name = cache.best("transpose", {"N": 8192}, device="NVIDIA H200")  # a device pin needs the UUID
    assert m.match == "pinned" and m.found
    assert m.params == {"TILE": 16, "BLOCK_ROWS": 8, "PAD": 0, "VEC": 1}
    assert m.pin_scope == "device" and m.pin_reason == "bitwise as v1"
    assert m.tie_count == 0
    assert other.match == "exact"
    assert by_name.match == "exact"


def test_a_lookup_says_the_answers_headroom(fixture_db, tmp_path):
    import sqlite3
    db = tmp_path / "ceilings.db"
    db.write_bytes(fixture_db.read_bytes())
    with tiletune.Cache(fixture_db) as cache:
        assert cache.best("transpose", {"N": 8192}, device=H200).headroom_pct is None  # no ceilings recorded
    con = sqlite3.connect(db)
    with con:  # every trial at 3000 GB/s of a 4000 GB/s ceiling: 25 % headroom, bandwidth-bound
        con.execute("UPDATE trials SET gbps = 3000.0, ceiling_gbps = 4000.0, gflops = NULL, ceiling_gflops = NULL")
    con.close()
    with tiletune.Cache(db) as cache:
        m = cache.best("transpose", {"N": 8192}, device=H200)
    assert m.headroom_pct == pytest.approx(25.0) and m.bound == "bandwidth"
