#!/usr/bin/env bash
# cutlass_products.sh — issue 56's lever test on the GPU machine: builds bench/cutlass_products.cu
# with the machine's nvcc and CUTLASS's headers from the pinned PyPI wheel that scripts/stage-deps.sh
# put in .deps/ (carry .deps), and times nearest neighbour's feed-forward products four ways (cuBLAS
# FP32 + a separate bias pass, CUTLASS FP32 SIMT with the bias in its epilogue, CUTLASS 3xTF32,
# cuBLAS TF32), each with its error against FP64; then the block's two products around its ReLU
# as HeadLab runs them today against CUTLASS epilogues that do the bias, ReLU and ReLU backward. JSON lines in $OUT/cutlass-products.jsonl.
# At 8 and 64 runs of 4,096 rows. MODE=focus: only the fused block (cutlass_products.cu's focus).
# MODE=addition: addition 384×12's products (one run) at CUTLASS SIMT's tiles and K splits.
set -uo pipefail
RESULTS_NAME=cutlass-products.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
record_gpu
wheel="$(ls "$ROOT"/.deps/nvidia_cutlass-*.whl 2>/dev/null | head -1)"
[[ -n "$wheel" ]] || { log "no CUTLASS wheel in .deps (run scripts/stage-deps.sh, carry .deps)"; exit 1; }
src="$OUTDIR/cutlass-src"
mkdir -p "$src"
python3 -m zipfile -e "$wheel" "$src" || exit 1
binary="$OUTDIR/cutlass_products"
log "build against $(basename "$wheel")"
nvcc -O3 -std=c++17 -arch=sm_90 -I"$ROOT" -I"$src/cutlass_library/source/include" \
    "$ROOT/bench/cutlass_products.cu" "$ROOT/core/model/cuda/BiasRelu.cu" -lcublas -o "$binary" > "$OUTDIR/build.log" 2>&1 ||
    { tail -30 "$OUTDIR/build.log"; exit 1; }
rm -rf "$src"
if [[ "${MODE:-all}" == addition ]]; then
    log "addition 384x12's products, cuBLAS against CUTLASS SIMT tiles and K splits"
    "$binary" addition | tee -a "$RESULTS"
    rm -f "$binary"
    exit 0
fi
for shape in "8 4096" "64 4096"; do
    if [[ "${MODE:-all}" != focus ]]; then
        log "each product four ways at runs, rows = $shape"
        "$binary" $shape | tee -a "$RESULTS"
    fi
    log "the block's products with their element-wise work fused at runs, rows = $shape"
    "$binary" focus $shape | tee -a "$RESULTS"
done
rm -f "$binary"
