#!/usr/bin/env bash
# Builds tiletune and runs its tests. Tests labelled `gpu` skip (not pass) without a CUDA device.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh --all "$@"
ctest --test-dir build --output-on-failure --parallel "$(nproc)" --timeout 900
