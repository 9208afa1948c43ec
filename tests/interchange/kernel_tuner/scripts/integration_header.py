#!/usr/bin/env python3
"""integration_header: Kernel Tuner's way of handing tuned configs to a C/C++ program,
kernel_tuner.integration: store_results keeps the top configs of each tuning (here a saxpy-like
kernel at two problem sizes) in a results file per device and problem size, create_device_targets
writes a header that #defines one config per device (picked with -DTARGET_<device>) and a default
for any other. A small C program includes the header and prints the macros; it is compiled with
gcc and g++ (those installed) with and without -DTARGET_<this device>, and must print the configs
the results file gives (TuneResults.get_best_config, as Kernel Tuner reads it). INTEGRATION_OUT
names the folder (default: a temporary one)."""
import json
import os
import re
import shutil
import subprocess
import tempfile

import numpy

import tiletune.kernel_tuner as kernel_tuner
from tiletune.kernel_tuner.integration import TuneResults, create_device_targets, store_results

from _checks import every_config

kernel_string = """
// y[i] = a * x[i] + y[i], each thread per_thread elements strided by the block.
__global__ void saxpy_strided(float *y, const float *x, float a, int n) {
    int base = blockIdx.x * block_size_x * per_thread + threadIdx.x;
    for (int k = 0; k < per_thread; k++) {
        int i = base + k * block_size_x;
        if (i < n) y[i] = a * x[i] + y[i];
    }
}
"""

tune_params = {"block_size_x": [128, 256, 512], "per_thread": [1, 2, 4]}
out = os.environ.get("INTEGRATION_OUT") or tempfile.mkdtemp(prefix="kt-integration-")
results_file = os.path.join(out, "saxpy_results.json")
header = os.path.join(out, "saxpy_targets.h")
if os.path.exists(results_file):
    os.unlink(results_file)

tuned = []
for n in (1_000_000, 4_000_003):
    x = numpy.random.randn(n).astype(numpy.float32)
    y = numpy.random.randn(n).astype(numpy.float32)
    a = numpy.float32(0.5)
    results, env = kernel_tuner.tune_kernel("saxpy_strided", kernel_string, n, [y, x, a, numpy.int32(n)], tune_params,
                                            grid_div_x=["block_size_x", "per_thread"],
                                            answer=[a * x + y, None, None, None], quiet=True)
    tuned.append((n, results, env))
    if not kernel_tuner.dry_run():
        store_results(results_file, "saxpy_strided", kernel_string, tune_params, n, results, env)

if kernel_tuner.dry_run():  # nothing measured: the spaces are checked, no results file is written
    for n, _, env in tuned:
        rows = env["plan"]["rows"]
        assert [r["params"] for r in rows] == every_config(tune_params), rows
        for row in rows:
            p = row["params"]
            assert row["grid"] == [-(-n // (p["block_size_x"] * p["per_thread"])), 1, 1], row
    print("integration_header: dry run OK,", sum(len(env["plan"]["rows"]) for _, _, env in tuned), "configs planned")
    raise SystemExit(0)

create_device_targets(header, results_file)

with open(results_file) as f:
    stored = json.load(f)
device = re.sub("[^0-9a-zA-Z]+", "_", tuned[0][2]["device_name"].strip())
assert stored["version_number"] == "1.0" and stored["kernel_name"] == "saxpy_strided"
assert stored["tunable_parameters"] == list(tune_params) and stored["objective"] == "time"
assert {(d["device_name"], d["problem_size"]) for d in stored["data"]} == {(device, "1000000"), (device, "4000003")}
for n, results, _ in tuned:
    best = min(r["time"] for r in results if isinstance(r["time"], float))
    kept = [d for d in stored["data"] if d["problem_size"] == str(n)]
    assert min(d["time"] for d in kept) == best and all(d["time"] < best * 1.03 for d in kept), kept

program = os.path.join(out, "print_targets.c")
with open(program, "w") as f:
    f.write('#include <stdio.h>\n#include "saxpy_targets.h"\n'
            'int main(void) { printf("%d %d\\n", block_size_x, per_thread); return 0; }\n')

read = TuneResults(results_file)
want = {"": read.get_best_config(), f"-DTARGET_{device}": read.get_best_config(device)}
compilers = [c for c in ("gcc", "g++") if shutil.which(c)]
assert compilers, "integration_header: neither gcc nor g++ is installed"
for compiler in compilers:
    for flag, params in want.items():
        exe = os.path.join(out, f"print_targets_{compiler}")
        command = [compiler, "-Wall", "-Werror", "-I", out] + ([flag] if flag else []) + \
            (["-x", "c++"] if compiler == "g++" else []) + [program, "-o", exe]
        subprocess.run(command, check=True)
        printed = subprocess.run([exe], check=True, capture_output=True, text=True).stdout.split()
        assert printed == [str(params["block_size_x"]), str(params["per_thread"])], (compiler, flag, printed, params)
    # Tuning defines kernel_tuner: the header then defines nothing (the params come from the tuner).
    done = subprocess.run([compiler, "-Dkernel_tuner=1", "-I", out, "-fsyntax-only"] +
                          (["-x", "c++"] if compiler == "g++" else []) + [program], capture_output=True, text=True)
    assert done.returncode != 0 and "block_size_x" in done.stderr, done.stderr
print(f"integration_header: OK, {len(stored['data'])} top configs stored for {device}, header compiled with "
      f"{' and '.join(compilers)}: default {want['']}, TARGET_{device} {want['-DTARGET_' + device]}")
