#!/usr/bin/env bash
# gpu_multi.sh — does a sweep use every GPU it is given? On a machine with 2+ GPUs: the same
# 8-ensemble sweep on cuda:0 alone and on cuda:0,cuda:1, plus the CLI on "all". JSON lines to
# $OUT/multi.jsonl.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/bench-out}"; mkdir -p "$OUTDIR"
RESULTS="$OUTDIR/multi.jsonl"
bash "$ROOT/scripts/build-core.sh" headlab-bench > "$OUTDIR/build.log" 2>&1 || { tail -30 "$OUTDIR/build.log"; exit 1; }
BENCH="$ROOT/build-core/bench/headlab-bench"
nvidia-smi --query-gpu=index,name --format=csv,noheader | sed 's/^/{"gpu": "/; s/$/"}/' | tee -a "$RESULTS"
ARGS=(sweep --widths 24,48,96,128,160,192,256,384 --lrs 1e-4,1e-3 --heads 2 --steps "${STEPS:-3000}" --max-ensemble 2)
"$BENCH" "${ARGS[@]}" --device cuda:0 | tee -a "$RESULTS"
"$BENCH" "${ARGS[@]}" --device cuda:0,cuda:1 | tee -a "$RESULTS"
nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader | sed 's/^/{"after": "/; s/$/"}/' | tee -a "$RESULTS"
