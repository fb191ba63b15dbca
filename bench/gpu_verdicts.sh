#!/usr/bin/env bash
# gpu_verdicts.sh — does TF32 change who learns? Trains the full-length grid protocol at the widths
# WIDTHS (default "24, 48": 100 runs, 5 head counts × 10 learning rates, one 50-run ensemble per
# width) in FP32 and in TF32 at the same time on one GPU, each under a wall-clock cap (CAP_S, default 480 s; runs cut by the cap
# are saved as stopped and resumed by running the same command again with the saved sessions),
# then compares final test losses and verdicts. Writes $OUT/verdicts-{fp32,tf32}.yaml and
# $OUT/verdicts.txt.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/bench-out}"; mkdir -p "$OUTDIR"
CAP_S="${CAP_S:-480}"
WIDTHS="${WIDTHS:-24, 48}"
TAG="${TAG:-}" # suffix of the session files, e.g. -m96
bash "$ROOT/scripts/build-core.sh" > "$OUTDIR/build.log" 2>&1 || { tail -30 "$OUTDIR/build.log"; exit 1; }
CLI="$ROOT/build-core/app/cli/headlab-cli"
for p in fp32 tf32; do
    in="$OUTDIR/verdicts-$p$TAG.yaml"
    [[ -f $in ]] || sed -e "s/^  d_model: \[24, 48\]$/  d_model: [$WIDTHS]/" \
                        -e "s/at m 24 and 48, 5 head counts x 10 lr (100 runs)/at m $WIDTHS, 5 head counts x 10 lr/" \
                        "$ROOT/bench/sessions/verdicts-$p.yaml" > "$in"
    timeout -s INT "$CAP_S" "$CLI" run "$in" --device cuda > "$OUTDIR/verdicts-$p$TAG.log" 2>&1 &
done
wait
python3 - "$OUTDIR" "$TAG" <<'PY' | tee "$OUTDIR/verdicts$TAG.txt"
import math, sys, yaml
out, tag = sys.argv[1], sys.argv[2]
def load(p):
    s = yaml.safe_load(open(f"{out}/verdicts-{p}{tag}.yaml"))
    return {(tuple(sorted(r["labels"].items()))): r for r in s["runs"]}
fp, tf = load("fp32"), load("tf32")
both = [k for k in fp if k in tf and fp[k]["status"] == "done" and tf[k]["status"] == "done"]
agree = sum(fp[k]["metrics"].get("left_ln10_plateau") == tf[k]["metrics"].get("left_ln10_plateau") for k in both)
agree_paper = sum(fp[k]["metrics"].get("learned") == tf[k]["metrics"].get("learned") for k in both)
diffs = [abs(fp[k]["metrics"]["final_test_loss"] - tf[k]["metrics"]["final_test_loss"]) for k in both]
print(f"runs finished in both: {len(both)} of {len(fp)}")
if both:
    print(f"verdict (left the ln 10 plateau) agrees on {agree}/{len(both)} = {100*agree/len(both):.1f} %")
    print(f"verdict (paper's rule, final < ln 10) agrees on {agree_paper}/{len(both)} = {100*agree_paper/len(both):.1f} %")
    diffs.sort()
    print(f"|final test loss FP32 - TF32|: median {diffs[len(diffs)//2]:.4f}, max {diffs[-1]:.4f}")
    for k in both:
        a, b = fp[k]["metrics"], tf[k]["metrics"]
        if a.get("left_ln10_plateau") != b.get("left_ln10_plateau"):
            print("  differs:", dict(k), f"fp32 {a['final_test_loss']:.4f} tf32 {b['final_test_loss']:.4f}")
PY
