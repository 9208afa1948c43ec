"""plan and tune through the tiletune executable, with their results parsed. What the caller
gives is checked first (tiletune._errors): a path is passed so that it is never read as an
option, names and sizes are identifiers and whole numbers, never spliced into an argument."""
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import List

from . import _errors as check
from ._errors import TiletuneError

_ARCH = re.compile(r"sm_[0-9]{2,3}[af]?\Z")
_BUDGET = re.compile(r"[0-9]+(\.[0-9]+)?[%smh]?\Z")


def _executable(cli):
    """The tiletune executable: cli, else $TILETUNE_CLI, else tiletune on PATH; a TiletuneError
    naming what was looked for when there is none."""
    given = cli if cli is not None else os.environ.get("TILETUNE_CLI")
    if given is None:
        exe = shutil.which("tiletune")
        if not exe:
            raise TiletuneError("the tiletune executable is not on PATH (or pass cli=..., or set TILETUNE_CLI)")
        return exe
    name = check.path_text(given, "cli" if cli is not None else "TILETUNE_CLI")
    exe = shutil.which(name) if os.sep not in name else (name if os.access(name, os.X_OK) and os.path.isfile(name) else None)
    if not exe:
        raise TiletuneError(f"the tiletune executable {check.shown(name, 200)} is not there or not executable"
                            f" ({'cli=...' if cli is not None else 'TILETUNE_CLI'})")
    return exe


def _run_process(argv):
    try:
        return subprocess.run(argv, capture_output=True, stdin=subprocess.DEVNULL)
    except OSError as e:  # gone since it was found, or not an executable after all
        raise TiletuneError(f"cannot run {check.shown(argv[0])}: {e.strerror or e}") from None


def _run(argv):
    done = _run_process(argv)
    stderr = check.decoded(done.stderr).strip()
    if done.returncode not in (0, 4):  # 4: nothing usable came out, still an answer
        raise TiletuneError(f"{check.one_line(' '.join(map(str, argv[:3])), 200)} ... exited {done.returncode}: "
                            f"{check.one_line(stderr, 2000)}", done.returncode)
    return done


def _json(done, argv):
    try:
        return json.loads(check.decoded(done.stdout))
    except ValueError as e:
        raise TiletuneError(f"{' '.join(map(str, argv[:3]))} ...: its output is not JSON ({e})") from None


def _size_args(sizes, low=0):
    args = []
    for name, values in check.sizes(sizes, low):
        for v in values:
            args += ["--size", f"{name}={v}"]
    return args


def _extra(extra):
    if isinstance(extra, (str, bytes)):
        raise TiletuneError(f"extra {check.shown(extra)} is one string: pass a list of arguments")
    out = []
    for a in extra:
        if not isinstance(a, str) or "\0" in a:
            raise TiletuneError(f"extra argument {check.shown(a)} is not a str without NUL bytes")
        out.append(a)
    return out


def plan(space, arch=None, sizes=None, sample=None, cli=None, extra=()):
    """`tiletune plan SPACE --format json`, parsed: the configs with their registers, shared
    memory, spills, occupancy and status, and the summary."""
    argv = [None, "plan", check.cli_path(space, "space"), "--format", "json"] + _size_args(sizes)
    if arch is not None:
        if not isinstance(arch, str) or not _ARCH.match(arch):
            raise TiletuneError(f"arch {check.shown(arch)} is not an architecture such as sm_90")
        argv += ["--arch", arch]
    if sample is not None:
        argv += ["--sample", str(check.whole(sample, "sample", 1, 10**9))]
    argv += _extra(extra)
    argv[0] = _executable(cli)  # after the checks: a bad argument is reported as such, CLI or not
    return _json(_run(argv), argv)


@dataclass
class TuneResult:
    returncode: int
    output: str                                        # what tune printed (its tables)
    best: List[dict] = field(default_factory=list)     # `tiletune best --format json` of the kernel after it


def _kernel_of(space):
    """The space's `kernel:` name, from its first 4 MiB (a space is a short YAML file)."""
    try:
        with open(space, "rb") as f:
            head = f.read(4 << 20)
    except OSError as e:
        raise TiletuneError(f"{check.shown(space)}: {e.strerror or e}") from None
    for line in check.decoded(head).splitlines():
        m = re.match(r"kernel:\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)", line)
        if m:
            return m.group(1)
    raise TiletuneError(f"{check.shown(space)}: no top-level 'kernel:' line")


def _tune_options(db, strategy, budget, objective, replay):
    args = []
    if db is not None:
        args += ["--db", check.cli_path(db, "db")]
    if strategy is not None:
        args += ["--strategy", check.identifier(strategy, "strategy")]
    if budget is not None:
        budget = str(check.whole(budget, "budget", 1)) if not isinstance(budget, str) else budget
        if not _BUDGET.match(budget):
            raise TiletuneError(f"budget {check.shown(budget)} is not a budget such as 200, 25%, 90s or 10m")
        args += ["--budget", budget]
    if objective is not None:
        if objective not in ("time", "energy", "edp"):
            raise TiletuneError(f"objective {check.shown(objective)} is not one of time, energy, edp")
        args += ["--objective", objective]
    if replay is not None:
        args += ["--replay", check.cli_path(replay, "replay")]
    return args


def tune(space, db=None, sizes=None, strategy=None, budget=None, objective=None, replay=None, cli=None, extra=()):
    """`tiletune tune SPACE ...`; then the best configs of the space's kernel in that cache
    (`tiletune best --format json`). Without a GPU, tune plans instead and best is what the cache
    held already. With replay (a recorded landscape) nothing is written: best stays empty."""
    space_arg = check.cli_path(space, "space")
    argv = [None, "tune", space_arg, "-q"] + _size_args(sizes) + _tune_options(db, strategy, budget, objective, replay)
    argv += _extra(extra)
    exe = argv[0] = _executable(cli)
    done = _run(argv)
    result = TuneResult(done.returncode, check.decoded(done.stdout))
    if replay is None:
        best = [exe, "best", "--format", "json", "--kernel", _kernel_of(space_arg)]
        if db is not None:
            best += ["--db", check.cli_path(db, "db")]
        probe = _run_process(best)
        if probe.returncode == 0:
            result.best = _json(probe, best)
    return result
