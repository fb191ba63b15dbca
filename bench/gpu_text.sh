#!/usr/bin/env bash
# gpu_text.sh — runs the two presets of issue 6 on the GPU machine and exports them as CSV:
#   head-progression        per-layer head schedules on byte-level language modelling (§3)
#   qk-rule-addition-grid   the QK learning-rate rule, off against on, on the Figure 2 grid (§4)
# and prints a summary table of each (loss against total heads per scheme with wall time; the two
# heatmaps of final test loss, rule off and rule on).
#
# For the GPU machine (Ubuntu 24.04, CUDA 13, PyTorch 2.11 in the system python, no Qt, nothing to
# download). Builds the core and headlab-cli with scripts/build-core.sh into build-core/ unless
# HEADLAB_CLI points at a built binary (the build is not counted in the budget below).
#
# The 18 head-progression runs train as 9 ensembles, one per head schedule (its 2 seeds; measured
# with headlab-bench preset, issue 14) and the grid is five (one per m). The head-progression
# preset runs as shipped (4,000 steps); the grid's 30,000-step answer phase is REDUCED by default.
# Both run at the same time, each under a wall-clock cap. Because an ensemble's runs share one
# clock, the time per schedule is measured afterwards in a TIMING PASS: each of the nine schedules
# trained alone, one seed, HEADLAB_TEXT_TIMING_STEPS steps, one after the other with nothing else
# on the GPU. Overrides (environment):
#   HEADLAB_TEXT_FULL=1          run both presets exactly as shipped (headlab-cli run --preset NAME)
#   HEADLAB_TEXT_STEPS=N         head-progression training steps (default 4000, as the preset)
#   HEADLAB_QK_ANSWER_STEPS=N    grid answer-phase steps (default 10000 of the paper's 30000; the
#                                500-step next_token warm-up is kept)
#   HEADLAB_TEXT_BUDGET_S=S      wall-clock cap per preset in seconds (default 360). At the cap the
#                                CLI gets SIGINT, saves the finished runs and marks the rest
#                                stopped, so a partial sweep is still a valid session.
#   HEADLAB_TEXT_TIMING_STEPS=N  steps per schedule in the timing pass (default 1000; 0 skips it)
#   HEADLAB_TEXT_DEVICE=D        the device (default cuda; cpu to try the script on a small scale)
#   HEADLAB_TEXT_PRESETS="A B"   which of the two presets to run (default both)
#   HEADLAB_CLI_ARGS="..."       more options for headlab-cli run (e.g. --concurrent 6)
# The reduced sessions are the preset files with only the step counts, the description and (for
# the grid) the order of the d_model axis (largest first, so the cap cuts the cheap cells) changed;
# they are written next to the results as NAME-input.yaml.
#
# Writes under $OUT (default ./out/gpu_text), for NAME in the two presets:
#   NAME.yaml            the session with every run's curves, metrics and (text) samples
#   NAME-csv/runs.csv    one row per run: labels, configuration, status, wall_seconds, metrics
#   NAME-csv/curves.csv  every curve point (train, test)
#   NAME-log.txt         headlab-cli's output
#   NAME-table.txt       the summary printed at the end
# and head-progression-timing.csv (schedule, heads, steps, wall_seconds, steps_per_second) with the
# timing pass's sessions under timing/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-$ROOT/out/gpu_text}"
FULL="${HEADLAB_TEXT_FULL:-0}"
TEXT_STEPS="${HEADLAB_TEXT_STEPS:-4000}"
ANSWER_STEPS="${HEADLAB_QK_ANSWER_STEPS:-10000}"
BUDGET="${HEADLAB_TEXT_BUDGET_S:-360}"
TIMING_STEPS="${HEADLAB_TEXT_TIMING_STEPS:-1000}"
DEVICE="${HEADLAB_TEXT_DEVICE:-cuda}"
read -r -a PRESETS <<<"${HEADLAB_TEXT_PRESETS:-head-progression qk-rule-addition-grid}"
read -r -a CLI_ARGS <<<"${HEADLAB_CLI_ARGS:-}"
mkdir -p "$OUT"

say() { printf '[gpu_text] %s\n' "$*"; }

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true

CLI="${HEADLAB_CLI:-$ROOT/build-core/app/cli/headlab-cli}"
if [[ -z "${HEADLAB_CLI:-}" ]]; then
    say "building headlab-cli (scripts/build-core.sh)"
    start=$SECONDS
    "$ROOT/scripts/build-core.sh"
    say "built in $((SECONDS - start)) s"
fi
[[ -x "$CLI" ]] || { say "error: no headlab-cli at $CLI"; exit 1; }

# The reduced session of a preset: its file with the step counts replaced.
reduce() {
    local name=$1 out=$2
    python3 - "$ROOT/resources/presets/$name.yaml" "$out" "$name" "$TEXT_STEPS" "$ANSWER_STEPS" <<'PY'
import re, sys
src, dst, name, text_steps, answer_steps = sys.argv[1:6]
text = open(src, encoding="utf-8").read()
if name == "head-progression":
    text, n = re.subn(r"(\n      steps: )4000\n", rf"\g<1>{int(text_steps)}\n", text)
    note = "as shipped" if int(text_steps) == 4000 else f"reduced to {int(text_steps)} steps by bench/gpu_text.sh"
else:
    text, n = re.subn(r"(\n      steps: )30000\n", rf"\g<1>{int(answer_steps)}\n", text)
    note = f"answer phase reduced to {int(answer_steps)} steps by bench/gpu_text.sh"
    # Largest m first: if the cap stops the sweep, the cells that matter most (few heads at
    # large m, where η = 1e-3 fails without the rule) are done.
    text = text.replace("  d_model: [24, 48, 96, 192, 384]\n", "  d_model: [384, 192, 96, 48, 24]\n")
if n != 1:
    sys.exit(f"gpu_text.sh: cannot find the step count to reduce in {src}")
text = re.sub(r'\ndescription: "(.*)"\n', lambda m: f'\ndescription: "{m.group(1)} [{note}]"\n', text, count=1)
open(dst, "w", encoding="utf-8").write(text)
PY
}

run_preset() {
    local name=$1 status=0
    local args=(run --preset "$name")
    if [[ "$FULL" != 1 ]]; then
        reduce "$name" "$OUT/$name-input.yaml"
        args=(run "$OUT/$name-input.yaml")
    fi
    local start=$SECONDS
    timeout -s INT -k 60 "$BUDGET" "$CLI" "${args[@]}" -o "$OUT/$name.yaml" --device "$DEVICE" "${CLI_ARGS[@]}" \
        >"$OUT/$name-log.txt" 2>&1 || status=$?
    echo "$status" >"$OUT/$name-status"
    say "$name: headlab-cli exited $status after $((SECONDS - start)) s (124: stopped at the ${BUDGET} s cap, finished runs saved)"
}

if [[ "$FULL" == 1 ]]; then
    say "running the full presets (HEADLAB_TEXT_FULL=1), cap ${BUDGET} s each"
else
    say "running: head-progression ${TEXT_STEPS} steps, grid answer phase ${ANSWER_STEPS} steps, cap ${BUDGET} s each"
fi
# Both at once: the two processes overlap their host work and launches; their GPU time adds up.
for name in "${PRESETS[@]}"; do run_preset "$name" & done
wait

# The timing pass: each schedule alone, so its wall time is its own.
if [[ "$TIMING_STEPS" -gt 0 ]]; then
    say "timing pass: each of the nine schedules alone for ${TIMING_STEPS} steps"
    mkdir -p "$OUT/timing"
    echo "schedule,heads,total_heads,steps,wall_seconds,steps_per_second,status" >"$OUT/head-progression-timing.csv"
    for schedule in ascending:15 ascending:30 ascending:60 constant:15 constant:30 constant:60 \
                    descending:15 descending:30 descending:60; do
        tag="${schedule/:/-}"
        python3 - "$ROOT/resources/presets/head-progression.yaml" "$OUT/timing/$tag-input.yaml" "$schedule" "$TIMING_STEPS" <<'PY' || continue
import re, sys
src, dst, schedule, steps = sys.argv[1:5]
text = open(src, encoding="utf-8").read()
scheme, total = schedule.split(":")
text, n1 = re.subn(r"(\n      steps: )4000\n", rf"\g<1>{int(steps)}\n", text)
text, n2 = re.subn(r"\n  eval_every: \d+\n  log_every: \d+\n  eval_batches: 0\n",  # evaluate at step 0 and
                  "\n  eval_every: 1000000\n  log_every: 100\n  eval_batches: 1\n", text)  # the end, 64 windows
text, n3 = re.subn(r"corpus_bytes: 4000000\}", "corpus_bytes: 4000000, sample_length: 0}", text)
text, n4 = re.subn(r"\nsweep:\n(.*\n)*?view:", f"\nsweep:\n  head_schedule: [{{scheme: {scheme}, total: {total}}}]\nview:", text)
if (n1, n2, n3, n4) != (1, 1, 1, 1):
    sys.exit(f"gpu_text.sh: cannot make the timing session from {src}: {(n1, n2, n3, n4)}")
open(dst, "w", encoding="utf-8").write(text)
PY
        [[ -f "$OUT/timing/$tag-input.yaml" ]] || continue
        timeout -s INT -k 30 120 "$CLI" run "$OUT/timing/$tag-input.yaml" -o "$OUT/timing/$tag.yaml" --device "$DEVICE" \
            >"$OUT/timing/$tag-log.txt" 2>&1 || say "timing $schedule: headlab-cli exited $?"
        "$CLI" export-csv "$OUT/timing/$tag.yaml" -o "$OUT/timing/$tag-csv" >/dev/null 2>&1 || continue
        python3 - "$OUT/timing/$tag-csv/runs.csv" "$schedule" >>"$OUT/head-progression-timing.csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    print(",".join([sys.argv[2], r["heads"].replace(" ", "-"), r["total_heads"], r["steps_done"],
                    r["wall_seconds"], r.get("steps_per_second", ""), r["status"]]))
PY
    done
    cat "$OUT/head-progression-timing.csv"
fi

final=0
for name in "${PRESETS[@]}"; do
    if [[ ! -f "$OUT/$name.yaml" ]]; then
        say "error: $name: no session was written; the end of its log:"
        tail -20 "$OUT/$name-log.txt" || true
        final=1
        continue
    fi
    "$CLI" export-csv "$OUT/$name.yaml" -o "$OUT/$name-csv" || final=1
done

set +e # the summaries are a convenience: a failure there must not hide the results
[[ -f "$OUT/head-progression-csv/runs.csv" ]] && python3 - "$OUT/head-progression-csv/runs.csv" "$OUT/head-progression.yaml" <<'PY' | tee "$OUT/head-progression-table.txt"
# Final validation loss against total heads, one line per scheme (mean over seeds), and wall time.
import csv, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
def num(r, k):
    try: return float(r.get(k, ""))
    except ValueError: return float("nan")
groups = defaultdict(list)
for r in rows:
    scheme, _, total = r.get("label_head_schedule", "?:?").partition(":")
    groups[(scheme, total)].append(r)
print("head-progression: final validation loss (nats/byte), mean over seeds; wall_s and steps/s are")
print("the shared ensemble's (all runs train together): see head-progression-timing.csv for each schedule alone")
print(f"{'scheme':<11} {'total':>5} {'heads':<14} {'runs':>4} {'final':>7} {'min':>7} {'spread':>7} {'wall_s':>7} {'steps/s':>8} status")
for (scheme, total), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], float(kv[0][1] or 0))):
    done = [r for r in rs if r["status"] == "done"]
    f = [num(r, "final_test_loss") for r in done]
    m = [num(r, "min_test_loss") for r in done]
    mean = lambda v: sum(v) / len(v) if v else float("nan")
    spread = (max(f) - min(f)) if f else float("nan")
    print(f"{scheme:<11} {total:>5} {rs[0]['heads']:<14} {len(done):>4} {mean(f):>7.4f} {mean(m):>7.4f} {spread:>7.4f} "
          f"{mean([num(r, 'wall_seconds') for r in rs]):>7.1f} {mean([num(r, 'steps_per_second') for r in done]):>8.1f} "
          f"{','.join(sorted({r['status'] for r in rs}))}")
print()
print("samples of seed 0 (the first 300 characters of each):")
labels, take = "", False
for line in open(sys.argv[2], encoding="utf-8"):
    text = line.strip()
    if text.startswith("- labels:"):
        labels = text[len("- labels:"):].strip()
    elif text == "samples:":
        take = True
    elif take:
        take = False
        if 'seed: "0"' in labels or "seed" not in labels:
            print(f"  {labels}\n    {text[2:300]}")
PY

[[ -f "$OUT/qk-rule-addition-grid-csv/runs.csv" ]] && python3 - "$OUT/qk-rule-addition-grid-csv/runs.csv" <<'PY' | tee "$OUT/qk-rule-addition-grid-table.txt"
# The two heatmaps: final test loss over n_H (rows) × m (columns), rule off and rule on. A cell
# counts as learned when the run left the ln 10 plateau (metric left_ln10_plateau); the paper's
# rule, final test loss below ln 10, also counts runs that sit on the plateau a hair below it.
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
ms = sorted({int(r["d_model"]) for r in rows})
hs = sorted({int(r["heads"].split()[0]) for r in rows})
cell, left = {}, {}
for r in rows:
    key = (r["qk_rule"], int(r["heads"].split()[0]), int(r["d_model"]))
    cell[key] = float(r["final_test_loss"]) if r["status"] == "done" else r["status"]
    left[key] = r.get("left_ln10_plateau", "") == "1"
ln10 = math.log(10)
for rule in ("off", "on"):
    keys = [k for k in cell if k[0] == rule]
    paper = sum(1 for k in keys if isinstance(cell[k], float) and cell[k] < ln10)
    escaped = sum(1 for k in keys if left[k])
    print(f"QK rule {rule}: final test loss; {escaped}/{len(keys)} left the ln 10 plateau (*), "
          f"{paper}/{len(keys)} below ln 10 = {ln10:.4f}")
    print("n_H \\ m " + "".join(f"{m:>11}" for m in ms))
    for h in hs:
        out = []
        for m in ms:
            v = cell.get((rule, h, m), "-")
            mark = "*" if left.get((rule, h, m)) else " "
            out.append(f"{v:>10.4f}{mark}" if isinstance(v, float) else f"{v:>10} ")
        print(f"{h:>7} " + "".join(out))
    print()
PY
exit "$final"
