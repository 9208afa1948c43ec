"""The self-checks the example scripts end with, in one place: every config of tune_params
measured, ok and timed (a run on a GPU), or planned ok with the launch the script computes for
it (a dry run, TILETUNE_KT_DRY_RUN=1). Imported from the scripts' own folder."""
import itertools
import math


def every_config(tune_params):
    """Every combination of tune_params, in Kernel Tuner's order (the last param fastest)."""
    return [dict(zip(tune_params, v)) for v in itertools.product(*tune_params.values())]


def check_measured(results, expected):
    """A run on a GPU: one ok, timed result per expected config."""
    assert len(results) == len(expected), (len(results), len(expected))
    bad = [r for r in results if r.get("status", "ok") != "ok" or not isinstance(r["time"], float)]
    assert not bad, bad


def check_planned(env, expected, n, per_block, one_block_row=False):
    """A dry run: one ok row per expected config whose grid is ceil(n / per_block(params)) blocks
    in x (and, with one_block_row, whose block is block_size_x threads in x). Returns the rows."""
    rows = env["plan"]["rows"]
    assert len(rows) == len(expected), (len(rows), len(expected))
    for row in rows:
        p = row["params"]
        assert row["status"] == "ok", row
        assert row["grid"] == [math.ceil(n / per_block(p)), 1, 1], row
        if one_block_row:
            assert row["block"] == [p["block_size_x"], 1, 1], row
    return rows
