#!/usr/bin/env bash
# nn_speed.sh — issue 24's nearest-neighbour comparison, in one run on the GPU machine:
#   HeadLab: headlab-bench preset nn-fig1-full (rank 64: one head of 64), 8 runs as one ensemble,
#            four ways: every kernel of its own on; the same with the feed-forward block's first
#            product by cuBLAS and its bias-ReLU kernel after it (HEADLAB_FFN_PRODUCT=0: the path
#            before issue 56's CUTLASS product); the feed-forward block's and the unit-scale
#            norm's kernels off (HEADLAB_FUSED_FFN=0 HEADLAB_FUSED_NORM=0: ATen's passes); and the
#            points by ATen's passes too (HEADLAB_FUSED_POINTS=0: the path before issue 24);
#   peer:    bench/reference_nn.py, the reference Encoder's layers as a torch.func vmap ensemble
#            of the same runs under torch.compile (each mode of COMPILE_MODES) and, with
#            EAGER=1, eagerly; FP32 as HeadLab.
# at LAYERS (default 1,3), w W (1), RUNS runs (8). JSON lines in $OUT/nn_speed.jsonl (or
# ./bench-out/), then the ratios (run-steps/s of HeadLab ÷ the peer's) on stdout. Environment:
# LAYERS, W (1), RUNS, STEPS (300), COMPILE_MODES ("default"), EAGER (0), SKIP_BUILD=1, KERNELS
# (the HeadLab ways as "points ffn product" triples, comma-separated; default all four).
set -uo pipefail
RESULTS_NAME=nn_speed.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
LAYERS="${LAYERS:-1,3}"
RUNS="${RUNS:-8}"
STEPS="${STEPS:-300}"
COMPILE_MODES="${COMPILE_MODES:-default}"
EAGER="${EAGER:-0}"

record_gpu
[[ "${SKIP_BUILD:-0}" == 1 ]] || build_core
for layers in ${LAYERS//,/ }; do
    # fused points, fused model (feed-forward and norm), the feed-forward's CUTLASS product
    IFS=, read -r -a ways <<< "${KERNELS:-1 1 1,1 1 0,1 0 0,0 0 0}"
    for kernels in "${ways[@]}"; do
        read -r points ffn product <<< "$kernels"
        log "HeadLab, $layers layers, fused points $points, fused feed-forward and norm $ffn, CUTLASS product $product"
        HEADLAB_FUSED_POINTS=$points HEADLAB_FUSED_FFN=$ffn HEADLAB_FUSED_NORM=$ffn HEADLAB_FFN_PRODUCT=$product \
            "$BENCH" preset --preset nn-fig1-full \
            --layers "$layers" --w "${W:-1}" --heads 1 --runs "$RUNS" --steps "$STEPS" \
            --device cuda:0 |
            sed "s/^{/{\"fused_points\": $points, \"fused_ffn\": $ffn, \"ffn_product\": $product, /" |
            tee -a "$RESULTS"
    done
    for mode in $COMPILE_MODES; do
        log "peer: vmap ensemble of $RUNS under torch.compile ($mode), $layers layers"
        python3 "$ROOT/bench/reference_nn.py" speed --impl vmap-compile --compile-mode "$mode" \
            --layers "$layers" --w "${W:-1}" --heads 1 --runs "$RUNS" --steps 200 |
            sed "s/^{/{\"compile_mode\": \"$mode\", /" | tee -a "$RESULTS"
    done
    if [[ "$EAGER" == 1 ]]; then
        log "peer: vmap ensemble of $RUNS, eager, $layers layers"
        python3 "$ROOT/bench/reference_nn.py" speed --impl vmap --layers "$layers" --w "${W:-1}" \
            --heads 1 --runs "$RUNS" --steps 200 |
            sed "s/^{/{\"compile_mode\": \"eager\", /" | tee -a "$RESULTS"
    fi
done
python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{") and "gpu" not in l]
nan = float("nan")
for layers, runs in sorted({(r["layers"], r["runs"]) for r in rows}):
    hl = {(r["fused_points"], r.get("fused_ffn", 1), r.get("ffn_product", 0)): r["run_steps_per_s"]
          for r in rows
          if r.get("impl") == "headlab-preset" and (r["layers"], r["runs"]) == (layers, runs)}
    on, cublas = hl.get((1, 1, 1), nan), hl.get((1, 1, 0), nan)
    no_ffn, off = hl.get((1, 0, 0), nan), hl.get((0, 0, 0), nan)
    print(f"{layers} layers, {runs} runs: HeadLab {on:.0f} run-steps/s; CUTLASS product off "
          f"{cublas:.0f} ({on / cublas:.3f}x); feed-forward and norm "
          f"kernels off {no_ffn:.0f} ({on / no_ffn:.2f}x); points kernel off too {off:.0f} "
          f"({on / off:.2f}x)")
    for p in (r for r in rows
              if r.get("peer") == "nn" and (r["layers"], r["runs"]) == (layers, runs)):
        if "run_steps_per_s" not in p:
            print(f"  peer ({p.get('compile_mode')}) failed: {p.get('error')}")
            continue
        peer = p["run_steps_per_s"]
        print(f"  vmap {p['compile_mode']} {peer:.0f}: HeadLab / peer = {on / peer:.2f} "
              f"(CUTLASS product off: {cublas / peer:.2f}; "
              f"model kernels off: {no_ffn / peer:.2f}; all kernels off: {off / peer:.2f})")
PY
