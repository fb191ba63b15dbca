#!/usr/bin/env bash
# gpu_ablation.sh — what each of the core's GPU optimisations is worth, all in one run on one card:
# every measurement with everything on, then with one switched off at a time (environment switches
# read by the core: HEADLAB_ATTENTION=sdpa, HEADLAB_FUSED_ADAM=0, HEADLAB_DIRECT_GRADIENTS=0,
# HEADLAB_CUDA_GRAPHS=0), and the grid through the scheduler with 1 and 4 ensembles at once.
# Results: JSON lines in $OUT/ablation.jsonl (or ./bench-out/). SKIP_BUILD=1 reuses build-core.
set -uo pipefail
RESULTS_NAME=ablation.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
tag() { sed "s/^{/{\"variant\": \"$1\", /" | tee -a "$RESULTS"; }

record_gpu
[[ "${SKIP_BUILD:-0}" == 1 ]] || build_core
log "checks: cpu vs cuda (ATen Adam vs fused), ensemble vs alone"
"$BENCH" devices --steps 100 | tag all
"$BENCH" equivalence --device cuda:0 --steps 200 | tail -1 | tag all

variants=("all:" "sdpa:HEADLAB_ATTENTION=sdpa" "aten-adam:HEADLAB_FUSED_ADAM=0" "autograd-grads:HEADLAB_DIRECT_GRADIENTS=0")
for v in "${variants[@]}"; do
    name="${v%%:*}" envs="${v#*:}"
    log "variant $name"
    env $envs "$BENCH" single --device cuda:0 --shapes "${SHAPES:-24x1,96x3,384x1,384x12}" --steps 1000 | tag "$name"
    env $envs "$BENCH" ensemble --device cuda:0 --shapes 24x3,96x3,384x3 --runs 50 --mix 1,2,3,6,12 --steps 300 | tag "$name"
done
GRID=(--device cuda:0 --widths 24,48,96,192,384 --heads 1,2,3,6,12 --lrs 1e-4,2e-4,3e-4,5e-4,7e-4,1e-3,1.5e-3,2e-3,3e-3,5e-3)
for c in 1 4; do
    log "grid slice through the scheduler, $c ensembles at once"
    "$BENCH" sweep "${GRID[@]}" --steps "${GRID_STEPS:-1000}" --concurrent "$c" | tag all
done
log "TF32 grid slice"
HEADLAB_BENCH_TF32=1 "$BENCH" sweep "${GRID[@]}" --steps "${GRID_STEPS:-1000}" --concurrent 4 | tag tf32
log "profile of the m = 384 ensemble"
"$BENCH" profile --device cuda:0 --shapes 384x3 --runs 50 --mix 1,2,3,6,12 --steps 100 | tag all
log "done: $RESULTS"
