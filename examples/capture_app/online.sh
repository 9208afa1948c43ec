#!/usr/bin/env bash
# Online tuning on a GPU (docs/guides/capture.md, "Online tuning"), after
# round_trip.sh has made the offline reference:
#   1. capture_app with TILETUNE_ONLINE='app_*' on a fresh cache, every trial allowed (share 1):
#      it tries each config of both kernels on its own calls; its second line per kernel says how
#      many, the time the trials took and the config kept;
#   2. capture_app again, online off: the configs online tuning recorded, at match level exact;
#   3. the overhead at the default share (5 %) on a fresh cache: the trials' time over the wall time.
#
#   examples/capture_app/online.sh [BUILD_DIR] [WORK_DIR]
set -euo pipefail
source "$(dirname "$0")/common.sh" "$@"
require_built "$app"

echo "== 1. online tuning, every trial allowed"
TILETUNE_DB="$work/online.db" TILETUNE_ONLINE='app_*' TILETUNE_ONLINE_SHARE=1 \
  "$app" --spaces "$here/spaces" --iterations 200 | tee "$work/online.txt"
echo "== 2. the next start, online off: what online tuning recorded"
TILETUNE_DB="$work/online.db" "$app" --spaces "$here/spaces" | tee "$work/online_after.txt"
echo "== 3. the overhead at the default share (5 %), fresh cache, 3000 calls per kernel"
TILETUNE_DB="$work/share.db" TILETUNE_ONLINE='app_*' \
  "$app" --spaces "$here/spaces" --iterations 3000 | tee "$work/share.txt"
TILETUNE_DB="$work/off.db" "$app" --spaces "$here/spaces" --iterations 3000 | tee "$work/off.txt"
if grep -q "WRONG" "$work"/*.txt; then echo "a result was wrong" >&2; exit 1; fi
echo "work folder: $work"
