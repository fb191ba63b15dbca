#!/usr/bin/env bash
# layernorm_check.sh — issue 24, item 2, on the GPU machine: the LayerNorm kernel of the text and
# addition models (core/model/cuda/LayerNorm.cu). Builds test_cuda and headlab-bench only, runs
# tests/cuda fusedLayerNormEqualsAten, then times HeadLab with the kernel on and off
# (HEADLAB_FUSED_LAYER_NORM=0) in the same call: text at the head-progression preset's three
# schedules (one run each, TF32 as the preset has it) and addition's one run at 24 × 1 and
# 384 × 12 (FP32); then profiles the text step (heads 4, 4, 4, 4) both ways. Needs .deps carried.
# Output: $OUT/layernorm-check.jsonl; the ratios on stdout. Environment: SKIP_BUILD=1, STEPS (300).
set -uo pipefail
RESULTS_NAME=layernorm-check.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
STEPS="${STEPS:-300}"
kernel_check_setup
"$(find "$ROOT/build-core" -name test_cuda -type f | head -1)" fusedLayerNormEqualsAten 2>&1 |
    grep -v "^QDEBUG\|^QWARN" | tail -8
for on in 1 0; do
    log "kernel $on"
    for schedule in 1,2,4,8 4,4,4,4 8,4,2,1; do
        HEADLAB_FUSED_LAYER_NORM=$on "$BENCH" preset --preset head-progression --schedules "$schedule" \
            --runs 1 --steps "$STEPS" --device cuda:0 | sed "s/^{/{\"fused_layer_norm\": $on, /" >> "$RESULTS"
    done
    HEADLAB_FUSED_LAYER_NORM=$on "$BENCH" single --device cuda:0 --shapes 24x1,384x12 --steps 1000 |
        sed "s/^{/{\"fused_layer_norm\": $on, /" >> "$RESULTS"
    HEADLAB_FUSED_LAYER_NORM=$on "$BENCH" preset --preset head-progression --schedules 4,4,4,4 --runs 1 \
        --steps 200 --profile 1 --device cuda:0 | sed "s/^{/{\"fused_layer_norm\": $on, /" >> "$RESULTS"
done
python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"fused_layer_norm"')]
def rate(on, match):
    return next((r["steps_per_s"] for r in rows if r["fused_layer_norm"] == on and "profile" not in r
                 and match(r)), None)
for s in ("1,2,4,8", "4,4,4,4", "8,4,2,1"):
    a, b = (rate(on, lambda r: r.get("schedules") == s) for on in (1, 0))
    if a and b:
        print(f"text {s}: kernel on {a:.1f} steps/s, off {b:.1f}: {a / b:.3f}x")
for m, h in ((24, 1), (384, 12)):
    a, b = (rate(on, lambda r: r.get("m") == m and r.get("heads") == h) for on in (1, 0))
    if a and b:
        print(f"addition {m} x {h}: kernel on {a:.1f} steps/s, off {b:.1f}: {a / b:.3f}x")
for r in rows:
    if r.get("profile") == "total":
        print(f"text profile, kernel {r['fused_layer_norm']}: wall {r['wall_ms_per_step']} ms, "
              f"gpu {r['gpu_ms_per_step']} ms, {r['kernels_per_step']} kernels")
PY
