#!/usr/bin/env bash
# micro_heads_cost.sh — issue 24, item 4: what one nearest-neighbour ensemble costs alone on one
# card at each head count, to price the scheduler's pieces (ensembleWork, kScoreWork in
# core/train/SweepRunner.cpp). On four cards (603e103) the card with the pieces of 8 and 16 heads
# at w 8 ran 1.6 times longer per unit of modelled work than the others (bench/multi4_balance.py).
#   1. For each w in WS (default "1 8") and each head count in HEADS ("1 2 4 8 16 32 64"): RUNS
#      (5) runs of nn-fig1-full's 1-layer line with that many heads as one ensemble, timed by
#      `headlab-bench preset` over STEPS (300) steps on DEVICE (cuda:0), once for each attention
#      path in ATTENTION (default "default": HeadLab's choice; "micro-heads" takes micro-heads
#      beyond 64 where the default takes scaled_dot_product_attention, "sdpa" never micro-heads:
#      the values of HEADLAB_ATTENTION). Each line's "attention" says the path it took.
#   2. One ensemble of one run per head count in MIXED (";"-separated, default "2;8;16": the
#      kScoreWork fit's outlier) at w 8, timed the same way for each path.
#   3. A Kineto profile (--profile 1) of each head count in PROFILE ("8 16 64") at w 8.
# JSON lines in $OUT/micro_heads.jsonl; at the end, bench/multi4_balance.py --bench's table of
# measured against modelled cost per ensemble ($OUT/micro_heads_table.txt).
# Environment: WS, HEADS, MIXED, PROFILE (each "" for none), ATTENTION, RUNS, STEPS, DEVICE,
# SKIP_BUILD=1.
set -uo pipefail
RESULTS_NAME=micro_heads.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
WS="${WS-1 8}"
HEADS="${HEADS-1 2 4 8 16 32 64}"
RUNS="${RUNS:-5}"
STEPS="${STEPS:-300}"
MIXED="${MIXED-2;8;16}"
PROFILE="${PROFILE-8 16 64}"
DEVICE="${DEVICE:-cuda:0}"
ATTENTION="${ATTENTION:-default}"
# headlab-bench with HEADLAB_ATTENTION set to the path $1 ("default": unset).
bench_with() {
    local path=$1
    shift
    if [[ "$path" == default ]]; then
        "$BENCH" "$@"
    else
        HEADLAB_ATTENTION="$path" "$BENCH" "$@"
    fi
}
command -v nvidia-smi > /dev/null && record_gpu
[[ "${SKIP_BUILD:-0}" == 1 && -x "$BENCH" ]] || build_core
for path in $ATTENTION; do
    for w in $WS; do
        for heads in $HEADS; do
            log "w $w, $heads heads, $RUNS runs, attention $path"
            bench_with "$path" preset --preset nn-fig1-full --layers 1 --w "$w" --heads "$heads" \
                --runs "$RUNS" --steps "$STEPS" --device "$DEVICE" | tee -a "$RESULTS"
        done
    done
    if [[ -n "$MIXED" ]]; then
        log "w 8, one ensemble of heads $MIXED, attention $path"
        bench_with "$path" preset --preset nn-fig1-full --layers 1 --w 8 --schedules "$MIXED" \
            --steps "$STEPS" --device "$DEVICE" | tee -a "$RESULTS"
    fi
done
for heads in $PROFILE; do
    log "profile: w 8, $heads heads"
    "$BENCH" preset --preset nn-fig1-full --layers 1 --w 8 --heads "$heads" --runs "$RUNS" \
        --steps 50 --device "$DEVICE" --profile 1 | tee -a "$RESULTS"
done
HEADLAB_BENCH="$BENCH" python3 "$ROOT/bench/multi4_balance.py" --bench "$RESULTS" | tee "$OUTDIR/micro_heads_table.txt"
