#!/usr/bin/env bash
# attention_check.sh — issue 24, item 2, on the GPU machine: the micro-heads' attention kernel
# (core/model/cuda/MicroAttention.cu). Builds test_cuda and headlab-bench only, runs tests/cuda
# fusedMicroAttentionEqualsAten, then times HeadLab with the kernel on and off
# (HEADLAB_FUSED_ATTENTION=0) in the same call: nn-fig1-full's 1-layer line at w 1, 8 and 64 (8
# runs, FP32), text at two head-progression schedules (one run, TF32 as the preset has it) and
# addition's one run at 24 × 1 and 384 × 12 (FP32); then profiles nn at w 64 with the kernel on.
# Needs .deps carried. Output: $OUT/attention-check.jsonl; the ratios on stdout.
# Environment: SKIP_BUILD=1, SKIP_TEST=1, KEEP_GOING=1 (time even when the test failed), STEPS (200).
set -uo pipefail
RESULTS_NAME=attention-check.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
STEPS="${STEPS:-200}"
kernel_check_setup
if [[ "${SKIP_TEST:-0}" != 1 ]]; then
    "$(find "$ROOT/build-core" -name test_cuda -type f | head -1)" fusedMicroAttentionEqualsAten 2>&1 |
        grep -v "^QDEBUG\|^QWARN" | tail -8
    if [[ ${PIPESTATUS[0]} != 0 ]]; then
        log "the equivalence test FAILED"
        [[ "${KEEP_GOING:-0}" == 1 ]] || exit 1
    fi
fi
tag() { sed "s/^{/{\"fused_attention\": $1, /"; }
for on in 1 0; do
    log "kernel $on"
    for w in 1 8 64; do
        HEADLAB_FUSED_ATTENTION=$on "$BENCH" preset --preset nn-fig1-full --layers 1 --w "$w" --heads 1 \
            --runs 8 --steps "$STEPS" --device cuda:0 | tag $on >> "$RESULTS"
    done
    for schedule in 1,2,4,8 4,4,4,4; do
        HEADLAB_FUSED_ATTENTION=$on "$BENCH" preset --preset head-progression --schedules "$schedule" \
            --runs 1 --steps "$STEPS" --device cuda:0 | tag $on >> "$RESULTS"
    done
    HEADLAB_FUSED_ATTENTION=$on "$BENCH" single --device cuda:0 --shapes 24x1,384x12 --steps 1000 |
        tag $on >> "$RESULTS"
done
"$BENCH" preset --preset nn-fig1-full --layers 1 --w 64 --heads 1 --runs 8 --steps "$STEPS" \
    --profile 1 --device cuda:0 | tag 1 >> "$RESULTS"
python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"fused_attention"')]
def rate(on, match):
    return next((r for r in rows if r["fused_attention"] == on and "profile" not in r
                 and r.get("timing") != "profiled" and match(r)), None)
def show(name, match, key="steps_per_s"):
    a, b = (rate(on, match) for on in (1, 0))
    if a and b:
        print(f"{name}: kernel on {a[key]:.1f}, off {b[key]:.1f}: {a[key] / b[key]:.3f}x "
              f"(attention {a.get('attention')})")
for w in (1, 8, 64):
    show(f"nn 1 layer w {w}, run-steps/s", lambda r: r.get("preset") == "nn-fig1-full" and r.get("w") == w,
         "run_steps_per_s")
for s in ("1,2,4,8", "4,4,4,4"):
    show(f"text {s}, steps/s", lambda r: r.get("schedules") == s)
for m, h in ((24, 1), (384, 12)):
    show(f"addition {m} x {h}, steps/s", lambda r: r.get("m") == m and r.get("heads") == h)
for r in rows:
    if r.get("profile") in ("total", "class"):
        print(r.get("profile"), r.get("class", ""), r.get("ms_per_step", r.get("gpu_ms_per_step")),
              r.get("kernels_per_step"))
PY
