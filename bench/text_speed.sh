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
#      same 18 runs of nanoGPT (compiled) one after another, wall time with compiling.
# JSON lines in $OUT/text_speed.jsonl, the ratios on stdout. Environment: SCHEDULES
# ("1,2,4,8;4,4,4,4;8,4,2,1"), STEPS (300), E2E (0), SKIP_BUILD=1.
set -uo pipefail
RESULTS_NAME=text_speed.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
SCHEDULES="${SCHEDULES:-1,2,4,8;4,4,4,4;8,4,2,1}"
STEPS="${STEPS:-300}"
PEER="$ROOT/bench/nanogpt_peer.py"
[[ -f "$ROOT/.peers/nanoGPT/model.py" ]] || { echo "no .peers/nanoGPT: run scripts/fetch-peers.sh and carry .peers" >&2; exit 1; }
record_gpu
[[ "${SKIP_BUILD:-0}" == 1 ]] || build_core

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
if [[ "${E2E:-0}" == 1 ]]; then
    log "end to end: the 18-run preset"
    all=$("$BENCH" preset --preset head-progression --steps 10 --runs 18 --device cuda:0 |
          python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["schedules"])')
    t0=$(date +%s.%N)
    "$CLI" run --preset head-progression -o "$OUTDIR/e2e/hp.yaml" --device cuda:0 > "$OUTDIR/e2e.log" 2>&1
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN{printf "{\"impl\": \"headlab-cli\", \"e2e\": true, \"runs\": 18, \"seconds\": %.1f}\n", b-a}' | tee -a "$RESULTS"
    python3 "$PEER" speed --schedules "$all" --repeats 2 --steps 4000 --warmup 0 --timings 1 --compile 1 --tf32 1 |
        grep '"total": true' | sed 's/^{/{"e2e": true, /' | tee -a "$RESULTS"
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
