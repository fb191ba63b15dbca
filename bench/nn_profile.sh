#!/usr/bin/env bash
# nn_profile.sh — issue 24: where nn-fig1-full's step time goes at the shapes where HeadLab is
# furthest from its 1.5× target over the compiled vmap ensemble (w 1). For each layer count in
# LAYERS (default "1 3") and width in WS (default "1"): a Kineto profile of RUNS (8) runs over STEPS
# (200) steps (`headlab-bench preset --profile 1`), then the steady rate of the same ensemble, on
# DEVICE (cuda:0). JSON lines in $OUT/nn_profile.jsonl; a summary of each profile on stdout (GPU and
# wall ms a step, kernels a step, the kernel classes and the ten longest kernels).
# Environment: LAYERS, WS, RUNS, STEPS, DEVICE, SKIP_BUILD=1. Needs .deps carried.
set -uo pipefail
RESULTS_NAME=nn_profile.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
LAYERS="${LAYERS:-1 3}"
WS="${WS:-1}"
RUNS="${RUNS:-8}"
STEPS="${STEPS:-200}"
DEVICE="${DEVICE:-cuda:0}"
command -v nvidia-smi > /dev/null && record_gpu
[[ "${SKIP_BUILD:-0}" == 1 && -x "$BENCH" ]] || build_core
for layers in $LAYERS; do
    for w in $WS; do
        log "$layers layers, w $w, $RUNS runs"
        for profile in 1 0; do
            "$BENCH" preset --preset nn-fig1-full --layers "$layers" --w "$w" --heads 1 --runs "$RUNS" \
                --steps "$STEPS" --profile "$profile" --device "$DEVICE" >> "$RESULTS"
        done
    done
done
python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
for r in rows:
    kind = r.get("profile")
    if kind == "total":
        print(f"\n{r['layers']} layers, w {r['w']}: GPU {r['gpu_ms_per_step']:.3f} ms a step, "
              f"wall {r['wall_ms_per_step']:.3f} ms, {r['kernels_per_step']:.0f} kernels a step")
    elif kind == "class":
        print(f"  class {r['class']:<14} {r['ms_per_step']:.3f} ms ({r['share']:.0%}), "
              f"{r['kernels_per_step']:.1f} kernels")
    elif "run_steps_per_s" in r and r.get("timing") != "profiled":
        print(f"  steady: {r['run_steps_per_s']:.0f} run-steps/s ({r['steps_per_s']:.1f} steps/s)")
top = {}
for r in rows:
    if r.get("profile") == "kernel":
        top.setdefault((r["layers"], r["w"]), []).append(r)
for (layers, w), ks in top.items():
    print(f"\nlongest kernels, {layers} layers, w {w}:")
    for r in ks[:10]:
        print(f"  {r['ms_per_step']:.3f} ms ({r['share']:.0%}) x{r['per_step']:.0f} {r['class']}: {r['name'][:90]}")
PY
