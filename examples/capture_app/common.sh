# What the scripts here share, sourced first (`source "$(dirname "$0")/common.sh" "$@"`): their
# first two arguments, BUILD_DIR (where tiletune was built; default: build) and WORK_DIR (for the
# caches, captures and logs; default: a new folder under /tmp named after the script), and the
# paths they run. require_built FILE... stops with a message naming what to build.
script="$(basename "$0" .sh)"
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "${1:-$here/../../build}" && pwd)"
work="${2:-$(mktemp -d "/tmp/tiletune-$script-XXXXXX")}"
mkdir -p "$work"
tiletune="$build/tuner/tiletune"
app="$build/examples/capture_app/capture_app"
require_built() {
  local f
  for f in "$@"; do
    [[ -x $f ]] || { echo "$script.sh: $f is not built (cmake --build $build --target tiletune capture_app)" >&2; exit 1; }
  done
}
