#!/usr/bin/env python3
"""What a Python `verify` costs per config through tiletune.kernel_tuner (issue 35, item 4).

A Kernel Tuner-style reduction: a float32 input of N elements (N from the command line, default
8e8: 3.2 GB), a partial-sums output of P floats (default 32768, one per block), a verify function
that sums the partials and compares the total. The same 12 configs are tuned twice through the
module, with verify= and without any check, and the per-config cost of the check is the
difference of the two walls divided by the configs; the module's own verification_time (the
worker's check time per trial) is shown beside it. Kernel Tuner copies back only the arguments
whose answer entry is not None (here the partials); the module says so to tiletune with
`verify: {command_buffers: [arg0]}`, so the input never leaves the GPU for the check.
--all-buffers writes the space without command_buffers and puts the check's files under $TMPDIR
(TILETUNE_HOST_CHECK_DIR) instead of shared memory: every buffer goes to the check through the
disk, the behaviour before the fix, for the comparison.

    PYTHONPATH=python TILETUNE_CLI=build/tuner/tiletune python3 bench/kt_verify_cost.py [N] [--partials P]
        [--all-buffers] [--device K]

With TILETUNE_KT_DRY_RUN=1 (no GPU) both spaces are written and planned instead, and the script
checks that the verify space names only the partials; ctest runs it so with a small N through
tests/interchange/kernel_tuner/test_scripts_cpu.py."""
import argparse
import os
import sys
import time

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import tiletune.kernel_tuner as kernel_tuner  # noqa: E402

KERNEL = """
// partial[blockIdx.x] = the sum of a grid-strided share of x (vec elements per load), reduced in
// shared memory; gridDim.x is the number of partials.
__global__ void partial_sums(float *partial, const float *x, long long n) {
    __shared__ float sh[block_size_x];
    float sum = 0.0f;
    long long stride = (long long)gridDim.x * block_size_x * vec;
    for (long long i = ((long long)blockIdx.x * block_size_x + threadIdx.x) * vec; i < n; i += stride) {
#if vec == 4
        if (i + 3 < n) {
            float4 v = *reinterpret_cast<const float4 *>(x + i);
            sum += (v.x + v.y) + (v.z + v.w);
        } else {
            for (long long k = i; k < n; k++) sum += x[k];
        }
#else
        sum += x[i];
#endif
    }
    sh[threadIdx.x] = sum;
    __syncthreads();
    for (int s = block_size_x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = sh[0];
}
"""
TUNE_PARAMS = {"block_size_x": [128, 256, 512, 1024], "vec": [1, 4], "spare": [0, 1]}   # 16 configs
RESTRICTIONS = ["spare == 0 or block_size_x >= 512"]                                   # 12 of them


def drop_command_buffers():
    """The space as the module wrote it before the fix: the check is handed every buffer, written
    under the temp dir (a disk) as the worker wrote them then, not in shared memory."""
    import tempfile
    from tiletune.kernel_tuner import _space
    original = _space.Space._verify_lines
    _space.Space._verify_lines = lambda self: [l for l in original(self) if "command_buffers" not in l]
    os.environ["TILETUNE_HOST_CHECK_DIR"] = tempfile.gettempdir()


def tune(n, partials, x, total, with_verify, device):
    """One tuning; returns (wall seconds, results, env)."""
    args = [numpy.zeros(partials, dtype=numpy.float32), x, numpy.int64(n)]
    calls = []

    def verify(answer, result_host, atol=None):
        calls.append(1)
        return float(numpy.sum(result_host[0], dtype=numpy.float64)) == float(answer[0])

    extra = dict(answer=[numpy.float64(total), None, None], verify=verify) if with_verify else {}
    started = time.perf_counter()
    results, env = kernel_tuner.tune_kernel("partial_sums", KERNEL, partials, args, TUNE_PARAMS, grid_div_x=[],
                                            restrictions=RESTRICTIONS, device=device, quiet=True, **extra)
    wall = time.perf_counter() - started
    if with_verify and not kernel_tuner.dry_run():
        assert len(calls) >= len(results), (len(calls), len(results))
    return wall, results, env


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", nargs="?", type=float, default=8e8, help="input elements (default 8e8)")
    parser.add_argument("--partials", type=int, default=32768, help="output floats, one per block (default 32768)")
    parser.add_argument("--all-buffers", action="store_true", help="hand the check every buffer (before the fix)")
    parser.add_argument("--device", type=int, default=0)
    a = parser.parse_args()
    n = int(a.n)
    if a.all_buffers:
        drop_command_buffers()
    # Small integers: every partial sum and the total are exact in float32 up to 2^24 per block.
    x = numpy.random.default_rng(1).integers(0, 4, n, dtype=numpy.int8).astype(numpy.float32)
    total = numpy.sum(x, dtype=numpy.float64)
    wall_without, plain, env_plain = tune(n, a.partials, x, total, False, a.device)
    wall_with, checked, env_checked = tune(n, a.partials, x, total, True, a.device)

    if kernel_tuner.dry_run():
        rows_plain, rows_checked = env_plain["plan"]["rows"], env_checked["plan"]["rows"]
        configs = len(rows_checked)
        assert configs == len(rows_plain) == 12 and all(r["status"] == "ok" for r in rows_checked), rows_checked
        assert all(r["grid"] == [a.partials, 1, 1] for r in rows_checked), rows_checked
        named = "  command_buffers: [arg0]\n" in env_checked["space"]
        assert named != a.all_buffers, env_checked["space"]   # the check reads the partials only
        assert "verify: none" in env_plain["space"], env_plain["space"]
        verification = "-"
    else:
        configs = len(checked)
        bad = [r for r in checked + plain if r.get("status", "ok") != "ok"]
        assert not bad and configs == len(plain) == 12, bad
        verification = "%.1f" % (sum(r["verification_time"] for r in checked) / configs)
    mode = "dry run (planned, not measured)" if kernel_tuner.dry_run() else env_checked.get("device_name", "")
    buffers = "every buffer (--all-buffers)" if a.all_buffers else "command_buffers: [arg0]"
    print(f"kt_verify_cost: N={n} ({n * 4 / 1e9:.2f} GB input), {a.partials} partials, {configs} configs, "
          f"check reads {buffers}; {mode}")
    print(f"{'':>14} {'wall_s':>9} {'per_config_s':>13} {'verification_time_ms':>21}")
    print(f"{'without check':>14} {wall_without:9.2f} {wall_without / configs:13.3f} {'-':>21}")
    print(f"{'with verify':>14} {wall_with:9.2f} {wall_with / configs:13.3f} {verification:>21}")
    print(f"{'verify cost':>14} {wall_with - wall_without:9.2f} {(wall_with - wall_without) / configs:13.3f} "
          f"{verification:>21}")


if __name__ == "__main__":
    main()
