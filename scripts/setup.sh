#!/usr/bin/env bash
# Installs what tiletune needs on a fresh Debian/Ubuntu machine (run as root or with sudo).
# The CUDA toolkit is not a Debian package we can pick for you: it must already be there.
set -euo pipefail

usage="usage: scripts/setup.sh [--tests]
  (none)   what building and running tiletune needs: compilers, CMake, yaml-cpp, SQLite, zlib and the
           header libraries, GoogleTest (the build builds the tests too), rsvg for report PNGs
  --tests  also what only the tests need: PyYAML (YAML interop), jsonschema (the space schema test),
           clang and libFuzzer (scripts/fuzz.sh), chromium, node and playwright-core (the report's
           browser test), pytest and pandas (the Python package's tests), Open MPI's mpirun
           (test_mpi_shards)"
with_tests=0
for arg in "$@"; do
  case "$arg" in
    --tests) with_tests=1 ;;
    -h|--help) echo "$usage"; exit 0 ;;
    *) echo "setup: unknown argument '$arg'" >&2; echo "$usage" >&2; exit 2 ;;
  esac
done

packages=(cmake ninja-build g++ pkg-config libyaml-cpp-dev libsqlite3-dev sqlite3 libfmt-dev
          libcli11-dev nlohmann-json3-dev libxxhash-dev zlib1g-dev libgtest-dev libgmock-dev libbenchmark-dev
          librsvg2-bin fonts-dejavu-core python3)   # rsvg and fonts: `tiletune report --png`; zlib: import-kt-cache
if ((with_tests)); then
  packages+=(python3-yaml                    # test_yaml_interop reads every shipped space with PyYAML
             python3-jsonschema              # test_space_schema checks the spaces against docs/space.schema.json
             clang libclang-rt-dev           # libFuzzer and the sanitizers, for scripts/fuzz.sh
             chromium python3-venv python3-pytest python3-pandas  # browser test, Python package tests
             python3-numpy                   # tiletune.kernel_tuner and its tests
             openmpi-bin)                    # mpirun for test_mpi_shards (scripts/mpi/tune_shards.sh)
  # node and npm for the browser test: any nodejs of 18 or newer will do (Debian's, or one already there).
  command -v node >/dev/null 2>&1 || packages+=(nodejs)
  command -v npm >/dev/null 2>&1 || packages+=(npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all Debian packages present"
fi

cuda_root="${CUDA_PATH:-${CUDAToolkit_ROOT:-/usr/local/cuda}}"
if [[ ! -f "$cuda_root/include/nvrtc.h" || ! -f "$cuda_root/include/cuda_occupancy.h" ]]; then
  cat >&2 <<MSG
setup: the CUDA toolkit was not found at $cuda_root (no include/nvrtc.h or include/cuda_occupancy.h).
       tiletune needs the toolkit's headers, NVRTC and the driver stub (CUDA 12.0 or newer).
       Install it from NVIDIA (https://developer.nvidia.com/cuda-downloads) and either put it at
       /usr/local/cuda or set CUDA_PATH=/path/to/cuda, then run this script again.
MSG
  exit 1
fi
echo "setup: CUDA toolkit at $cuda_root ($("$cuda_root/bin/nvcc" --version 2>/dev/null | tail -1 || echo 'nvcc not found'))"

# playwright-core for the browser test of `tiletune report`, pinned by its package-lock.json. It
# drives Debian's chromium (installed above): no browser is downloaded.
browser_test="$(cd "$(dirname "$0")/.." && pwd)/tests/report/browser"
if ((with_tests)) && [[ ! -d "$browser_test/node_modules/playwright-core" ]]; then
  echo "setup: npm ci in tests/report/browser (playwright-core)"
  (cd "$browser_test" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
fi
