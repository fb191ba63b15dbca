#!/usr/bin/env bash
# gpu_stabilizers.sh — the GPU finding of issue 23 (docs/STABILIZERS.md), on the GPU machine, in
# calls that go on from each other while the machine stays warm (state in out/gpu_stabilizers/):
#
#   speed   each stabilizer's cost: one ensemble of 8 seeds of the addition model (m 96, 2 layers)
#           at 12 heads (m_H 8) and at 1 head (m_H 96), 200 warm-up + 2,000 answer steps, for
#           none, the QK rule, qk-layernorm, soft-capping, z-loss, σReparam (qk), σReparam (all)
#           and independent decay, one ensemble of 8 after the other on GPU 0 in one process
#           (--max-ensemble 8: the QK rule is per run, so off and on would train as one of 16), twice;
#           run-steps/s and the ratio to none (bench/stabilizer_speed.py; HEADLAB_STAB_SPEED=0
#           skips it). A first ensemble (with biases, not reported) takes the process's one-time
#           costs (CUDA context, cuBLAS, graph pools), which measured 12–17 % of the first one's
#           speed.
#   search  the boundary search of the preset stabilizers-addition-boundary (η* per m_H under five
#           choices, full protocol) on the other GPUs for at most HEADLAB_STAB_CAP_S seconds
#           (default 420); a later call resumes it (SIGINT at the cap saves the runs in progress).
#   cuda    with HEADLAB_STAB_CUDA_TESTS=1, tests/cuda (its stabilized rows included) on GPU 0
#           after the speed runs (scripts/gpu-tests.sh; needs .deps carried).
#
# Writes under $OUT: speed.csv and speed.txt, search/ (summary, the export without curves,
# run-log), cuda-tests.txt, gpu.txt.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/out/gpu_stabilizers-out}"
STATE="$ROOT/out/gpu_stabilizers"
CAP="${HEADLAB_STAB_CAP_S:-420}"
CLI="$ROOT/build-core/app/cli/headlab-cli"
mkdir -p "$OUTDIR/search" "$STATE"
say() { printf '[gpu_stabilizers %s] %s\n' "$(date +%T)" "$*"; }

nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$OUTDIR/gpu.txt" || true
GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
if [[ ! -x "$CLI" ]] || [[ -n "$(find "$ROOT/core" "$ROOT/app" -newer "$CLI" -name '*.[ch]*' | head -1)" ]]; then
    say "build"
    bash "$ROOT/scripts/build-core.sh" headlab-cli > "$OUTDIR/build.log" 2>&1 || { tail -30 "$OUTDIR/build.log"; exit 1; }
fi

# The search runs a copy of the CLI: tests/cuda's build below may relink build-core's.
cp "$CLI" "$STATE/headlab-cli"
CLI="$STATE/headlab-cli"
# The search, in the background on GPUs 1 … N-1 (all of them on a one-GPU machine).
SEARCH_DEVICES="all"
if (( GPUS > 1 )); then
    SEARCH_DEVICES=$(seq -s, 1 $((GPUS - 1)) | sed 's/\([0-9]\+\)/cuda:\1/g')
fi
SESSION="$STATE/boundary.yaml"
SOURCE=(--preset stabilizers-addition-boundary)
[[ -f "$SESSION" ]] && SOURCE=("$SESSION")
say "search on $SEARCH_DEVICES for at most $CAP s"
( timeout -s INT -k 60 "$CAP" "$CLI" run "${SOURCE[@]}" -o "$SESSION" --device "$SEARCH_DEVICES" \
    > "$OUTDIR/search/run-log.txt" 2>&1; echo "exit $?" >> "$OUTDIR/search/run-log.txt" ) &
SEARCH_PID=$!

speed_session() { # HEADS: the eight choices as combinations, each an ensemble of 8 seeds
    cat <<EOF
schema_version: 2
name: speed-$1
checkpoints: false
experiment:
  task: {kind: addition, train_pairs: 64000, test_pairs: 192, test_pair_base: 64000}
  model: {d_model: 96, heads: $1, layers: 2}
  phases:
    - {name: warmup, objective: next_token, steps: 200, batch_size: 32, lr: 5.0e-4}
    - {name: answer, objective: answer, steps: 2000, batch_size: 64, lr: scanned}
  lr: 1.0e-3
  eval_every: 500
  log_every: 100
  device: cuda:0
sweep:
  seed: [0, 1, 2, 3, 4, 5, 6, 7]
  combinations:
    - {model.bias: true}
    - {qk_rule: false}
    - {qk_rule: true}
    - {qk_norm: gain}
    - {softcap: 10}
    - {z_loss: 1.0e-4}
    - {sigma_reparam: qk}
    - {sigma_reparam: all, model.zero_init_outputs: false}
    - {independent_weight_decay: 1.0e-4}
EOF
}
if [[ "${HEADLAB_STAB_SPEED:-1}" == 1 ]]; then
    echo "heads,repeat,choice,run_steps_per_second,ratio_to_none" > "$OUTDIR/speed.csv"
    for heads in 12 1; do
        for repeat in 1 2; do
            dir="$STATE/speed/h$heads-r$repeat"
            rm -rf "$dir" && mkdir -p "$dir"
            speed_session "$heads" > "$dir/s.yaml"
            say "speed: $heads heads, repeat $repeat"
            "$CLI" run "$dir/s.yaml" --concurrent 1 --max-ensemble 8 > "$dir/log.txt" 2>&1 || { tail -5 "$dir/log.txt"; continue; }
            "$CLI" export-csv "$dir/s.yaml" -o "$dir/csv" > /dev/null
            python3 "$ROOT/bench/stabilizer_speed.py" "$dir/csv/runs.csv" "$heads" "$repeat" >> "$OUTDIR/speed.csv"
        done
    done
    cat "$OUTDIR/speed.csv"
fi

if [[ "${HEADLAB_STAB_CUDA_TESTS:-0}" == 1 ]]; then
    say "tests/cuda on GPU 0"
    CUDA_VISIBLE_DEVICES=0 bash "$ROOT/scripts/gpu-tests.sh" '^test_cuda$' > "$OUTDIR/cuda-tests.txt" 2>&1 \
        || say "tests/cuda FAILED (see cuda-tests.txt)"
    tail -15 "$OUTDIR/cuda-tests.txt"
elif [[ -n "${HEADLAB_STAB_CUDA_CASES:-}" ]]; then
    # Some cases of an already built tests/cuda, e.g. 'graphsEqualEager:addition stabilized'
    # (QtTest's FUNCTION:TAG), one per line, for at most HEADLAB_STAB_CUDA_CAP_S seconds.
    say "tests/cuda cases on GPU 0"
    mapfile -t cases <<< "$HEADLAB_STAB_CUDA_CASES"
    LD_LIBRARY_PATH="$ROOT/build-core/qt6/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        CUDA_VISIBLE_DEVICES=0 timeout "${HEADLAB_STAB_CUDA_CAP_S:-240}" \
        "$ROOT/build-core/tests/cuda/test_cuda" "${cases[@]}" > "$OUTDIR/cuda-tests.txt" 2>&1 \
        || say "tests/cuda cases FAILED or timed out (see cuda-tests.txt)"
    grep -E "^(PASS|FAIL|SKIP|Totals)|Loc:" "$OUTDIR/cuda-tests.txt" | tail -40
fi

wait "$SEARCH_PID" || true
tail -3 "$OUTDIR/search/run-log.txt"
"$CLI" summary "$SESSION" -o "$OUTDIR/search/summary.csv" | tee "$OUTDIR/search/summary.txt" || true
"$CLI" export-yaml "$SESSION" -o "$STATE/boundary.export.yaml" > /dev/null || true
sed -E 's/\{steps: \[[^]]*\], values: \[[^]]*\]\}/{steps: [], values: []}/g' \
    "$STATE/boundary.export.yaml" | gzip -9 > "$OUTDIR/search/boundary.export.yaml.gz" || true
"$CLI" status "$SESSION" | tee "$OUTDIR/search/status.txt" || true
