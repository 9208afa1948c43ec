#!/usr/bin/env bash
# One call on the H200 (device tool): exhaustive sweeps of every shipped space at two or more
# problem sizes, each with a cold compile cache (so every trial's compile time is real), into
# one result cache that `tiletune export --format landscape` turns into tests/data/landscapes/.
#
#   scripts/record_landscapes.sh [TILETUNE_BIN]      (default build-h200/tuner/tiletune)
#
# Environment: OUT (default /tmp/tiletune-out) gets env.txt, record.log and landscapes.db;
# TOTAL_S (default 570) bounds the whole script: a sweep cut short keeps what it measured;
# ONLY="vector_add histogram" records only those spaces. An existing $OUT/landscapes.db is
# kept: a second call completes what a first one left out (each trial keeps its own times).
set -u
cd "$(dirname "$0")/.." || exit 1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
START=$SECONDS
TOTAL_S=${TOTAL_S:-570}
OUT=${OUT:-/tmp/tiletune-out}
WORK=${WORK:-/tmp/ttrecord}
mkdir -p "$OUT" && rm -rf "$WORK" && mkdir -p "$WORK"
[[ -e build-h200 ]] || ln -s .h200 build-h200 2>/dev/null
TT=${1:-build-h200/tuner/tiletune}
DB=$OUT/landscapes.db
{
  date -u +%FT%TZ
  echo "commit $(git rev-parse --short HEAD 2>/dev/null || cat .h200/commit.txt 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv
  "$TT" devices
} > "$OUT/env.txt" 2>&1

# space, then --size arguments of one problem per line
runs=(
  "transpose --size N=8192"
  "transpose --size N=4096"
  "transpose --size N=1024"
  "vector_add --size N=268435456"
  "vector_add --size N=1000003"
  "reduction --size N=268435456"
  "reduction --size N=1000003"
  "histogram --size N=268435456"
  "histogram --size N=1000003"
  "stencil_1d --size N=268435456 --size R=1 --size R=3 --size R=8 --size R=16"
  "stencil_1d --size N=1000003 --size R=3"
  "matmul --size M=1000 --size N=1000 --size K=1000"
  "matmul --size M=4096 --size N=4096 --size K=4096"
)
i=0
for run in "${runs[@]}"; do
  i=$((i + 1))
  left=$((TOTAL_S - (SECONDS - START)))
  (( left > 10 )) || { echo "SKIPPED (out of time): $run" >> "$OUT/record.log"; continue; }
  set -- $run
  space=$1; shift
  [[ -z "${ONLY:-}" || " $ONLY " == *" $space "* ]] || continue
  start=$SECONDS
  # A cold cubin cache per problem: the recorded compile times are what a sweep pays.
  TILETUNE_CUBIN_CACHE=$WORK/cubin-$i timeout "$left" "$TT" tune -q "configs/$space.yaml" --db "$DB" --strategy exhaustive "$@" \
    > "$WORK/run-$i.log" 2>&1
  rc=$?
  { echo "=== $run: rc=$rc, $((SECONDS - start)) s"; tail -25 "$WORK/run-$i.log"; } >> "$OUT/record.log"
  printf '%-60s rc=%-3s %4ss\n' "$run" "$rc" "$((SECONDS - start))" >> "$WORK/summary.txt"
done
cat "$OUT/env.txt"
"$TT" show --db "$DB" --format json 2>/dev/null | python3 -c '
import json, sys, collections
rows = json.load(sys.stdin)
c = collections.Counter((r["kernel"], r["problem"], r["status"]) for r in rows)
for k in sorted(c): print(*k, c[k])' 2>&1 | tail -60
cat "$WORK/summary.txt"
