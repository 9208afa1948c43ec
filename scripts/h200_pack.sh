#!/usr/bin/env bash
# Packs what the GPU machine runs into .h200.tar.xz (ignored by git; name it in the device call's
# carry): the tiletune executable and query library, every gpu test and what they load, stripped,
# in build/'s layout, plus the shared libraries of the ordinary build that the GPU machine's image
# lacks (libfmt) under lib/. On the machine: `tar xJf .h200.tar.xz && ln -sfn .h200 build`, then
# `LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/.h200/lib bash scripts/h200_run.sh tests kt`.
# A -DTILETUNE_STATIC_DEPS=ON build (docs/development.md, "Running on an H200") needs no lib/.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/.h200/lib"
files=(tuner/tiletune)
for f in "$build"/tuner/src/query/libtiletune-query.so*; do files+=("${f#"$build"/}"); done
for t in device/test_device_gpu device/test_occupancy_device worker/test_runner worker/test_inputs_gpu \
         worker/test_device_reference_gpu worker/libtiletune_test_reference_library.so tune/test_sweep_gpu \
         launch/test_launcher_gpu cli/test_cli_gpu worker/test_energy_gpu corpus/test_corpus_gpu; do
  [[ -e $build/tests/$t ]] && files+=("tests/$t")
done
# The capture round trip's application (examples/capture_app/round_trip.sh).
[[ -e $build/examples/capture_app/capture_app ]] && files+=(examples/capture_app/capture_app)
# The strategy benchmark: its CPU per proposal is quoted for the GPU machine's host.
[[ -e $build/bench/bench_strategies ]] && files+=(bench/bench_strategies)
# The kernels against the copy, CUB and cuBLAS (scripts/h200_issue38.sh).
[[ -e $build/bench/bench_kernels ]] && files+=(bench/bench_kernels)
for f in "${files[@]}"; do
  mkdir -p "$stage/.h200/$(dirname "$f")"
  cp -P "$build/$f" "$stage/.h200/$f"
  [[ -L $build/$f ]] || strip --strip-unneeded "$stage/.h200/$f" 2>/dev/null || true
done
for lib in $(ldd "$build/tuner/tiletune" | awk '/libfmt/ {print $3}'); do cp -L "$lib" "$stage/.h200/lib/"; done
git rev-parse --short HEAD > "$stage/.h200/commit.txt"
tar -cJf .h200.tar.xz -C "$stage" .h200
ls -la .h200.tar.xz
