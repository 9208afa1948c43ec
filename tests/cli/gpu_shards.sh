#!/usr/bin/env bash
# On a GPU (label gpu; skips without one): the transpose space at N=1024 tuned exhaustively in two
# shards (`tune --shard 0/2` and `1/2`, each into its own result cache) and merged with `tiletune
# merge`: the merged cache holds every config exactly once (138), no shard measured a config of
# the other, and a rerun of shard 0 measures nothing (resume: the same configs again). No python:
# the GPU machine may have only bash and coreutils.
#   tests/cli/gpu_shards.sh TILETUNE SOURCE_DIR
set -euo pipefail
tiletune=$1
src=$2
if "$tiletune" devices 2>&1 | grep -q "no CUDA device"; then echo "no GPU: skipped"; exit 77; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
tune_shard() {  # I OUTPUT: shard I/2 into s$I.db
  "$tiletune" tune "$src/configs/transpose.yaml" --size N=1024 --strategy exhaustive --shard "$1/2" \
    --db "$work/s$1.db" --cubin-cache "$work/cubin.$1" --max-time 0.05 -q > "$2" || fail "shard $1/2: $(tail -3 "$2")"
}
for i in 0 1; do tune_shard "$i" "$work/s$i.out"; done
"$tiletune" merge "$work/merged.db" "$work/s0.db" "$work/s1.db"
# The problem and params of each trial, the columns found by their names in the CSV's header
# (params hold no comma).
trials() {
  "$tiletune" export --db "$work/$1.db" --kernel transpose --format csv | awk -F, '
    NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
    { print $col["problem"] "," $col["params"] }' | sort
}
trials s0 > "$work/s0.txt"
trials s1 > "$work/s1.txt"
trials merged > "$work/merged.txt"
both=$(comm -12 "$work/s0.txt" "$work/s1.txt" | wc -l)
((both == 0)) || fail "$both configs were measured by both shards"
[[ $(wc -l < "$work/merged.txt") == 138 && $(sort -u "$work/merged.txt" | wc -l) == 138 ]] \
  || fail "the merged cache has $(wc -l < "$work/merged.txt") trials, not the 138 configs once each"
sort "$work/s0.txt" "$work/s1.txt" | cmp -s - "$work/merged.txt" || fail "the merge is not the union of the shards"
echo "shards: $(wc -l < "$work/s0.txt") + $(wc -l < "$work/s1.txt") configs, merged 138, each once"
# A rerun resumes: every row of its cache stays as it was (a config measured again would change its times).
"$tiletune" export --db "$work/s0.db" --format csv > "$work/s0-before.csv"
tune_shard 0 "$work/rerun.out"
"$tiletune" export --db "$work/s0.db" --format csv | cmp -s - "$work/s0-before.csv" \
  || fail "a rerun of shard 0/2 measured again: it did not take the same configs"
echo "rerun of shard 0/2: nothing new measured"
