#!/usr/bin/env bash
# ctest's test_report_browser: a fixture cache from recorded landscapes, the report of it, and the
# page in headless Chromium (browser_test.mjs). WORK is the build folder for its files.
set -euo pipefail
work="$1"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$work"
if [[ ! -d "$here/node_modules/playwright-core" ]]; then
  echo "playwright-core is not installed in $here: run ./scripts/setup.sh (it runs npm ci there)" >&2
  exit 1
fi
rm -f "$work/fixture.db"*
"$REPORT_FIXTURE" "$work/fixture.db" "$TILETUNE_SOURCE_DIR/tests/data/landscapes/transpose.csv" --energy
"$TILETUNE_CLI" report --db "$work/fixture.db" -o "$work/report.html"
node "$here/browser_test.mjs" "$work/report.html" "$work/report.png"
