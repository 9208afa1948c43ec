#!/usr/bin/env bash
# The capture round trip on a GPU (docs/guides/capture.md):
#   1. run capture_app with TILETUNE_CAPTURE='app_*': a fresh cache has no tuned config, so each
#      kernel runs with its space's default, and each launch is captured (inputs, outputs, space);
#   2. tune every capture with `tiletune tune CAPTURE/space.yaml` (its inputs, its outputs as the check);
#   3. run capture_app again: each kernel now gets its tuned config from the cache (match exact);
#   then print the speedup of each kernel.
#
#   examples/capture_app/round_trip.sh [BUILD_DIR] [WORK_DIR]
#     BUILD_DIR  where tiletune was built (default: build); needs tuner/tiletune and
#                examples/capture_app/capture_app
#     WORK_DIR   for the cache, the captures and the logs (default: a new folder under /tmp)
set -euo pipefail
source "$(dirname "$0")/common.sh" "$@"
require_built "$tiletune" "$app"
export TILETUNE_DB="$work/cache.db"   # a cache of its own: the first run has nothing tuned

echo "== 1. the application, capturing its launches (defaults: nothing tuned yet)"
TILETUNE_CAPTURE='app_*' TILETUNE_CAPTURE_DIR="$work/captures" "$app" --spaces "$here/spaces" | tee "$work/before.txt"
ls -1 "$work/captures"

echo "== 2. tuning each capture"
for space in "$work"/captures/*/space.yaml; do
  "$tiletune" tune "$space" --db "$TILETUNE_DB" --top 3
done

echo "== 3. the application again (tuned configs from the cache)"
"$app" --spaces "$here/spaces" | tee "$work/after.txt"

echo "== speedup (mean time of a launch, before / after)"
times() { awk '{ for (i = 1; i <= NF; ++i) if ($i == "ms/launch") print $1, $(i - 1) }' "$1"; }
join <(times "$work/before.txt" | sort) <(times "$work/after.txt" | sort) |
  awk '{ printf "%-20s %9.4f ms -> %9.4f ms  %.2fx\n", $1, $2, $3, $2 / $3 }' | tee "$work/speedup.txt"
if grep -q "WRONG" "$work/before.txt" "$work/after.txt"; then echo "a result was wrong" >&2; exit 1; fi
if grep -v "match=exact" "$work/after.txt" | grep -q "^app_"; then
  echo "round_trip.sh: a kernel did not get its tuned config at match level exact" >&2; exit 1
fi
echo "work folder: $work"
