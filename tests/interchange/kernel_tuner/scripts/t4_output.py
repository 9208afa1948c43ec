#!/usr/bin/env python3
"""t4_output: the imports of Kernel Tuner's README example, `from kernel_tuner.file_utils import
store_output_file, store_metadata_file`, after a tuning: the results as a T4 results file and the
machine as a T4 metadata file. The kernel (a clamp of each element into [lo, hi], vectorized by
float4 or not) is tuned over its block size and vector width; the T4 file must hold one entry per
result with its configuration, times, validity and measurements, and validate against Kernel
Tuner's T4 results schema (tests/interchange/kernel_tuner/schema, where jsonschema is installed);
the metadata file names the GPUs tiletune sees. T4_OUT names the folder (default: a temporary
one)."""
import json
import os
import tempfile

import numpy

import tiletune.kernel_tuner as kernel_tuner
from tiletune.kernel_tuner.file_utils import get_configuration_validity, store_metadata_file, store_output_file

from _checks import every_config

kernel_string = """
// y[i] = min(max(x[i], lo), hi); vec 4 reads and writes float4 (n is a multiple of 4).
__global__ void clamp_floats(float *y, const float *x, float lo, float hi, int n) {
    int i = (blockIdx.x * block_size_x + threadIdx.x) * vec;
    if (i >= n) return;
#if vec == 4
    float4 v = reinterpret_cast<const float4 *>(x)[i / 4];
    v.x = fminf(fmaxf(v.x, lo), hi); v.y = fminf(fmaxf(v.y, lo), hi);
    v.z = fminf(fmaxf(v.z, lo), hi); v.w = fminf(fmaxf(v.w, lo), hi);
    reinterpret_cast<float4 *>(y)[i / 4] = v;
#else
    y[i] = fminf(fmaxf(x[i], lo), hi);
#endif
}
"""

n = 2**22
x = numpy.random.randn(n).astype(numpy.float32)
lo, hi = numpy.float32(-0.5), numpy.float32(0.75)
args = [numpy.zeros_like(x), x, lo, hi, numpy.int32(n)]
answer = [numpy.clip(x, lo, hi), None, None, None, None]
tune_params = {"block_size_x": [64, 128, 256, 512], "vec": [1, 4]}

results, env = kernel_tuner.tune_kernel("clamp_floats", kernel_string, n, args, tune_params,
                                        grid_div_x=["block_size_x", "vec"], answer=answer, quiet=True)

out = os.environ.get("T4_OUT") or tempfile.mkdtemp(prefix="t4-")
store_output_file(os.path.join(out, "clamp_floats_results"), results, tune_params)   # .json is appended
store_metadata_file(os.path.join(out, "clamp_floats_metadata.json"))

with open(os.path.join(out, "clamp_floats_results.json")) as f:
    t4 = json.load(f)
with open(os.path.join(out, "clamp_floats_metadata.json")) as f:
    meta = json.load(f)

schema_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schema", "T4-1.0.0-results-schema.json")
try:
    import jsonschema
    with open(schema_path) as f:
        jsonschema.Draft202012Validator(json.load(f)).validate(t4)
    validated = "validated against the T4 schema"
except ImportError:
    validated = "not validated (no jsonschema)"

assert t4["schema_version"] == "1.0.0" and meta["schema_version"] == "1.0.0"
assert len(t4["results"]) == len(results)
for entry, r in zip(t4["results"], results):
    assert entry["configuration"] == {k: r[k] for k in tune_params}, entry
    assert entry["invalidity"] == get_configuration_validity(r["time"]), (entry, r)
    assert (entry["invalidity"] == "correct") == (r.get("status", "ok") == "ok"), (entry, r)
    assert entry["times"]["runtimes"] == r.get("times", []) and entry["objectives"] == ["time"], entry
    measured = {m["name"]: m["value"] for m in entry["measurements"]}
    assert measured.get("time") == r["time"] or entry["invalidity"] != "correct", (measured, r)
gpus = meta["metadata"]["environment"]["device_query"]["tiletune"]
assert isinstance(gpus, list)

if not kernel_tuner.dry_run():
    assert [{k: r[k] for k in tune_params} for r in results] == every_config(tune_params)
    assert all(e["invalidity"] == "correct" for e in t4["results"]), t4["results"]
    assert env["device_name"] in [g["name"] for g in gpus], (env["device_name"], gpus)
    print(f"t4_output: OK, {len(results)} results {validated}, metadata of {len(gpus)} GPU(s) in {out}")
else:
    rows = env["plan"]["rows"]
    assert len(rows) == len(every_config(tune_params)) and all(r["status"] == "ok" for r in rows), rows
    assert t4["results"] == []   # a dry run measures nothing: an empty T4 results file, still valid
    print(f"t4_output: dry run OK, {len(rows)} configs planned, an empty T4 file {validated}")
