#!/usr/bin/env bash
# gpu_bench.sh — builds the core on the GPU machine and measures it against the paper's code, all
# in one run on one card. Sections (default: all): build check floor single ensemble grid profile
# eager compile vmap. vmap: HeadLab's ensembles of RUNS (8) runs at SHAPES, then the paper's model
# as a torch.func vmap ensemble of RUNS under torch.compile, in each of VMAP_MODES ("default
# reduce-overhead"), each shape compiled afresh.
#   bench/gpu_bench.sh build check single      # just those
# Results: one JSON object a line in $OUT/bench.jsonl (or ./bench-out/ without $OUT), plus logs.
# Environment: SHAPES (single-run shapes, MxHEADS comma list), STEPS (timed steps a shape).
set -uo pipefail
RESULTS_NAME=bench.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
SHAPES="${SHAPES:-24x1,24x12,48x2,96x3,192x6,384x1,384x12}"
STEPS="${STEPS:-1000}"
sections=("$@")
[[ ${#sections[@]} -gt 0 ]] || sections=(build check floor single ensemble grid profile eager compile vmap)
# Timings in one file are comparable only when they come from one run of this script on one card.
want() { local s; for s in "${sections[@]}"; do [[ $s == "$1" ]] && return 0; done; return 1; }

record_gpu
want build && build_core
if want check; then
    log "check: the same seeded run on cpu and cuda:0; ensemble vs alone on cuda"
    "$BENCH" devices --steps 100 | tee -a "$RESULTS"
    "$BENCH" equivalence --device cuda:0 --steps 200 | tee -a "$RESULTS"
    HEADLAB_CUDA_GRAPHS=0 "$BENCH" equivalence --device cuda:0 --steps 200 | sed 's/"check": "equivalence"/"check": "equivalence-no-graphs"/' | tee -a "$RESULTS"
    "$BENCH" determinism --device cuda:0 --steps 400 | tee -a "$RESULTS"
    "$BENCH" fused-adam --device cuda:0 --steps 300 | tee -a "$RESULTS"
    log "quick demo on cuda"
    "$CLI" run --preset quick-demo --device cuda -o "$OUTDIR/quick-demo-cuda.yaml" > "$OUTDIR/quick-demo.log" 2>&1
    echo "{\"check\": \"quick-demo-cuda\", \"exit\": $?}" | tee -a "$RESULTS"
fi
if want floor; then
    log "compute floor: matmul rates and the grid's FLOPs"
    python3 "$ROOT/bench/compute_floor.py" | tee -a "$RESULTS"
fi
if want single; then
    log "single-run steps/s"
    "$BENCH" single --device cuda:0 --shapes "$SHAPES" --steps "$STEPS" | tee -a "$RESULTS"
    HEADLAB_CUDA_GRAPHS=0 "$BENCH" single --device cuda:0 --shapes "$SHAPES" --steps "$STEPS" | sed 's/headlab-single/headlab-single-no-graphs/' | tee -a "$RESULTS"
fi
if want ensemble; then
    log "ensembles: one grid shape's 10 learning rates; a whole width's 50 runs (5 head counts × 10 η)"
    ES="${ENSEMBLE_STEPS:-500}"
    "$BENCH" ensemble --device cuda:0 --shapes 24x3,48x3,96x3,192x3,384x3 --runs 10 --steps "$ES" | tee -a "$RESULTS"
    "$BENCH" ensemble --device cuda:0 --shapes 24x3,48x3,96x3,192x3,384x3 --runs 50 --mix 1,2,3,6,12 --steps "$ES" | tee -a "$RESULTS"
    log "the same with TF32 matmuls"
    HEADLAB_BENCH_TF32=1 "$BENCH" ensemble --device cuda:0 --shapes 24x3,48x3,96x3,192x3,384x3 --runs 10 --steps "$ES" | sed 's/headlab-ensemble/headlab-ensemble-tf32/' | tee -a "$RESULTS"
    HEADLAB_BENCH_TF32=1 "$BENCH" ensemble --device cuda:0 --shapes 24x3,48x3,96x3,192x3,384x3 --runs 50 --mix 1,2,3,6,12 --steps "$ES" | sed 's/headlab-ensemble/headlab-ensemble-tf32/' | tee -a "$RESULTS"
fi
if want grid; then
    # The whole grid (250 runs) through the scheduler, as the CLI and the app train it: GRID_STEPS
    # answer steps a run (default 1000), timed end to end, start-up included; extrapolated to 30,500.
    GRID=(--device cuda:0 --widths 24,48,96,192,384 --heads 1,2,3,6,12 --lrs 1e-4,2e-4,3e-4,5e-4,7e-4,1e-3,1.5e-3,2e-3,3e-3,5e-3 --steps "${GRID_STEPS:-1000}")
    log "grid slice through the scheduler: one ensemble at a time, then 4 at once"
    "$BENCH" sweep "${GRID[@]}" --concurrent 1 | tee -a "$RESULTS"
    "$BENCH" sweep "${GRID[@]}" --concurrent 4 | tee -a "$RESULTS"
    log "grid slice with TF32"
    HEADLAB_BENCH_TF32=1 "$BENCH" sweep "${GRID[@]}" --concurrent 4 | sed 's/headlab-sweep/headlab-sweep-tf32/' | tee -a "$RESULTS"
fi
if want profile; then
    log "where the m = 384 ensemble's step goes (Kineto)"
    "$BENCH" profile --device cuda:0 --shapes 384x3 --runs 50 --mix 1,2,3,6,12 --steps 100 | tee -a "$RESULTS"
    HEADLAB_BENCH_TF32=1 "$BENCH" profile --device cuda:0 --shapes 384x3 --runs 50 --mix 1,2,3,6,12 --steps 100 | sed 's/"profile": /"tf32": true, "profile": /' | tee -a "$RESULTS"
fi
if want eager; then
    log "reference: eager PyTorch, batches on the GPU"
    python3 "$ROOT/bench/reference_addition.py" --device cuda --shapes "$SHAPES" --steps "$STEPS" 2>>"$OUTDIR/python.log" | tee -a "$RESULTS"
fi
if want compile; then
    log "reference: torch.compile(mode=reduce-overhead)"
    python3 "$ROOT/bench/reference_addition.py" --device cuda --shapes "$SHAPES" --steps "$STEPS" --warmup 30 --compile reduce-overhead 2>>"$OUTDIR/python.log" | tee -a "$RESULTS"
fi
if want vmap; then
    log "HeadLab: ensembles of ${RUNS:-8} runs of one shape, as the vmap peer trains them"
    "$BENCH" ensemble --device cuda:0 --shapes "$SHAPES" --runs "${RUNS:-8}" --steps "$STEPS" | tee -a "$RESULTS"
    for mode in ${VMAP_MODES:-default reduce-overhead}; do
        log "reference: a torch.func vmap ensemble of ${RUNS:-8} under torch.compile($mode)"
        timeout 400 python3 "$ROOT/bench/reference_addition.py" --device cuda --shapes "$SHAPES" --steps "$STEPS" \
            --warmup 30 --compile "$mode" --ensemble "${RUNS:-8}" 2>>"$OUTDIR/python.log" | tee -a "$RESULTS"
    done
fi
log "done: $RESULTS"
