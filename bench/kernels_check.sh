#!/usr/bin/env bash
# kernels_check.sh — issue 24, item 2, on the GPU machine: builds test_cuda and headlab-bench only,
# runs the tests/cuda cases of the nearest-neighbour model's kernels (fusedFeedForwardEqualsAten,
# fusedUnitNormEqualsAten, fusedPointsEqualAten), then profiles nn-fig1-full's step (8 runs,
# LAYERS layers, default 1) kernel by kernel with every kernel on, then with one switched off at a
# time (HEADLAB_FUSED_NORM=0, HEADLAB_FUSED_FFN=0). Needs .deps carried (Qt Core/Test for the
# test). Output: $OUT/kernels-check.jsonl.
set -uo pipefail
RESULTS_NAME=kernels-check.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
kernel_check_setup
"$(find "$ROOT/build-core" -name test_cuda -type f | head -1)" fusedFeedForwardEqualsAten \
    fusedUnitNormEqualsAten fusedPointsEqualAten 2>&1 | grep -v "^QDEBUG\|^QWARN" | tail -12
for kernels in "1 1" "0 1" "1 0"; do # fused norm, fused feed-forward
    read -r norm ffn <<< "$kernels"
    log "profile, fused norm $norm, fused feed-forward $ffn"
    HEADLAB_FUSED_NORM=$norm HEADLAB_FUSED_FFN=$ffn "$BENCH" preset --preset nn-fig1-full \
        --layers "${LAYERS:-1}" --w 1 --heads 1 --runs 8 --steps 300 --profile 1 --device cuda:0 |
        sed "s/^{/{\"fused_norm\": $norm, \"fused_ffn\": $ffn, /" >> "$RESULTS"
done
python3 - "$RESULTS" <<'PY'
import json, sys
for r in (json.loads(l) for l in open(sys.argv[1]) if l.startswith("{\"fused")):
    tag = f"norm {r['fused_norm']} ffn {r['fused_ffn']}"
    if r.get("profile") == "total":
        print(f"{tag}: wall {r['wall_ms_per_step']} ms, gpu {r['gpu_ms_per_step']} ms, "
              f"{r['kernels_per_step']} kernels")
    elif r.get("profile") == "class":
        print(f"  {tag} {r['class']}: {r['ms_per_step']:.3f} ms, {r['kernels_per_step']:.0f} kernels")
PY
