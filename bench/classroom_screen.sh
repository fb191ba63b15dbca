#!/usr/bin/env bash
# classroom_screen.sh — the screens behind the classroom preset (issue 22, docs/FINDINGS.md):
# trains bench/sessions/classroom-screen*.yaml (short addition runs, ten seeds each) on the GPU
# machine, writes each one's runs.csv to $OUT/NAME/ and prints bench/classroom_pick.py's table
# (curves.csv is too large to bring back). Resumable: a second call on the same machine continues
# where a stopped one left off (the sessions live in build-core/classroom-screen/).
#
# Each session's test curves also come back, compressed, as NAME/test.csv.gz (run, step, loss), for
# bench/classroom_message.py.
#
#   bash bench/classroom_screen.sh SECONDS NAME...   NAME: classroom-screen, classroom-msg-base, …
#   SCREEN_DEVICE: the CLI's --device (default cuda; "all" for every visible GPU)
set -euo pipefail
RESULTS_NAME=classroom-screen.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
budget="$1"; shift
[[ -x "$CLI" ]] || build_core
record_gpu
work="$ROOT/build-core/classroom-screen"
mkdir -p "$work"
end=$((SECONDS + budget))
for name in "$@"; do
    session="$work/$name.yaml"
    [[ -f "$session" ]] || cp "$ROOT/bench/sessions/$name.yaml" "$session"
    left=$((end - SECONDS))
    ((left > 0)) || { log "out of time before $name"; break; }
    log "$name: training for at most $left s"
    rc=0
    timeout -s INT "$left" "$CLI" run "$session" --device "${SCREEN_DEVICE:-cuda}" --concurrent 8 > "$work/$name.log" 2>&1 || rc=$?
    log "$name: run exited $rc"
    "$CLI" status "$session" >&2 || true
    mkdir -p "$work/$name.csv" "$OUTDIR/$name"
    "$CLI" export-csv "$session" -o "$work/$name.csv" >&2
    cp "$work/$name.csv/runs.csv" "$OUTDIR/$name/"
    { echo "run,step,loss"; awk -F, 'NR > 1 && $2 == "test" { print $1 "," $3 "," $4 }' \
        "$work/$name.csv/curves.csv"; } | gzip -9 > "$OUTDIR/$name/test.csv.gz"
    warmup="$(python3 -c 'import sys,re; print(re.search(r"steps: (\d+)", open(sys.argv[1]).read()).group(1))' "$session")"
    python3 "$ROOT/bench/classroom_pick.py" "$work/$name.csv" "$warmup" ${PICK_STEPS:-1000 1500 2000 2500 3000} | tee "$OUTDIR/$name/pick.txt"
done
