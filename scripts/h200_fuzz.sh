#!/usr/bin/env bash
# Runs the fuzz harnesses on a machine with many cores (the GPU machine: 16), each in its own
# number of libFuzzer -fork workers for SECONDS, from binaries built here by scripts/fuzz.sh and
# packed by scripts/fuzz_pack.sh (.fuzz.tar.xz, carried, with the corpora of build-fuzz/corpus),
# which grow in .fuzz/corpus/. Writes each harness's log and a summary
# table (executions, final coverage, findings): the logs are packed into $OUT/fuzz-logs.tar.gz and
# the grown corpora into $OUT/fuzz-corpus.tar.gz (the device tool brings back at most 8 files).
#   scripts/h200_fuzz.sh SECONDS HARNESS=WORKERS...   e.g. 500 t1=3 cache=3 space=1
set -u
cd "$(dirname "$0")/.."
seconds=$1
shift
OUT=${OUT:-/tmp/tiletune-out}
logs=/tmp/tiletune-fuzz/fuzz
rm -rf "$logs"
mkdir -p "$logs" "$OUT" /work
[[ -e /work/main ]] || ln -s "$PWD" /work/main  # the harnesses read seeds and kernels from the source path
tar xJf .fuzz.tar.xz
export LD_LIBRARY_PATH=$PWD/.fuzz/lib
summary=$OUT/fuzz-summary.txt
: > "$summary"
declare -A seeds_of=([space]="configs tests/spaces/good tests/spaces/bad" [expr]="configs tests/spaces/good tests/spaces/bad"
  [python]="configs tests/spaces/good tests/spaces/bad" [t1]="tests/interchange/t1" [kt_cache]="tests/interchange/kt")
pids=()
names=()
counts=()
for spec in "$@"; do
  harness=${spec%%=*} workers=${spec#*=}
  corpus=.fuzz/corpus/$harness
  mkdir -p "$corpus" "$logs/artifacts"
  extra=()
  [[ -d fuzz/seeds/$harness ]] && extra+=("fuzz/seeds/$harness")
  read -r -a seeds <<<"${seeds_of[$harness]:-}"
  dict=()
  [[ -f fuzz/$harness.dict ]] && dict=(-dict="$PWD/fuzz/$harness.dict")
  max_len=65536
  [[ $harness == space || $harness == expr || $harness == python ]] && max_len=1048576
  (cd "$logs" && exec "$OLDPWD/.fuzz/fuzz_$harness" -fork="$workers" -ignore_crashes=0 -ignore_timeouts=0 \
     -ignore_ooms=0 -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -max_len="$max_len" "${dict[@]}" \
     -artifact_prefix="$logs/artifacts/$harness-" "$OLDPWD/$corpus" "${seeds[@]/#/$OLDPWD/}" "${extra[@]/#/$OLDPWD/}" \
     > "$logs/$harness.log" 2>&1) &
  pids+=($!)
  names+=("$harness")
  counts+=("$workers")
done
status=0
printf '%-10s %7s %12s %8s %s\n' harness workers executions cov result >> "$summary"
for i in "${!pids[@]}"; do
  wait "${pids[$i]}"
  rc=$?
  h=${names[$i]}
  last=$(grep -E '^#[0-9]+: cov:' "$logs/$h.log" | tail -1)
  execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")
  cov=$(sed -E 's/.*cov: ([0-9]+).*/\1/' <<<"$last")
  result="clean"
  ((rc != 0)) && { result="FINDING (rc $rc)"; status=1; }
  printf '%-10s %7s %12s %8s %s\n' "$h" "${counts[$i]}" "${execs:-?}" "${cov:-?}" "$result" >> "$summary"
done
tar czf "$OUT/fuzz-logs.tar.gz" -C "$(dirname "$logs")" fuzz
tar czf "$OUT/fuzz-corpus.tar.gz" -C .fuzz corpus  # unpack into build-fuzz/ to continue
cat "$summary"
exit $status
