#!/usr/bin/env bash
# gpu_multi4.sh — issue 24, item 4: the speed-up of several GPUs over one, as a user trains: the
# same `headlab-cli run` of a session on cuda:0 alone and then on every GPU (--device all), in one
# call on one machine. Two sessions, both from the built-in presets with their step counts cut:
#   addition: addition-fig2-grid (25 runs, d_model 24..384 x heads 1..12) at STEPS_ADD steps;
#   nn: an nn-fig1-full slice, 1 layer, w 1 and 8, rank 64 .. 1 (14 runs) at STEPS_NN steps;
#   nn5: the same with seeds 0..4 (70 runs), not in the default SESSIONS.
# Each session is timed in each of VARIANTS, DEVICE|ENV (ENV "-" for none), by default
# "cuda:0|- all|- all|HEADLAB_PLACEMENT=0": one card, every card with the ensembles placed on the
# cards before they start, and every card drawing from one queue (whichever card's worker is free
# takes the next); "cuda:0|HEADLAB_HEAD_GROUPS=0" times one card with mixed head counts in one
# ensemble. Each is also timed with each --max-ensemble of MAX_ENSEMBLES (default none). While a
# run trains, nvidia-smi samples every card's utilization twice a second: each JSON line has its
# mean per card and when each card was first and last busy; each run's card and wall seconds go
# into the archive (headlab-cli export-csv's runs.csv). JSON lines in $OUT/multi4.jsonl (wall
# seconds, and the speed-up of all GPUs over one for the same options); the run logs, the samples,
# the sessions written and the runs.csv files in $OUT/multi4-runs.tar.gz. Environment: SESSIONS
# ("addition nn"), VARIANTS, STEPS_ADD (9000), STEPS_NN (6000), MAX_ENSEMBLES, SKIP_BUILD=1.
set -uo pipefail
RESULTS_NAME=multi4.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
STEPS_ADD="${STEPS_ADD:-9000}"
STEPS_NN="${STEPS_NN:-6000}"
MAX_ENSEMBLES="${MAX_ENSEMBLES:-}"
SESSIONS="${SESSIONS:-addition nn}"
VARIANTS="${VARIANTS:-cuda:0|- all|- all|HEADLAB_PLACEMENT=0}"
record_gpu
[[ "${SKIP_BUILD:-0}" == 1 && -x "$CLI" ]] || build_core
GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
WORK="$ROOT/bench-out/multi4"
mkdir -p "$WORK"

# The sessions: the presets with fewer steps (and the nn slice's sweep).
STEPS_ADD="$STEPS_ADD" STEPS_NN="$STEPS_NN" bash "$ROOT/bench/multi4_sessions.sh" "$WORK"

# time_run NAME DEVICE ENV [OPTIONS...]: one headlab-cli run (with ENV, NAME=VALUE, unless it is
# "-"), its wall seconds and its cards' utilization as a JSON line.
time_run() {
    local name="$1" device="$2" envset="$3"; shift 3
    local tag="$name-${device//[:,]/_}-${envset//[^A-Za-z0-9]/_}-$RANDOM"
    local out="$WORK/$tag.yaml"
    local runs t0 t1 sampler
    runs=$("$CLI" validate "$WORK/$name.yaml" | sed -n 's/.*: \([0-9]*\) runs.*/\1/p')
    nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader,nounits -lms 500 \
        > "$WORK/$tag.util" 2>/dev/null &
    sampler=$!
    t0=$(date +%s.%N)
    local envargs=()
    [[ $envset == - ]] || envargs=("$envset")
    env "${envargs[@]}" "$CLI" run "$WORK/$name.yaml" -o "$out" --device "$device" "$@" \
        --progress-every 60 > "$WORK/$tag.log" 2>&1
    local rc=$?
    t1=$(date +%s.%N)
    kill "$sampler" 2>/dev/null
    wait "$sampler" 2>/dev/null
    # Each run's card and wall seconds (runs.csv) for the archive: which piece ran where, how long.
    "$CLI" export-csv "$out" -o "$WORK/$tag.csv.d" > /dev/null 2>&1 &&
        mv "$WORK/$tag.csv.d/runs.csv" "$WORK/$tag-runs.csv"
    rm -rf "$WORK/$tag.csv.d"
    local done_runs util
    done_runs=$(sed -n 's/.*: \([0-9]*\) done,.*/\1/p' "$WORK/$tag.log" | tail -1)
    # Per card: the mean utilization (%) over the run, and the seconds into it when it was first
    # and last above 0 (the sampler starts with the run).
    util=$(awk -F', *' -v n="$GPUS" '{ k[$1]++; s[$1] += $2
            if ($2 > 0) { last[$1] = k[$1]; if (!($1 in first)) first[$1] = k[$1] } }
        END { printf "["; for (g = 0; g < n; g++) printf "%s{\"gpu\": %d, \"mean\": %.1f, \"first_busy_s\": %.1f, \"last_busy_s\": %.1f}",
              (g ? ", " : ""), g, k[g] ? s[g] / k[g] : 0, first[g] / 2, last[g] / 2; printf "]" }' "$WORK/$tag.util")
    printf '{"impl": "headlab-cli", "session": "%s", "steps": %s, "device": "%s", "env": "%s", "options": "%s", "runs": %s, "done": %s, "rc": %d, "seconds": %.2f, "tag": "%s", "utilization": %s}\n' \
        "$name" "$([[ $name == nn* ]] && echo "$STEPS_NN" || echo "$STEPS_ADD")" "$device" \
        "$envset" "$*" "$runs" "${done_runs:-0}" "$rc" \
        "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" "$tag" "$util" | tee -a "$RESULTS"
}

for name in $SESSIONS; do
    for opts in "" $(for m in ${MAX_ENSEMBLES//,/ }; do echo "--max-ensemble=$m"; done); do
        for variant in $VARIANTS; do
            log "$name ${opts:-defaults}: ${variant%%|*} (${variant#*|}), $GPUS GPUs here"
            time_run "$name" "${variant%%|*}" "${variant#*|}" $opts
        done
    done
done
# The speed-ups, from the lines above: every card, and each switch on one card, over one card.
python3 - "$RESULTS" <<'PY' | tee -a "$RESULTS"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"impl"')]
for r in rows:
    if r["device"] != "all" and r.get("env", "-") == "-":
        continue
    one = [o for o in rows if o["session"] == r["session"] and o["options"] == r["options"]
           and o["device"] == "cuda:0" and o.get("env", "-") == "-"
           and o.get("steps") == r.get("steps")]
    if one:
        print(json.dumps({"speedup": r["session"], "options": r["options"] or "defaults",
                          "device": r["device"], "env": r.get("env", "-"),
                          "one_gpu_s": one[-1]["seconds"], "seconds": r["seconds"],
                          "ratio": round(one[-1]["seconds"] / r["seconds"], 2)}))
PY
(cd "$WORK" && tar -czf "$OUTDIR/multi4-runs.tar.gz" ./*.log ./*.util ./*.yaml ./*-runs.csv) 2>/dev/null
