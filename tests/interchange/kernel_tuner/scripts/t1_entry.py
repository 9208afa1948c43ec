#!/usr/bin/env python3
"""t1_entry: Kernel Tuner's tune_kernel_T1, a T1 input file tuned as Kernel Tuner reads one: the
params and conditions (Python text), ProblemSize with GridDivX, float vectors filled with a
constant and with randn, a constant-memory vector (a 5-tap filter smaller than its 16-float
__constant__ array), float and int32 scalars, the Search and Budget sections. The script writes
its own T1 file and kernel, then asks for Kernel Tuner's default answer, the T4 metadata and
results, and for (results, env)."""
import json
import os
import tempfile

import tiletune.kernel_tuner as kernel_tuner
from tiletune.kernel_tuner import file_utils

KERNEL = """
// out[i] = alpha * sum_k taps[k] * in[i + k] over the first `taps_used` taps; tile_size_x outputs per thread.
__constant__ float taps[16];

__global__ void fir(float *out, const float *in, float alpha, int n) {
    int first = (blockIdx.x * block_size_x + threadIdx.x) * tile_size_x;
    for (int t = 0; t < tile_size_x; t++) {
        int i = first + t;
        if (i >= n) return;
        float sum = 0.0f;
        for (int k = 0; k < 5; k++) sum += taps[k] * in[i + k];
        out[i] = alpha * sum;
    }
}
"""

n = 1 << 16
folder = tempfile.mkdtemp(prefix="t1-entry-")
with open(os.path.join(folder, "fir.cu"), "w") as f:
    f.write(KERNEL)
document = {
    "General": {"BenchmarkName": "fir", "OutputFormat": "JSON"},
    "ConfigurationSpace": {
        "TuningParameters": [
            {"Name": "block_size_x", "Type": "int", "Values": "[2**i for i in range(5, 12)]"},
            {"Name": "tile_size_x", "Type": "int", "Values": "[1, 2, 4]"}],
        "Conditions": [{"Parameters": ["block_size_x", "tile_size_x"],
                        "Expression": "block_size_x * tile_size_x <= 2048"}]},
    "Search": {"Name": "brute_force"},
    "KernelSpecification": {
        "Language": "CUDA", "KernelName": "fir", "KernelFile": "fir.cu", "ProblemSize": [n],
        "GridDivX": ["block_size_x", "tile_size_x"],
        "Arguments": [
            {"Name": "out", "Type": "float", "MemoryType": "Vector", "Size": "ProblemSize[0]", "FillType": "Constant",
             "FillValue": 0.0},
            {"Name": "in", "Type": "float", "MemoryType": "Vector", "Size": "ProblemSize[0] + 4",
             "FillType": "Random"},
            {"Name": "alpha", "Type": "float", "MemoryType": "Scalar", "FillValue": 0.5},
            {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "FillValue": n},
            {"Name": "taps", "Type": "float", "MemoryType": "Vector", "MemType": "Constant", "Size": 5,
             "FillType": "Constant", "FillValue": 0.2}]}}
t1 = os.path.join(folder, "fir.json")
with open(t1, "w") as f:
    json.dump(document, f)
assert file_utils.get_input_file(t1)["KernelSpecification"]["KernelName"] == "fir"

# Kernel Tuner's conditions: of 7 x 3 configs, block_size_x * tile_size_x <= 2048 keeps 18, and its
# own limit of 1024 threads per block rules out 2048 x 1: 17.
valid = [(b, t) for b in [2 ** i for i in range(5, 12)] for t in [1, 2, 4] if b * t <= 2048 and b <= 1024]
results, env = kernel_tuner.tune_kernel_T1(t1, output_T4=False)
if kernel_tuner.dry_run():
    rows = env["plan"]["rows"]
    assert sorted((r["params"]["block_size_x"], r["params"]["tile_size_x"]) for r in rows) == sorted(valid), rows
    for r in rows:
        p = r["params"]
        per_block = p["block_size_x"] * p["tile_size_x"]
        assert r["status"] == "ok" and r["grid"] == [-(-n // per_block), 1, 1], r
    assert '"taps": {type: float, count: 5,' in env["space"], env["space"]
    print("t1_entry: dry run OK,", len(rows), "configs planned as Kernel Tuner reads the T1 file")
else:
    assert sorted((r["block_size_x"], r["tile_size_x"]) for r in results) == sorted(valid), results
    assert all(r.get("status", "ok") == "ok" for r in results), [r for r in results if r.get("status") != "ok"]
    metadata, t4 = kernel_tuner.tune_kernel_T1(t1)  # output_T4=True, Kernel Tuner's default
    assert metadata["schema_version"] == "1.0.0" and t4["schema_version"] == "1.0.0", (metadata, t4)
    assert len(t4["results"]) == len(valid) and all(r["invalidity"] == "correct" for r in t4["results"]), t4
    best = {k: env["best_config"][k] for k in ("block_size_x", "tile_size_x")}
    print("t1_entry: OK,", len(results), "configs tuned from the T1 file, T4 results of", len(t4["results"]),
          "configs, best", best)
