"""tiletune from Python: look up tuned configs, read trials, run plan and tune.

    import tiletune
    with tiletune.Cache() as cache:                      # $TILETUNE_DB or ~/.cache/tiletune/tiletune.db
        best = cache.best("transpose", {"N": 8192}, device="sm_90")
        print(best.params, best.match)                   # {'TILE': 64, ...} 'same_architecture'
        frame = cache.trials(kernel="transpose", frame=True)   # a pandas DataFrame when pandas is there
    plan = tiletune.plan("configs/transpose.yaml", arch="sm_90")   # parsed `tiletune plan --format json`

Lookups go through the query library's C API (libtiletune-query.so, loaded with ctypes); plan
and tune run the tiletune executable.
"""
from ._cache import Cache, Match, TiletuneError, MATCH_LEVELS, OBJECTIVES
from ._cli import plan, tune, TuneResult

__version__ = "0.1.0"
__all__ = ["Cache", "Match", "TiletuneError", "MATCH_LEVELS", "OBJECTIVES", "plan", "tune", "TuneResult"]
