#!/usr/bin/env bash
# `mpirun -np 4 --oversubscribe` on the CPU (no GPU): four ranks of scripts/mpi/tune_shards.sh
# each plan their shard of a 24-config space into their own cubin cache, and replay their
# shard of the transpose recording. Checks that the shards cover the space: every config is in
# exactly one rank's plan, the merged cubin cache answers a whole plan with no compile (each
# config was compiled once, by its rank), and the ranks' replays hold the recording's 92
# configs of N=8192 between them, each rank measuring all of its own.
#   tests/cli/mpi_shards.sh TILETUNE SOURCE_DIR
set -euo pipefail
tiletune=$1
src=$2
command -v mpirun > /dev/null || { echo "mpirun not found (scripts/setup.sh --tests installs openmpi-bin): skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TILETUNE=$tiletune OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_plm=isolated \
  OMPI_MCA_btl_vader_single_copy_mechanism=none
mpi() { mpirun -np 4 --oversubscribe "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

cat > "$work/space.yaml" <<YAML
kernel: shard_test
source: $src/kernels/transpose.cu
entry: transpose
params:
  TILE: [16, 32, 64]
  BLOCK_ROWS: [1, 2, 4, 8]
  PAD: [0, 1]
launch:
  grid: 1
  block: [TILE, BLOCK_ROWS]
args: [TILE]
verify: {reference: none}
YAML

# 1. The compile spread: each rank plans (compiles) its shard into OUT/cubin.RANK.
mpi "$src/scripts/mpi/tune_shards.sh" "$work/plan" plan "$work/space.yaml" --arch sm_90 --format csv --threads 1 -q
for r in 0 1 2 3; do [[ -s $work/plan/rank-$r.out ]] || fail "rank $r wrote no plan"; done
tail -q -n +2 "$work"/plan/rank-*.out | cut -d, -f1-3 | sort > "$work/sharded.txt"
"$src/scripts/mpi/tune_shards.sh" --merge "$work/plan"
"$tiletune" plan "$work/space.yaml" --arch sm_90 --format json --threads 1 -q --cubin-cache "$work/plan/cubin" \
  > "$work/whole.json"
python3 - "$work/whole.json" "$work/sharded.txt" <<'PY'
import json, sys
whole = json.load(open(sys.argv[1]))
sharded = [line.strip() for line in open(sys.argv[2]) if line.strip()]
want = sorted(",".join(str(r["params"][k]) for k in ("TILE", "BLOCK_ROWS", "PAD")) for r in whole["rows"])
assert len(want) == 24, f"the whole plan has {len(want)} configs, not 24"
assert len(sharded) == len(set(sharded)), f"a config is in two shards: {sharded}"
assert sorted(sharded) == want, f"the shards hold {sorted(sharded)}, the space {want}"
s = whole["summary"]
assert s["compiled"] == 0 and s["cache_hits"] == 24, f"the merged cubin cache did not answer every config: {s}"
print(f"plan: 24 configs in 4 shards, each once; the merged cubin cache answered all 24")
PY

# 2. The replay: each rank replays its shard of the recording, exhaustively.
mpi "$src/scripts/mpi/tune_shards.sh" "$work/replay" tune "$src/configs/transpose.yaml" \
  --replay "$src/tests/data/landscapes/transpose.csv" --strategy exhaustive --size N=8192
total=0
for r in 0 1 2 3; do
  out=$work/replay/rank-$r.out
  grep -q "shard $r/4" "$out" || fail "rank $r did not replay shard $r/4: $(head -1 "$out")"
  recorded=$(sed -n 's/^N=8192 — \([0-9]*\) configs recorded.*/\1/p' "$out")
  [[ -n $recorded ]] || fail "rank $r printed no configs count"
  grep -q "evaluations $recorded of $recorded " "$out" || fail "rank $r did not evaluate all of its $recorded configs"
  total=$((total + recorded))
done
((total == 92)) || fail "the shards of the replay hold $total configs, the recording 92"
echo "replay: 92 configs of N=8192 in 4 shards, each rank evaluated all of its own"
