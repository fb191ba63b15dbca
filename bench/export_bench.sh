#!/usr/bin/env bash
# export_bench.sh [SESSION] — how long `headlab --export-all` takes to write every figure (PNG, SVG,
# CSV) of a 75-run session (default: the Figure 2 grid with three seeds, docs/data/), with the loss
# curves drawn as medians with bands over seeds (the default) and, as the baseline measured in the
# same run, drawn one curve per run as before replicates were aggregated. Five repeats each, medians.
# Prints one JSON line per mode and their ratio. Needs the built app (build/app/gui/headlab).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SESSION="${1:-$ROOT/docs/data/addition-fig2-grid-seeds-h100.yaml}"
APP="$ROOT/build/app/gui/headlab"
W="$(mktemp -d)"; trap 'rm -rf "$W"' EXIT
cp "$SESSION" "$W/median.yaml"
# The baseline: every run's curve (the loss chart's median view off).
python3 - "$SESSION" "$W/runs.yaml" <<'PY'
import sys
text = open(sys.argv[1]).read()
marker = "\nview:\n"
assert marker in text, "the session has no view: section"
open(sys.argv[2], "w").write(text.replace(marker, marker + "  loss.median: \"false\"\n", 1))
PY
measure() {
    local times=()
    for _ in 1 2 3 4 5; do
        rm -rf "$W/out"
        local start=$(date +%s.%N)
        QT_QPA_PLATFORM=offscreen "$APP" --session "$1" --export-all "$W/out" --size 1600x1000 >/dev/null 2>&1
        times+=("$(echo "$(date +%s.%N) - $start" | bc)")
    done
    printf '%s\n' "${times[@]}" | sort -n | sed -n 3p
}
median=$(measure "$W/median.yaml"); runs=$(measure "$W/runs.yaml")
machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
printf '{"bench": "export-all", "session": "%s", "mode": "median-bands", "seconds": %s, "machine": "%s"}\n' "$(basename "$SESSION")" "$median" "$machine"
printf '{"bench": "export-all", "session": "%s", "mode": "every-run (baseline)", "seconds": %s, "machine": "%s"}\n' "$(basename "$SESSION")" "$runs" "$machine"
echo "median-bands / every-run = $(echo "scale=3; $median / $runs" | bc)"
