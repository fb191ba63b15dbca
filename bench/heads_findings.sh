#!/usr/bin/env bash
# heads_findings.sh — on the GPU machine (no Qt): the numbers behind docs/FINDINGS.md "Inside the
# heads" (issue 12), in one call:
#   1. what looking inside costs on the card: headlab-bench inside (per-head statistics, live maps)
#      on ensembles of the grid's shapes, as ratios against the same ensemble without them;
#   2. bench/sessions/heads-findings.yaml trained on CUDA (m 96 and 192 × n_H 1, 3, 12, full protocol,
#      checkpoints every 2,500 steps and at each plateau entry and exit);
#   3. `headlab-cli inspect --json` (on the CPU) of every run at each plateau checkpoint, at steps
#      2,500 / 10,000 / 20,000 and at the end (with zero- and mean-ablation pruning there), for the
#      answer position of "123 + 456" asking each digit, folded into one JSON file per run.
# Output in ${OUT:-bench-out}: inside_cost.jsonl, heads-findings.yaml (the session with results),
# run-N.json, run.log.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/bench-out}"; mkdir -p "$OUTDIR"
DEVICE="${DEVICE:-cuda}"   # DEVICE=cpu SESSION=... CLI=... BENCH=... to try it on a workstation
SESSION="${SESSION:-$ROOT/bench/sessions/heads-findings.yaml}"
if [[ -z "${CLI:-}" ]]; then
    "$ROOT/scripts/build-core.sh" headlab-cli headlab-bench > "$OUTDIR/build.log" 2>&1 || { tail -40 "$OUTDIR/build.log"; exit 1; }
    CLI="$ROOT/build-core/app/cli/headlab-cli"
    BENCH="$ROOT/build-core/bench/headlab-bench"
fi
nvidia-smi --query-gpu=name --format=csv,noheader | head -1 > "$OUTDIR/card.txt" || true

if [[ "${SKIP_COST:-0}" != 1 ]]; then # SKIP_COST=1: only the session and its inspections
    "$BENCH" inside --device "$DEVICE" --shapes 96x12,384x12 --runs 8 --steps 3000 --eval-every 100 --repeats 2 \
        > "$OUTDIR/inside_cost.jsonl" 2>&1 || { cat "$OUTDIR/inside_cost.jsonl"; exit 1; }
    cat "$OUTDIR/inside_cost.jsonl"
fi

W="$(mktemp -d)"; cd "$W"
cp "$SESSION" s.yaml
start=$SECONDS
"$CLI" run s.yaml --device "$DEVICE" > "$OUTDIR/run.log" 2>&1 || { tail -20 "$OUTDIR/run.log"; exit 1; }
echo "trained in $((SECONDS - start)) s"; tail -3 "$OUTDIR/run.log"
"$CLI" export-yaml s.yaml -o "$OUTDIR/heads-findings.yaml"

runs="$("$CLI" validate s.yaml | sed -n 's/.*: \([0-9]*\) runs .*/\1/p')"
for run in $(seq 0 $((runs - 1))); do
    mkdir -p "insp/$run"
    steps="$({ "$CLI" inspect s.yaml --run $run --step 999999999 2>&1 || true; } | sed -n 's/.*it has steps //p' | tr -d ',')"
    last="${steps##* }"
    for step in $steps; do
        case " 2500 10000 20000 $last " in *" $step "*) keep=1 ;; *) keep=0 ;; esac
        # Plateau checkpoints are the ones not on the 2,500-step grid (or named so in the run file).
        (( step % 2500 != 0 )) && keep=1
        [[ $keep == 1 ]] || continue
        for digit in 0 1 2; do
            prune=(--no-prune); [[ $step == "$last" && $digit == 0 ]] && prune=()
            "$CLI" inspect s.yaml --run $run --step "$step" --input "123 + 456, digit $digit" --json "${prune[@]}" \
                -o "insp/$run/csv" > "insp/$run/$step-d$digit.json"
        done
        if [[ $step == "$last" ]]; then
            "$CLI" inspect s.yaml --run $run --step "$step" --ablation mean --json -o "insp/$run/csv" > "insp/$run/$step-mean.json"
        fi
    done
    python3 - "$run" "insp/$run" "$OUTDIR/run-$run.json" <<'PY'
import json, os, sys
run, folder, out = sys.argv[1], sys.argv[2], sys.argv[3]
docs = {}
for name in sorted(os.listdir(folder)):
    if name.endswith(".json"):
        docs[name[:-5]] = json.load(open(os.path.join(folder, name)))
json.dump({"run": int(run), "inspections": docs}, open(out, "w"))
PY
done

du -sh s.results/checkpoints | tee "$OUTDIR/checkpoint-disk.txt"
echo "done"
