#!/usr/bin/env bash
# make_performance.sh — regenerates docs/PERFORMANCE.md with bench/report.py from the JSON lines it
# cites (bench/results/ and docs/data/issue24/). Run from anywhere; needs a python 3 (the
# project's .venv if there is one). --check (the ctest performance_doc): writes nothing, and fails
# with the difference when docs/PERFORMANCE.md is not what report.py makes of those files.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY=python3
[[ -x .venv/bin/python ]] && PY=.venv/bin/python
check=0 target=docs/PERFORMANCE.md
if [[ "${1:-}" == --check ]]; then
    check=1
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    target="$tmp/PERFORMANCE.md"
fi
"$PY" bench/report.py --cold-start bench/results/cold-start-cpu-2core-2026-12-06.jsonl \
    --cold-start bench/results/cold-start-cpu-2core-2026-12-06-before.jsonl \
    --cold-start bench/results/cold-start-cpu-2core-2026-12-03.jsonl \
    --lab-optimization bench/results/lab-optimization-2core-2026-12-06.jsonl \
    --gpu bench/results/gpu-h200-2026-11-26b.jsonl \
    --cpu bench/results/cpu-2core-2026-11-26c.jsonl \
    --cpu-peers docs/data/issue79/cpu-peers-2core-2026-12-06.jsonl \
    --cpu-levers docs/data/issue79/cpu-peers-2core-2026-12-06.jsonl \
    --cpu-alone docs/data/issue79/cpu-wide-products-alone-2core-2026-12-05c.jsonl \
    --cpu-nn-profile docs/data/issue79/nn-classroom-profile-2core-2026-12-05.jsonl \
    --classroom-time docs/data/issue79/classroom-time.txt \
    --classroom-time docs/data/issue79/classroom-time-aten.txt \
    --lesson-press docs/data/issue79/lesson-press.jsonl \
    --cpu-placement docs/data/issue79/cpu-placement-2core-2026-12-05.jsonl \
    --cpu-loop-levers docs/data/issue79/cpu-peers-2core-2026-12-06.jsonl \
    --storage bench/results/storage-cpu-2core-2026-11-27.jsonl \
    --checkpoints bench/results/checkpoint-disk-cpu-2core-2026-11-27.jsonl \
    --checkpoints bench/results/checkpoint-disk-250-h100-2026-11-27.jsonl \
    --export bench/results/export-75-runs-cpu-2core-2026-11-26.jsonl \
    --python-read bench/results/python-read-cpu-2core-2026-12-02.jsonl \
    --products bench/results/gpu-h200-products-2026-12-02.jsonl \
    --products bench/results/gpu-h200-products-2026-12-03.jsonl \
    --cutlass docs/data/issue56/cutlass-products-h200-2026-12-03.jsonl \
    --cutlass-speed docs/data/issue56/nn-speed-h200-e71c55d.jsonl \
    --cutlass-speed docs/data/issue56/nn-speed-w8-h200-1a25731.jsonl \
    --cutlass-addition docs/data/issue56/cutlass-addition-h200-2026-12-03.jsonl \
    --inside docs/data/heads/inside_cost_h100.jsonl \
    --pruning docs/data/issue76/h200/timing.jsonl --pruning docs/data/issue76/cpu-small/timing.jsonl \
    --inside-card "one NVIDIA H100 80GB HBM3, 2026-11-26 (\`headlab-bench inside --device cuda --shapes 96x12,384x12 --runs 8 --steps 3000 --repeats 2\`)" \
    --stabilizers docs/data/issue23/speed.csv \
    --stabilizers-card "GPU 0 of one host of 4 × NVIDIA H100 80GB HBM3, 2026-11-27 (the other three GPUs ran a search at the same time)" \
    --ablation bench/results/gpu-h200-ablation-2026-11-26.jsonl \
    --notes bench/results/notes.md \
    --nn docs/data/issue24/nn-speed-h200-572f4d0.jsonl \
    --nn docs/data/issue24/nn-speed-w8-35-h200-397aadb.jsonl \
    --nn-date 2026-11-29 --nn-profile docs/data/issue24/kernels-profile-h200.jsonl \
    --nn-step-profile docs/data/issue24/nn-w1-profile-h200-572f4d0.jsonl \
    --text docs/data/issue24/text-speed-e2e-h200-603e103.jsonl \
    --text-profile docs/data/issue24/layernorm-check-h200.jsonl \
    --addition docs/data/issue24/addition-speed-steady-h200.jsonl \
    --addition-profile docs/data/issue24/addition-profile-layernorm-h200.jsonl \
    --layernorm docs/data/issue24/layernorm-check-h200.jsonl \
    --attention docs/data/issue24/attention-check-h200-572f4d0.jsonl \
    --floors docs/data/issue24/floors-h200-572f4d0.jsonl \
    --grid docs/data/issue24/grid-floor-h200.jsonl \
    --multi-gpu docs/data/issue24/multi4-4xh100.jsonl \
    --multi-gpu docs/data/issue24/multi4-4xh200-8e86621.jsonl \
    --multi-gpu docs/data/issue24/multi4-4xh200-18e114d.jsonl \
    --multi-gpu docs/data/issue24/head-groups-h200-86606ec.jsonl \
    --multi-gpu docs/data/issue24/multi4-4xh200-76463d8.jsonl \
    --multi-gpu docs/data/issue24/multi4-4xh200-603e103.jsonl \
    --plan docs/data/issue57/plan-simulated-h200-d4bfe26.jsonl \
    --fig1 docs/data/issue24/fig1-h200-572f4d0.jsonl > "$target"
if [[ "$check" == 1 ]]; then
    if ! diff -u docs/PERFORMANCE.md "$target" > "$target.diff"; then
        echo "docs/PERFORMANCE.md is not what bench/report.py makes of its data files (diff below);" \
            "run bash bench/make_performance.sh and commit the result" >&2
        head -40 "$target.diff" >&2
        exit 1
    fi
    echo "docs/PERFORMANCE.md is what bench/report.py makes of its data files"
fi
