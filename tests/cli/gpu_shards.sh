#!/usr/bin/env bash
# On a GPU (label gpu; skips without one): the transpose space at N=1024 tuned exhaustively in two
# shards (`tune --shard 0/2` and `1/2`, each into its own result cache) and merged with `tiletune
# merge`: the merged cache holds every config exactly once (92), no shard measured a config of
# the other, and a rerun of shard 0 measures nothing (resume: the same configs again).
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
for db in s0 s1 merged; do "$tiletune" export --db "$work/$db.db" --kernel transpose > "$work/$db.json"; done
python3 - "$work" <<'PY'
import json, sys
d = sys.argv[1]
def params(name):
    return [t["params"] for t in json.load(open(f"{d}/{name}.json"))["trials"] if t["problem"] == "N=1024"]
s0, s1, merged = params("s0"), params("s1"), params("merged")
assert not set(s0) & set(s1), f"configs in both shards: {sorted(set(s0) & set(s1))[:5]}"
assert len(merged) == len(set(merged)) == 92, f"the merged cache has {len(merged)} trials ({len(set(merged))} distinct), not 92"
assert sorted(merged) == sorted(s0 + s1), "the merge is not the union of the shards"
print(f"shards: {len(s0)} + {len(s1)} configs, merged 92, each once")
PY
tune_shard 0 "$work/rerun.out"
"$tiletune" export --db "$work/s0.db" --kernel transpose > "$work/s0-rerun.json"
cmp -s <(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["trials"]))' "$work/s0.json") \
       <(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["trials"]))' "$work/s0-rerun.json") \
  || fail "a rerun of shard 0/2 added trials: it did not take the same configs"
echo "rerun of shard 0/2: nothing new measured"
