#!/usr/bin/env bash
# One device call for issue 38 (the seeds' kernels at the hardware's limit): tune the changed and
# the kept families at their benchmark sizes with tiletune's own sweep (budgets below), then run
# bench_kernels on them against the copy, CUB and cuBLAS, and print its table last.
#
#   OUT=... bash scripts/h200_issue38.sh [TILETUNE_BIN [BENCH_BIN]]
#       run in a checkout (or a copy of configs/ and kernels/ beside the binaries);
#       defaults: .h200/tuner/tiletune and .h200/bench/bench_kernels (stripped, static build)
# Environment:
#   OUT        where logs go (default /tmp/tiletune-out): summary.txt (written as it goes),
#              env.txt, logs.tar.xz (tune.log, bench.log, best.txt, show_*.csv), bench_kernels.md, tiletune.db
#   FAMILIES   the families to tune and benchmark (default: histogram stencil_1d transpose
#              vector_add reduction; matmul is not tuned here)
#   BUDGET_<family>  seconds of tuning per problem (defaults below)
#   BENCH_ARGS extra bench_kernels options
set -u
cd "$(dirname "$0")/.." || exit 1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
OUT=${OUT:-/tmp/tiletune-out}
WORK=${WORK:-/tmp/tt38}
mkdir -p "$OUT" "$WORK/logs"
TT=${1:-.h200/tuner/tiletune}
BENCH=${2:-.h200/bench/bench_kernels}
DB=$WORK/tiletune.db
FAMILIES=${FAMILIES:-histogram stencil_1d transpose vector_add reduction}
export TILETUNE_CUBIN_CACHE=$WORK/cubin
START=$SECONDS
summary() { echo "[$((SECONDS - START)) s] $*" | tee -a "$OUT/summary.txt"; }
{
  date -u +%FT%TZ
  echo "commit $(cat .h200/commit.txt 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv
  "$TT" devices
} > "$OUT/env.txt" 2>&1
summary "$(grep -m1 -i 'nvidia h' "$OUT/env.txt")"

budget() {
  local v="BUDGET_$1"
  [[ -n "${!v:-}" ]] && { echo "${!v}"; return; }
  case "$1" in
    histogram) echo 90 ;; stencil_1d) echo 20 ;; transpose) echo 30 ;; *) echo 20 ;;
  esac
}
only=$(echo "$FAMILIES" | tr ' ' ',')
"$BENCH" --configs configs --only "$only" --print-tune-args > "$WORK/tune_args.txt" 2>> "$WORK/logs/tune.log"
# In the order of FAMILIES (the most important first, in case the call is cut short), R=16 first.
for fam in $FAMILIES; do grep -P "^$fam\t" "$WORK/tune_args.txt" | grep 'R=16'; grep -P "^$fam\t" "$WORK/tune_args.txt" | grep -v 'R=16'; done \
  > "$WORK/tune_order.txt"
while IFS=$'\t' read -r family space sizes; do
  b=$(budget "$family")
  t0=$SECONDS
  # shellcheck disable=SC2086  # $sizes is a list of options
  timeout -k 10 $((b + 60)) "$TT" tune "$space" $sizes --db "$DB" --budget "${b}s" -q >> "$WORK/logs/tune.log" 2>&1
  rc=$?
  summary "tune $family $sizes budget ${b}s took $((SECONDS - t0))s rc=$rc"
done < "$WORK/tune_order.txt"
"$TT" best --db "$DB" > "$WORK/logs/best.txt" 2>&1
for f in $FAMILIES; do
  "$TT" show --db "$DB" --kernel "$f" --format csv > "$WORK/logs/show_$f.csv" 2>&1
done

summary "bench_kernels"
# shellcheck disable=SC2086
timeout -k 10 300 "$BENCH" --configs configs --db "$DB" --only "$only" --out "$OUT/bench_kernels.md" ${BENCH_ARGS:-} \
  > "$WORK/bench.stdout" 2> "$WORK/logs/bench.log"
summary "bench_kernels rc=$?"
cp "$DB" "$OUT/tiletune.db" 2>/dev/null
[[ -s "$DB-wal" ]] && cp "$DB-wal" "$OUT/tiletune.db-wal"
cp "$WORK/bench.stdout" "$WORK/logs/"
tar -cJf "$OUT/logs.tar.xz" -C "$WORK" logs
grep -E "FAILED|error" "$WORK/logs/bench.log" | head -10
grep -hE "^\| (copy|CUB|cuBLAS|histogram|stencil_1d|transpose|vector_add|reduction) " "$OUT/bench_kernels.md" 2>/dev/null \
  | cut -d'|' -f2-12 | tee -a "$OUT/summary.txt"
