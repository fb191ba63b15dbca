# gpu_common.sh — sourced by bench/gpu_bench.sh, gpu_profile.sh and gpu_ablation.sh: where things
# are, logging, the card's name as the first JSON line, and the build on the GPU machine.
# The sourcing script sets RESULTS_NAME (its JSON-lines file under $OUT, or ./bench-out/).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/bench-out}"
mkdir -p "$OUTDIR"
RESULTS="$OUTDIR/${RESULTS_NAME:?set RESULTS_NAME before sourcing gpu_common.sh}"
BENCH="$ROOT/build-core/bench/headlab-bench"
CLI="$ROOT/build-core/app/cli/headlab-cli"
log() { printf '[%s %s] %s\n' "$(basename "$0" .sh)" "$(date +%T)" "$*" >&2; }
record_gpu() {
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
