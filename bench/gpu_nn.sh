#!/usr/bin/env bash
# gpu_nn.sh — the nearest-neighbour experiment (EXPERIMENTS.md §2, issue 5) on the GPU machine:
# a CPU / CUDA-graph / CUDA-eager agreement check of a small seeded run, then the nn-reduced
# preset on cuda, exported as CSV, with a best_epoch_mean table by rank × layers × w.
#
# For the GPU machine (Ubuntu 24.04, CUDA 13, PyTorch 2.11 in the system python, no Qt, nothing to
# download). Builds the core and headlab-cli with scripts/build-core.sh into build-core/ (a no-op
# when already built) unless HEADLAB_CLI names a built binary. HEADLAB_NN_PRESET picks another
# preset. Everything is worked in a scratch folder; only three files go to $OUT (default
# ./out/gpu_nn), since the device tool brings back few files:
#   gpu_nn.txt               the check, timings and the summary table (also on stdout)
#   nn-reduced.yaml          the session with every run's curves and metrics (headlab-cli
#                            export-csv nn-reduced.yaml -o DIR rebuilds curves.csv from it)
#   nn-reduced-runs.csv      one row per run: labels, status, best_epoch_mean, final_test_loss, ...
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-$ROOT/out/gpu_nn}"
PRESET="${HEADLAB_NN_PRESET:-nn-reduced}"
WORK="$(mktemp -d)"
mkdir -p "$OUT"
SUMMARY="$OUT/gpu_nn.txt"
: > "$SUMMARY"

say() { printf '[gpu_nn %s] %s\n' "$(date +%T)" "$*" | tee -a "$SUMMARY" >&2; }

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee -a "$SUMMARY"

CLI="${HEADLAB_CLI:-$ROOT/build-core/app/cli/headlab-cli}"
if [[ -z "${HEADLAB_CLI:-}" ]]; then
    say "building headlab-cli (scripts/build-core.sh)"
    start=$SECONDS
    bash "$ROOT/scripts/build-core.sh" > "$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log" | tee -a "$SUMMARY"; exit 1; }
    say "built in $((SECONDS - start)) s"
fi
[[ -x "$CLI" ]] || { say "error: no headlab-cli at $CLI"; exit 1; }

# 1. Check: one small seeded ensemble (2 seeds) on the CPU, on CUDA with the captured CUDA graph,
# and on CUDA eagerly. The data generator is the same on every device, so the three start from the
# same points; after 1,000 steps float rounding has moved them apart a little (expect |diff| of
# 1e-3 or less, not 0). A failed capture is noted in the run's message.
cat > "$WORK/nn-check.yaml" <<'YAML'
schema_version: 1
name: nn-check
description: "gpu_nn.sh check: CPU vs CUDA (graph) vs CUDA (eager)"
experiment:
  task: {kind: nearest_neighbour, point_dim: 16, num_points: 8}
  model: {d_model: 16, heads: 2, layers: 1, ffn_width: 256, activation: relu, norm: unit_scale,
          placement: post_norm, final_norm: false, causal: false, bias: true, zero_init_outputs: false}
  phases:
    - {name: train, objective: regression, steps: 1000, batch_size: 64, lr: scanned,
       optimizer: {kind: adamw, beta1: 0.9, beta2: 0.95, eps: 1.0e-8, weight_decay: 0},
       schedule: {kind: warmup_cosine, warmup_fraction: 0.05}}
  lr: 1.0e-2
  eval_every: 100
  log_every: 20
  seed: 0
sweep:
  seed: [0, 1]
YAML
say "check: a small seeded ensemble on cpu, cuda (graph) and cuda (eager)"
for mode in cpu cuda cuda-eager; do
    device=${mode%-eager}
    graphs=1; [[ $mode == cuda-eager ]] && graphs=0
    HEADLAB_CUDA_GRAPHS=$graphs "$CLI" run "$WORK/nn-check.yaml" -o "$WORK/nn-check-$mode.yaml" --device "$device" \
        > "$WORK/nn-check-$mode.log" 2>&1 || { say "check on $mode exited $?"; tail -5 "$WORK/nn-check-$mode.log" | tee -a "$SUMMARY"; }
done
python3 - "$WORK" <<'PY' | tee -a "$SUMMARY"
import re, sys
def metrics(path):
    text = open(path).read()
    return ([float(v) for v in re.findall(r"\bbest_epoch_mean: ([0-9.eE+-]+)", text)],
            [float(v) for v in re.findall(r"\bfinal_train_loss: ([0-9.eE+-]+)", text)],
            "CUDA graph capture failed" in text)
ref = metrics(sys.argv[1] + "/nn-check-cpu.yaml")
print("nn-check cpu: best_epoch_mean", ref[0], "final_train_loss", ref[1])
for mode in ("cuda", "cuda-eager"):
    try:
        m = metrics(f"{sys.argv[1]}/nn-check-{mode}.yaml")
    except OSError as e:
        print(f"nn-check {mode}: no result ({e})"); continue
    diff = max((abs(a - b) for a, b in zip(m[1], ref[1])), default=float("nan"))
    print(f"nn-check {mode}: best_epoch_mean {m[0]} final_train_loss {m[1]} max |diff vs cpu| {diff:.2e}"
          + ("  (graph capture FAILED, ran eagerly)" if m[2] else ""))
PY

# 2. The preset.
say "running preset $PRESET on cuda"
start=$SECONDS
status=0
"$CLI" run --preset "$PRESET" -o "$WORK/$PRESET.yaml" --device cuda > "$WORK/$PRESET.log" 2>&1 || status=$?
grep -E '^\[[0-9]+/[0-9]+\]|saved|error' "$WORK/$PRESET.log" | tee -a "$SUMMARY"
say "headlab-cli run exited $status after $((SECONDS - start)) s"
[[ -f "$WORK/$PRESET.yaml" ]] || { say "error: no session was written"; tail -30 "$WORK/$PRESET.log" | tee -a "$SUMMARY"; exit 1; }
grep -q 'CUDA graph capture failed' "$WORK/$PRESET.yaml" && say "note: some ensembles trained eagerly (CUDA graph capture failed)"
"$CLI" export-csv "$WORK/$PRESET.yaml" -o "$WORK/$PRESET-csv" > /dev/null
cp "$WORK/$PRESET.yaml" "$OUT/$PRESET.yaml"
cp "$WORK/$PRESET-csv/runs.csv" "$OUT/$PRESET-runs.csv"

# 3. The table: best_epoch_mean (lowest 100-step mean training loss), best over seeds as the
# paper reports it; the final held-out loss and retrieval accuracy, means over seeds.
python3 - "$WORK/$PRESET-csv/runs.csv" <<'PY' | tee -a "$SUMMARY"
import csv, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
groups = defaultdict(list)
for r in rows:
    w = r.get("label_width_multiplier") or "1"
    # head_dim and heads list every layer's value, space-separated; the presets keep them constant.
    groups[(int(r["head_dim"].split()[0]), int(r["layers"]), int(float(w)), int(r["heads"].split()[0]))].append(r)
def num(r, key):
    try: return float(r.get(key) or "nan")
    except ValueError: return float("nan")
print(f"{'rank':>5} {'heads':>6} {'w':>4} {'layers':>6} {'seeds':>5} {'best_epoch_mean':>16} {'final_test_loss':>16} {'test_accuracy':>14} {'status':>10} {'steps/s':>8} {'wall_s':>7}")
for (rank, layers, w, heads), rs in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][2], -kv[0][0])):
    best = min(num(r, "best_epoch_mean") for r in rs)
    test = sum(num(r, "final_test_loss") for r in rs) / len(rs)
    acc = sum(num(r, "final_test_accuracy") for r in rs) / len(rs)
    sps = sum(num(r, "steps_per_second") for r in rs) / len(rs)
    wall = max(num(r, "wall_seconds") for r in rs)
    status = ",".join(sorted({r["status"] for r in rs}))
    print(f"{rank:>5} {heads:>6} {w:>4} {layers:>6} {len(rs):>5} {best:>16.4g} {test:>16.4g} {acc:>14.3f} {status:>10} {sps:>8.1f} {wall:>7.1f}")
PY
rm -rf "$WORK"
exit "$status"
