#!/usr/bin/env bash
# text_speed.sh — issue 24's text comparison, in one run on the GPU machine: HeadLab's text task
# against nanoGPT's own model.py (bench/nanogpt_peer.py; carry .peers/nanoGPT, which
# scripts/fetch-peers.sh makes), at the head-progression preset's shapes (d 256, 4 layers, context
# 128, batch 64, TF32 on as the preset has it).
#   1. The loss check first: headlab-cli trains bench/sessions/text-nanogpt-check.yaml (nanoGPT's
#      conventions, 40 steps) and nanogpt_peer.py check loads its last checkpoint into nanoGPT and
#      compares the loss on the same bytes. The script stops if they differ.
#   2. HeadLab, one run per schedule: headlab-bench preset --preset head-progression --schedules S.
#   3. nanoGPT, one run per schedule, eager and under torch.compile.
#   4. With E2E=1, the whole 18-run preset: `headlab-cli run --preset head-progression` against the
#      same 18 runs of nanoGPT (compiled, each afresh) one after another, wall time with compiling.
#      Both sides keep what finished in E2E_STATE, so the whole spreads over calls (E2E_BUDGET).
#      E2E=only skips 1-3.
# JSON lines in $OUT/text_speed.jsonl, the ratios on stdout. Environment: SCHEDULES
# ("1,2,4,8;4,4,4,4;8,4,2,1"), STEPS (300), E2E (0, 1 or only), E2E_STATE ($OUT/e2e-state),
# E2E_BUDGET (seconds, 0 for none), SKIP_BUILD=1. Exit status 3: the end to end is not finished.
set -uo pipefail
RESULTS_NAME=text_speed.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
SCHEDULES="${SCHEDULES:-1,2,4,8;4,4,4,4;8,4,2,1}"
STEPS="${STEPS:-300}"
PEER="$ROOT/bench/nanogpt_peer.py"
[[ -f "$ROOT/.peers/nanoGPT/model.py" ]] || { echo "no .peers/nanoGPT: run scripts/fetch-peers.sh and carry .peers" >&2; exit 1; }
record_gpu
[[ "${SKIP_BUILD:-0}" == 1 ]] || build_core

if [[ "${E2E:-0}" != only ]]; then
log "loss check: HeadLab's weights in nanoGPT's model.py"
CHECK="$OUTDIR/text-check"
rm -rf "$CHECK" && mkdir -p "$CHECK"
"$CLI" run "$ROOT/bench/sessions/text-nanogpt-check.yaml" -o "$CHECK/s.yaml" --device cpu > "$CHECK/log" 2>&1 ||
    { tail "$CHECK/log"; exit 1; }
PYTHONPATH="$ROOT/python" python3 "$PEER" check \
    --checkpoint "$(ls "$CHECK"/s.results/checkpoints/*/step-000000040.safetensors)" |
    grep '^{' | tee -a "$RESULTS" | grep -q '"ok": true' || { log "the peer does not compute HeadLab's loss: not timed"; exit 1; }

for schedule in ${SCHEDULES//;/ }; do
    log "HeadLab, $schedule"
    "$BENCH" preset --preset head-progression --schedules "$schedule" --runs 1 --steps "$STEPS" \
        --device cuda:0 | tee -a "$RESULTS"
done
for compile in 0 1; do
    log "nanoGPT, compile $compile"
    python3 "$PEER" speed --schedules "$SCHEDULES" --steps "$STEPS" --compile "$compile" --tf32 1 |
        grep '^{' | tee -a "$RESULTS"
done
fi
if [[ "${E2E:-0}" != 0 ]]; then
    # Each side's finished work is kept in E2E_STATE: HeadLab's timed sweep as one line, nanoGPT's
    # runs a line each (nanogpt_peer.py --resume). A call whose E2E_BUDGET (seconds from here) is
    # spent stops between nanoGPT runs with exit status 3; the next call goes on from there.
    STATE_E2E="${E2E_STATE:-$OUTDIR/e2e-state}"
    mkdir -p "$STATE_E2E"
    e2e_start=$SECONDS
    if [[ ! -s "$STATE_E2E/headlab.jsonl" ]]; then
        log "end to end: the 18-run preset"
        rm -rf "$OUTDIR/e2e"
        t0=$(date +%s.%N)
        "$CLI" run --preset head-progression -o "$OUTDIR/e2e/hp.yaml" --device cuda:0 > "$OUTDIR/e2e.log" 2>&1 ||
            { tail "$OUTDIR/e2e.log"; exit 1; }
        t1=$(date +%s.%N)
        awk -v a="$t0" -v b="$t1" 'BEGIN{printf "{\"impl\": \"headlab-cli\", \"e2e\": true, \"runs\": 18, \"seconds\": %.1f}\n", b-a}' \
            > "$STATE_E2E/headlab.jsonl"
        rm -rf "$OUTDIR/e2e" # 690 MB of checkpoints and logs: the time is what is kept
    fi
    all=$("$BENCH" preset --preset head-progression --steps 10 --runs 18 --device cuda:0 |
          python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["schedules"])')
    budget="${E2E_BUDGET:-0}"
    ((budget > 0)) && { budget=$((budget - (SECONDS - e2e_start))); ((budget > 0)) || budget=1; }
    log "end to end: nanoGPT's 18 runs one after another (compiled; budget ${budget}s, 0 for none)"
    peer=$(python3 "$PEER" speed --schedules "$all" --repeats 2 --steps 4000 --warmup 0 --timings 1 \
        --compile 1 --tf32 1 --resume "$STATE_E2E/nanogpt.jsonl" --budget "$budget" | tee /dev/stderr)
    rc=$?
    if ((rc == 3)); then
        log "end to end: $(grep -c . "$STATE_E2E/nanogpt.jsonl") of 18 nanoGPT runs so far (run again on this machine)"
        exit 3
    fi
    ((rc == 0)) || { log "nanoGPT's end-to-end runs failed"; exit 1; }
    cat "$STATE_E2E/headlab.jsonl" | tee -a "$RESULTS"
    grep '"total": true' <<< "$peer" | sed 's/^{/{"e2e": true, /' | tee -a "$RESULTS"
fi
python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ours = {r["schedules"]: r["steps_per_s"] for r in rows if r.get("impl") == "headlab-preset"}
for r in rows:
    if r.get("impl", "").startswith("nanogpt") and "schedule" in r and r["schedule"] in ours:
        print(json.dumps({"ratio": f"HeadLab / {r['impl']}", "schedule": r["schedule"],
                          "headlab_steps_per_s": round(ours[r["schedule"]], 1),
                          "peer_steps_per_s": round(r["steps_per_s"], 1),
                          "ratio_value": round(ours[r["schedule"]] / r["steps_per_s"], 2)}))
PY
