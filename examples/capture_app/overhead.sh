#!/usr/bin/env bash
# What online tuning adds to the application's calls, on a GPU (docs/guides/capture.md, "Online tuning"):
#   1. a cache where online tuning has tried every config (share 1), so nothing is left to try;
#   2. on that cache, the same launches with online tuning off and on (nothing to try: what is
#      left is its bookkeeping per call), alternated twice, LAUNCHES launches per kernel;
#   3. a fresh cache at the default share (5 %) for LONG launches per kernel: the trials' share of
#      the wall time over a longer run, against the same run with online tuning off.
#
#   examples/capture_app/overhead.sh [BUILD_DIR] [WORK_DIR] [LAUNCHES] [LONG]
set -euo pipefail
source "$(dirname "$0")/common.sh" "$@"
launches="${3:-20000}"
long="${4:-100000}"
require_built "$app"

echo "== 1. every config tried (online, share 1)"
TILETUNE_DB="$work/tuned.db" TILETUNE_ONLINE='app_*' TILETUNE_ONLINE_SHARE=1 \
  "$app" --spaces "$here/spaces" --iterations 200 | tee "$work/tuned.txt"
echo "== 2. nothing left to try: off and on, $launches launches per kernel"
for round in 1 2; do
  TILETUNE_DB="$work/tuned.db" "$app" --spaces "$here/spaces" --iterations "$launches" | tee "$work/off_$round.txt"
  TILETUNE_DB="$work/tuned.db" TILETUNE_ONLINE='app_*' \
    "$app" --spaces "$here/spaces" --iterations "$launches" | tee "$work/on_$round.txt"
done
echo "== 3. a fresh cache at the default share, $long launches per kernel: off, then on"
TILETUNE_DB="$work/fresh_off.db" "$app" --spaces "$here/spaces" --iterations "$long" | tee "$work/fresh_off.txt"
TILETUNE_DB="$work/fresh_on.db" TILETUNE_ONLINE='app_*' \
  "$app" --spaces "$here/spaces" --iterations "$long" | tee "$work/fresh_on.txt"
if grep -q "WRONG" "$work"/*.txt; then echo "a result was wrong" >&2; exit 1; fi
echo "== per kernel: ms/launch off and on (nothing to try), and over the long run"
ms() { awk '{ for (i = 1; i <= NF; ++i) if ($i == "ms/launch") print $1, $(i - 1) }' "$1" | sort; }
paste <(ms "$work/off_1.txt") <(ms "$work/on_1.txt") <(ms "$work/off_2.txt") <(ms "$work/on_2.txt") |
  awk '{ printf "%-20s off %.5f / %.5f ms, on %.5f / %.5f ms: %+.2f us per call\n", $1, $2, $6, $4, $8,
         1000 * (($4 + $8) - ($2 + $6)) / 2 }' | tee "$work/overhead.txt"
join <(ms "$work/fresh_off.txt") <(ms "$work/fresh_on.txt") |
  awk '{ printf "%-20s fresh cache, %s launches: off %.5f ms, on %.5f ms per launch\n", $1, "'"$long"'", $2, $3 }' |
  tee -a "$work/overhead.txt"
grep "online:" "$work/fresh_on.txt" | tee -a "$work/overhead.txt"
echo "work folder: $work"
