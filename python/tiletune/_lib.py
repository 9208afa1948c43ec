"""Loading libtiletune-query with ctypes and declaring the C API of tiletune/tiletune.h."""
import ctypes
import ctypes.util
import os
import shutil

from ._errors import TiletuneError

_LIBRARY = None


def _candidates():
    env = os.environ.get("TILETUNE_QUERY_LIBRARY")
    if env:
        yield env
        return
    exe = os.environ.get("TILETUNE_CLI") or shutil.which("tiletune")
    if exe:
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(exe)))
        for lib in ("lib", "lib64", "lib/x86_64-linux-gnu"):
            yield os.path.join(prefix, lib, "libtiletune-query.so")
    found = ctypes.util.find_library("tiletune-query")
    if found:
        yield found
    yield "libtiletune-query.so"


def _declare(lib):
    c = ctypes
    vp, cp, sz = c.c_void_p, c.c_char_p, c.c_size_t
    signatures = {
        "tiletune_open": (c.c_int, [cp, c.POINTER(vp)]),
        "tiletune_open_default": (c.c_int, [c.POINTER(vp)]),
        "tiletune_close": (None, [vp]),
        "tiletune_lookup_objective": (c.c_int, [vp, cp, cp, cp, cp, c.POINTER(vp)]),
        "tiletune_result_param_count": (sz, [vp]),
        "tiletune_result_param_name": (cp, [vp, sz]),
        "tiletune_result_param_value": (c.c_long, [vp, sz]),
        "tiletune_result_match_level": (c.c_int, [vp]),
        "tiletune_result_time_ms": (c.c_double, [vp]),
        "tiletune_result_energy_mj": (c.c_double, [vp]),
        "tiletune_result_tie_count": (sz, [vp]),
        "tiletune_result_tie_spread": (c.c_double, [vp]),
        "tiletune_result_fastest_ms": (c.c_double, [vp]),
        "tiletune_result_headroom_percent": (c.c_double, [vp]),
        "tiletune_result_bound": (cp, [vp]),
        "tiletune_result_pin_scope": (cp, [vp]),
        "tiletune_result_pin_reason": (cp, [vp]),
        "tiletune_result_problem": (cp, [vp]),
        "tiletune_result_device_name": (cp, [vp]),
        "tiletune_result_params_text": (cp, [vp]),
        "tiletune_result_free": (None, [vp]),
        "tiletune_trials_json": (c.c_int, [vp, cp, cp, cp, c.c_int, c.POINTER(vp)]),
        "tiletune_string_free": (None, [vp]),
        "tiletune_status_string": (cp, [c.c_int]),
        "tiletune_last_error": (cp, []),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


class LibraryError(TiletuneError, OSError):
    """The query library cannot be loaded (an OSError too, as it always was)."""


def library():
    """The loaded query library (once per process)."""
    global _LIBRARY
    if _LIBRARY is None:
        errors = []
        for path in _candidates():
            try:
                _LIBRARY = _declare(ctypes.CDLL(path))
                break
            except (OSError, AttributeError, ValueError, TypeError) as e:  # ValueError: a NUL in the path
                errors.append(f"{path!r}: {e}")
        if _LIBRARY is None:
            raise LibraryError("cannot load libtiletune-query (set TILETUNE_QUERY_LIBRARY to its path, or put the "
                          "installed tiletune on PATH): " + "; ".join(errors))
    return _LIBRARY
