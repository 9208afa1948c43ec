#!/usr/bin/env bash
# One call on the H200 (device tool): tune matmul at the benchmark sizes with the forest, then
# bench_kernels against cuBLAS FP32 on the configs found. Logs under $OUT.
#
#   scripts/h200_matmul.sh            (static build in .h200/, see docs/development.md, "Running on an H200")
#
# Environment: OUT (default /tmp/tiletune-out); BUDGET_4096 (default 150 trials) and
# BUDGET_8192 (default 60 trials): the forest's evaluations per size.
set -u
cd "$(dirname "$0")/.." || exit 1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
OUT=${OUT:-/tmp/tiletune-out}
mkdir -p "$OUT" /tmp/ttmm
[[ -e /work/main ]] || { mkdir -p /work && ln -s "$PWD" /work/main; } 2>/dev/null
[[ -e build-h200 ]] || ln -s .h200 build-h200 2>/dev/null
TT=build-h200/tuner/tiletune
DB=/tmp/ttmm/matmul.db
export TILETUNE_CUBIN_CACHE=/tmp/ttmm/cubin
for n in 4096 8192; do
  budget_var=BUDGET_$n
  start=$SECONDS
  timeout 240 $TT tune -q configs/matmul.yaml --db $DB --strategy forest --budget "${!budget_var:-$([[ $n == 4096 ]] && echo 150 || echo 60)}" \
    --size M=$n --size N=$n --size K=$n > "$OUT/tune_$n.log" 2>&1
  echo "tune $n rc=$? $((SECONDS - start)) s" >> "$OUT/summary.txt"
done
timeout 200 build-h200/bench/bench_kernels --db $DB --only matmul --out "$OUT/bench_matmul.md" > "$OUT/bench_matmul.log" 2>&1
echo "bench rc=$?" >> "$OUT/summary.txt"
cp $DB "$OUT/" 2>/dev/null
for n in 4096 8192; do grep -E "^ +[1-5] |trials this run|strategy|wall" "$OUT/tune_$n.log"; done
grep -E "^\| (matmul|cuBLAS)" "$OUT/bench_matmul.md"
cat "$OUT/summary.txt"
