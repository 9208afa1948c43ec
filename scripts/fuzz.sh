#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ with clang in build-fuzz/ (instrumented: coverage,
# ASan, UBSan) and runs each one for a bounded time, seeded with the shipped spaces, the good and
# the malformed test spaces and fuzz/seeds. Any crash, sanitizer report, input slower than 5 s
# (-timeout) or heavier than 2 GiB (-rss_limit_mb) stops the run with a non-zero status and
# leaves the input in build-fuzz/artifacts/.
#
#   scripts/fuzz.sh                 60 s per harness (what .ci/run does)
#   scripts/fuzz.sh 600             10 minutes each
#   FUZZ_RUNS=1000000 scripts/fuzz.sh   a number of executions each instead of a time
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
build=build-fuzz

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DCUDAToolkit_ROOT="${CUDA_PATH:-/usr/local/cuda}" "${launcher[@]}" \
  -DTILETUNE_ENABLE_FUZZING=ON -DTILETUNE_ENABLE_TESTING=OFF -DTILETUNE_ENABLE_BENCHMARKS=OFF \
  -DTILETUNE_BUILD_EXAMPLES=OFF -DTILETUNE_QUERY_SHARED=OFF >/dev/null
cmake --build "$build" --target fuzz_space fuzz_expr

# Inputs of 1 MiB in the shapes that were slow or unbounded (issue 12): a long name, many distinct
# names, a long sum, deep nesting, long lists and maps, a run of commas. Each harness runs every
# one once, with the same 5 s limit, before fuzzing.
large="$build/large"
mkdir -p "$large"
mib=1048576
set +o pipefail  # the generators below are cut short by head on purpose
head -c $mib /dev/zero | tr '\0' 'A' >"$large/long-name"
seq -f 'v%.0f' 1 140000 | paste -sd+ | head -c $mib >"$large/many-names"
head -c $mib /dev/zero | tr '\0' '(' >"$large/deep-nesting"
{ yes '1+' | tr -d '\n' | head -c $((mib - 1)); echo 1; } >"$large/long-sum"
head -c $mib /dev/zero | tr '\0' ',' >"$large/commas"
head -c $mib /dev/zero | tr '\0' '[' >"$large/brackets"
{ printf 'kernel: k\nsource: ../kernels/transpose.cu\nentry: k\nparams:\n  P: ['; seq 1 150000 | paste -sd, | head -c $((mib - 80)); echo ']'; } >"$large/long-list"
{ printf 'params:\n'; seq -f '  P%.0f: [1]' 1 80000 | head -c $((mib - 10)); } >"$large/many-params"
seq -f 'k%.0f: 1' 1 120000 | head -c $mib >"$large/many-keys"
set -o pipefail
for harness in space expr; do
  echo "fuzz: $harness on the 1 MiB inputs of $large"
  log="$build/large-$harness.log"
  status=0
  "$build/fuzz/fuzz_$harness" -timeout=5 -rss_limit_mb=2048 -artifact_prefix="$build/artifacts/$harness-large-" \
    "$large"/* >"$log" 2>&1 || status=$?
  grep -E '^Executed|ERROR|SUMMARY' "$log" || true
  if ((status)); then
    echo "fuzz: $harness failed on a 1 MiB input (the whole output: $log)" >&2
    exit 1
  fi
done

limit=(-max_total_time="$seconds")
[[ -n "${FUZZ_RUNS:-}" ]] && limit=(-runs="$FUZZ_RUNS")
seeds=(configs tests/spaces/good tests/spaces/bad)
for harness in space expr; do
  corpus="$build/corpus/$harness"
  mkdir -p "$corpus" "$build/artifacts"
  extra=()
  [[ -d "fuzz/seeds/$harness" ]] && extra=("fuzz/seeds/$harness")
  echo "fuzz: $harness (${limit[*]}, -timeout=5, -max_len=1048576)"
  "$build/fuzz/fuzz_$harness" "${limit[@]}" -timeout=5 -max_len=1048576 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/artifacts/$harness-" "$corpus" "${seeds[@]}" "${extra[@]}"
done
