# gpu_common.sh — sourced by the GPU bench scripts (gpu_bench.sh, the kernel checks, the peers):
# where things are, logging, the card's name as the first JSON line, and the build on the GPU
# machine.
# The sourcing script sets RESULTS_NAME (its JSON-lines file under $OUT, or ./bench-out/).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/bench-out}"
mkdir -p "$OUTDIR"
RESULTS="$OUTDIR/${RESULTS_NAME:?set RESULTS_NAME before sourcing gpu_common.sh}"
BENCH="$ROOT/build-core/bench/headlab-bench"
CLI="$ROOT/build-core/app/cli/headlab-cli"
log() { printf '[%s %s] %s\n' "$(basename "$0" .sh)" "$(date +%T)" "$*" >&2; }
record_gpu() {
    # The card's name for headlab-bench's peak rates (cardPeakTflops).
    HEADLAB_CARD="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
    export HEADLAB_CARD
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader |
        sed "s/^/{\"gpu\": \"/; s/\$/\", \"date\": \"$(date -u +%F)\"}/" >> "$RESULTS"
}
# Builds headlab-cli and headlab-bench into build-core/ (scripts/build-core.sh); stops the script
# with the end of the log if that fails.
build_core() {
    log "build"
    bash "$ROOT/scripts/build-core.sh" headlab-cli headlab-bench > "$OUTDIR/build.log" 2>&1 ||
        { tail -30 "$OUTDIR/build.log"; exit 1; }
}
# The start of a kernel check (bench/*_check.sh): the Qt that .deps carries (Core and Test, for
# test_cuda), 8 CPU threads, the card's line, and test_cuda and headlab-bench built (unless
# SKIP_BUILD=1); stops the script if any of it fails.
kernel_check_setup() {
    source "$ROOT/scripts/carried-qt.sh"
    carried_qt || exit 1
    export OMP_NUM_THREADS=8
    record_gpu
    if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
        log build
        bash "$ROOT/scripts/build-core.sh" test_cuda headlab-bench > "$OUTDIR/build.log" 2>&1 ||
            { tail -30 "$OUTDIR/build.log"; exit 1; }
    fi
}
