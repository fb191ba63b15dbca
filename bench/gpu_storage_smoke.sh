#!/usr/bin/env bash
# gpu_storage_smoke.sh — on the GPU machine (no Qt): builds the core and the CLI against its torch
# and yaml-cpp 0.8, then checks the storage behaviour there: a preset trained on CUDA into the
# stored layout, resumed in place, a second writer refused, SIGTERM saving the runs in progress,
# a finite blow-up reported as divergence, and the located refusals of bad input. Exits non-zero
# at the first check that fails. Output in ${OUT:-bench-out}.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/bench-out}"; mkdir -p "$OUTDIR"
"$ROOT/scripts/build-core.sh" headlab-cli > "$OUTDIR/build.log" 2>&1 || { tail -40 "$OUTDIR/build.log"; exit 1; }
CLI="$ROOT/build-core/app/cli/headlab-cli"
W="$(mktemp -d)"; cd "$W"
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; exit 1; fi; }

"$CLI" run --preset quick-demo --device cuda -o qd.yaml > run1.log 2>&1
check "quick-demo trains on CUDA into qd.results/runs" '[[ $(ls qd.results/runs | wc -l) == 2 ]] && grep -q "2 done" run1.log'
"$CLI" run qd.yaml > run2.log 2>&1
check "running it again trains nothing" 'grep -q "2 already finished, 0 to train" run2.log'
grep -h "device:" qd.results/runs/*.yaml | sort -u > devices.txt
check "the runs trained on the GPU" 'grep -q cuda devices.txt'

sed 's/steps: 3000/steps: 3000000/' "$ROOT/resources/presets/quick-demo.yaml" > long.yaml
"$CLI" run long.yaml --device cuda > long.log 2>&1 & pid=$!
for _ in $(seq 100); do grep -q "to train" long.log 2>/dev/null && break; sleep 0.2; done; sleep 3
set +e; "$CLI" run long.yaml > second.log 2>&1; second=$?; set -e
check "a second writer is refused with the first's PID" "[[ $second == 2 ]] && grep -q 'PID $pid on' second.log"
kill -TERM $pid; set +e; wait $pid; status=$?; set -e
check "SIGTERM: exit 143, runs saved as stopped" "[[ $status == 143 ]] && [[ \$(grep -l 'status: stopped' long.results/runs/*.yaml | wc -l) == 2 ]]"

printf 'schema_version: 2\nexperiment:\n  task: {kind: addition, train_pairs: 64, test_pairs: 8}\n  model: {d_model: 16, heads: 1, layers: 1}\n  phases: [{steps: 200, batch_size: 8}]\n  log_every: 1\n  lr: 100\n  device: cuda\n' > blow.yaml
"$CLI" run blow.yaml > blow.log 2>&1 || true
check "a finite blow-up is divergence on CUDA" 'grep -q "diverged at step" blow.log && grep -q "10^4 x the chance loss" blow.log'
printf 'schema_version: 1\nexperiment:\n  model: {layers: 666666666}\n  phases: [{steps: 1}]\n' > layers.yaml
set +e; "$CLI" validate layers.yaml > layers.log 2>&1; rc=$?; set -e
check "layers 666666666: exit 2, located" "[[ $rc == 2 ]] && grep -q 'layers.yaml:3:19: experiment.model.layers: at most 256' layers.log"
printf ',' > comma.yaml
set +e; timeout 10 "$CLI" validate comma.yaml > comma.log 2>&1; rc=$?; set -e
check "a lone ',' is refused at once (yaml-cpp 0.8)" "[[ $rc == 2 ]] && grep -q \"unexpected ','\" comma.log"
cp run1.log long.log second.log blow.log "$OUTDIR/" 2>/dev/null || true
echo "all storage checks passed on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
