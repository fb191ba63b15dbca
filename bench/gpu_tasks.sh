#!/usr/bin/env bash
# gpu_tasks.sh PHASE — issue 14 on the GPU machine: every task fast and faithful, and the CUDA
# paths under tests that fail. One phase per device call (each fits the 10-minute limit); a warm
# machine keeps build-core/ between them.
#
#   tests     scripts/gpu-tests.sh (build with the carried Qt Core/Test, every GUI-less suite and
#             tests/cuda), then one path broken on purpose: the fused Adam kernel without its
#             second-moment bias correction; tests/cuda must fail on it; the source is restored
#             and rebuilt. → tests.txt
#   speed     compute floors (bench/compute_floor.py) for nn and text; HeadLab's nearest neighbour
#             at layers {1,3,5} × w {1,8,64} (rank 64, 8 runs) in FP32 and TF32; the nn peer
#             (bench/reference_nn.py) eager and vmap at the same shapes, torch.compile'd where it
#             compiles in time; the text preset (head-progression) against bench/reference_text.py
#             eager and compiled; addition against bench/reference_addition.py; profiles.
#             → speed.jsonl, profile.jsonl, speed-log.txt
#   first     tests and fidelity in one call: the CLI and the bench are built, the fidelity runs
#             start on the GPU, and the suites build and run beside them (nothing timed).
#   round2    after the first round: nn fidelity at 20,000 steps (with the old unit-norm epsilon
#             as a variant) beside the peer's runs, text and addition with and without the fused
#             Q/K/V product and split weight gradients. → round2.jsonl, round2-log.txt
#   nnspeed   nearest-neighbour speed, second round (the same paths on and off, TF32, the peer's
#             vmap ensembles eager and compiled). → nnspeed.jsonl, nnprofile.jsonl, nnspeed-log.txt
#   fidelity  nearest neighbour at the paper's size: 3 layers, rank 64, 10,000 steps, 3 seeds, in
#             HeadLab with the reference's details (init pytorch, schedule stepped per epoch), with
#             HeadLab's earlier defaults, and with each detail alone; 1 and 5 layers at 5,000 steps;
#             the peer trains the same seeds at the same time. → fidelity.jsonl, fidelity-log.txt
#
# Environment: OUT (default ./bench-out), FIDELITY_CAP_S (default 330: wall cap per process).
set -uo pipefail
PHASE="${1:?usage: gpu_tasks.sh tests|speed|fidelity}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/bench-out}"
mkdir -p "$OUTDIR"
BENCH="$ROOT/build-core/bench/headlab-bench"
CLI="$ROOT/build-core/app/cli/headlab-cli"
say() { printf '[gpu_tasks %s %s] %s\n' "$PHASE" "$(date +%T)" "$*" >&2; }
gpu() { nvidia-smi --query-gpu=name --format=csv,noheader | head -1; }
# The carried Qt (scripts/gpu-tests.sh unpacks it) keeps the suites buildable in every phase.
export HEADLAB_QT_PREFIX="$ROOT/build-core/qt6/usr"
export LD_LIBRARY_PATH="$HEADLAB_QT_PREFIX/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# On a machine where the tests phase did not run: the CLI and the bench alone, without the suites.
build() {
    if [[ -x "$BENCH" && -x "$CLI" ]]; then return; fi
    [[ -d "$HEADLAB_QT_PREFIX" ]] || unset HEADLAB_QT_PREFIX
    bash "$ROOT/scripts/build-core.sh" headlab-cli headlab-bench >> "$OUTDIR/build.log" 2>&1 || { tail -30 "$OUTDIR/build.log"; exit 1; }
}

# A fidelity session: NAME LAYERS STEPS INIT STEP_EVERY (rank 64, w 1, 3 seeds), written to $W.
session() { # NAME LAYERS STEPS INIT STEP_EVERY
    cat > "$W/$1.yaml" <<YAML
schema_version: 1
name: $1
experiment:
  task: {kind: nearest_neighbour, point_dim: 64, num_points: 16}
  model: {d_model: 64, heads: 1, layers: $2, head_dim: auto, ffn_width: 2048, activation: relu, norm: unit_scale,
          placement: post_norm, final_norm: false, causal: false, bias: true, zero_init_outputs: false,
          logit_scale: inv_sqrt_head_dim, width_multiplier: 1, init: $4}
  phases:
    - {name: train, objective: regression, steps: $3, batch_size: 256, lr: scanned,
       optimizer: {kind: adamw, beta1: 0.9, beta2: 0.95, eps: 1.0e-8, weight_decay: 0},
       schedule: {kind: warmup_cosine, warmup_fraction: 0.05, step_every: $5}}
  lr: 1.0e-2
  eval_every: 1000
  log_every: 100
  device: cuda
sweep:
  seed: [0, 1, 2]
YAML
}

# One JSON line of a trained fidelity session: NAME CSV_FOLDER (headlab-cli export-csv).
summarise() {
    python3 - "$1" "$2" <<'PY'
import csv, json, sys
name, folder = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(folder + "/runs.csv")))
curves = list(csv.DictReader(open(folder + "/curves.csv")))
out = {"headlab": name, "seeds": [], "best_epoch_mean": [], "status": [], "epoch_mean_trace": {}}
for r in rows:
    out["seeds"].append(r.get("init_seed"))
    out["best_epoch_mean"].append(float(r["best_epoch_mean"]) if r.get("best_epoch_mean") else None)
    out["status"].append(r["status"])
for c in curves:
    if c.get("curve") == "epoch_mean" and int(float(c["step"])) % 1000 == 0:
        out["epoch_mean_trace"].setdefault(c["run"], []).append([int(float(c["step"])), round(float(c["value"]), 5)])
print(json.dumps(out))
PY
}

phase_tests() {
    LOG="$OUTDIR/tests.txt"
    say "GPU: $(gpu)" 2>&1 | tee "$LOG"
    start=$SECONDS
    CTEST_ARGS=-V bash "$ROOT/scripts/gpu-tests.sh" > "$OUTDIR/gpu-tests-full.txt" 2>&1
    rc=$?
    # Each suite's verdict, every case of tests/cuda by name, and whatever failed.
    grep -E "Test +#[0-9]+: |tests passed|FAIL|SKIP  |error:|Totals|TestCuda|Loc:|moc " "$OUTDIR/gpu-tests-full.txt" |
        grep -v "^[0-9]*: PASS   : Test[^C]" | tail -150 >> "$LOG"
    say "gpu-tests.sh exited $rc after $((SECONDS - start)) s" 2>&1 | tee -a "$LOG"
    bash "$ROOT/scripts/build-core.sh" headlab-bench >> "$OUTDIR/build.log" 2>&1
    # A path broken on purpose: the fused kernel forgets Adam's second-moment bias correction.
    SRC="$ROOT/core/model/cuda/FusedAdam.cu"
    cp "$SRC" "$OUTDIR/FusedAdam.cu.orig"
    sed -i 's|const float denom = sqrtf(v) / bias2Sqrt + eps;|const float denom = sqrtf(v) + eps;|' "$SRC"
    if cmp -s "$SRC" "$OUTDIR/FusedAdam.cu.orig"; then
        say "error: the break did not apply" 2>&1 | tee -a "$LOG"
    else
        bash "$ROOT/scripts/build-core.sh" test_cuda >> "$OUTDIR/build.log" 2>&1
        "$ROOT/build-core/tests/cuda/test_cuda" fusedAdamEqualsAten > "$OUTDIR/broken.txt" 2>&1
        brc=$?
        { echo "--- with the fused Adam kernel broken on purpose (no second-moment bias correction): test_cuda exited $brc"
          grep -E "^(PASS|FAIL|Totals)|Loc:" "$OUTDIR/broken.txt"; } >> "$LOG"
    fi
    cp "$OUTDIR/FusedAdam.cu.orig" "$SRC"
    rm -f "$OUTDIR/FusedAdam.cu.orig" "$OUTDIR/broken.txt"
    bash "$ROOT/scripts/build-core.sh" test_cuda headlab-bench headlab-cli >> "$OUTDIR/build.log" 2>&1
    say "restored and rebuilt; phase took $((SECONDS - start)) s" 2>&1 | tee -a "$LOG"
    return "$rc"
}

phase_speed() {
    build
    R="$OUTDIR/speed.jsonl"; P="$OUTDIR/profile.jsonl"; L="$OUTDIR/speed-log.txt"
    echo "{\"gpu\": \"$(gpu)\"}" > "$R"
    : > "$P"
    run() { say "$*" 2>> "$L"; "$@" 2>> "$L" | grep '^{' | tee -a "$R"; }
    # Floors.
    run python3 "$ROOT/bench/compute_floor.py" --task nn --runs 8
    run python3 "$ROOT/bench/compute_floor.py" --task text --runs 2 \
        --schedules "1,2,4,8;4,4,4,4;8,4,2,1"
    # Nearest neighbour: HeadLab (FP32, then TF32), 8 runs of rank 64 in one ensemble.
    for tf32 in 0 1; do
        for L in 1 3 5; do for w in 1 8 64; do
            steps=200; [[ $w == 64 ]] && steps=60
            HEADLAB_BENCH_TF32=$tf32 run "$BENCH" preset --preset nn-fig1-full --layers $L --w $w --heads 1 --runs 8 --steps $steps
        done; done
    done
    # The nn peer: eager one run, eager vmap of 8, compiled vmap of 8 (w 1 and 8; w 64 compiles for
    # longer than this phase has), compiled one run at 3 layers.
    run timeout 150 python3 "$ROOT/bench/reference_nn.py" speed --impl eager --layers 1,3,5 --w 1,8,64 --steps 30 --warmup 5
    run timeout 150 python3 "$ROOT/bench/reference_nn.py" speed --impl vmap --runs 8 --layers 1,3,5 --w 1,8,64 --steps 15 --warmup 3
    run timeout 200 python3 "$ROOT/bench/reference_nn.py" speed --impl vmap-compile --runs 8 --layers 1,3,5 --w 1,8 --steps 40 --warmup 3
    run timeout 60 python3 "$ROOT/bench/reference_nn.py" speed --impl compile --layers 3 --w 1 --steps 100 --warmup 3
    # Text: the preset's 18 runs (TF32 as shipped), and the three schedules of total 15 alone for
    # the compiled peer; the peer eager over all nine schedules.
    run "$BENCH" preset --preset head-progression --steps 100
    S15="1,2,4,8;4,4,4,4;8,4,2,1"
    run "$BENCH" preset --preset head-progression --steps 100 --schedules "$S15"
    ALL=$(grep '"preset": "head-progression"' "$R" | head -1 | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["schedules"])')
    run timeout 120 python3 "$ROOT/bench/reference_text.py" --tf32 --steps 60 --warmup 10 --schedules "${ALL:-$S15}"
    run timeout 200 python3 "$ROOT/bench/reference_text.py" --tf32 --compile default --steps 100 --warmup 5 --schedules "$S15"
    # Addition: HeadLab's ensemble against the eager reference, as docs/PERFORMANCE.md measured it.
    run "$BENCH" ensemble --device cuda:0 --shapes 96x3,384x12 --runs 10 --steps 300
    run timeout 90 python3 "$ROOT/bench/reference_addition.py" --device cuda --shapes 96x3,384x12 --steps 200
    # Profiles of the nn and text steps.
    say "profiles" 2>> "$L"
    "$BENCH" preset --preset nn-fig1-full --layers 3 --w 1 --heads 1 --runs 8 --steps 50 --profile 1 2>> "$L" | grep '^{' >> "$P"
    "$BENCH" preset --preset nn-fig1-full --layers 3 --w 8 --heads 1 --runs 8 --steps 30 --profile 1 2>> "$L" | grep '^{' >> "$P"
    "$BENCH" preset --preset head-progression --steps 30 --schedules "4,4,4,4" --profile 1 2>> "$L" | grep '^{' >> "$P"
    say "done" 2>> "$L"
}

phase_fidelity() {
    build
    R="$OUTDIR/fidelity.jsonl"; L="$OUTDIR/fidelity-log.txt"
    CAP="${FIDELITY_CAP_S:-330}"
    W="$(mktemp -d)"
    session l3-reference 3 10000 pytorch 100
    session l3-headlab-before 3 10000 uniform 1
    session l3-init-only 3 10000 pytorch 1
    session l3-schedule-only 3 10000 uniform 100
    session l1-reference 1 5000 pytorch 100
    session l5-reference 5 5000 pytorch 100
    pids=()
    for s in l3-reference l3-headlab-before l3-init-only l3-schedule-only l1-reference l5-reference; do
        timeout -s TERM "$CAP" "$CLI" run "$W/$s.yaml" -o "$W/$s-out.yaml" > "$W/$s.log" 2>&1 &
        pids+=($!)
    done
    for args in "3 10000" "1 5000" "5 5000"; do
        set -- $args
        timeout -s TERM "$CAP" python3 "$ROOT/bench/reference_nn.py" train --layers $1 --w 1 --steps $2 --seeds 0,1,2 --report 10 >> "$R" 2>> "$L" &
    done
    wait
    for s in l3-reference l3-headlab-before l3-init-only l3-schedule-only l1-reference l5-reference; do
        tail -3 "$W/$s.log" >> "$L"
        [[ -f "$W/$s-out.yaml" ]] || { echo "{\"headlab\": \"$s\", \"error\": \"no session written\"}" >> "$R"; continue; }
        "$CLI" export-csv "$W/$s-out.yaml" -o "$W/$s-csv" > /dev/null 2>&1
        summarise "$s" "$W/$s-csv" >> "$R"
    done
}

# Second round, after the first measurements (docs/PERFORMANCE.md): the nn fidelity at the
# reported 20,000 steps with the unit norm's old epsilon as a variant, the peer's runs (vmap
# with math attention), text and addition with the fused Q/K/V product and split weight
# gradients against them off in the same run.
phase_round2() {
    build
    R="$OUTDIR/round2.jsonl"; L="$OUTDIR/round2-log.txt"
    echo "{\"gpu\": \"$(gpu)\"}" > "$R"
    CAP="${FIDELITY_CAP_S:-300}"
    W="$(mktemp -d)"
    session l3-reference-20k 3 20000 pytorch 100
    session l3-before-20k 3 20000 uniform 1
    for s in l3-reference-20k l3-before-20k; do
        timeout -s TERM "$CAP" "$CLI" run "$W/$s.yaml" -o "$W/$s-out.yaml" > "$W/$s.log" 2>&1 &
    done
    cp "$W/l3-before-20k.yaml" "$W/l3-before-eps-20k.yaml"
    sed -i 's/^name: .*/name: l3-before-eps-20k/' "$W/l3-before-eps-20k.yaml"
    HEADLAB_UNIT_NORM_EPS=1e-12 timeout -s TERM "$CAP" "$CLI" run "$W/l3-before-eps-20k.yaml" -o "$W/l3-before-eps-20k-out.yaml" > "$W/l3-before-eps-20k.log" 2>&1 &
    for args in "3 20000" "3 10000" "1 5000" "5 5000"; do
        set -- $args
        timeout -s TERM "$CAP" python3 "$ROOT/bench/reference_nn.py" train --layers $1 --w 1 --steps $2 --seeds 0,1,2 --report 20 >> "$R" 2>> "$L" &
    done
    wait
    for s in l3-reference-20k l3-before-20k l3-before-eps-20k; do
        tail -2 "$W/$s.log" >> "$L"
        [[ -f "$W/$s-out.yaml" ]] || continue
        "$CLI" export-csv "$W/$s-out.yaml" -o "$W/$s-csv" > /dev/null 2>&1
        summarise "$s" "$W/$s-csv" >> "$R"
    done
    run() { say "$*" 2>> "$L"; "$@" 2>> "$L" | grep '^{' | tee -a "$R"; }
    plain() { HEADLAB_FUSED_QKV=0 HEADLAB_SPLIT_K=0 "$@" | sed 's/^{/{"paths": "plain (HEADLAB_FUSED_QKV=0 HEADLAB_SPLIT_K=0)", /'; }
    S15="1,2,4,8;4,4,4,4;8,4,2,1"
    for k in 1 2; do
        run "$BENCH" preset --preset head-progression --steps 150 --schedules "$S15"
        run plain "$BENCH" preset --preset head-progression --steps 150 --schedules "$S15"
    done
    run "$BENCH" preset --preset head-progression --steps 100
    run timeout 60 python3 "$ROOT/bench/reference_text.py" --tf32 --steps 100 --warmup 10 --schedules "$S15"
    run timeout 150 python3 "$ROOT/bench/reference_text.py" --tf32 --compile default --steps 150 --warmup 5 --schedules "$S15"
    run "$BENCH" preset --preset head-progression --steps 150 --schedules "$S15" --profile 1 | grep -v '"kernel"'
    for k in 1 2; do
        run "$BENCH" ensemble --device cuda:0 --shapes 96x3,384x12 --runs 10 --steps 300
        run plain "$BENCH" ensemble --device cuda:0 --shapes 96x3,384x12 --runs 10 --steps 300
    done
    run timeout 90 python3 "$ROOT/bench/reference_addition.py" --device cuda --shapes 96x3,384x12 --steps 200
    say "done" 2>> "$L"
}

# Nearest-neighbour speed, second round: HeadLab with the fused Q/K/V product and split weight
# gradients against both off (interleaved, per shape), TF32, and the peer's vmap ensembles.
phase_nnspeed() {
    build
    R="$OUTDIR/nnspeed.jsonl"; L="$OUTDIR/nnspeed-log.txt"; P="$OUTDIR/nnprofile.jsonl"
    echo "{\"gpu\": \"$(gpu)\"}" > "$R"
    run() { say "$*" 2>> "$L"; "$@" 2>> "$L" | grep '^{' | tee -a "$R"; }
    plain() { HEADLAB_FUSED_QKV=0 HEADLAB_SPLIT_K=0 "$@" | sed 's/^{/{"paths": "plain (HEADLAB_FUSED_QKV=0 HEADLAB_SPLIT_K=0)", /'; }
    for layers in 1 3 5; do for w in 1 8 64; do
        steps=200; [[ $w == 64 ]] && steps=60
        run "$BENCH" preset --preset nn-fig1-full --layers $layers --w $w --heads 1 --runs 8 --steps $steps
        run plain "$BENCH" preset --preset nn-fig1-full --layers $layers --w $w --heads 1 --runs 8 --steps $steps
        HEADLAB_BENCH_TF32=1 run "$BENCH" preset --preset nn-fig1-full --layers $layers --w $w --heads 1 --runs 8 --steps $steps
    done; done
    run timeout 120 python3 "$ROOT/bench/reference_nn.py" speed --impl eager --layers 1,3,5 --w 1,8,64 --steps 30 --warmup 5
    run timeout 150 python3 "$ROOT/bench/reference_nn.py" speed --impl vmap --runs 8 --layers 1,3,5 --w 1,8,64 --steps 15 --warmup 3
    for shape in "1 1" "3 1" "5 1" "3 8"; do
        set -- $shape
        run timeout 75 python3 "$ROOT/bench/reference_nn.py" speed --impl vmap-compile --runs 8 --layers $1 --w $2 --steps 40 --warmup 3
    done
    "$BENCH" preset --preset nn-fig1-full --layers 3 --w 1 --heads 1 --runs 8 --steps 100 --profile 1 2>> "$L" | grep '^{' >> "$P"
    say "done" 2>> "$L"
}

# Last round: the fused Q/K/V product's and split weight gradients' shares at w 1 and 8 (each off
# alone, GPU to itself), then the nn fidelity's two details apart at 20,000 steps in the background
# while the suites build and run on the final code. → final.jsonl, tests.txt
phase_final() {
    build
    R="$OUTDIR/final.jsonl"; LOG2="$OUTDIR/final-log.txt"
    echo "{\"gpu\": \"$(gpu)\"}" > "$R"
    run() { local t=$1; shift; say "$t: $*" 2>> "$LOG2"; "$@" 2>> "$LOG2" | grep '^{' | sed "s/^{/{\"paths\": \"$t\", /" | tee -a "$R"; }
    for w in 1 8; do
        args=(preset --preset nn-fig1-full --layers 3 --w $w --heads 1 --runs 8 --steps 200)
        run default "$BENCH" "${args[@]}"
        HEADLAB_FUSED_QKV=0 run no-fused-qkv "$BENCH" "${args[@]}"
        HEADLAB_SPLIT_K=0 run no-split-k "$BENCH" "${args[@]}"
        HEADLAB_FUSED_QKV=0 HEADLAB_SPLIT_K=0 run plain "$BENCH" "${args[@]}"
    done
    (
        CAP="${FIDELITY_CAP_S:-280}"
        W="$(mktemp -d)"
        session l3-init-only-20k 3 20000 pytorch 1
        session l3-schedule-only-20k 3 20000 uniform 100
        for s in l3-init-only-20k l3-schedule-only-20k; do
            timeout -s TERM "$CAP" "$CLI" run "$W/$s.yaml" -o "$W/$s-out.yaml" > "$W/$s.log" 2>&1 &
        done
        wait
        for s in l3-init-only-20k l3-schedule-only-20k; do
            [[ -f "$W/$s-out.yaml" ]] || continue
            "$CLI" export-csv "$W/$s-out.yaml" -o "$W/$s-csv" > /dev/null 2>&1
            summarise "$s" "$W/$s-csv" >> "$R"
        done
    ) &
    fid=$!
    LOG="$OUTDIR/tests.txt"
    start=$SECONDS
    CTEST_ARGS=-V bash "$ROOT/scripts/gpu-tests.sh" > "$OUTDIR/gpu-tests-full.txt" 2>&1
    rc=$?
    grep -E "Test +#[0-9]+: |tests passed|FAIL|SKIP  |error:|Totals|TestCuda|Loc:" "$OUTDIR/gpu-tests-full.txt" |
        grep -v "^[0-9]*: PASS   : Test[^C]" | tail -150 > "$LOG"
    say "gpu-tests.sh exited $rc after $((SECONDS - start)) s" 2>&1 | tee -a "$LOG"
    wait "$fid"
    return "$rc"
}

case "$PHASE" in
final) phase_final ;;
tests) phase_tests ;;
round2) phase_round2 ;;
nnspeed) phase_nnspeed ;;
speed) phase_speed ;;
fidelity) phase_fidelity ;;
first)
    # One device call: the CLI and bench first, then the fidelity runs on the GPU in the
    # background while the suites build on the CPU and run; nothing here is timed.
    T="$ROOT/.deps/qt6-core-test.tar.xz"
    mkdir -p "$ROOT/build-core/qt6" && tar -C "$ROOT/build-core/qt6" -xJf "$T" && touch "$ROOT/build-core/qt6/.unpacked"
    start=$SECONDS
    bash "$ROOT/scripts/build-core.sh" headlab-cli headlab-bench >> "$OUTDIR/build.log" 2>&1 || { tail -30 "$OUTDIR/build.log"; exit 1; }
    say "CLI and bench built in $((SECONDS - start)) s"
    phase_fidelity &
    fid=$!
    phase_tests
    rc=$?
    wait "$fid"
    say "all done after $((SECONDS - start)) s"
    exit "$rc"
    ;;
*) echo "unknown phase $PHASE" >&2; exit 2 ;;
esac
