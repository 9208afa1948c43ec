#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ with clang in build-fuzz/ (instrumented: coverage,
# ASan, UBSan) and runs each one for a bounded time (both at once on two cores or more), seeded
# with the shipped spaces, the good and the malformed test spaces and fuzz/seeds. Any crash,
# sanitizer report, input slower than 5 s (-timeout) or heavier than 2 GiB (-rss_limit_mb) stops
# the run with a non-zero status and leaves the input in build-fuzz/artifacts/.
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
cmake --build "$build" --target fuzz_space fuzz_expr fuzz_python

mkdir -p "$build/artifacts"

limit=(-max_total_time="$seconds")
[[ -n "${FUZZ_RUNS:-}" ]] && limit=(-runs="$FUZZ_RUNS")
seeds=(configs tests/spaces/good tests/spaces/bad)
# One harness is one process on one core: with two cores or more both run at once (each for the
# whole time, its output kept in build-fuzz/fuzz-HARNESS.log and printed when it ends), so 60 s
# each takes 60 s of wall time, not 120.
fuzz_one() {
  local harness="$1" corpus="$build/corpus/$1" extra=() dict=()
  mkdir -p "$corpus"
  [[ -d "fuzz/seeds/$harness" ]] && extra=("fuzz/seeds/$harness")
  [[ -f "fuzz/$harness.dict" ]] && dict=(-dict="fuzz/$harness.dict")
  echo "fuzz: $harness (${limit[*]}, -timeout=5, -max_len=1048576)"
  "$build/fuzz/fuzz_$harness" "${limit[@]}" "${dict[@]}" -timeout=5 -max_len=1048576 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/artifacts/$harness-" "$corpus" "${seeds[@]}" "${extra[@]}"
}
harnesses=(space expr python)
if (($(nproc) < 2)); then
  for harness in "${harnesses[@]}"; do fuzz_one "$harness"; done
  exit 0
fi
pids=()
for harness in "${harnesses[@]}"; do
  fuzz_one "$harness" >"$build/fuzz-$harness.log" 2>&1 &
  pids+=($!)
done
failed=()
for i in "${!harnesses[@]}"; do
  wait "${pids[$i]}" || failed+=("${harnesses[$i]}")
  cat "$build/fuzz-${harnesses[$i]}.log"
done
if ((${#failed[@]})); then
  echo "fuzz: ${failed[*]} stopped with a finding or an error (see above and $build/artifacts/)" >&2
  exit 1
fi
