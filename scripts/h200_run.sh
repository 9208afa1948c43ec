#!/usr/bin/env bash
# One call of the device tool on the H200: `scripts/h200_run.sh PHASE...`, run from the
# repository root with the stripped static build in .h200/ (see docs/development.md, "Running on an H200").
# Writes every log under $OUT, packs them into $OUT/logs.tar.gz (the device tool brings back at
# most 8 files) and prints a short table last.
#   tests   environment, NVML's limits, every `gpu` test (the corpus table into corpus.md)
#   energy  transpose and matmul 4096^3 sweeps with --energy; time and energy optima; a report
#   record  an exhaustive recording of .rec/$RECORD.yaml (default convolution_kt), as a landscape
#   sweeps  the transpose (N=8192) and reduction sweeps from a cold compile cache, twice each
#   multigpu  transpose (N=8192) and matmul (--budget 200) on one GPU (--device 0) and on all
#           (--devices all), cold compile cache each: wall time and winners per device
#   noise   transpose and reduction sweeps for each --max-noise in $NOISES
#   nvrtc   NVRTC's scaling over compile threads and processes (transpose)
#   mintime transpose N=8192 sweeps with --min-time in $MIN_TIMES
#   compilebound  convolution_kt (1404 configs) planned and tuned from a cold compile cache
#   scale   the large spaces of $SCALE_SPACES planned and tuned with auto (issue 23), and
#           bench_strategies with $STRATEGY_ARGS (CPU per proposal on this host)
#   interrupt  a matmul sweep's process group sent SIGINT after $INTERRUPT_AFTER s (default 8): its exit status,
#           what the cache kept (no fault from the signal), then the same command resuming
#   warmup  the transpose (N=8192) and reduction spaces swept with --warmup 0, 1 and 3: per-config
#           medians against --warmup 1 (the default) and each run's winner
#   guard   the planted skip_work space (a kernel that skips work for some configs and passes a
#           weak check): its suspect trials and best; then every shipped family tuned with
#           --budget $GUARD_BUDGET (default 60) into one cache and `best` with each headroom
#   ties    transpose (N=8192) and reduction swept twice into two caches, merged, and swept again
#           into a copy of the first (--force), $TIES_REPS times (default 1): each one's answers
#           and tie sets, `diff`s, and how far sweep 1's answer lies from the fastest in sweep 2
#           and in the rerun (ties.csv); $TIES_ARGS are added to every tune
#   indep   the reduction swept $INDEP_REPS times (default 4) into caches of their own, for each
#           NAME:ARGS of $INDEP_SETS (default "default:"): each sweep's answers, and the caches
#           themselves in $OUT/indep.tar.gz for an offline look at what decides the answer
#           (bench/tie_agreement.py); with $INDEP_TRANSPOSE set, the transpose (N=8192) too
#   l2      small problems (their working sets fit in L2) swept --hot: the fastest GB/s against
#           the copy ceiling, and how many trials the guard called suspect (the L2 factor)
#   kt      the Kernel Tuner scripts of tests/interchange/kernel_tuner through tiletune.kernel_tuner, then each
#           one's wall through the module against the same space through the CLI (run_gpu.sh)
#   ktcost  bench/kt_verify_cost.py at N=$KT_COST_N (default 8e8 floats): a Python verify's cost per
#           config, the check handed the answered buffers in shared memory, then (--all-buffers) every
#           buffer through the temp dir, as before issue 35
set -u
cd "$(dirname "$0")/.."
# The pack of an ordinary build (scripts/h200_pack.sh) holds libfmt in .h200/lib and the query
# library beside the tests; its binaries find the latter through build/ (their RPATH).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/.h200/lib:$PWD/.h200/tuner/src/query
[[ -e build ]] || ln -s .h200 build
OUT=${OUT:-/tmp/tiletune-out}
mkdir -p "$OUT/logs" /work
# The test binaries carry the source path of the machine that built them.
[[ -e /work/main ]] || ln -s "$PWD" /work/main
[[ -e build-h200 ]] || ln -s .h200 build-h200
B=build-h200
T=$B/tuner/tiletune
L=$OUT/logs
commit=$(cat .h200/commit.txt 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)
summary=$OUT/summary.txt
: > "$summary"

note() { printf '%s\n' "$*" >> "$summary"; }

# Runs one command with a time limit into $L/NAME.log and notes its status and wall time.
step() {
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  timeout "$limit" "$@" > "$L/$name.log" 2>&1
  local rc=$?
  note "$(printf '%-28s rc=%-3s %4ss  %s' "$name" "$rc" "$((SECONDS - start))" \
    "$(grep -E '^\[  (PASSED|FAILED)  \]|^\[  SKIPPED \]' "$L/$name.log" | tr '\n' ' ' | cut -c1-80)")"
}

phase_env() {
  {
    date -u +%FT%TZ; echo "commit $commit"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv
    nproc
  } > "$L/env.log" 2>&1
  $T devices >> "$L/env.log" 2>&1
}

phase_tests() {
  step nvml_idle 30 $T nvml --seconds 5
  for t in device/test_device_gpu device/test_occupancy_device worker/test_runner worker/test_inputs_gpu \
           worker/test_device_reference_gpu \
           tune/test_sweep_gpu launch/test_launcher_gpu cli/test_cli_gpu worker/test_energy_gpu \
           corpus/test_corpus_gpu; do
    [[ -x $B/tests/$t ]] || { note "$(basename "$t"): not built"; continue; }
    TILETUNE_CORPUS_RESULTS=$OUT/logs/corpus.md step "$(basename "$t")" 420 "$B/tests/$t"
  done
  grep -hE "1 GiB|setup" "$L/test_inputs_gpu.log" >> "$summary"
  grep -hE "copy of 1 GiB|throttled" "$L/test_runner.log" >> "$summary"
  grep -hE "reference of 8192" "$L/test_device_reference_gpu.log" >> "$summary"
}

phase_energy() {
  local db=/tmp/tt/energy.db
  rm -rf /tmp/tt && mkdir -p /tmp/tt
  step energy_transpose 300 $T tune configs/transpose.yaml --size N=8192 --energy --strategy exhaustive --db $db -q
  step energy_matmul 420 $T tune configs/matmul.yaml --size M=4096 --size N=4096 --size K=4096 --energy --budget 120 --db $db -q
  for objective in time energy edp; do
    $T best --db $db --objective $objective > "$L/best_$objective.log" 2>&1
  done
  $T show --db $db --format csv > "$L/energy_trials.csv" 2>&1
  mkdir -p "$OUT/report"
  $T report --db $db --kernel transpose -o "$OUT/report/transpose.html" > "$L/report.log" 2>&1
  $T report --db $db --kernel matmul --objective energy -o "$OUT/report/matmul-energy.html" >> "$L/report.log" 2>&1
  note "energy trials: $(($(wc -l < "$L/energy_trials.csv") - 1))"
}

phase_sweeps() {
  rm -rf /tmp/tt && mkdir -p /tmp/tt
  for space in transpose reduction; do
    for round in 1 2; do
      rm -rf /tmp/tt/cubin
      local start=$EPOCHREALTIME
      TILETUNE_CUBIN_CACHE=/tmp/tt/cubin timeout 300 $T tune configs/$space.yaml --db /tmp/tt/$space-$round.db \
        $([[ $space == transpose ]] && echo --size N=8192) > "$L/sweep_${space}_$round.log" 2>&1
      note "sweep $space round $round rc=$? wall $(python3 -c "print(round($EPOCHREALTIME - $start, 2))") s"
      grep -E "trials this run|^of them|s wall|^overhead|  setup|in the worker" "$L/sweep_${space}_$round.log" >> "$summary"
      $T best --db /tmp/tt/$space-$round.db >> "$L/sweep_${space}_$round.log" 2>&1
      $T show --db /tmp/tt/$space-$round.db --format csv > "$L/sweep_${space}_$round.csv" 2>&1
    done
  done
}

# One GPU against every GPU of the host (a machine of several GPUs: nvidia-h200-x2 or more).
phase_multigpu() {
  rm -rf /tmp/tt && mkdir -p /tmp/tt
  note "multigpu: $(nvidia-smi -L | wc -l) GPUs"
  for space in transpose matmul; do
    local size="" budget=""
    [[ $space == transpose ]] && size="--size N=8192"
    [[ $space == matmul ]] && budget="--budget 200"
    for devices in "--device 0" "--devices all"; do
      local tag=${devices##* }
      rm -rf /tmp/tt/cubin
      local start=$EPOCHREALTIME
      # shellcheck disable=SC2086 # the flags are words
      TILETUNE_CUBIN_CACHE=/tmp/tt/cubin timeout 540 $T tune configs/$space.yaml $size $budget $devices \
        --db "/tmp/tt/$space-$tag.db" -q > "$L/multigpu_${space}_$tag.log" 2>&1
      note "multigpu $space $devices rc=$? wall $(python3 -c "print(round($EPOCHREALTIME - $start, 2))") s"
      $T best --db "/tmp/tt/$space-$tag.db" >> "$L/multigpu_${space}_$tag.log" 2>&1
      grep -E "^device [0-9]+:|LEFT THE POOL|not tuned" "$L/multigpu_${space}_$tag.log" >> "$summary"
      $T best --db "/tmp/tt/$space-$tag.db" | tail -n +2 >> "$summary"
    done
  done
}

# An exhaustive recording of a space under .rec/ (carried: not in the repository yet), for the
# replay and the scaling model: RECORD=name (default convolution_kt).
phase_record() {
  local name=${RECORD:-convolution_kt} db=/tmp/tt/record.db
  rm -rf /tmp/tt && mkdir -p /tmp/tt
  step "record_$name" 480 $T tune ".rec/$name.yaml" --strategy exhaustive --max-time 0.1 --budget 420s --db $db -q
  local kernel
  kernel=$(grep -m1 '^kernel:' ".rec/$name.yaml" | awk '{print $2}')
  $T export --db $db --format landscape --kernel "$kernel" > "$L/$name.csv" 2>> "$L/record_$name.log"
  $T best --db $db >> "$L/record_$name.log" 2>&1
  tail -12 "$L/record_$name.log" >> "$summary"
}

# The stop rule's --max-noise against sweep time and the winner: transpose N=8192 and reduction,
# each from a cold compile cache, one fresh cache per value; every trial's samples exported.
phase_noise() {
  rm -rf /tmp/tt && mkdir -p /tmp/tt
  for noise in ${NOISES:-0.5 1 2 3 5}; do
    for space in transpose reduction; do
      rm -rf /tmp/tt/cubin
      local db=/tmp/tt/$space-$noise.db start=$EPOCHREALTIME
      TILETUNE_CUBIN_CACHE=/tmp/tt/cubin timeout 300 $T tune configs/$space.yaml --db $db --max-noise $noise \
        $([[ $space == transpose ]] && echo --size N=8192) > "$L/noise_${space}_$noise.log" 2>&1
      note "noise $noise $space rc=$? wall $(python3 -c "print(round($EPOCHREALTIME - $start, 2))") s"
      grep -E "^overhead|s wall" "$L/noise_${space}_$noise.log" | head -2 >> "$summary"
      $T best --db $db >> "$L/noise_${space}_$noise.log" 2>&1
      $T show --db $db --format csv > "$L/noise_${space}_$noise.csv" 2>&1
    done
  done
}

# NVRTC's scaling over threads and processes: transpose planned from a cold cache with 1 to 16
# threads, and as 16 processes of one thread (shards), and with -minimal.
phase_nvrtc() {
  rm -rf /tmp/nv && mkdir -p /tmp/nv
  cp kernels/transpose.cu /tmp/nv/
  sed -e 's#../kernels/transpose.cu#transpose.cu#' -e 's/^kernel: transpose/kernel: transpose_nv/' configs/transpose.yaml > /tmp/nv/a.yaml
  sed 's/^entry: transpose .*/&\noptions: [-minimal]/' /tmp/nv/a.yaml > /tmp/nv/m.yaml
  for threads in 1 4 8 16; do
    note "plan threads $threads: $($T plan -q --arch sm_90 --threads $threads --no-cubin-cache /tmp/nv/a.yaml 2>&1 | grep -o 'compiled.*')"
  done
  note "plan -minimal threads 16: $($T plan -q --arch sm_90 --threads 16 --no-cubin-cache /tmp/nv/m.yaml 2>&1 | grep -o 'compiled.*')"
  local start=$EPOCHREALTIME
  for i in $(seq 0 15); do $T plan -q --arch sm_90 --threads 1 --no-cubin-cache --shard $i/16 /tmp/nv/a.yaml > /tmp/nv/shard$i.log 2>&1 & done
  wait
  note "16 processes x 1 thread: wall $(python3 -c "print(round($EPOCHREALTIME - $start, 2))") s; $(grep -ho 'compiled [0-9]* configs' /tmp/nv/shard*.log | awk '{s+=$2} END {print s}') configs"
}

# A compile-bound space from a cold compile cache: convolution_kt (1404 configs) planned alone
# (compile wall) and tuned exhaustively with a short timing limit; its wall against NVRTC's
# time over the compile threads.
phase_compilebound() {
  rm -rf /tmp/tt && mkdir -p /tmp/tt
  local space=tests/corpus/convolution_kt.yaml
  note "plan convolution_kt: $($T plan -q --no-cubin-cache $space 2>&1 | grep -o 'compiled.*')"
  local start=$EPOCHREALTIME
  TILETUNE_CUBIN_CACHE=/tmp/tt/cubin timeout 420 $T tune $space --strategy exhaustive --max-time 0.1 \
    --db /tmp/tt/conv.db > "$L/compilebound_tune.log" 2>&1
  note "tune convolution_kt rc=$? wall $(python3 -c "print(round($EPOCHREALTIME - $start, 2))") s"
  grep -E "trials this run|s wall|^overhead|  setup|in the worker" "$L/compilebound_tune.log" >> "$summary"
}

# The transpose sweep (N=8192, cold compile cache) with shorter --min-time values: what the 5 ms
# default costs against what it buys (the trials are exported for the comparison).
phase_mintime() {
  rm -rf /tmp/tt && mkdir -p /tmp/tt
  for min_time in ${MIN_TIMES:-0.002 0.001}; do
    rm -rf /tmp/tt/cubin
    local db=/tmp/tt/mintime-$min_time.db start=$EPOCHREALTIME
    TILETUNE_CUBIN_CACHE=/tmp/tt/cubin timeout 300 $T tune configs/transpose.yaml --size N=8192 --db $db \
      --min-time $min_time > "$L/mintime_$min_time.log" 2>&1
    note "transpose --min-time $min_time rc=$? wall $(python3 -c "print(round($EPOCHREALTIME - $start, 2))") s"
    grep -E "s wall|^overhead|  setup|in the worker" "$L/mintime_$min_time.log" >> "$summary"
    $T best --db $db >> "$L/mintime_$min_time.log" 2>&1
    $T show --db $db --format csv > "$L/mintime_$min_time.csv" 2>&1
  done
}

# Only the tests named in $TESTS (basenames), for a rerun after a fix.
phase_retest() {
  for t in $TESTS; do
    step "$t" 420 "$(find $B/tests -name "$t" -type f | head -1)"
  done
}

# The libFuzzer harnesses, built here with clang (scripts/fuzz.sh's build) and carried in .fuzz/
# with the libyaml-cpp they link: FUZZ_JOBS jobs of FUZZ_RUNS executions each per harness, on the
# machine's cores (executions and findings summed from each job's final stats).
phase_fuzz() {
  local jobs=${FUZZ_JOBS:-12} runs=${FUZZ_RUNS:-100000}
  for harness in space expr; do
    local dir=/tmp/fuzz-$harness
    rm -rf $dir && mkdir -p $dir/corpus $dir/artifacts
    local dict=() extra=()
    [[ -f fuzz/$harness.dict ]] && dict=(-dict=fuzz/$harness.dict)
    [[ -d fuzz/seeds/$harness ]] && extra=(fuzz/seeds/$harness)
    local start=$SECONDS
    (cd $dir && LD_LIBRARY_PATH=$OLDPWD/.fuzz:$LD_LIBRARY_PATH timeout 300 "$OLDPWD/.fuzz/fuzz_$harness" \
      -jobs=$jobs -workers=$jobs -runs=$runs -max_total_time=200 "${dict[@]/#-dict=/-dict=$OLDPWD/}" -timeout=5 \
      -max_len=1048576 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=$dir/artifacts/ \
      corpus "$OLDPWD/configs" "$OLDPWD/tests/spaces/good" "$OLDPWD/tests/spaces/bad" ${extra[@]/#/$OLDPWD/}) \
      > "$L/fuzz_$harness.log" 2>&1
    local rc=$?
    cat $dir/fuzz-*.log > "$L/fuzz_${harness}_jobs.log" 2>/dev/null
    local execs
    execs=$(grep -h "stat::number_of_executed_units" $dir/fuzz-*.log | awk '{s+=$2} END {print s+0}')
    note "fuzz_$harness rc=$rc ${jobs} jobs, $((SECONDS - start)) s, executions $execs, artifacts $(ls $dir/artifacts | wc -l), crashes/timeouts/ooms: $(grep -hcE 'ERROR: libFuzzer|SUMMARY: |==ERROR' $dir/fuzz-*.log | awk '{s+=$1} END {print s+0}')"
    cp -r $dir/artifacts "$L/fuzz_${harness}_artifacts" 2>/dev/null
  done
}

# Issue 23: large spaces. Each space of $SCALE_SPACES planned (--sample $SCALE_SAMPLE, 10000: the counts and a
# sample of compiles) and tuned with `auto` and $SCALE_BUDGET (default: auto's own) from a cold
# compile cache; the overhead line of each sweep, the domain's count and the setup time go into
# the summary; each sweep's trials are exported as a recording for the replay equivalence.
phase_scale() {
  rm -rf /tmp/tt && mkdir -p /tmp/tt
  for space in ${SCALE_SPACES:-}; do
    local name start
    name=$(basename "$space" .yaml)
    start=$EPOCHREALTIME
    timeout 300 $T plan "$space" --sample "${SCALE_SAMPLE:-10000}" > "$L/scale_plan_$name.log" 2>&1
    note "plan $name rc=$? wall $(python3 -c "print(round($EPOCHREALTIME - $start, 2))") s"
    grep -iE "configs|valid|estimate" "$L/scale_plan_$name.log" | head -4 >> "$summary"
    start=$EPOCHREALTIME
    TILETUNE_CUBIN_CACHE=/tmp/tt/cubin-$name timeout 420 $T tune "$space" ${SCALE_BUDGET:+--budget $SCALE_BUDGET} \
      --db /tmp/tt/$name.db > "$L/scale_tune_$name.log" 2>&1
    note "tune $name rc=$? wall $(python3 -c "print(round($EPOCHREALTIME - $start, 2))") s"
    grep -E "trials this run|^strategy|s wall|^overhead|  setup|in the worker" "$L/scale_tune_$name.log" >> "$summary"
    $T export --db /tmp/tt/$name.db --format landscape --kernel "$(sed -n 's/^kernel: *//p' "$space" | head -1)" \
      > "$L/scale_$name.csv" 2>> "$L/scale_tune_$name.log"
  done
  if [[ -x $B/bench/bench_strategies && -n ${STRATEGY_ARGS:-} ]]; then
    step bench_strategies 400 $B/bench/bench_strategies $STRATEGY_ARGS --out "$L"
    tail -40 "$L/bench_strategies.log" >> "$summary"
  fi
}

phase_interrupt() {
  rm -rf /tmp/tt && mkdir -p /tmp/tt
  local db=/tmp/tt/interrupt.db rc
  local args=(tune configs/matmul.yaml --size M=2048 --size N=2048 --size K=2048 --budget 150 --db $db)
  # A group of its own, signalled as a whole, as a terminal's Ctrl-C is.
  setsid $T "${args[@]}" > "$L/interrupt_1.log" 2>&1 &
  local pid=$!
  sleep "${INTERRUPT_AFTER:-8}"
  kill -INT -- -$pid
  wait $pid
  rc=$?
  $T show --db $db --format csv > "$L/interrupt_1.csv" 2>&1
  note "interrupt: rc=$rc (130 expected); rows $(($(wc -l < "$L/interrupt_1.csv") - 1)), faults or timeouts $(grep -cE ',(runtime_fault|timeout),' "$L/interrupt_1.csv")"
  grep -E "interrupted|trials this run" "$L/interrupt_1.log" >> "$summary"
  timeout 300 $T "${args[@]}" > "$L/interrupt_2.log" 2>&1
  rc=$?
  $T show --db $db --format csv > "$L/interrupt_2.csv" 2>&1
  note "resume: rc=$rc; rows $(($(wc -l < "$L/interrupt_2.csv") - 1))"
  grep -E "trials this run|earlier" "$L/interrupt_2.log" | head -3 >> "$summary"
}

phase_warmup() {
  rm -rf /tmp/tt && mkdir -p /tmp/tt
  for space in transpose reduction; do
    for warmup in 1 0 3; do
      timeout 300 $T tune configs/$space.yaml --strategy exhaustive --confirm 0 --warmup $warmup \
        --db /tmp/tt/$space-w$warmup.db $([[ $space == transpose ]] && echo --size N=8192) \
        > "$L/warmup_${space}_$warmup.log" 2>&1
      note "warmup $space $warmup rc=$?"
      $T show --db /tmp/tt/$space-w$warmup.db --status ok --format csv > "$L/warmup_${space}_$warmup.csv" 2>&1
    done
    python3 scripts/compare_medians.py "$L/warmup_${space}_1.csv" "$L/warmup_${space}_0.csv" \
      "$L/warmup_${space}_3.csv" >> "$summary" 2>&1
  done
}

phase_guard() {
  rm -rf /tmp/tt && mkdir -p /tmp/tt
  local db=/tmp/tt/guard.db
  step guard_skip_work 300 $T tune tests/spaces/planted/skip_work.yaml --db $db --strategy exhaustive
  $T show --db $db --kernel skip_work --format csv > "$L/guard_skip_work.csv" 2>&1
  $T show --db $db --kernel skip_work --status suspect > "$L/guard_suspect.log" 2>&1
  note "skip_work: $(grep -c ',suspect,' "$L/guard_skip_work.csv") suspect of $(($(wc -l < "$L/guard_skip_work.csv") - 1)) trials"
  $T best --db $db --kernel skip_work > "$L/guard_best.log" 2>&1
  cat "$L/guard_best.log" >> "$summary"
  local families=/tmp/tt/families.db
  for space in configs/*.yaml; do
    timeout 300 $T tune "$space" --budget "${GUARD_BUDGET:-60}" --db $families -q > "$L/family_$(basename "$space" .yaml).log" 2>&1
    note "family $(basename "$space" .yaml) rc=$?"
  done
  $T best --db $families > "$L/families_best.log" 2>&1
  cat "$L/families_best.log" >> "$summary"
}

phase_l2() {
  rm -rf /tmp/tt && mkdir -p /tmp/tt
  local db=/tmp/tt/l2.db
  for spec in "vector_add N=1000003" "reduction N=1000003" "transpose N=1024"; do
    set -- $spec
    timeout 300 $T tune "configs/$1.yaml" --size "$2" --hot --db $db -q > "$L/l2_$1.log" 2>&1
    note "l2: tune $1 $2 --hot rc=$?"
  done
  $T show --db $db --format csv > "$L/l2_trials.csv" 2>&1
  python3 - "$L/l2_trials.csv" $db >> "$summary" <<'PY'
import csv, sqlite3, sys
rows = list(csv.DictReader(open(sys.argv[1])))
copy = sqlite3.connect(sys.argv[2]).execute("SELECT max(copy_gbps) FROM devices").fetchone()[0]
for kernel in sorted({r["kernel"] for r in rows}):
    mine = [r for r in rows if r["kernel"] == kernel]
    ok = [float(r["gbps"]) for r in mine if r["status"] == "ok" and r.get("gbps")]
    sus = sum(r["status"] == "suspect" for r in mine)
    top = max(ok) if ok else 0.0
    ratio = f"{top / copy:.2f}x the copy ({copy:.0f} GB/s)" if copy else "copy unknown"
    print(f"l2 hot {kernel}: max ok {top:.0f} GB/s = {ratio}; {sus} suspect of {len(mine)}")
PY
}

phase_ties() {
  # $TIES_REPS repetitions (default 1), each in its own folder; ties.csv gets a row per
  # repetition and problem, and the summary the answers and the standing answer's offsets.
  rm -rf /tmp/tt && mkdir -p /tmp/tt
  local rep
  for rep in $(seq 1 "${TIES_REPS:-1}"); do
    local d=/tmp/tt/$rep
    mkdir -p "$d"
    for round in 1 2; do
      timeout 300 $T tune configs/transpose.yaml --size N=8192 --db $d/ties-$round.db -q ${TIES_ARGS:-} > "$L/ties_${rep}_transpose_$round.log" 2>&1
      timeout 300 $T tune configs/reduction.yaml --db $d/ties-$round.db -q ${TIES_ARGS:-} > "$L/ties_${rep}_reduction_$round.log" 2>&1
    done
    $T merge $d/ties-merged.db $d/ties-1.db $d/ties-2.db > "$L/ties_${rep}_merge.log" 2>&1
    # A rerun into the same cache (--force measures every config again): the standing answer.
    cp $d/ties-1.db $d/ties-rerun.db
    timeout 300 $T tune configs/transpose.yaml --size N=8192 --db $d/ties-rerun.db -q --force ${TIES_ARGS:-} > "$L/ties_${rep}_rerun_transpose.log" 2>&1
    timeout 300 $T tune configs/reduction.yaml --db $d/ties-rerun.db -q --force ${TIES_ARGS:-} > "$L/ties_${rep}_rerun_reduction.log" 2>&1
    for c in 1 2 merged rerun; do $T best --db $d/ties-$c.db --format json > "$L/ties_${rep}_best_$c.json" 2>&1; done
    $T diff $d/ties-1.db $d/ties-2.db --fail-on changed-winner,untied > "$L/ties_${rep}_diff.log" 2>&1
    echo "rc=$?" >> "$L/ties_${rep}_diff.log"
    $T diff $d/ties-1.db $d/ties-rerun.db --fail-on changed-winner,untied > "$L/ties_${rep}_diff_rerun.log" 2>&1
    echo "rc=$?" >> "$L/ties_${rep}_diff_rerun.log"
    grep -h "finalists\|s wall" "$L/ties_${rep}_reduction_1.log" "$L/ties_${rep}_transpose_1.log" | sed "s/^/ties rep $rep: /" >> "$summary"
    python3 - "$rep" "$d" "$L" >> "$summary" <<'PY'
import csv, json, os, sqlite3, sys
rep, d, logs = sys.argv[1], sys.argv[2], sys.argv[3]
out = os.path.join(logs, "ties.csv")
def answers(name):
    return {(e["kernel"], e["problem"]): e for e in json.load(open(os.path.join(logs, f"ties_{rep}_best_{name}.json")))}
def times(name):
    db = sqlite3.connect(f"{d}/ties-{name}.db")
    rows = db.execute("SELECT k.name, t.problem, t.params, t.time_ms FROM trials t JOIN kernels k ON k.id = t.kernel_id "
                      "WHERE t.status = 'ok' AND t.time_ms > 0").fetchall()
    out = {}
    for k, p, params, ms in rows: out.setdefault((k, p), {})[params] = ms
    return out
a = {c: answers(c) for c in ("1", "2", "merged", "rerun")}
t2, tr = times("2"), times("rerun")
def offset(tab, key, params):  # params' median against the fastest of that cache, %
    row = tab.get(key, {})
    return 100.0 * (row[params] / min(row.values()) - 1.0) if params in row else float("nan")
new = not os.path.exists(out)
with open(out, "a", newline="") as f:
    w = csv.writer(f)
    if new: w.writerow(["rep", "kernel", "problem", "sweep1", "ties1", "sweep2", "ties2", "merged", "rerun", "ties_rerun",
                        "sweep1_answer_in_sweep2_pct", "sweep1_answer_in_rerun_pct"])
    for key in sorted(a["1"]):
        s1 = a["1"][key]["params"]
        row = [rep, key[0], key[1], s1, a["1"][key]["ties"], a["2"].get(key, {}).get("params"), a["2"].get(key, {}).get("ties"),
               a["merged"].get(key, {}).get("params"), a["rerun"].get(key, {}).get("params"), a["rerun"].get(key, {}).get("ties"),
               f"{offset(t2, key, s1):.2f}", f"{offset(tr, key, s1):.2f}"]
        w.writerow(row)
        same = "one answer" if len({row[3], row[5], row[7], row[8]}) == 1 else "differ"
        print(f"ties rep {rep} {key[0]} {key[1]}: {same}; sweep1 {s1} ({row[4]} ties) sweep2 {row[5]} ({row[6]}) "
              f"merged {row[7]} rerun {row[8]} ({row[9]}); sweep 1's answer +{row[10]} % in sweep 2, +{row[11]} % in the rerun")
PY
  done
}

# What a tune log says of its tie pass ("(N configs, N measured together, N trials)") and its wall.
tie_pass_and_wall() {
  grep -oE '\([0-9]+ configs, [0-9]+ measured together[^)]*\)|^[0-9.]+ s wall' "$1" | tr '\n' ' '
}

phase_indep() {
  rm -rf /tmp/ti && mkdir -p /tmp/ti
  local set name args i
  for set in ${INDEP_SETS:-default:}; do
    name=${set%%:*}; args=${set#*:}; args=${args//,/ }
    for i in $(seq 1 "${INDEP_REPS:-4}"); do
      local start=$SECONDS
      timeout 300 $T tune configs/reduction.yaml --db /tmp/ti/$name-$i.db -q $args > "$L/indep_${name}_$i.log" 2>&1
      local rc=$?
      if [[ -n ${INDEP_TRANSPOSE:-} ]]; then
        timeout 300 $T tune configs/transpose.yaml --size N=8192 --db /tmp/ti/$name-$i.db -q $args \
          > "$L/indep_${name}_${i}_transpose.log" 2>&1
        note "indep $name $i transpose: $(tie_pass_and_wall "$L/indep_${name}_${i}_transpose.log")"
      fi
      note "indep $name $i reduction: $(tie_pass_and_wall "$L/indep_${name}_$i.log")"
      $T best --db /tmp/ti/$name-$i.db --format json > "$L/indep_${name}_${i}_best.json" 2>&1
      python3 - "$L/indep_${name}_${i}_best.json" "$name $i rc=$rc $((SECONDS - start))s" >> "$summary" <<'PY'
import json, sys
for e in json.load(open(sys.argv[1])):
    print(f"indep {sys.argv[2]} {e['problem']}: {e['params']} ({e['ties']} ties, spread {e['tie_spread_pct']:.2f} %)")
PY
    done
  done
  tar -czf "$OUT/indep.tar.gz" -C /tmp/ti .
}

phase_kt() {
  OUT=$L TILETUNE_CLI=$PWD/$T PYTHONPATH=$PWD/python KT_TIMEOUT=${KT_TIMEOUT:-120} \
    step kt_scripts 450 bash tests/interchange/kernel_tuner/run_gpu.sh
  note "kernel_tuner scripts: $(grep -c ' PASS ' "$L/kt/summary.txt" 2>/dev/null || echo 0) passed of $(wc -l < "$L/kt/summary.txt" 2>/dev/null || echo 0)"
  cat "$L/kt/summary.txt" "$L/kt/timing.txt" >> "$summary" 2>/dev/null
}

phase_ktcost() {
  local mode
  for mode in fixed all-buffers; do
    local flag=""
    [[ $mode == all-buffers ]] && flag=--all-buffers
    TILETUNE_CLI=$PWD/$T PYTHONPATH=$PWD/python step "ktcost_$mode" 420 python3 bench/kt_verify_cost.py \
      "${KT_COST_N:-8e8}" $flag
    tail -5 "$L/ktcost_$mode.log" >> "$summary"
  done
}

phase_env
for phase in "$@"; do "phase_$phase"; done
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs $( [[ -d $OUT/report ]] && echo report)
rm -rf "$OUT/logs" "$OUT/report"
echo "commit $commit"
cat "$summary"
