#!/usr/bin/env bash
# gpu_products.sh — issue 56's profile: at the shapes furthest from their targets (addition 384×12
# one run, nn w 1 at 1, 3 and 5 layers with 8 runs, text head-progression one run in TF32), where a
# training step's GPU time goes. Two profiles of each, through `headlab-bench profile`/`preset
# --profile 1`:
#   1. as HeadLab trains (CUDA graphs on): kernels a step, GPU time, and the GPU's idle time between
#      kernels (span of the kernels minus their union);
#   2. with graphs off (HEADLAB_CUDA_GRAPHS=0) and --products 1: each matrix product (op and input
#      shapes) with its kernels' time, its achieved TFLOP/s and that rate's share of the card's dense
#      peak at its precision (FP32 67, TF32 494.7 TFLOP/s on H100/H200 SXM, NVIDIA's data sheets).
# JSON lines in $OUT/products.jsonl; a summary on stdout. Environment: STEPS (200), SKIP_BUILD=1.
# Needs .deps carried.
set -uo pipefail
RESULTS_NAME=products.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
STEPS="${STEPS:-200}"
record_gpu
[[ "${SKIP_BUILD:-0}" == 1 && -x "$BENCH" ]] || build_core
for graphs in 1 0; do
    products=$((1 - graphs))
    export HEADLAB_CUDA_GRAPHS=$graphs
    log "graphs $graphs: addition 384x12, one run"
    "$BENCH" profile --device cuda:0 --shapes 384x12 --runs 1 --steps "$STEPS" \
        --products "$products" >> "$RESULTS"
    for layers in 1 3 5; do
        log "graphs $graphs: nn w 1, $layers layers, 8 runs"
        "$BENCH" preset --preset nn-fig1-full --layers "$layers" --w 1 --heads 1 --runs 8 \
            --steps "$STEPS" --profile 1 --products "$products" --device cuda:0 >> "$RESULTS"
    done
    log "graphs $graphs: text head-progression 4,4,4,4, one run"
    "$BENCH" preset --preset head-progression --schedules "4,4,4,4" --runs 1 --steps "$STEPS" \
        --profile 1 --products "$products" --device cuda:0 >> "$RESULTS"
done
unset HEADLAB_CUDA_GRAPHS
python3 "$ROOT/bench/report.py" --products "$RESULTS" --products-only
