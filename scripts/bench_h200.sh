#!/usr/bin/env bash
# One call on the H200 (device tool): tune every shipped space at its benchmark size, then run
# bench_kernels against the copy, CUB and cuBLAS, and print its table last.
#
#   scripts/bench_h200.sh [TILETUNE_BIN [BENCH_BIN]]
#       defaults: build-h200/tuner/tiletune and build-h200/bench/bench_kernels (the static build
#       in .h200/, see docs/development.md, "Running on an H200")
#
# Environment:
#   OUT              where logs go (default /tmp/tiletune-out); 5-6 files come back:
#                    env.txt, tune.log, bench.log, bench_kernels.md, tiletune.db (+ -wal)
#   DB_IN            a cache from an earlier call (carried): copied first, so tunes resume
#   SKIP_TUNE=1      only the benchmark (with DB_IN, or --tuned in BENCH_ARGS)
#   TOTAL_S          seconds this script may take in all (default 560: the call's limit is 600)
#   BENCH_RESERVE_S  seconds kept for bench_kernels (default 130); tunes that would eat into
#                    it are shortened, then skipped
#   BENCH_ARGS       extra bench_kernels options (e.g. "--only transpose,matmul")
# The problems tuned are exactly the benchmark's (bench_kernels --print-tune-args); the tune
# budgets per problem are below (matmul 90 s at 4096^3).
set -u
cd "$(dirname "$0")/.." || exit 1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
START=$SECONDS
TOTAL_S=${TOTAL_S:-560}
BENCH_RESERVE_S=${BENCH_RESERVE_S:-130}
OUT=${OUT:-/tmp/tiletune-out}
WORK=${WORK:-/tmp/ttbench}
mkdir -p "$OUT" "$WORK"
# The test binaries and bench_kernels' default --configs carry the source path of the build machine.
[[ -e /work/main ]] || { mkdir -p /work && ln -s "$PWD" /work/main; } 2>/dev/null
[[ -e build-h200 ]] || ln -s .h200 build-h200 2>/dev/null
TT=${1:-build-h200/tuner/tiletune}
BENCH=${2:-build-h200/bench/bench_kernels}
DB=$WORK/tiletune.db
export TILETUNE_CUBIN_CACHE=$WORK/cubin   # shared by the tunes and the benchmark
if [[ -n "${DB_IN:-}" && -f "$DB_IN" ]]; then
  cp "$DB_IN" "$DB"
  [[ -f "$DB_IN-wal" ]] && cp "$DB_IN-wal" "$DB-wal"
fi

{
  date -u +%FT%TZ
  echo "commit $(cat .h200/commit.txt 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu --format=csv
  "$TT" devices
} > "$OUT/env.txt" 2>&1

# Priority (lower first) and budget (seconds) of one tune line "FAMILY<TAB>SPACE<TAB>--size ...".
priority() {
  case "$1" in
    transpose*) echo 10 ;; vector_add*) echo 20 ;; reduction*) echo 30 ;; histogram*) echo 40 ;;
    stencil_1d*R=3) echo 50 ;; stencil_1d*R=8) echo 51 ;; stencil_1d*R=1) echo 52 ;;
    matmul*M=4096*) echo 60 ;; matmul*) echo 61 ;; stencil_1d*) echo 70 ;; *) echo 80 ;;
  esac
}
budget() {
  case "$1" in
    transpose*) echo 25 ;; vector_add*|reduction*|histogram*) echo 40 ;;
    matmul*M=4096*) echo 90 ;; matmul*) echo 60 ;; stencil_1d*R=16) echo 15 ;; stencil_1d*) echo 20 ;; *) echo 30 ;;
  esac
}

: > "$OUT/tune.log"
if [[ "${SKIP_TUNE:-0}" != 1 ]]; then
  mapfile -t lines < <("$BENCH" --print-tune-args 2>>"$OUT/tune.log" | while IFS= read -r l; do
    printf '%s\t%s\n' "$(priority "$l")" "$l"; done | sort -n -s -k1,1 | cut -f2-)
  for line in "${lines[@]}"; do
    IFS=$'\t' read -r family space sizes <<< "$line"
    left=$((TOTAL_S - BENCH_RESERVE_S - (SECONDS - START) - 5))
    b=$(budget "$line")
    (( b > left )) && b=$left
    if (( b < 10 )); then
      echo "=== SKIPPED $family $sizes: no time left ($left s before the benchmark's reserve)" >> "$OUT/tune.log"
      continue
    fi
    t0=$SECONDS
    echo "=== tune $family $sizes --budget ${b}s" >> "$OUT/tune.log"
    # shellcheck disable=SC2086  # $sizes is a list of options
    timeout -k 10 $((b + 60)) "$TT" tune "$space" $sizes --db "$DB" --budget "${b}s" -q >> "$OUT/tune.log" 2>&1
    rc=$?
    printf 'tune %-10s %-40s budget %3ss  took %3ss  rc=%s\n' "$family" "$sizes" "$b" "$((SECONDS - t0))" "$rc" \
      >> "$OUT/tune.log"
  done
fi

echo "=== bench_kernels (started at $((SECONDS - START)) s)" | tee -a "$OUT/tune.log"
# shellcheck disable=SC2086
timeout -k 10 $((TOTAL_S + 30 - (SECONDS - START))) "$BENCH" --db "$DB" --out "$OUT/bench_kernels.md" ${BENCH_ARGS:-} \
  > "$WORK/bench.stdout" 2> "$OUT/bench.log"
rc=$?
cp "$DB" "$OUT/tiletune.db" 2>/dev/null
[[ -s "$DB-wal" ]] && cp "$DB-wal" "$OUT/tiletune.db-wal"
echo "bench_kernels rc=$rc after $((SECONDS - START)) s (0: every row ran; 1: some row failed; 2: error)"
grep -E "^tune |SKIPPED" "$OUT/tune.log"
grep -E "FAILED|error" "$OUT/bench.log" | head -20
echo
# bench_kernels' stdout: header, skipped rows, notes, then the table (last).
if [[ -s "$WORK/bench.stdout" ]]; then cat "$WORK/bench.stdout"; else tail -40 "$OUT/bench.log"; fi
