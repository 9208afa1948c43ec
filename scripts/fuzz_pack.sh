#!/usr/bin/env bash
# Packs the fuzz harnesses built by scripts/fuzz.sh (build-fuzz/fuzz/fuzz_*), with the shared
# libraries they need beyond glibc and the corpora of build-fuzz/corpus, into .fuzz.tar.xz (ignored by git) for scripts/h200_fuzz.sh
# on another machine.
set -euo pipefail
cd "$(dirname "$0")/.."
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/.fuzz/lib"
for f in build-fuzz/fuzz/fuzz_*; do
  [[ -x $f && ! -d $f ]] || continue
  cp "$f" "$stage/.fuzz/"
  for lib in $(ldd "$f" | awk '$3 ~ /^\// && $1 !~ /^(libc|libm|libpthread|libdl|librt|ld-linux)/ {print $3}'); do
    cp -Ln "$lib" "$stage/.fuzz/lib/" 2>/dev/null || true
  done
done
# The corpora grown so far (here, or brought back from an earlier run and unpacked here), so a
# run there starts where the last one stopped.
[[ -d build-fuzz/corpus ]] && cp -r build-fuzz/corpus "$stage/.fuzz/corpus"
git rev-parse --short HEAD > "$stage/.fuzz/commit.txt"
tar -cJf .fuzz.tar.xz -C "$stage" .fuzz
ls -la .fuzz.tar.xz
