#!/usr/bin/env bash
# Runs the Kernel Tuner scripts of tests/interchange/kernel_tuner/scripts/ on a GPU machine through
# tiletune.kernel_tuner, then times each script's tuning through the module against the same
# space through the CLI. Run from the repository root:
#
#   TILETUNE_CLI=$PWD/build/tuner/tiletune PYTHONPATH=python bash tests/interchange/kernel_tuner/run_gpu.sh [NAME...]
#
# Pass 1 (acceptance): each script (or the NAMEs given) runs with a time limit ($KT_TIMEOUT s,
#   default 300); its output goes to $OUT/kt/NAME.log and a line "NAME PASS|FAIL SECONDS" to
#   $OUT/kt/summary.txt as it goes (PASS: exit status 0; a script whose GPU library is missing,
#   cupy, says "skipped" in its log and passes).
# Pass 2 (timing): each script runs once more with TILETUNE_KT_WORKDIR set (the module keeps its
#   space there) and TILETUNE_CLI pointing at a wrapper that logs every tiletune command and its
#   wall time; then the last `tune` the module ran is run again by hand on the same space.yaml
#   with the same options (strategy, budget, samples, energy) and a fresh --db. A space that calls
#   back into the script (verify: command, a relay to a socket of the finished script) is run
#   without that command (and its command_buffers): its GPU comparisons stay, the Python check is left out. Lines
#   "NAME module_wall tiletune_in_module cli_wall status" go to $OUT/kt/timing.txt. For a script
#   that tunes several times, the CLI column is its last space only. KT_TIMING=0 skips this pass.
# Pass 3 (KT_VERIFY_COST_N=8e8, off by default): bench/kt_verify_cost.py with that N, the check
#   handed only the answered buffers (command_buffers) and then every buffer (--all-buffers, as
#   before issue 35); both tables go to $OUT/kt/verify_cost.txt.
# The table of passes 1 and 2 is printed at the end. Exit status: 0 when every script passed pass 1.
set -u

OUT=${OUT:-/tmp/tiletune-out}
KT_TIMEOUT=${KT_TIMEOUT:-300}
PYTHON=${PYTHON:-python3}
HERE=tests/interchange/kernel_tuner
DIR=$OUT/kt
mkdir -p "$DIR"
: > "$DIR/summary.txt"
: > "$DIR/timing.txt"

if [[ ! -d $HERE/scripts ]]; then
  echo "run_gpu.sh: run it from the repository root ($HERE/scripts not found)" >&2
  exit 2
fi
if [[ -z ${TILETUNE_CLI:-} || ! -x ${TILETUNE_CLI:-} ]]; then
  echo "run_gpu.sh: TILETUNE_CLI must name the built tiletune executable" >&2
  exit 2
fi
REAL_CLI=$(cd "$(dirname "$TILETUNE_CLI")" && pwd)/$(basename "$TILETUNE_CLI")
export PYTHONPATH=${PYTHONPATH:-python} PYTHONUNBUFFERED=1
unset TILETUNE_KT_DRY_RUN TILETUNE_KT_WORKDIR
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kt-gpu.XXXXXX")
export TILETUNE_CUBIN_CACHE=${TILETUNE_CUBIN_CACHE:-$WORK/cubin}

if (($# > 0)); then
  names=("$@")
else
  names=()
  for f in "$HERE"/scripts/[!_]*.py; do names+=("$(basename "$f" .py)"); done  # _*.py: helpers, not scripts
fi

{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv 2>&1
  "$REAL_CLI" devices 2>&1
  "$PYTHON" -c 'import sys, numpy; print(sys.version.split()[0], "numpy", numpy.__version__)' 2>&1
} > "$DIR/environment.log"

# Pass 1: the acceptance run.
failed=0
for name in "${names[@]}"; do
  start=$EPOCHREALTIME
  timeout "$KT_TIMEOUT" "$PYTHON" "$HERE/scripts/$name.py" > "$DIR/$name.log" 2>&1
  rc=$?
  wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  if ((rc == 0)); then status=PASS; else status=FAIL; failed=$((failed + 1)); fi
  ((rc == 124)) && echo "run_gpu.sh: timed out after $KT_TIMEOUT s" >> "$DIR/$name.log"
  echo "$name $status $wall" >> "$DIR/summary.txt"
  echo "$name $status $wall"
done

# Pass 2: the module's wall against the CLI's on the same space.
WRAP=$WORK/bin/tiletune
mkdir -p "$WORK/bin"
cat > "$WRAP" <<EOF
#!/usr/bin/env bash
# Logs each tiletune command (its argv, quoted) and its wall time, then answers as tiletune does.
start=\$EPOCHREALTIME
"$REAL_CLI" "\$@"
rc=\$?
wall=\$(awk -v a="\$start" -v b="\$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
printf '%s\t%s\t%s\n' "\$wall" "\$rc" "\$(printf '%q ' "\$@")" >> "\$KT_CLI_LOG"
exit \$rc
EOF
chmod +x "$WRAP"

names_timed=("${names[@]}")
[[ ${KT_TIMING:-1} == 0 ]] && names_timed=()
for name in "${names_timed[@]}"; do
  workdir=$WORK/space-$name
  log=$WORK/cli-$name.log
  rm -rf "$workdir" && mkdir -p "$workdir"
  : > "$log"
  start=$EPOCHREALTIME
  KT_CLI_LOG=$log TILETUNE_CLI=$WRAP TILETUNE_KT_WORKDIR=$workdir \
    timeout "$KT_TIMEOUT" "$PYTHON" "$HERE/scripts/$name.py" > "$DIR/$name.timing.log" 2>&1
  rc=$?
  module_wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  inside=$(awk -F'\t' '$3 ~ /^tune / { s += $1 } END { printf "%.1f", s }' "$log")
  last=$(awk -F'\t' '$3 ~ /^tune / { line = $3 } END { print line }' "$log")
  cli_wall=-
  if [[ -z $last ]]; then
    note="no tune (skipped or failed before tuning)"
  else
    # The same command on a fresh result cache, the check command left out.
    eval "argv=($last)"
    space=${argv[1]}
    cli_space=${space%.yaml}.cli.yaml
    grep -vE '^  command(_buffers)?: ' "$space" > "$cli_space"
    argv[1]=$cli_space
    for ((i = 0; i < ${#argv[@]}; i++)); do
      [[ ${argv[i]} == --db ]] && argv[i + 1]=$WORK/cli-$name.db
    done
    rm -f "$WORK/cli-$name.db"
    start=$EPOCHREALTIME
    timeout "$KT_TIMEOUT" "$REAL_CLI" "${argv[@]}" > "$DIR/$name.cli.log" 2>&1
    cli_rc=$?
    cli_wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    note="script rc=$rc, cli rc=$cli_rc: tune SPACE ${argv[*]:2}"
  fi
  printf '%s %s %s %s %s\n' "$name" "$module_wall" "$inside" "$cli_wall" "$note" >> "$DIR/timing.txt"
  cp "$log" "$DIR/$name.commands.tsv"
done

echo
echo "Kernel Tuner scripts through tiletune.kernel_tuner ($(wc -l < "$DIR/summary.txt") scripts, $failed failed)"
printf '%-18s %-6s %8s | %12s %14s %9s  %s\n' script status wall_s module_wall_s tiletune_in_s cli_wall_s notes
while read -r name status wall; do
  t=$(awk -v n="$name" '$1 == n { $1 = ""; print; exit }' "$DIR/timing.txt")
  read -r mw inside cw rest <<< "$t"
  printf '%-18s %-6s %8s | %12s %14s %9s  %s\n' "$name" "$status" "$wall" "${mw:--}" "${inside:--}" "${cw:--}" \
    "${rest:-}"
done < "$DIR/summary.txt"
if [[ -n ${KT_VERIFY_COST_N:-} ]]; then
  : > "$DIR/verify_cost.txt"
  for mode in "" --all-buffers; do
    timeout 3600 "$PYTHON" bench/kt_verify_cost.py "$KT_VERIFY_COST_N" $mode >> "$DIR/verify_cost.txt" 2>&1 ||
      echo "kt_verify_cost.py $mode: exit status $?" >> "$DIR/verify_cost.txt"
  done
  cat "$DIR/verify_cost.txt"
fi
rm -rf "$WORK"
((failed == 0))
