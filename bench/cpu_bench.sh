#!/usr/bin/env bash
# cpu_bench.sh — HeadLab's core against the eager PyTorch reference on this machine's CPU, in one run.
# Needs the build (scripts/test.sh or scripts/setup.sh) and the project's .venv.
# Output: JSON lines in ${OUT:-bench-out}/cpu.jsonl. THREADS (default: all cores), STEPS (default 200).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/bench-out}"; mkdir -p "$OUTDIR"
RESULTS="$OUTDIR/cpu.jsonl"; : > "$RESULTS"
THREADS="${THREADS:-$(nproc)}"; STEPS="${STEPS:-200}"
BENCH="${BENCH:-$ROOT/build/bench/headlab-bench}"
SHAPES="24x1,24x3,48x3,96x3,192x6,384x12"
echo "{\"cpu\": \"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)\", \"threads\": $THREADS}" >> "$RESULTS"
# Alternate the two so that a busy machine slows both alike.
for shape in ${SHAPES//,/ }; do
    "$BENCH" single --device cpu --threads "$THREADS" --shapes "$shape" --steps "$STEPS" | tee -a "$RESULTS"
    "$ROOT/.venv/bin/python" "$ROOT/bench/reference_addition.py" --device cpu --threads "$THREADS" --shapes "$shape" \
        --steps "$STEPS" 2>/dev/null | tee -a "$RESULTS"
done
"$BENCH" sweep --device cpu --threads "$THREADS" --widths 24,48,96 --lrs 1e-4,1e-3,1e-2 --heads 3 --steps "$STEPS" | tee -a "$RESULTS"
