#!/usr/bin/env bash
# classroom_check.sh — trains the classroom preset on ten seeds on CPU cores (issue 22,
# docs/FINDINGS.md) and prints bench/classroom_check.py's per-seed verdict. On the GPU machine's
# 16 cores it runs 8 shards of 2 threads at once (--device cpu); each run takes one ensemble of
# its own (--max-ensemble 1), as on a laptop. Results: $OUT/classroom-check/runs.csv.
#
#   bash bench/classroom_check.sh [SHARDS]      default 8 (one per 2 cores)
set -euo pipefail
RESULTS_NAME=classroom-check.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
shards="${1:-8}"
[[ -x "$CLI" ]] || build_core
work="$ROOT/build-core/classroom-check"
mkdir -p "$work"
session="$work/classroom-check.yaml"
[[ -f "$session" ]] || cp "$ROOT/bench/sessions/classroom-check.yaml" "$session"
log "training 40 runs in $shards CPU shards"
for ((i = 1; i <= shards; i++)); do
    "$CLI" run "$session" --device cpu --threads 2 --max-ensemble 1 --shard "$i/$shards" \
        > "$work/shard-$i.log" 2>&1 &
done
wait
"$CLI" merge "$session" >&2
mkdir -p "$work/csv" "$OUTDIR/classroom-check"
"$CLI" export-csv "$session" -o "$work/csv" >&2
cp "$work/csv/runs.csv" "$OUTDIR/classroom-check/"
python3 "$ROOT/bench/classroom_check.py" "$work/csv" | tee "$OUTDIR/classroom-check/verdict.txt"
