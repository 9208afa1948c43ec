#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ with clang in build-fuzz/ (instrumented: coverage,
# ASan, UBSan) and runs each one for a bounded time, all at once (one process each; on two cores
# they share them), each seeded with the files of its format that ship (spaces, T1 files, Kernel
# Tuner caches, recordings, result caches) and fuzz/seeds/HARNESS. Any crash, sanitizer report,
# input slower than 5 s (-timeout) or heavier than 2 GiB (-rss_limit_mb) stops the run with a
# non-zero status and leaves the input in build-fuzz/artifacts/.
#
#   scripts/fuzz.sh                      60 s per harness (what .ci/run does)
#   scripts/fuzz.sh 600                  10 minutes each
#   FUZZ_RUNS=1000000 scripts/fuzz.sh    a number of executions each instead of a time
#   FUZZ_HARNESSES="t1 cache" scripts/fuzz.sh   only these (names as in fuzz/fuzz_NAME.cpp)
#   FUZZ_JOBS=4 scripts/fuzz.sh 600      each harness in 4 worker processes (libFuzzer -fork:
#                                        FUZZ_RUNS then counts per worker); a machine with many
#                                        cores runs 10^6 executions of each in minutes
#   FUZZ_NO_BUILD=1 scripts/fuzz.sh      run binaries already in build-fuzz/fuzz (a copy elsewhere)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
build=build-fuzz
all_harnesses=(space expr python t1 kt_cache recording cache npy)
read -r -a harnesses <<<"${FUZZ_HARNESSES:-${all_harnesses[*]}}"

if [[ -z "${FUZZ_NO_BUILD:-}" ]]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  # -O1 with line tables and assertions on: crash reports name file and line, and the
  # instrumented compile of the stages the harnesses link takes about a quarter less time than
  # with -O2 -g (four of its files on this machine: 36 s against 49 s).
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ -DCUDAToolkit_ROOT="${CUDA_PATH:-/usr/local/cuda}" "${launcher[@]}" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DTILETUNE_ENABLE_FUZZING=ON -DTILETUNE_ENABLE_TESTING=OFF -DTILETUNE_ENABLE_BENCHMARKS=OFF \
    -DTILETUNE_BUILD_EXAMPLES=OFF -DTILETUNE_QUERY_SHARED=OFF >/dev/null
  cmake --build "$build" --target "${harnesses[@]/#/fuzz_}"
fi

mkdir -p "$build/artifacts"

limit=(-max_total_time="$seconds")
[[ -n "${FUZZ_RUNS:-}" ]] && limit=(-runs="$FUZZ_RUNS")
jobs=()
[[ -n "${FUZZ_JOBS:-}" ]] && jobs=(-fork="$FUZZ_JOBS" -ignore_crashes=0)

# The files of each harness's format that ship, besides fuzz/seeds/HARNESS.
seeds_of() {
  case "$1" in
    space | expr | python) echo configs tests/spaces/good tests/spaces/bad ;;
    t1) echo tests/interchange/t1 ;;
    kt_cache) echo tests/interchange/kt ;;
    recording | cache | npy) echo ;;  # fuzz/seeds/HARNESS only: a few small files
  esac
}

# The largest input each harness tries: 1 MiB for the text parsers (the space loader's own
# limit is 4 MiB), 64 KiB for those whose every input runs a whole import, replay check or
# SQLite open, so that their executions go to many shapes rather than a few large ones (large
# inputs of every kind have their own test, test_fuzz_large_inputs and the hostile tests).
max_len_of() {
  case "$1" in
    space | expr | python) echo 1048576 ;;
    *) echo 65536 ;;
  esac
}

fuzz_one() {
  local harness="$1" corpus="$build/corpus/$1" extra=() dict=() seeds max_len
  read -r -a seeds <<<"$(seeds_of "$harness")"
  max_len=$(max_len_of "$harness")
  mkdir -p "$corpus"
  [[ -d "fuzz/seeds/$harness" ]] && extra=("fuzz/seeds/$harness")
  [[ -f "fuzz/$harness.dict" ]] && dict=(-dict="fuzz/$harness.dict")
  echo "fuzz: $harness (${limit[*]} ${jobs[*]}, -timeout=5, -max_len=$max_len)"
  "$build/fuzz/fuzz_$harness" "${limit[@]}" "${jobs[@]}" "${dict[@]}" -timeout=5 -max_len="$max_len" \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/artifacts/$harness-" "$corpus" \
    "${seeds[@]}" "${extra[@]}"
}
# Every harness at once (each for the whole time, its output kept in build-fuzz/fuzz-HARNESS.log
# and printed when it ends), so 60 s each takes 60 s of wall time however many there are.
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
