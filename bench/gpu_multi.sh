#!/usr/bin/env bash
# gpu_multi.sh — does a sweep use every GPU it is given? On a machine with 2+ GPUs: the same
# 8-ensemble sweep on cuda:0 alone and on cuda:0,cuda:1, one ensemble at a time per card and then
# the default of up to 4 at once per card. JSON lines to $OUT/multi.jsonl.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/bench-out}"; mkdir -p "$OUTDIR"
RESULTS="$OUTDIR/multi.jsonl"
bash "$ROOT/scripts/build-core.sh" headlab-bench > "$OUTDIR/build.log" 2>&1 || { tail -30 "$OUTDIR/build.log"; exit 1; }
BENCH="$ROOT/build-core/bench/headlab-bench"
nvidia-smi --query-gpu=index,name --format=csv,noheader | sed 's/^/{"gpu": "/; s/$/"}/' | tee -a "$RESULTS"
ARGS=(sweep --widths 24,48,96,128,160,192,256,384 --lrs 1e-4,1e-3 --heads 2 --steps "${STEPS:-3000}" --max-ensemble 2)
for c in 1 4; do
    "$BENCH" "${ARGS[@]}" --device cuda:0 --concurrent "$c" | tee -a "$RESULTS"
    "$BENCH" "${ARGS[@]}" --device cuda:0,cuda:1 --concurrent "$c" | tee -a "$RESULTS"
done
nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader | sed 's/^/{"after": "/; s/$/"}/' | tee -a "$RESULTS"
