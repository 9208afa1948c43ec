#!/usr/bin/env bash
# Writes inputs of 1 MiB in the shapes that were slow or unbounded (issue 12) into DIR, then runs
# each RUNNER (fuzz/run_inputs.cpp linked with a harness) on all of them with a 5 s limit each:
#   fuzz/large_inputs.sh DIR RUNNER...
# A long name, many distinct names, a long sum, deep nesting, runs of commas and brackets, a
# long value list, many params, many keys.
set -euo pipefail
dir="$1"
shift
mkdir -p "$dir"
mib=1048576
set +o pipefail  # the generators are cut short by head on purpose
head -c $mib /dev/zero | tr '\0' 'A' >"$dir/long-name"
seq -f 'v%.0f' 1 140000 | paste -sd+ | head -c $mib >"$dir/many-names"
head -c $mib /dev/zero | tr '\0' '(' >"$dir/deep-nesting"
{ yes '1+' | tr -d '\n' | head -c $((mib - 1)); echo 1; } >"$dir/long-sum"
head -c $mib /dev/zero | tr '\0' ',' >"$dir/commas"
head -c $mib /dev/zero | tr '\0' '[' >"$dir/brackets"
{ printf 'kernel: k\nsource: ../kernels/transpose.cu\nentry: k\nparams:\n  P: ['; seq 1 150000 | paste -sd, | head -c $((mib - 80)); echo ']'; } >"$dir/long-list"
{ printf 'params:\n'; seq -f '  P%.0f: [1]' 1 80000 | head -c $((mib - 10)); } >"$dir/many-params"
seq -f 'k%.0f: 1' 1 120000 | head -c $mib >"$dir/many-keys"
set -o pipefail
status=0
for runner in "$@"; do
  echo "$(basename "$runner"):"
  "$runner" --limit 5 "$dir"/* || status=1
done
exit $status
