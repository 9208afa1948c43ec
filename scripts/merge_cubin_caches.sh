#!/usr/bin/env bash
# Merges cubin cache directories (one per shard, rank or host) into one, for the compile spread
# of `tiletune plan --shard` / `tune --shard`:
#   scripts/merge_cubin_caches.sh INTO SOURCE...
# The cache is content-addressed (<key[0:2]>/<key>.cubin + .meta, or .fail; the key hashes the
# source, options, NVRTC version, arch and entry), so two caches never disagree on what a key
# means: an entry INTO already has is kept, one it lacks is copied. Each file is copied to a
# temp name in its target directory and renamed into place, every .cubin before any .meta (the
# order the cache itself writes), so a tiletune reading INTO during the merge sees an entry
# whole or not at all. Temp files of interrupted writes (*.tmp.*) are skipped. Sources are only read.
set -euo pipefail
if (($# < 2)); then
  echo "usage: scripts/merge_cubin_caches.sh INTO SOURCE..." >&2
  exit 2
fi
into=$1
shift
mkdir -p "$into"
copied=0
for suffix in cubin fail meta; do  # cubins first: once a meta is in place, its cubin is too
  for source in "$@"; do
    [[ -d $source ]] || { echo "merge_cubin_caches: $source is not a directory" >&2; exit 1; }
    while IFS= read -r -d '' file; do
      rel=${file#"$source"/}
      [[ $rel =~ ^[0-9a-f]{2}/[0-9a-f]{32}\.$suffix$ ]] || continue  # only cache entries
      [[ -e $into/$rel ]] && continue
      mkdir -p "$into/${rel%/*}"
      tmp="$into/$rel.tmp.merge.$$"
      cp "$file" "$tmp"
      mv -f "$tmp" "$into/$rel"
      copied=$((copied + 1))
    done < <(find "$source" -mindepth 2 -maxdepth 2 -type f -name "*.$suffix" -print0)
  done
done
echo "merge_cubin_caches: $copied files copied into $into"
