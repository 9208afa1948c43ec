#!/usr/bin/env bash
# Configures and builds tiletune into ./build (extra arguments go to cmake's configure step).
set -euo pipefail
cd "$(dirname "$0")/.."
cuda_root="${CUDA_PATH:-/usr/local/cuda}"
export PATH="$cuda_root/bin:$PATH"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDAToolkit_ROOT="$cuda_root" "$@" >/dev/null
cmake --build build --parallel "$(nproc)"
