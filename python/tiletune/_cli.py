"""plan and tune through the tiletune executable, with their results parsed."""
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import List

from ._cache import TiletuneError


def _executable(cli):
    exe = cli or os.environ.get("TILETUNE_CLI") or shutil.which("tiletune")
    if not exe:
        raise TiletuneError("the tiletune executable is not on PATH (or pass cli=..., or set TILETUNE_CLI)")
    return exe


def _run(argv):
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode not in (0, 4):  # 4: nothing usable came out, still an answer
        raise TiletuneError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}", done.returncode)
    return done


def _size_args(sizes):
    args = []
    for name, values in (sizes or {}).items():
        for v in values if isinstance(values, (list, tuple)) else [values]:
            args += ["--size", f"{name}={int(v)}"]
    return args


def plan(space, arch=None, sizes=None, sample=None, cli=None, extra=()):
    """`tiletune plan SPACE --format json`, parsed: the configs with their registers, shared
    memory, spills, occupancy and status, and the summary."""
    argv = [_executable(cli), "plan", str(space), "--format", "json"] + _size_args(sizes)
    if arch:
        argv += ["--arch", arch]
    if sample:
        argv += ["--sample", str(int(sample))]
    return json.loads(_run(argv + list(extra)).stdout)


@dataclass
class TuneResult:
    returncode: int
    output: str                                        # what tune printed (its tables)
    best: List[dict] = field(default_factory=list)     # `tiletune best --format json` of the kernel after it


def _kernel_of(space):
    with open(space) as f:
        for line in f:
            m = re.match(r"kernel:\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)", line)
            if m:
                return m.group(1)
    raise TiletuneError(f"{space}: no top-level 'kernel:' line")


def tune(space, db=None, sizes=None, strategy=None, budget=None, objective=None, replay=None, cli=None, extra=()):
    """`tiletune tune SPACE ...`; then the best configs of the space's kernel in that cache
    (`tiletune best --format json`). Without a GPU, tune plans instead and best is what the cache
    held already. With replay (a recorded landscape) nothing is written: best stays empty."""
    exe = _executable(cli)
    argv = [exe, "tune", str(space), "-q"] + _size_args(sizes)
    for flag, value in (("--db", db), ("--strategy", strategy), ("--budget", budget), ("--objective", objective),
                        ("--replay", replay)):
        if value is not None:
            argv += [flag, str(value)]
    done = _run(argv + list(extra))
    result = TuneResult(done.returncode, done.stdout)
    if replay is None:
        best = [exe, "best", "--format", "json", "--kernel", _kernel_of(space)]
        if db is not None:
            best += ["--db", str(db)]
        probe = subprocess.run(best, capture_output=True, text=True)
        if probe.returncode == 0:
            result.best = json.loads(probe.stdout)
    return result
