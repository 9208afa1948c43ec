#!/usr/bin/env python3
"""A stand-in for the tiletune executable in tiletune.kernel_tuner's CPU tests: the commands the
module runs (devices, tune, show), answered without a GPU the way tiletune answers them, so that a
tune_kernel call runs end to end on the CPU: the space the module wrote is read (PyYAML), each
config of its allowed list (or of its params' product) is a trial whose outputs are its inputs
(the kernel is not run) and whose time is block_size_x / 1000 ms, with made-up clock and
temperature readings (and energy and power with --energy); a space's check command (the module's
verify relay) is started and asked about every trial with tiletune's request line (the buffers
its command_buffers names), and its answer decides ok or wrong_result. Trials are kept as JSON in the --db file; `show` prints
them as `tiletune show --format json` does. FAKE_TILETUNE_LOG names a file that gets each argv."""
import csv
import itertools
import json
import os
import subprocess
import sys
import time

import yaml


def log(argv):
    path = os.environ.get("FAKE_TILETUNE_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(argv) + "\n")


def option(argv, name, default=None):
    return argv[argv.index(name) + 1] if name in argv else default


def configs(space, directory):
    names = list(space["params"])
    if "allowed" in space:
        with open(os.path.join(directory, space["allowed"]["file"])) as f:
            rows = list(csv.reader(f))
        header = rows[0]
        return [{n: row[header.index(n)] for n in names} for row in rows[1:]]
    return [dict(zip(names, (str(v) for v in values))) for values in itertools.product(*space["params"].values())]


def check(process, space, directory, config, scratch):
    """tiletune's host-check request for one trial; the buffers are the inputs as written, only
    those `command_buffers` names (every buffer without it), as tiletune hands them.
    FAKE_TILETUNE_REQUESTS names a file that gets each request's buffer names."""
    buffers = {}
    wanted = space["verify"].get("command_buffers")
    for name, b in space.get("buffers", {}).items():
        if wanted is None or name in wanted:
            buffers[name] = {"path": os.path.join(directory, b["init"]["file"]), "type": b["type"],
                             "count": b["count"]}
    requests = os.environ.get("FAKE_TILETUNE_REQUESTS")
    if requests:
        with open(requests, "a") as f:
            f.write(json.dumps(sorted(buffers)) + "\n")
    request = {"kernel": space["kernel"], "problem": {}, "config": config, "buffers": buffers}
    process.stdin.write(json.dumps(request) + "\n")
    process.stdin.flush()
    return json.loads(process.stdout.readline())


def tune(argv):
    path = argv[1]
    directory = os.path.dirname(path)
    with open(path) as f:
        space = yaml.safe_load(f)
    db = option(argv, "--db")
    budget = option(argv, "--budget")
    command = (space.get("verify") or {}).get("command") if isinstance(space.get("verify"), dict) else None
    process = subprocess.Popen(command, cwd=directory, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) \
        if command else None
    # As tiletune does, a config the cache holds already is not measured (nor checked) again.
    trials = []
    if os.path.exists(db):
        with open(db) as f:
            trials = json.load(f)
    held = {t["params"] for t in trials}
    chosen = [c for c in configs(space, directory) if ";".join(f"{k}={v}" for k, v in c.items()) not in held]
    if budget and budget.isdigit():
        chosen = chosen[:int(budget)]
    for i, config in enumerate(chosen, start=len(trials)):
        status, detail = "ok", ""
        if process:
            answer = check(process, space, directory, config, None)
            if not answer.get("ok"):
                status, detail = "wrong_result", "host check: " + str(answer.get("detail", ""))
        created = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{int(time.time() * 1000) % 1000:03d}Z"
        trial = {"id": i + 1, "kernel": space["kernel"], "problem": "", "params": ";".join(f"{k}={v}" for k, v in config.items()),
                 "status": status, "detail": detail, "compile_ms": 10.0, "verify_ms": 1.0, "measure_ms": 5.0,
                 "registers": 32, "occupancy_driver": 1.0, "created_at": created}
        if status == "ok":
            t = float(config.get("block_size_x", 1)) / 1000.0
            trial.update(time_ms=t, times_ms=json.dumps([t, t]))
            # the readings the worker takes while it times every trial; energy with --energy
            trial.update(sm_clock_mhz=1980.0 - i, mem_clock_mhz=2619.0, temperature_c=40.0 + i)
            if "--energy" in argv:
                trial.update(energy_mj=t * 300.0, power_w=300.0)
        trials.append(trial)
    if process:
        process.stdin.close()
        process.wait(timeout=30)
    with open(db, "w") as f:
        json.dump(trials, f)
    return 0 if any(t["status"] == "ok" for t in trials) else 4


def main(argv):
    log(argv)
    if argv[0] == "devices":  # FAKE_TILETUNE_DEVICES GPUs (1 by default)
        count = int(os.environ.get("FAKE_TILETUNE_DEVICES", "1"))
        print(json.dumps([{"index": k, "name": "Fake GPU", "uuid": f"GPU-fake-{k}", "compute_capability": "9.0",
                           "driver": "13.0"} for k in range(count)]))
        return 0
    if argv[0] == "tune":
        return tune(argv)
    if argv[0] == "show":
        with open(option(argv, "--db")) as f:
            print(f.read())
        return 0
    print(f"fake tiletune: {argv[0]} is not faked", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
