#!/usr/bin/env bash
# gpu_layout_smoke.sh — on the GPU machine (no Qt), after the core was split into layers with
# tables (issue 11): builds the core, the CLI (CLI11 from .deps/, scripts/stage-deps.sh) and the
# bench against its torch, then checks on CUDA that the paths the refactor touched still hold:
# an ensemble equals its runs alone (micro-heads and fused attention), fused Adam equals the ATen
# passes, a seed repeats bit for bit, the provenance names the card, the graphs and fused Adam,
# the sequence-file task trains there from its example files, and the CLI's argument errors.
# Exits non-zero at the first failed check. Output in ${OUT:-bench-out}.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/bench-out}"; mkdir -p "$OUTDIR"
"$ROOT/scripts/build-core.sh" headlab-cli headlab-bench > "$OUTDIR/build.log" 2>&1 || { tail -40 "$OUTDIR/build.log"; exit 1; }
CLI="$ROOT/build-core/app/cli/headlab-cli"
BENCH="$ROOT/build-core/bench/headlab-bench"
W="$(mktemp -d)"; cd "$W"
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; exit 1; fi; }
json() { python3 -c "import json,sys; d=[json.loads(l) for l in open('$1') if l.startswith('{')]; print($2)"; }

"$BENCH" equivalence --device cuda > equivalence.jsonl 2>&1 || { cat equivalence.jsonl; exit 1; }
check "ensemble equals runs alone on CUDA (< 1e-4)" "[[ \$(json equivalence.jsonl 'max(x.get(\"max_abs_diff\", 0) for x in d) < 1e-4') == True ]]"
"$BENCH" fused-adam --device cuda > fused.jsonl 2>&1 || { cat fused.jsonl; exit 1; }
check "fused Adam equals the ATen passes (< 1e-5)" "[[ \$(json fused.jsonl 'max(x[\"max_abs_diff\"] for x in d) < 1e-5') == True ]]"
"$BENCH" determinism --device cuda > determinism.jsonl 2>&1 || { cat determinism.jsonl; exit 1; }
check "a seed repeats bit for bit on CUDA" "[[ \$(json determinism.jsonl 'max(x[\"repeat_max_abs_diff\"] for x in d) == 0') == True ]]"

"$CLI" run --preset quick-demo --device cuda -o qd.yaml > qd.log 2>&1
check "quick-demo trains on CUDA" 'grep -q "2 done" qd.log'
grep -h -A12 "^provenance:" qd.results/runs/*.yaml > provenance.txt
check "provenance names the card" 'grep -q "device: .*(cuda:0)" provenance.txt'
check "provenance: CUDA graphs on, fused Adam on" 'grep -q "cuda_graphs: \"on\"" provenance.txt && grep -q "fused_adam: on" provenance.txt'
check "provenance: LibTorch 2.11" 'grep -q "libtorch: 2.11" provenance.txt'

sed -e 's/steps: 300,/steps: 100,/' -e 's/steps: 3000,/steps: 1500,/' -e 's/device: auto/device: cuda/' \
    -e "s|path: multiplication.tsv|path: $ROOT/resources/tasks/multiplication.tsv|" \
    "$ROOT/resources/tasks/multiplication.yaml" > mult.yaml
"$CLI" run mult.yaml --device cuda > mult.log 2>&1
check "the sequence-file task trains on CUDA (6 runs)" 'grep -q "6 done" mult.log'
"$CLI" run "$ROOT/resources/tasks/modular-addition.yaml" -o mod.yaml --device cuda > mod.log 2>&1
check "addition mod 97 from its CSV on CUDA" 'grep -q "2 done" mod.log'
set +e; "$CLI" run qd.yaml --threads 0 > args.log 2>&1; rc=$?; set -e
check "CLI11: --threads 0 exits 2 naming the option" "[[ $rc == 2 ]] && grep -q -- '--threads' args.log"
set +e; "$CLI" run qd.yaml --device cuda:9 > dev.log 2>&1; rc=$?; set -e
check "--device cuda:9 is refused with the machine's devices" "[[ $rc == 2 ]] && grep -q 'it has cpu, cuda:0' dev.log"
cp equivalence.jsonl fused.jsonl determinism.jsonl provenance.txt mult.log mod.log "$OUTDIR/"
echo "all layout checks passed on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
