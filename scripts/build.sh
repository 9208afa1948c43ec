#!/usr/bin/env bash
# Configures tiletune into ./build and builds what the main job needs: the `tiletune` CLI (its
# workers are the same program) and the query library that programs link. `--all` builds every
# target (the tests, benchmarks, examples and fuzz checks too): scripts/test.sh passes it. Other
# arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(--target tiletune tiletune_query)
configure=()
for arg in "$@"; do
  if [[ $arg == --all ]]; then targets=(); else configure+=("$arg"); fi
done
# In CI (CI=true) a warning of the libraries or the CLI (-Wall -Wextra) fails the build, so that no
# new one lands; a user's build only prints it.
[[ ${CI:-} == true ]] && configure=(-DTILETUNE_WARNINGS_AS_ERRORS=ON ${configure[@]+"${configure[@]}"})
cuda_root="${CUDA_PATH:-/usr/local/cuda}"
export PATH="$cuda_root/bin:$PATH"
# -O2 with line tables (-g1): backtraces and profiles name file and line, and a cold build on 2
# cores is a third faster than with full debug info (-g). Pass your own, e.g.
# -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g", to override.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDAToolkit_ROOT="$cuda_root" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  ${configure[@]+"${configure[@]}"} >/dev/null
cmake --build build --parallel "$(nproc)" ${targets[@]+"${targets[@]}"}
