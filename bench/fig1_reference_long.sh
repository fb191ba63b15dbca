#!/usr/bin/env bash
# fig1_reference_long.sh — issue 24, item 5's peer: the reference Encoder (bench/reference_nn.py
# train) on Figure 1's 3-layer line at the paper's 100,000 steps, as bench/fig1_long.sh trains it
# in HeadLab: rank 64 (one head of 64) and rank 1 (64 heads of 1), w 1, seeds 0-4, AdamW 0.01,
# batch 256, 5 % warm-up then cosine, both stepped per 100-step epoch, FP32. Each rank's five seeds
# train as one vmap ensemble (IMPL, default vmap-compile), the two ranks side by side (on two cards
# where there are two). Each call trains for at most BUDGET seconds (default 480); then each
# ensemble saves its state (bench-out/fig1-reference/, kept on the warm machine between calls) at
# the end of its epoch and stops; the next call goes on from there and ends as if never stopped
# (reference_nn.py --state). JSON lines in $OUT/fig1_reference.jsonl: each call's stops and, once a
# rank is done, its best epoch mean per seed and its trace; the logs in $OUT/fig1-reference-*.log.
# Environment: PYTHON (python3), BUDGET, IMPL, STEPS (100000), STATE, DEVICE (a device for both ranks instead of a
# card each), REF_ARGS (more reference_nn.py options: a smoke test on the CPU with small shapes).
set -uo pipefail
RESULTS_NAME=fig1_reference.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
BUDGET="${BUDGET:-480}"
IMPL="${IMPL:-vmap-compile}"
STEPS="${STEPS:-100000}"
STATE="${STATE:-$ROOT/bench-out/fig1-reference}"
mkdir -p "$STATE"
command -v nvidia-smi > /dev/null && record_gpu
gpus=$(nvidia-smi -L 2>/dev/null | grep -c GPU)
((gpus > 0)) || gpus=1
pids=() ranks=()
i=0
for heads in 1 64; do
    rank=$((64 / heads))
    device="${DEVICE:-cuda:$((i % gpus))}"
    log "rank $rank ($heads heads): $device, for at most $BUDGET s"
    # shellcheck disable=SC2086 # REF_ARGS is a list of options
    "${PYTHON:-python3}" "$ROOT/bench/reference_nn.py" train --impl "$IMPL" --layers 3 --w 1 \
        --heads "$heads" --seeds 0,1,2,3,4 --steps "$STEPS" --lr 0.01 --report 10 --device "$device" \
        --state "$STATE/rank$rank.pt" --budget "$BUDGET" ${REF_ARGS:-} >> "$STATE/rank$rank.log" 2>&1 &
    pids+=($!) ranks+=("$rank")
    i=$((i + 1))
done
status=0
for k in "${!pids[@]}"; do
    wait "${pids[$k]}"
    rc=$?
    rank=${ranks[$k]}
    # The call's last word on this rank: stopped (with where), or done (with the results).
    grep '^{' "$STATE/rank$rank.log" | grep -E '"mode": "train(-stopped)?"' | tail -1 |
        sed "s/^{/{\"rank\": $rank, \"rc\": $rc, /" | tee -a "$RESULTS"
    cp "$STATE/rank$rank.log" "$OUTDIR/fig1-reference-rank$rank.log"
    case $rc in
    0) log "rank $rank: done" ;;
    3) log "rank $rank: stopped; run again on this machine to go on"; ((status == 0)) && status=3 ;;
    *) log "rank $rank failed (exit $rc):"; tail -5 "$STATE/rank$rank.log" >&2; status=1 ;;
    esac
done
exit "$status"
