#!/usr/bin/env bash
# pruning_findings.sh — on the GPU machine (no Qt): the numbers behind docs/FINDINGS.md "How many
# heads can go" (issue 76), in one call or several (each stage skips what its output already has):
#   1. the presets pruning-text (tiny Shakespeare when TEXT_PATH names it) and pruning-addition,
#      trained on the device with a final checkpoint each;
#   2. every run's final checkpoint inspected on the device: post-hoc pruning in every order with
#      zero ablation, then fine-tuned (200 steps), the from-scratch control (SCRATCH_POINTS counts)
#      and L0 gates (6 λ); and mean and optimal-constant ablation in the gradient, single-shot and
#      greedy orders;
#   3. the time each stage took, against the training's, in timing.jsonl.
# Output in ${OUT:-bench-out}: <preset>.yaml (the sessions with their results), insp-<preset>-<run>-
# <ablation>.json, timing.jsonl, card.txt. bench/pruning_findings.py folds them into the table
# and figures. DEVICE=cpu SMALL=1 tries the whole of it on a workstation in minutes.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/bench-out}"; mkdir -p "$OUTDIR"
DEVICE="${DEVICE:-cuda}"
PRESETS="${PRESETS:-pruning-text pruning-addition}"
SCRATCH_POINTS="${SCRATCH_POINTS:-3}"
WORK="${WORK:-$ROOT/bench-out/pruning-work}"; mkdir -p "$WORK"
if [[ -z "${CLI:-}" ]]; then
    "$ROOT/scripts/build-core.sh" headlab-cli > "$OUTDIR/build.log" 2>&1 || { tail -40 "$OUTDIR/build.log"; exit 1; }
    CLI="$ROOT/build-core/app/cli/headlab-cli"
fi
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 > "$OUTDIR/card.txt" || true
timing() { # stage, preset, run, seconds
    printf '{"stage": "%s", "preset": "%s", "run": %s, "seconds": %s, "device": "%s"}\n' \
        "$1" "$2" "$3" "$4" "$DEVICE" >> "$OUTDIR/timing.jsonl"
}

for preset in $PRESETS; do
    s="$WORK/$preset.yaml"
    if [[ ! -f "$s" ]]; then
        cp "$ROOT/resources/presets/$preset.yaml" "$s"
        if [[ $preset == pruning-text && -n "${TEXT_PATH:-}" ]]; then
            sed -i "s|task: {kind: text, |task: {kind: text, text_path: \"$TEXT_PATH\", |" "$s"
        fi
        if [[ "${SMALL:-0}" == 1 ]]; then # a workstation's try: small models, few steps
            sed -i 's/d_model: 256/d_model: 32/; s/steps: 2500/steps: 60/; s/steps: 30000/steps: 300/; s/steps: 500$/steps: 50/; s/every: 2500,/every: 60,/; s/every: 30500,/every: 350,/; s/d_model: \[96, 192\]/d_model: [24, 48]/; s/heads: \[4, 8, 16\]/heads: [2, 4]/; s/seed: \[0, 1, 2\]/seed: [0, 1]/; s/eval_every: 100/eval_every: 20/; s/corpus_bytes: 1000000/corpus_bytes: 50000/' "$s"
        fi
    fi
    if ! grep -q "status: done" "$WORK/$preset.results/runs/"*.yaml 2>/dev/null || "$CLI" status "$s" 2>/dev/null | grep -q "to run"; then
        start=$SECONDS
        "$CLI" run "$s" --device "$DEVICE" > "$OUTDIR/run-$preset.log" 2>&1 || { tail -20 "$OUTDIR/run-$preset.log"; exit 1; }
        timing train "$preset" -1 $((SECONDS - start))
        tail -2 "$OUTDIR/run-$preset.log"
    fi
    "$CLI" export-yaml "$s" -o "$OUTDIR/$preset.yaml"
done
[[ "${ONLY_TRAIN:-0}" == 1 ]] && exit 0
# Every run's post-hoc curves with retraining first, then the other ablations: a call cut short
# by its time limit has the main table. One inspection at a time: two side by side on the card
# each took longer than both one after the other (docs/PERFORMANCE.md, "Pruning"). The last runs
# first (the sweeps put the largest models last); none starts after DEADLINE seconds of this
# script, so that a call's time limit does not cut one under way.
DEADLINE="${DEADLINE:-1000000}"
inspect_one() { # preset, run, ablation: zero with retraining in every order, else three orders
    local s="$WORK/$1.yaml" out="$OUTDIR/insp-$1-$2-$3.json" start=$SECONDS
    if [[ $3 == zero ]]; then
        "$CLI" inspect "$s" --run "$2" --device "$DEVICE" --json --retrain fine-tune,scratch,l0 \
            --scratch-points "$SCRATCH_POINTS" -o "$WORK/insp/$1-$2-zero" > "$out.part"
    else
        "$CLI" inspect "$s" --run "$2" --device "$DEVICE" --json --ablation "$3" \
            --order gradient,single-shot,greedy -o "$WORK/insp/$1-$2-$3" > "$out.part"
    fi
    mv "$out.part" "$out"
    timing "inspect-$3$([[ $3 == zero ]] && echo -retrain)" "$1" "$2" $((SECONDS - start))
}
# PASSES="zero;mean optimal" (the default) picks the passes, separated by ';'.
IFS=';' read -ra passes <<< "${PASSES:-zero;mean optimal}"
for pass in "${passes[@]}"; do
    for preset in $PRESETS; do
        runs="$("$CLI" validate "$WORK/$preset.yaml" | sed -n 's/.*: \([0-9]*\) runs .*/\1/p')"
        # RUNS="PRESET:RUN ..." picks runs, in its order (a device call sized to its time limit);
        # a preset it names no run of has none inspected.
        picked="$(seq $((runs - 1)) -1 0)"
        if [[ -n "${RUNS:-}" ]]; then
            picked="$(for r in $RUNS; do if [[ ${r%%:*} == "$preset" ]]; then echo "${r##*:}"; fi; done)"
        fi
        for run in $picked; do
            for ablation in $pass; do
                [[ -s "$OUTDIR/insp-$preset-$run-$ablation.json" ]] && continue
                ((SECONDS < DEADLINE)) || break 3
                inspect_one "$preset" "$run" "$ablation"
            done
        done
    done
done
echo "pruning findings: $(ls "$OUTDIR"/insp-*.json | wc -l) inspections in $OUTDIR"
