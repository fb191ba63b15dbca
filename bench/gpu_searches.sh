#!/usr/bin/env bash
# gpu_searches.sh — several boundary searches side by side on one GPU machine, each through
# bench/gpu_search.sh under the same cap, their outputs packed into one archive (a device call
# brings back a few files only).
#
#   HEADLAB_SEARCH_CAP_S=480 bash bench/gpu_searches.sh docs/data/issue77 oos-boundary nn-head-dim-boundary
#
# Each NAME is bench/sessions/NAME.yaml, its state carried between sessions in DATA/NAME.export.yaml.gz.
# Writes $OUT/searches.tgz (per search: the export, summary.txt and .csv, run-log.txt, status.txt,
# driver.txt) and prints each summary.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/out/gpu_searches-out}"
DATA="$1"
shift
WORK="$OUTDIR/work"
mkdir -p "$WORK"
bash "$ROOT/scripts/build-core.sh" headlab-cli > "$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log"; exit 1; }
for name in "$@"; do
    mkdir -p "$WORK/$name"
    (OUT="$WORK/$name" HEADLAB_SEARCH_NAME="$name" HEADLAB_SEARCH_SESSION="bench/sessions/$name.yaml" \
        HEADLAB_SEARCH_DATA="$DATA" HEADLAB_SEARCH_DEVICE="${HEADLAB_SEARCH_DEVICE:-cuda}" \
        bash "$ROOT/bench/gpu_search.sh" > "$WORK/$name/driver.txt" 2>&1 || echo "$name: gpu_search.sh ended with $?") &
done
wait
for name in "$@"; do echo "== $name"; cat "$WORK/$name/summary.txt" 2>/dev/null || tail -5 "$WORK/$name/driver.txt"; done
tar czf "$OUTDIR/searches.tgz" -C "$WORK" .
rm -rf "$WORK"
