#!/usr/bin/env bash
# multi4_sessions.sh DIR — writes issue 57's two workloads as sessions into DIR, from the built-in
# presets with fewer steps: addition.yaml (addition-fig2-grid, 25 runs, STEPS_ADD steps, default
# 9000), nn.yaml (an nn-fig1-full slice: 1 layer, w 1 and 8, rank 64 .. 1, 14 runs, STEPS_NN steps,
# default 6000) and nn5.yaml (that slice with seeds 0..4, 70 runs). bench/gpu_multi4.sh trains
# them on one card and on all; bench/plan_check.sh prices and times their four-card plan on one.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${1:?usage: multi4_sessions.sh DIR}"
STEPS_ADD="${STEPS_ADD:-9000}"
STEPS_NN="${STEPS_NN:-6000}"
mkdir -p "$WORK"
sed -e 's/steps: 30000/steps: '"$STEPS_ADD"'/' -e 's/^name: .*/name: multi4-addition/' \
    "$ROOT/resources/presets/addition-fig2-grid.yaml" > "$WORK/addition.yaml"
sed -e 's/steps: 100000/steps: '"$STEPS_NN"'/' -e 's/^name: .*/name: multi4-nn/' \
    -e 's/^  layers: \[1, 3, 5\]/  layers: [1]/' -e 's/^  width_multiplier: \[1, 8, 64\]/  width_multiplier: [1, 8]/' \
    "$ROOT/resources/presets/nn-fig1-full.yaml" > "$WORK/nn.yaml"
# nn5: the same slice with the paper's five seeds a point (70 runs): no run is more than a few
# hundredths of the work, so that whole runs can fill four cards (in the slice of one seed, the run
# of 64 heads at w 8 is about a quarter of it).
sed -e 's/^name: .*/name: multi4-nn5/' "$WORK/nn.yaml" > "$WORK/nn5.yaml"
printf '  seed: [0, 1, 2, 3, 4]\n' > "$WORK/seeds.txt"
sed -i "/^  width_multiplier: \[1, 8\]/r $WORK/seeds.txt" "$WORK/nn5.yaml"
rm -f "$WORK/seeds.txt"
