"""Cache: lookups with match levels, and the stored trials, through the query library's C API."""
import ctypes
import json
from dataclasses import dataclass, field
from typing import Dict, Optional

from . import _errors as check
from ._errors import TiletuneError
from ._lib import library

#: How well a lookup matched, indexed by the C API's value (tiletune/query.hpp). Tried in the order
#: pinned, exact, nearest_problem, same_architecture, portable_default, none: "pinned" (a config a
#: person chose with `tiletune pin`) ranks first although its value comes last.
MATCH_LEVELS = ("exact", "nearest_problem", "same_architecture", "portable_default", "none", "pinned")
#: What "best" means: the fastest, the least energy per run, the least energy x time.
OBJECTIVES = ("time", "energy", "edp")

_OK, _NOT_FOUND = 0, 1


class ObjectiveError(TiletuneError, ValueError):
    """An objective that is not one of OBJECTIVES (a ValueError too, as it always was)."""


def _error(lib, status, what):
    message = check.one_line(check.decoded(lib.tiletune_last_error()), 200)
    name = check.decoded(lib.tiletune_status_string(status), f"status {status}")
    return TiletuneError(f"{what}: {message or name}", name)


def _parse_assignments(text):
    out = {}
    for part in filter(None, (text or "").replace(",", ";").split(";")):
        name, _, value = part.partition("=")
        try:
            out[name.strip()] = int(value)
        except ValueError:
            out[name.strip()] = value
    return out


@dataclass(frozen=True)
class Match:
    """The answer to a lookup. `match` is one of MATCH_LEVELS; `params` is empty for "none".

    tie_count: how many configs of that device and problem are tied with the fastest within the
    noise (the answer is the pick rule's choice among them; 1: a clear winner; 0: no tie set, as
    for portable_default, pinned and the energy objectives). tie_spread: (slowest tied - fastest)
    / fastest. fastest_ms: the fastest median of the tie set. headroom_pct: how far the answer is
    from its ceiling, 100 x (1 - share), and bound: "bandwidth" or "compute" (None where the cache
    has no ceiling for it). pin_scope and pin_reason: for "pinned", what the pin names ("device",
    "model", "architecture") and why."""

    kernel: str
    match: str
    params: Dict[str, int] = field(default_factory=dict)
    problem: Optional[Dict[str, int]] = None   # the measured problem it came from
    time_ms: Optional[float] = None
    energy_mj: Optional[float] = None          # energy and edp objectives
    device: Optional[str] = None
    tie_count: int = 0
    tie_spread: float = 0.0
    fastest_ms: Optional[float] = None
    headroom_pct: Optional[float] = None
    bound: Optional[str] = None
    pin_scope: Optional[str] = None
    pin_reason: Optional[str] = None

    @property
    def found(self):
        return self.match != "none"


class Cache:
    """A tiletune result cache, opened read-only. Usable as a context manager."""

    def __init__(self, path=None):
        self._handle = None
        self.path = path
        if path is not None:
            check.path_text(path, "cache path")  # checked before the library is even loaded
        self._lib = library()
        handle = ctypes.c_void_p()
        if path is None:
            status = self._lib.tiletune_open_default(ctypes.byref(handle))
        else:
            path = check.path_text(path, "cache path")
            status = self._lib.tiletune_open(check.path_bytes(path), ctypes.byref(handle))
        if status != _OK:
            raise _error(self._lib, status, f"opening {check.shown(path) if path else 'the default cache'}")
        self._handle = handle

    def _check_open(self):
        if not self._handle:
            raise TiletuneError(f"the cache {check.shown(self.path) if self.path else ''} is closed")

    def close(self):
        if getattr(self, "_handle", None):
            self._lib.tiletune_close(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def best(self, kernel, sizes=None, device=None, objective="time"):
        """The best config of `kernel` for the problem `sizes` ({"N": 8192}) on `device` (a UUID,
        a name or "sm_90"; None: the live GPU), ranked by `objective`. Falls back through the match
        levels; Match.match says which answered ("none": use your defaults)."""
        if objective not in OBJECTIVES:
            raise ObjectiveError(f"objective {check.shown(objective)} is not one of {', '.join(OBJECTIVES)}")
        check.identifier(kernel, "kernel")
        sizes_text = ";".join(f"{k}={v}" for k, values in check.sizes(sizes, 1) for v in values[:1])
        if any(isinstance(v, (list, tuple)) and len(v) != 1 for v in (sizes or {}).values()):
            raise TiletuneError("a lookup is for one problem: give each size one value")
        device_arg = None if device is None else check.text(device, "device", 256).encode()
        result = ctypes.c_void_p()
        lib = self._lib
        self._check_open()
        status = lib.tiletune_lookup_objective(self._handle, kernel.encode(), device_arg,
                                               sizes_text.encode(), objective.encode(), ctypes.byref(result))
        if status == _NOT_FOUND:
            return Match(kernel=kernel, match="none")
        if status != _OK:
            raise _error(lib, status, f"looking up {kernel}")
        try:
            r = result
            params = {check.decoded(lib.tiletune_result_param_name(r, i)): lib.tiletune_result_param_value(r, i)
                      for i in range(lib.tiletune_result_param_count(r))}
            time_ms = lib.tiletune_result_time_ms(r)
            energy = lib.tiletune_result_energy_mj(r)
            problem = check.decoded(lib.tiletune_result_problem(r))
            device_name = check.decoded(lib.tiletune_result_device_name(r))
            fastest = lib.tiletune_result_fastest_ms(r)
            headroom = lib.tiletune_result_headroom_percent(r)
            level = MATCH_LEVELS[lib.tiletune_result_match_level(r)]
            return Match(kernel=kernel, match=level, params=params,
                         problem=_parse_assignments(problem) if problem else None,
                         time_ms=time_ms if time_ms >= 0 else None, energy_mj=energy if energy >= 0 else None,
                         device=device_name or None, tie_count=lib.tiletune_result_tie_count(r),
                         tie_spread=lib.tiletune_result_tie_spread(r),
                         fastest_ms=fastest if fastest >= 0 else None,
                         headroom_pct=headroom if headroom >= 0 else None,
                         bound=check.decoded(lib.tiletune_result_bound(r)) or None,
                         pin_scope=check.decoded(lib.tiletune_result_pin_scope(r)) or None,
                         pin_reason=(check.decoded(lib.tiletune_result_pin_reason(r)) if level == "pinned"
                                     else None))
        finally:
            lib.tiletune_result_free(result)

    def trials(self, kernel=None, device=None, status=None, all_versions=False, frame=False):
        """The stored trials: a list of dicts (the fields of `tiletune show --format json`, with
        "params" and "problem" as dicts), or with frame=True a pandas DataFrame with one column
        per param and per problem size (pandas must be installed)."""
        text = ctypes.c_void_p()
        kernel_arg = None if kernel is None else check.identifier(kernel, "kernel").encode()
        device_arg = None if device is None else check.text(device, "device", 256).encode()
        status_arg = None if status is None else check.identifier(status, "status").encode()
        self._check_open()
        code = self._lib.tiletune_trials_json(self._handle, kernel_arg, device_arg, status_arg,
                                              1 if all_versions else 0, ctypes.byref(text))
        if code != _OK:
            raise _error(self._lib, code, "reading the trials")
        try:
            records = json.loads(check.decoded(ctypes.string_at(text)))
        except ValueError as e:
            raise TiletuneError(f"reading the trials: the library's answer is not JSON ({e})") from None
        finally:
            self._lib.tiletune_string_free(text)
        for r in records:
            r["params"] = _parse_assignments(r["params"])
            r["problem"] = _parse_assignments(r["problem"])
        if not frame:
            return records
        try:
            import pandas
        except ImportError as e:
            raise TiletuneError("trials(frame=True) needs pandas (apt install python3-pandas, or pip install "
                                "pandas)") from e
        rows = []
        for r in records:
            row = {k: v for k, v in r.items() if k not in ("params", "problem")}
            row.update(r["problem"])
            row.update(r["params"])
            rows.append(row)
        return pandas.DataFrame(rows)
