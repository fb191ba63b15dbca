#!/usr/bin/env bash
# gpu_nn.sh — runs the nearest-neighbour reduced preset (EXPERIMENTS.md §2, issue 5) on the GPU
# machine and exports it as CSV, with a best_epoch_mean table by rank × layers × w on stdout.
#
# For the GPU machine (Ubuntu 24.04, CUDA 13, PyTorch 2.11 in the system python, no Qt, nothing to
# download). Builds the core and headlab-cli with scripts/build-core.sh into build-core/ unless
# HEADLAB_CLI points at a built binary. Writes under $OUT (default ./out/gpu_nn):
#   nn-reduced.yaml            the session with every run's curves and metrics
#   nn-reduced-csv/runs.csv    one row per run (labels, status, metrics: best_epoch_mean, ...)
#   nn-reduced-csv/curves.csv  every curve point (train, test, epoch_mean, test_accuracy)
#   nn-reduced-table.txt       the summary table printed at the end
#   nn-reduced-log.txt         headlab-cli's output
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-$ROOT/out/gpu_nn}"
PRESET="${HEADLAB_NN_PRESET:-nn-reduced}"
mkdir -p "$OUT"

say() { printf '[gpu_nn] %s\n' "$*"; }

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true

CLI="${HEADLAB_CLI:-$ROOT/build-core/app/cli/headlab-cli}"
if [[ -z "${HEADLAB_CLI:-}" ]]; then
    say "building headlab-cli (scripts/build-core.sh)"
    start=$SECONDS
    "$ROOT/scripts/build-core.sh"
    say "built in $((SECONDS - start)) s"
fi
[[ -x "$CLI" ]] || { say "error: no headlab-cli at $CLI"; exit 1; }

say "running preset $PRESET on cuda"
start=$SECONDS
status=0
"$CLI" run --preset "$PRESET" -o "$OUT/$PRESET.yaml" --device cuda 2>&1 | tee "$OUT/$PRESET-log.txt" || status=$?
say "headlab-cli run exited $status after $((SECONDS - start)) s"
[[ -f "$OUT/$PRESET.yaml" ]] || { say "error: no session was written"; exit 1; }

"$CLI" export-csv "$OUT/$PRESET.yaml" -o "$OUT/$PRESET-csv"

# The table: best_epoch_mean (lowest 100-step mean training loss) per configuration, best over
# seeds as the paper reports it, and the final held-out loss (mean over seeds).
python3 - "$OUT/$PRESET-csv/runs.csv" <<'PY' | tee "$OUT/$PRESET-table.txt"
import csv, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
groups = defaultdict(list)
for r in rows:
    w = r.get("label_width_multiplier") or "1"
    # head_dim and heads list every layer's value, space-separated; the presets keep them constant.
    groups[(int(r["head_dim"].split()[0]), int(r["layers"]), int(float(w)), r["heads"].split()[0])].append(r)
def num(r, key):
    try: return float(r.get(key, ""))
    except ValueError: return float("nan")
print(f"{'rank':>5} {'heads':>6} {'layers':>6} {'w':>4} {'seeds':>5} {'best_epoch_mean':>16} {'final_test_loss':>16} {'test_accuracy':>14} {'status':>10} {'steps/s':>8}")
for (rank, layers, w, heads), rs in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][2], -kv[0][0])):
    best = min(num(r, "best_epoch_mean") for r in rs)
    test = sum(num(r, "final_test_loss") for r in rs) / len(rs)
    acc = sum(num(r, "final_test_accuracy") for r in rs) / len(rs)
    sps = sum(num(r, "steps_per_second") for r in rs) / len(rs)
    status = ",".join(sorted({r["status"] for r in rs}))
    print(f"{rank:>5} {heads:>6} {layers:>6} {w:>4} {len(rs):>5} {best:>16.4g} {test:>16.4g} {acc:>14.3f} {status:>10} {sps:>8.1f}")
PY
exit "$status"
