#!/usr/bin/env bash
# checkpoint_disk.sh — the disk a sweep's checkpoints take, with the resume state kept in every
# checkpoint (the previous release) and only in each run's newest one (this version's default),
# measured in one run on this machine's CPU (issue 25).
#
# The 25 runs of the preset addition-fig2-grid (the paper's Figure 2 grid: m 24 … 384 × n_H 1 … 12,
# two layers), with the model sizes of the full protocol but 30 + 270 steps and a checkpoint every
# 50 (keep 3, plateau ones too, evaluated every 10): every run keeps the files a full-protocol run
# keeps (its final one, the older periodic ones and any plateau ones), so the totals compare the
# two policies at the real sizes. Output: JSON lines in ${OUT:-bench-out}/checkpoint_disk.jsonl.
#
# CHECKPOINT_DISK_LR_COUNT=10: the 250-run learning-rate grid instead (the 25 configurations × 10 η
# log-spaced from 3e-5 to 3e-3, the paper's scan), measured rather than scaled from the 25 runs.
# CHECKPOINT_DISK_DEVICE=cuda trains on the GPU (the files are the same: float32 weights).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/bench-out}"; mkdir -p "$OUTDIR"
RESULTS="$OUTDIR/checkpoint_disk.jsonl"; : > "$RESULTS"
CLI="${BUILD:-$ROOT/build}/app/cli/headlab-cli"
WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT
echo "{\"cpu\": \"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)\", \"cores\": $(nproc)}" >> "$RESULTS"
LR_COUNT="${CHECKPOINT_DISK_LR_COUNT:-1}"
RUNS=$((25 * LR_COUNT))
for policy in every newest; do
    sed -e 's/steps: 500$/steps: 30/; s/steps: 30000$/steps: 270/; s/batch_size: 64$/batch_size: 8/;
            s/batch_size: 32$/batch_size: 8/; s/eval_every: 100/eval_every: 10/' \
        "$ROOT/resources/presets/addition-fig2-grid.yaml" > "$WORK/$policy.yaml"
    if ((LR_COUNT > 1)); then
        sed -i "s/^  heads: \[1, 2, 3, 6, 12\]$/&\n  lr: {logspace: {from: 3.0e-5, to: 3.0e-3, count: $LR_COUNT}}/" "$WORK/$policy.yaml"
        grep -q "count: $LR_COUNT" "$WORK/$policy.yaml" || { echo "the preset's sweep changed: no lr axis added" >&2; exit 1; }
    fi
    printf 'checkpoints: {every: 50, keep: 3, plateaus: true, resume_state: %s}\n' "$policy" >> "$WORK/$policy.yaml"
    "$CLI" run "$WORK/$policy.yaml" --device "${CHECKPOINT_DISK_DEVICE:-cpu}" --threads "$(nproc)" > /dev/null 2>&1
    files=$(find "$WORK/$policy.results/checkpoints" -name '*.safetensors' | wc -l)
    bytes=$(du -sb "$WORK/$policy.results/checkpoints" | cut -f1)
    echo "{\"checkpoints\": \"resume_state: $policy\", \"runs\": $RUNS, \"files\": $files, \"bytes\": $bytes}" | tee -a "$RESULTS"
    if [[ "$policy" == newest ]]; then
        "$CLI" prune "$WORK/$policy.yaml" > /dev/null
        echo "{\"checkpoints\": \"resume_state: newest, then prune (final and plateau kept)\", \"runs\": $RUNS, \"files\": $(find "$WORK/$policy.results/checkpoints" -name '*.safetensors' | wc -l), \"bytes\": $(du -sb "$WORK/$policy.results/checkpoints" | cut -f1)}" | tee -a "$RESULTS"
    fi
done
