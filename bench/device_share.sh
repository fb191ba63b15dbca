#!/usr/bin/env bash
# device_share.sh — one device call shared by two pieces of long GPU work, side by side on the card
# and each under the call's time: issue 76's pruning inspections (bench/pruning_findings.sh, one
# job at a time, each started only when its expected time still fits) and a boundary search
# (bench/gpu_search.sh, stopped with SIGINT at the cap and resumed by the next call).
#
#   JOBS="pruning-text:6:zero:230 pruning-text:3:zero:110" \
#   SEARCH=oos-boundary:bench/sessions/oos-boundary.yaml:docs/data/issue77 \
#   TEXT_PATH=bench-out/data/tinyshakespeare.txt OUT=DIR bench/device_share.sh
#
# JOBS: PRESET:RUN:ABLATION:SECONDS, in order; SECONDS is the job's time alone on the card (from
# docs/data/issue76/h200/timing.jsonl), scaled by SLOW (default 1.5) for the card's sharing. A job
# that would end after BUDGET (default 560 s from the start) is left for the next call.
# SEARCH: NAME:SESSION:DATA for gpu_search.sh, or empty for none.
# State stays on the machine while it is warm: the pruning work in bench-out/pruning-work and its
# results in bench-out/pruning-h200 (a fresh directory: inspections already in docs/data are not
# skipped), the search in out/gpu_search. $OUT gets pruning.tgz (the results so far), the
# search's export and summary, and each side's log.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/bench-out/device-share}"; mkdir -p "$OUTDIR"
BUDGET="${BUDGET:-560}"
SLOW="${SLOW:-1.5}"
PRUNED="$ROOT/bench-out/pruning-h200"; mkdir -p "$PRUNED"
start=$SECONDS
say() { printf '[device_share %s +%ds] %s\n' "$(date +%T)" $((SECONDS - start)) "$*"; }

export CLI="$ROOT/build-core/app/cli/headlab-cli"
if [[ ! -x "$CLI" ]] || [[ -n "$(find "$ROOT/core" "$ROOT/app" -newer "$CLI" -name '*.[ch]*' | head -1)" ]]; then
    say "build"
    bash "$ROOT/scripts/build-core.sh" headlab-cli > "$OUTDIR/build.log" 2>&1 || { tail -30 "$OUTDIR/build.log"; exit 1; }
fi
say "built"

pruning() {
    local job preset run ablation seconds need
    for job in ${JOBS:-}; do
        IFS=: read -r preset run ablation seconds <<< "$job"
        [[ -s "$PRUNED/insp-$preset-$run-$ablation.json" ]] && continue
        # Training the preset (when this machine has not yet) comes first and is counted.
        need=$(awk -v s="$seconds" -v f="$SLOW" 'BEGIN { printf "%d", s * f }')
        [[ -f "$ROOT/bench-out/pruning-work/$preset.yaml" ]] || need=$((need + 180))
        if ((SECONDS - start + need > BUDGET)); then
            say "left for the next call: $job (needs ~${need} s)"
            continue
        fi
        say "inspecting $job"
        OUT="$PRUNED" PRESETS="$preset" PASSES="$ablation" RUNS="$preset:$run" \
            bash "$ROOT/bench/pruning_findings.sh"
    done
    say "pruning: $(ls "$PRUNED"/insp-*.json 2>/dev/null | wc -l) inspections in $PRUNED"
}

search() {
    [[ -n "${SEARCH:-}" ]] || return 0
    local name session data cap
    IFS=: read -r name session data <<< "$SEARCH"
    cap=$((BUDGET - 50 - (SECONDS - start)))
    ((cap > 60)) || { say "no time for the search"; return 0; }
    HEADLAB_SEARCH_NAME="$name" HEADLAB_SEARCH_SESSION="$session" HEADLAB_SEARCH_DATA="$data" \
        HEADLAB_SEARCH_DEVICE=cuda HEADLAB_SEARCH_CAP_S="$cap" OUT="$OUTDIR/search" \
        bash "$ROOT/bench/gpu_search.sh"
}

pruning > "$OUTDIR/pruning.log" 2>&1 &
p=$!
search > "$OUTDIR/search.log" 2>&1 &
s=$!
rc=0
wait $p || rc=$?
wait $s || rc=$?
tar czf "$OUTDIR/pruning.tgz" -C "$PRUNED" .
say "done ($rc)"
grep -h '^\[' "$OUTDIR/pruning.log" "$OUTDIR/search.log" || true
exit $rc
