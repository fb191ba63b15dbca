#!/usr/bin/env bash
# plan_check.sh — issue 57, item 1, on one GPU: the four-card plan of each of issue 57's workloads
# (bench/multi4_sessions.sh: the addition Figure 2 grid and the nn-fig1-full slice of five seeds),
# as SweepRunner would place it on CARDS cards (planSweep), with each planned ensemble trained alone
# on cuda:0 for MEASURE_STEPS steps of its longest phase and its whole training timed from that
# rate (`headlab-bench plan --measure 1`). Each card's load by the cost model (ensembleWork) against
# the measured one, and the speed-up over one card that each allows, so that a four-card call only
# confirms. With SIMULATE=1 (the default) each card's part is then trained whole on cuda:0 as that
# card would train it (four workers at once), one card after another, and the one-card plan too
# (`--simulate 1`): the speed-up with one card's concurrency in it. JSON lines in $OUT/plan.jsonl;
# the table (bench/report.py --plan) on stdout. Environment: CARDS (4), SESSIONS ("addition nn5"),
# MEASURE_STEPS (200), STEPS_ADD (3000), STEPS_NN (700; the simulation trains every step),
# SIMULATE (1), SKIP_BUILD=1.
set -uo pipefail
RESULTS_NAME=plan.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
record_gpu
[[ "${SKIP_BUILD:-0}" == 1 && -x "$BENCH" ]] || build_core
WORK="$ROOT/bench-out/plan"
STEPS_ADD="${STEPS_ADD:-3000}" STEPS_NN="${STEPS_NN:-700}" bash "$ROOT/bench/multi4_sessions.sh" "$WORK"
for name in ${SESSIONS:-addition nn5}; do
    log "$name: the ${CARDS:-4}-card plan, each ensemble timed alone on cuda:0"
    "$BENCH" plan --session "$WORK/$name.yaml" --devices "${CARDS:-4}" --measure 1 \
        --device cuda:0 --steps "${MEASURE_STEPS:-200}" --simulate "${SIMULATE:-1}" >> "$RESULTS"
done
python3 "$ROOT/bench/report.py" --plan "$RESULTS" --plan-only
