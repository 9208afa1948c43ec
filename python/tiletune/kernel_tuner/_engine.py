"""The tiletune executable, run for the module: devices, tune, show, import-kt-cache and replays."""
import json
import subprocess
import sys

from .._cache import TiletuneError
from .._cli import _executable


def cli():
    return _executable(None)


def devices():
    """`tiletune devices --format json`, or [] where there is no GPU (or no driver)."""
    done = subprocess.run([cli(), "devices", "--format", "json"], capture_output=True, text=True)
    if done.returncode != 0:
        return []
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        return []


def device(ordinal):
    found = [d for d in devices() if d.get("index") == ordinal]
    if not found:
        raise RuntimeError(f"tiletune.kernel_tuner: no CUDA device {ordinal} (`tiletune devices` lists "
                           f"{len(devices())}); tuning needs a GPU, simulation_mode=True a cache file")
    return found[0]


def run(argv, quiet, stop=None):
    """Runs a tiletune command: its progress on stderr goes to ours unless quiet; returns
    (exit status, stdout). Exit statuses 0 and 4 (nothing usable came out) are answers."""
    process = subprocess.Popen([cli()] + argv, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE if quiet else None, text=True)
    if stop is not None:
        stop.append(process)
    out, err = process.communicate()
    if process.returncode not in (0, 4):
        detail = (err or "").strip() or out.strip()[-2000:]
        raise TiletuneError(f"tiletune {' '.join(argv[:2])} exited {process.returncode}: {detail}", process.returncode)
    return process.returncode, out


def trials(db, family):
    done = subprocess.run([cli(), "show", "--db", db, "--kernel", family, "--format", "json"], capture_output=True,
                          text=True)
    if done.returncode not in (0, 4):
        raise TiletuneError(f"tiletune show exited {done.returncode}: {done.stderr.strip()}", done.returncode)
    text = done.stdout.strip()
    if not text:
        return []
    document = json.loads(text)
    if isinstance(document, dict):  # {"trials": [...]} or a printer document
        for key in ("trials", "rows"):
            if key in document:
                return document[key]
    return document


def warn(message, quiet):
    if not quiet:
        print(f"tiletune.kernel_tuner: {message}", file=sys.stderr)
