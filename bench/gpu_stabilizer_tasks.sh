#!/usr/bin/env bash
# gpu_stabilizer_tasks.sh — issue 23's nearest-neighbour and text comparisons of the stabilizers on
# the GPU machine, at the papers' shapes (bench/sessions/stabilizers-{nn,text}-gpu.yaml), in calls
# that go on from each other while the machine stays warm (sessions in out/gpu_stabilizer_tasks/):
#
#   nn     60 runs (5 η × 4 choices × 3 seeds) on the first half of the GPUs
#   text   50 runs (5 η × 5 choices × 2 seeds) on the second half, at the same time
#   cuda   with HEADLAB_STAB_CUDA_CASES (QtTest FUNCTION:TAG lines), those cases of tests/cuda on
#          GPU 0 while the sessions train (e.g. the CPU-against-CUDA rows of stabilized nn and text)
#
# Each session trains for at most HEADLAB_STAB_CAP_S seconds (default 420; SIGINT at the cap saves
# the runs in progress, and the next call resumes them). Writes under $OUT: for each task its
# summary with learning-rate sensitivity (.txt, .csv), runs.csv and the run log; cuda-tests.txt;
# gpu.txt.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/out/gpu_stabilizer_tasks-out}"
STATE="$ROOT/out/gpu_stabilizer_tasks"
CAP="${HEADLAB_STAB_CAP_S:-420}"
CLI="$ROOT/build-core/app/cli/headlab-cli"
mkdir -p "$OUTDIR" "$STATE"
say() { printf '[gpu_stabilizer_tasks %s] %s\n' "$(date +%T)" "$*"; }

nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$OUTDIR/gpu.txt" || true
GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
targets=(headlab-cli)
[[ -n "${HEADLAB_STAB_CUDA_CASES:-}" ]] && targets+=(test_cuda)
if [[ ! -x "$CLI" ]] || [[ -n "$(find "$ROOT/core" "$ROOT/app" -newer "$CLI" -name '*.[ch]*' | head -1)" ]] ||
    [[ -n "${HEADLAB_STAB_CUDA_CASES:-}" && ! -x "$ROOT/build-core/tests/cuda/test_cuda" ]]; then
    say "build ${targets[*]}"
    if [[ " ${targets[*]} " == *" test_cuda "* ]]; then
        # tests/cuda is a QtTest program: scripts/gpu-tests.sh unpacks the carried Qt and builds it.
        HEADLAB_GPU_TESTS_BUILD_ONLY=1 bash "$ROOT/scripts/gpu-tests.sh" > "$OUTDIR/build.log" 2>&1 ||
            { tail -30 "$OUTDIR/build.log"; exit 1; }
    else
        bash "$ROOT/scripts/build-core.sh" headlab-cli > "$OUTDIR/build.log" 2>&1 || { tail -30 "$OUTDIR/build.log"; exit 1; }
    fi
fi
cp "$CLI" "$STATE/headlab-cli"
CLI="$STATE/headlab-cli"

# The GPUs split in two halves (one GPU: both on it).
devices() { # FIRST COUNT
    local out=() i
    for ((i = $1; i < $1 + $2; ++i)); do out+=("cuda:$i"); done
    (IFS=,; echo "${out[*]}")
}
half=$(( GPUS > 1 ? GPUS / 2 : 1 ))
NN_DEVICES=$(devices 0 "$half")
TEXT_DEVICES=cuda:0
(( GPUS > 1 )) && TEXT_DEVICES=$(devices "$half" $(( GPUS - half )))
pids=()
for task in nn text; do
    session="$STATE/$task.yaml"
    source=("$ROOT/bench/sessions/stabilizers-$task-gpu.yaml")
    [[ -f "$session" ]] && source=("$session")
    dev=$NN_DEVICES
    [[ $task == text ]] && dev=$TEXT_DEVICES
    say "$task on $dev for at most $CAP s"
    ( timeout -s INT -k 60 "$CAP" "$CLI" run "${source[@]}" -o "$session" --device "$dev" \
        > "$OUTDIR/$task-run-log.txt" 2>&1; echo "exit $?" >> "$OUTDIR/$task-run-log.txt" ) &
    pids+=($!)
done

if [[ -n "${HEADLAB_STAB_CUDA_CASES:-}" ]]; then
    say "tests/cuda cases on GPU 0"
    mapfile -t cases <<< "$HEADLAB_STAB_CUDA_CASES"
    LD_LIBRARY_PATH="$ROOT/build-core/qt6/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        CUDA_VISIBLE_DEVICES=0 timeout "${HEADLAB_STAB_CUDA_CAP_S:-400}" \
        "$ROOT/build-core/tests/cuda/test_cuda" "${cases[@]}" > "$OUTDIR/cuda-tests.txt" 2>&1 \
        || say "tests/cuda cases FAILED or timed out (see cuda-tests.txt)"
    grep -E "^(PASS|FAIL|SKIP|Totals)|Loc:" "$OUTDIR/cuda-tests.txt" | tail -20
fi

for pid in "${pids[@]}"; do wait "$pid" || true; done
for task in nn text; do
    session="$STATE/$task.yaml"
    tail -2 "$OUTDIR/$task-run-log.txt"
    "$CLI" status "$session" > "$OUTDIR/$task-status.txt" 2>&1 || true
    head -3 "$OUTDIR/$task-status.txt"
    "$CLI" summary "$session" --lr-sensitivity -o "$OUTDIR/$task-lr-sensitivity.csv" \
        > "$OUTDIR/$task-lr-sensitivity.txt" 2>&1 || true
    "$CLI" summary "$session" -o "$OUTDIR/$task-summary.csv" > "$OUTDIR/$task-summary.txt" 2>&1 || true
    "$CLI" export-csv "$session" -o "$OUTDIR/$task-csv" > /dev/null 2>&1 || true
done
