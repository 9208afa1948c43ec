#!/usr/bin/env bash
# One call on the H200 (device tool): the `gpu` tests, the planning benchmark and a sweep
# with a cold compile cache. Expects the stripped static build in .h200/ (see README,
# "Running on the H200"); writes logs under $OUT and prints a short table last.
set -u
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
OUT=${OUT:-/tmp/tiletune-out}
mkdir -p "$OUT" /work
# The test binaries carry the source path of the machine that built them.
[[ -e /work/main ]] || ln -s "$PWD" /work/main
[[ -e build-h200 ]] || ln -s .h200 build-h200
B=build-h200
commit=$(cat .h200/commit.txt 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)
{
  date -u +%FT%TZ; echo "commit $commit"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv
} > "$OUT/env.txt" 2>&1
$B/tuner/tiletune devices >> "$OUT/env.txt" 2>&1
: > "$OUT/summary.txt"
for t in gpu/test_device_gpu gpu/test_occupancy_device runner/test_runner sweep/test_sweep_gpu launcher/test_launcher_gpu; do
  name=$(basename "$t")
  start=$SECONDS
  timeout 420 "$B/tests/$t" > "$OUT/$name.log" 2>&1
  rc=$?
  printf '%-24s rc=%-3s %4ss  %s\n' "$name" "$rc" "$((SECONDS - start))" "$(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/$name.log" | tr '\n' ' ')" >> "$OUT/summary.txt"
done
# At most 8 files come back from the device tool: SKIP_PLAN_BENCH=1 leaves this one out.
[[ -n "${SKIP_PLAN_BENCH:-}" ]] || timeout 120 $B/bench/bench_plan --threads 1,2,16 > "$OUT/bench_plan.log" 2>&1
rm -rf /tmp/tt && mkdir -p /tmp/tt
TILETUNE_CUBIN_CACHE=/tmp/tt/cubin timeout 300 $B/tuner/tiletune tune configs/transpose.yaml --db /tmp/tt/sweep.db -q \
  > "$OUT/sweep_cold.log" 2>&1
echo "sweep_cold rc=$?" >> "$OUT/summary.txt"
cat "$OUT/env.txt"
grep -E "winner|killed after|occupancy|offline" "$OUT"/test_*.log | head -20
[[ -f "$OUT/bench_plan.log" ]] && cat "$OUT/bench_plan.log"
tail -8 "$OUT/sweep_cold.log"
cat "$OUT/summary.txt"
