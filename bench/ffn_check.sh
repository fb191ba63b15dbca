#!/usr/bin/env bash
# ffn_check.sh — issue 24, item 2, on the GPU machine: builds test_cuda and headlab-bench only,
# runs tests/cuda fusedFeedForwardEqualsAten, then profiles nn-fig1-full's step (8 runs, 1 layer)
# with the feed-forward block's cuBLASLt epilogues on and off (HEADLAB_FUSED_FFN), kernel by
# kernel. Needs .deps carried (Qt Core/Test for the test). Output: $OUT/ffn-check.jsonl.
set -uo pipefail
RESULTS_NAME=ffn-check.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
QT="$ROOT/build-core/qt6"
if [[ ! -f "$QT/.unpacked" ]]; then
    mkdir -p "$QT" && tar -C "$QT" -xJf "$ROOT/.deps/qt6-core-test.tar.xz" && touch "$QT/.unpacked"
fi
export HEADLAB_QT_PREFIX="$QT/usr" OMP_NUM_THREADS=8
export LD_LIBRARY_PATH="$QT/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
record_gpu
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    log build
    bash "$ROOT/scripts/build-core.sh" test_cuda headlab-bench > "$OUTDIR/build.log" 2>&1 ||
        { tail -30 "$OUTDIR/build.log"; exit 1; }
fi
"$(find "$ROOT/build-core" -name test_cuda -type f | head -1)" fusedFeedForwardEqualsAten 2>&1 | tail -8
for ffn in 1 0; do
    log "profile, fused feed-forward $ffn"
    HEADLAB_FUSED_FFN=$ffn "$BENCH" preset --preset nn-fig1-full --layers "${LAYERS:-1}" --w 1 \
        --heads 1 --runs 8 --steps 300 --profile 1 --device cuda:0 |
        sed "s/^{/{\"fused_ffn\": $ffn, /" >> "$RESULTS"
done
python3 - "$RESULTS" <<'PY'
import json, sys
for r in (json.loads(l) for l in open(sys.argv[1]) if l.startswith("{\"fused")):
    if r.get("profile") == "total":
        print(f"ffn {r['fused_ffn']}: wall {r['wall_ms_per_step']} ms, gpu {r['gpu_ms_per_step']} ms, {r['kernels_per_step']} kernels")
    elif r.get("profile") == "kernel" and r["ms_per_step"] > 0.04:
        print(f"  ffn {r['fused_ffn']} {r['ms_per_step']:.3f} ms x{r['per_step']:.0f} {r['name'][:100]}")
PY
