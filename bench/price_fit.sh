#!/usr/bin/env bash
# price_fit.sh — issue 72, item 2, on one GPU: what the scheduler's price (ensembleWork) must fit.
# Each ensemble of nn-fig1-full's 1-layer w 8 slice whose mixed head counts go through
# scaled_dot_product_attention one head count at a time, timed alone on cuda:0 beside its model
# price (`headlab-bench price --measure 1`); the same head counts as uniform ensembles forced
# through sdpa (HEADLAB_ATTENTION=sdpa), so that a mixed ensemble's time can be set against its
# parts'; then issue 57's two workloads' plans, each planned ensemble timed alone
# (bench/plan_check.sh, SIMULATE=0): the per-step floor over ensembles of every size.
# JSON lines in $OUT/price.jsonl and $OUT/plan.jsonl; bench/price_fit.py reads them.
# Environment: MEASURE_STEPS (200), SKIP_BUILD=1, PLAN (1: also run plan_check.sh).
set -uo pipefail
RESULTS_NAME=price.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
record_gpu
[[ "${SKIP_BUILD:-0}" == 1 && -x "$BENCH" ]] || build_core
MIXED="8:32,64,64;8:32,32,64;8:32,64;8:16,64;8:16,32,64;8:8,64;8:32,32,32,64,64,64;8:1,2,4,8,16,32,64"
UNIFORM="8:64;8:32;8:16;8:64,64,64;8:32,32,32;8:64,64,64,64,64,64"
log "mixed head counts through sdpa"
"$BENCH" price --preset nn-fig1-full --layers 1 --steps 700 --ensembles "$MIXED" \
    --measure 1 --device cuda:0 --measure-steps "${MEASURE_STEPS:-200}" >> "$RESULTS"
log "their head counts alone, forced through sdpa"
HEADLAB_ATTENTION=sdpa "$BENCH" price --preset nn-fig1-full --layers 1 --steps 700 \
    --ensembles "$UNIFORM" --measure 1 --device cuda:0 --measure-steps "${MEASURE_STEPS:-200}" |
    sed 's/^{"price": "ensemble"/{"price": "ensemble", "forced": "sdpa"/' >> "$RESULTS"
log "their head counts alone, as planned"
"$BENCH" price --preset nn-fig1-full --layers 1 --steps 700 --ensembles "$UNIFORM" \
    --measure 1 --device cuda:0 --measure-steps "${MEASURE_STEPS:-200}" >> "$RESULTS"
if [[ "${PLAN:-1}" == 1 ]]; then
    SKIP_BUILD=1 SIMULATE=0 bash "$ROOT/bench/plan_check.sh"
fi
