#!/usr/bin/env bash
# One shard of a tiletune run per MPI rank (Open MPI; any launcher that sets OMPI_COMM_WORLD_*,
# PMIX_RANK or SLURM_PROCID works too):
#
#   mpirun -np 8 scripts/mpi/tune_shards.sh OUT tune configs/matmul.yaml --budget 10%
#   mpirun -np 4 --hostfile hosts scripts/mpi/tune_shards.sh OUT plan tests/corpus/convolution_kt.yaml
#   scripts/mpi/tune_shards.sh --merge OUT          # after mpirun: one result cache, one cubin cache
#
# Under a Slurm job array (scripts/slurm/tune_array.sbatch) the array index is the rank.
# Rank r of N runs `tiletune COMMAND ... --shard auto` (shard r/N of every problem's configs) with
# its own result cache OUT/rank-r.db (tune), its own cubin cache OUT/cubin.r and its output in
# OUT/rank-r.out; on a host with several GPUs, tune gets --device LOCAL_RANK (one GPU per rank)
# unless --device is given. OUT must be on a filesystem every rank sees (or be gathered to one
# place before --merge). --merge runs `tiletune merge OUT/merged.db OUT/rank-*.db` and
# scripts/merge_cubin_caches.sh OUT/cubin OUT/cubin.*. TILETUNE (default: tiletune on PATH)
# names the binary. A rerun (a resume after a failed rank, or more budget) seeds each rank's
# cubin cache from OUT/cubin and answers from its rank-r.db what it measured before.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tiletune=${TILETUNE:-tiletune}
usage="usage: scripts/mpi/tune_shards.sh OUT (tune|plan) ARGS...  |  scripts/mpi/tune_shards.sh --merge OUT"

if [[ ${1:-} == --merge ]]; then
  out=${2:?$usage}
  shopt -s nullglob
  dbs=("$out"/rank-*.db)
  caches=("$out"/cubin.*)
  if ((${#dbs[@]})); then "$tiletune" merge "$out/merged.db" "${dbs[@]}"; fi
  if ((${#caches[@]})); then "$here/merge_cubin_caches.sh" "$out/cubin" "${caches[@]}"; fi
  exit 0
fi

out=${1:?$usage}
command=${2:?$usage}
shift 2
# The same order as `--shard auto`: a Slurm array task (its index from the lowest), an MPI rank, a step's task.
if [[ -n ${SLURM_ARRAY_TASK_ID:-} ]]; then
  rank=$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-0}))
else
  rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${SLURM_PROCID:-}}}
fi
local_rank=${OMPI_COMM_WORLD_LOCAL_RANK:-${SLURM_LOCALID:-0}}
if [[ -z $rank ]]; then
  echo "tune_shards.sh: not started by mpirun, srun or a Slurm array (no OMPI_COMM_WORLD_RANK, PMIX_RANK," \
    "SLURM_PROCID or SLURM_ARRAY_TASK_ID)" >&2
  exit 2
fi
mkdir -p "$out"
# A rerun starts from what every shard compiled last time (OUT/cubin, made by --merge).
if [[ -d $out/cubin ]]; then "$here/merge_cubin_caches.sh" "$out/cubin.$rank" "$out/cubin" > /dev/null; fi
extra=(--shard auto --cubin-cache "$out/cubin.$rank")
case $command in
  tune)
    extra+=(--db "$out/rank-$rank.db")
    [[ " $* " == *" --device "* ]] || extra+=(--device "$local_rank")
    ;;
  plan) ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
exec "$tiletune" "$command" "$@" "${extra[@]}" > "$out/rank-$rank.out"
