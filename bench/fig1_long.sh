#!/usr/bin/env bash
# fig1_long.sh — issue 24, item 5: Figure 1's 3-layer line at the paper's 100,000 steps
# (bench/sessions/nn-fig1-3layer-100k.yaml: rank 64 and rank 1, w 1, seeds 0-4) across several
# device calls. Each call trains for at most BUDGET seconds (default 480), then SIGTERM stops the
# runs, which write their stop checkpoints; the next call on the same (still warm) machine resumes
# them: `headlab-cli run -o` onto a session that holds results goes on where it stopped. The state
# lives in bench-out/fig1-100k/ (ignored by git, kept on the warm machine between calls). Each call
# copies the session with every result in one file, the summary and the status to $OUT.
# On four GPUs the scheduler trains the 10 runs as four ensembles (2 + 2 + 3 + 3), one per card.
# Environment: BUDGET, DEVICE (all), SKIP_BUILD=1.
set -uo pipefail
RESULTS_NAME=fig1_long.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
BUDGET="${BUDGET:-480}"
STATE="${STATE:-$ROOT/bench-out/fig1-100k}"
SESSION="${SESSION:-$ROOT/bench/sessions/nn-fig1-3layer-100k.yaml}"
mkdir -p "$STATE"
record_gpu
[[ "${SKIP_BUILD:-0}" == 1 && -x "$CLI" ]] || build_core
calls=$(cat "$STATE/calls" 2>/dev/null || echo 0)
echo $((calls + 1)) > "$STATE/calls"
log "call $((calls + 1)): training for at most $BUDGET s"
t0=$(date +%s)
timeout -s TERM "$BUDGET" "$CLI" run "$SESSION" -o "$STATE/fig1.yaml" --device "${DEVICE:-all}" \
    --progress-every 30 2>&1 | grep -v '^progress' | tail -40
t1=$(date +%s)
printf '{"call": %d, "seconds": %d, "date": "%s", "device_arg": "%s"}\n' $((calls + 1)) \
    $((t1 - t0)) "$(date -u +%FT%TZ)" "${DEVICE:-all}" | tee -a "$STATE/calls.jsonl"
cp "$STATE/calls.jsonl" "$OUTDIR/fig1-calls.jsonl"
"$CLI" status "$STATE/fig1.yaml" | tee "$OUTDIR/fig1-status.txt"
"$CLI" summary "$STATE/fig1.yaml" --by heads --spread minmax -o "$OUTDIR/fig1-summary.csv" | tee "$OUTDIR/fig1-summary.txt"
"$CLI" export-yaml "$STATE/fig1.yaml" -o "$OUTDIR/fig1-all.yaml" > /dev/null
ls -la "$OUTDIR"
