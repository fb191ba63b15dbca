#!/usr/bin/env bash
# gpu_multi4.sh — issue 24, item 4: the speed-up of several GPUs over one, as a user trains: the
# same `headlab-cli run` of a session on cuda:0 alone and then on every GPU (--device all), in one
# call on one machine. Two sessions, both from the built-in presets with their step counts cut:
#   addition-fig2-grid (25 runs, d_model 24..384 x heads 1..12) at STEPS_ADD (3000) steps;
#   an nn-fig1-full slice: 1 layer, w 1 and 8, rank 64 .. 1 (14 runs) at STEPS_NN (2000) steps.
# Each session is timed with the scheduler's defaults and with each --max-ensemble of MAX_ENSEMBLES
# (default "2"). JSON lines in $OUT/multi4.jsonl: wall seconds, run-steps/s, and the speed-up of
# all GPUs over one for the same options. Environment: STEPS_ADD, STEPS_NN, MAX_ENSEMBLES,
# SKIP_BUILD=1.
set -uo pipefail
RESULTS_NAME=multi4.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
STEPS_ADD="${STEPS_ADD:-3000}"
STEPS_NN="${STEPS_NN:-2000}"
MAX_ENSEMBLES="${MAX_ENSEMBLES:-2}"
record_gpu
[[ "${SKIP_BUILD:-0}" == 1 ]] || build_core
GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
WORK="$OUTDIR/multi4"
mkdir -p "$WORK"

# The sessions: the presets with fewer steps (and the nn slice's sweep).
sed -e 's/steps: 30000/steps: '"$STEPS_ADD"'/' -e 's/^name: .*/name: multi4-addition/' \
    "$ROOT/resources/presets/addition-fig2-grid.yaml" > "$WORK/addition.yaml"
sed -e 's/steps: 100000/steps: '"$STEPS_NN"'/' -e 's/^name: .*/name: multi4-nn/' \
    -e 's/^  layers: \[1, 3, 5\]/  layers: [1]/' -e 's/^  width_multiplier: \[1, 8, 64\]/  width_multiplier: [1, 8]/' \
    "$ROOT/resources/presets/nn-fig1-full.yaml" > "$WORK/nn.yaml"

# time_run NAME DEVICE [OPTIONS...]: one headlab-cli run, its wall seconds as a JSON line.
time_run() {
    local name="$1" device="$2"; shift 2
    local out="$WORK/$name-${device//[:,]/_}-$RANDOM.yaml"
    local runs steps t0 t1
    runs=$("$CLI" validate "$WORK/$name.yaml" | sed -n 's/.*: \([0-9]*\) runs.*/\1/p')
    t0=$(date +%s.%N)
    "$CLI" run "$WORK/$name.yaml" -o "$out" --device "$device" "$@" --progress-every 60 \
        > "$out.log" 2>&1
    local rc=$?
    t1=$(date +%s.%N)
    local done_runs
    done_runs=$(sed -n 's/.*: \([0-9]*\) done,.*/\1/p' "$out.log" | tail -1)
    printf '{"impl": "headlab-cli", "session": "%s", "device": "%s", "options": "%s", "runs": %s, "done": %s, "rc": %d, "seconds": %.2f}\n' \
        "$name" "$device" "$*" "$runs" "${done_runs:-0}" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" | tee -a "$RESULTS"
}

for name in addition nn; do
    for opts in "" $(for m in ${MAX_ENSEMBLES//,/ }; do echo "--max-ensemble=$m"; done); do
        log "$name ${opts:-defaults}: cuda:0, then all $GPUS GPUs"
        time_run "$name" cuda:0 $opts
        time_run "$name" all $opts
    done
done
# The speed-ups, from the lines above.
python3 - "$RESULTS" <<'PY' | tee -a "$RESULTS"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"impl"')]
for r in rows:
    if r["device"] != "all":
        continue
    one = [o for o in rows if o["session"] == r["session"] and o["options"] == r["options"]
           and o["device"] == "cuda:0"]
    if one:
        print(json.dumps({"speedup": r["session"], "options": r["options"] or "defaults",
                          "one_gpu_s": one[-1]["seconds"], "all_gpus_s": r["seconds"],
                          "ratio": round(one[-1]["seconds"] / r["seconds"], 2)}))
PY
