#!/usr/bin/env bash
# pruning_stages.sh SESSION RUN — where one run's inspection spends its time (issue 76, item 4):
# `headlab-cli inspect` timed with one stage added at a time, each stage's seconds the difference
# from the inspection without it. JSON lines on stdout: {"stage", "seconds", "total", "device",
# "threads"}. CLI (default build/app/cli/headlab-cli), DEVICE (cpu), THREADS (2).
# The control at 3 counts, as bench/pruning_findings.sh has it.
#   bench/pruning_stages.sh /tmp/pfs-work/pruning-text.yaml 0 > docs/data/issue76/cpu-small/stages.jsonl
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLI="${CLI:-$ROOT/build/app/cli/headlab-cli}"
DEVICE="${DEVICE:-cpu}"
THREADS="${THREADS:-2}"
session="$1" run="$2"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
seconds() { # the wall time of inspect with ARGS, in seconds
    local start end
    start=$(date +%s.%N)
    OMP_NUM_THREADS="$THREADS" "$CLI" inspect "$session" --run "$run" --device "$DEVICE" --json -o "$out/x" "$@" > /dev/null
    end=$(date +%s.%N)
    echo "$end - $start" | bc
}
line() { printf '{"stage": "%s", "seconds": %.2f, "total": %.2f, "device": "%s", "threads": %s}\n' "$1" "$2" "$3" "$DEVICE" "$THREADS"; }
base=$(seconds --no-prune)
line "load, statistics, single-head ablation" "$base" "$base"
for order in gradient single-shot greedy random; do
    t=$(seconds --order "$order")
    line "post hoc: $order" "$(echo "$t - $base" | bc)" "$t"
done
gradient=$(seconds --order gradient)
for method in fine-tune scratch l0; do
    t=$(seconds --order gradient --retrain "$method" --scratch-points 3)
    line "retraining: $method" "$(echo "$t - $gradient" | bc)" "$t"
done
