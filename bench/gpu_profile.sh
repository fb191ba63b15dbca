#!/usr/bin/env bash
# gpu_profile.sh — where a training step's GPU time goes: builds headlab-bench on the GPU machine and
# runs `headlab-bench profile` (Kineto/CUPTI) on one run and on whole-width ensembles of the grid.
# Results: JSON lines in $OUT/profile.jsonl (or ./bench-out/), one chrome trace per shape if TRACE=1.
# Environment: STEPS (profiled steps, default 200), SKIP_BUILD=1.
set -uo pipefail
RESULTS_NAME=profile.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
STEPS="${STEPS:-200}"

record_gpu
[[ "${SKIP_BUILD:-0}" == 1 ]] || build_core
trace=()
[[ "${TRACE:-0}" == 1 ]] && trace=(--trace "$OUTDIR/trace")
log "one run: 24x1, 384x1, 384x12"
"$BENCH" profile --device cuda:0 --shapes 24x1,384x1,384x12 --runs 1 --steps "$STEPS" "${trace[@]}" | tee -a "$RESULTS"
log "a width's 50 runs (5 head counts x 10 lr)"
"$BENCH" profile --device cuda:0 --shapes 24x3,96x3,384x3 --runs 50 --mix 1,2,3,6,12 --steps "$STEPS" "${trace[@]}" | tee -a "$RESULTS"
log "one head count, 10 runs"
"$BENCH" profile --device cuda:0 --shapes 24x3,384x3 --runs 10 --steps "$STEPS" | tee -a "$RESULTS"
log "done: $RESULTS"
