#!/usr/bin/env bash
# cpu_peers.sh — HeadLab against the peers a good user would write, on N pinned cores of this CPU, in
# one run (issue 79): the cores' measured FP32 peak first, then for every shape HeadLab and its peer
# in eager PyTorch and under torch.compile (mode "default": inductor's C++/OpenMP code), one after
# another, so that a busy spell slows all three alike.
#
#   addition  Liu's model (bench/reference_addition.py): the classroom preset's two shapes (24 × 1
#             and 24 × 12, its answer phase's batch of 256) and Figure 2's 25 (batch 64)
#   nearest neighbour  bench/reference_nn.py at nn-classroom's six runs (d 16, 8 points, FFN 256,
#             batch 64; 1 and 2 layers × 1, 4 and 16 heads), HeadLab through `headlab-bench preset`
#   text      bench/reference_text.py at head-progression-classroom's schedules (d 64, 4 layers,
#             context 32, batch 16), HeadLab through `headlab-bench preset --schedules`
#
# Then the profile of a classroom step (CpuProfile.h) and the levers of HeadLab's CPU path (the
# lanes, Adam's pass, the points loop, the LayerNorm and embedding loops), each on and off in turn. Output: JSON lines in
# ${OUT:-bench-out}/cpu-peers.jsonl; bench/report.py --cpu-peers turns them into PERFORMANCE.md's
# tables. CORES (default 0,1; the thread count follows), ONLY (parts among addition, nn, text,
# profile, timed, lanes, adam, points, loopthreads, layernorm, embedding; separated by
# spaces), QUICK=1 (Figure 2's corners and diagonal only, for a trial),
# MISSES_FROM (a run's results: the shapes that missed there are the ones parts profile and timed
# measure, when part addition is not in this run).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/bench-out}"
mkdir -p "$OUTDIR"
RESULTS="$OUTDIR/cpu-peers.jsonl"
CORES="${CORES:-0,1}"
THREADS=$(awk -F, '{print NF}' <<< "$CORES")
BENCH="${BENCH:-$ROOT/build/bench/headlab-bench}"
PY="$ROOT/.venv/bin/python"
PIN=(taskset -c "$CORES")
export OMP_NUM_THREADS="$THREADS" # the Python peers' intra-op threads
ONLY="${ONLY:-}"
part() { [[ -z "$ONLY" || " $ONLY " == *" $1 "* ]]; }

[[ -x "$BENCH" ]] || { echo "cpu_peers.sh: build first (scripts/test.sh): $BENCH" >&2; exit 2; }
: > "$RESULTS"
emit() { tee -a "$RESULTS"; }
cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
torch_version="$("$PY" -c 'import torch; print(torch.__version__)')"
echo "{\"machine\": \"cpu\", \"cpu\": \"$cpu\", \"cores\": \"$CORES\", \"threads\": $THREADS, \"torch\": \"$torch_version\", \"date\": \"$(date -u +%F)\", \"commit\": \"$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo none)\"}" | emit
"${PIN[@]}" "$BENCH" peak --threads "$THREADS" | emit

# Steps per timed pass by width: about a second or two of training each.
steps_for() {
    case "$1" in
        24) echo 300 ;; 48) echo 150 ;; 96) echo 60 ;; 192) echo 30 ;; *) echo 20 ;;
    esac
}

# Figure 2's shapes below 1.5x compiled PyTorch in this run's addition part (or in the file
# MISSES_FROM, a run's results, when part addition is not run): "NARROW WIDE", each a comma list
# of MxH (narrow: below 192 wide), or "-" for none. The profile and timed parts measure these.
missed_shapes() {
    "$PY" - "${MISSES_FROM:-$RESULTS}" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
def rate(kind):
    return {(r["m"], r["heads"]): r["steps_per_s"] for r in rows
            if r.get("set") == "fig2" and str(r.get("impl", "")).startswith(kind)}
ours, compiled = rate("headlab-single"), rate("torch.compile")
missed = [k for k in sorted(ours) if k in compiled and ours[k] / compiled[k] < 1.5]
narrow = ",".join(f"{m}x{h}" for m, h in missed if m < 192) or "-"
wide = ",".join(f"{m}x{h}" for m, h in missed if m >= 192) or "-"
print(narrow, wide)
PY
}

addition_shape() { # m heads batch tag
    local m=$1 h=$2 batch=$3 tag=$4 steps
    steps=$(steps_for "$m")
    ((batch > 64)) && steps=$((steps / 3))
    "${PIN[@]}" "$BENCH" single --device cpu --threads "$THREADS" --shapes "${m}x${h}" --batch "$batch" \
        --steps "$steps" | sed "s/^{/{\"set\": \"$tag\", /" | emit
    for compile in "" default; do
        "${PIN[@]}" "$PY" "$ROOT/bench/reference_addition.py" --device cpu --threads "$THREADS" \
            --shapes "${m}x${h}" --batch "$batch" --steps "$steps" ${compile:+--compile "$compile"} \
            2>/dev/null | sed "s/^{/{\"set\": \"$tag\", /" | emit
    done
}

if part addition; then
    addition_shape 24 12 256 classroom
    addition_shape 24 1 256 classroom
    for m in 24 48 96 192 384; do
        for h in 1 2 3 6 12; do
            if [[ "${QUICK:-0}" == 1 && ! ("$m" == 24 || "$m" == 384 || ("$m" == 96 && "$h" == 3)) ]]; then
                continue
            fi
            addition_shape "$m" "$h" 64 fig2
        done
    done
fi

if part nn; then
    for layers in 1 2; do
        for h in 1 4 16; do
            "${PIN[@]}" "$BENCH" preset --preset nn-classroom --device cpu --threads "$THREADS" \
                --runs 1 --layers "$layers" --heads "$h" --steps 300 | emit
            for impl in eager compile; do
                "${PIN[@]}" "$PY" "$ROOT/bench/reference_nn.py" speed --impl "$impl" --device cpu \
                    --d 16 --points 8 --ffn 256 --batch 64 --layers "$layers" --w 1 --heads "$h" \
                    --steps 300 2>/dev/null | emit
            done
        done
    done
fi

if part text; then
    # The preset's schedules, as its sweep expands them (headlab-bench preset prints them).
    schedules="$("${PIN[@]}" "$BENCH" preset --preset head-progression-classroom --device cpu \
        --threads "$THREADS" --steps 11 | "$PY" -c 'import json,sys; print(json.loads(sys.stdin.read())["schedules"])')"
    IFS=';' read -r -a each <<< "$schedules"
    for schedule in "${each[@]}"; do
        "${PIN[@]}" "$BENCH" preset --preset head-progression-classroom --device cpu \
            --threads "$THREADS" --runs 1 --schedules "$schedule" --steps 60 | emit
        for compile in "" default; do
            "${PIN[@]}" "$PY" "$ROOT/bench/reference_text.py" --device cpu --d 64 --context 32 \
                --batch 16 --steps 60 --schedules "$schedule" ${compile:+--compile "$compile"} \
                2>/dev/null | grep -v '"heads": "all"' | emit
        done
    done
fi

if part profile; then # where a classroom step's time goes, lanes on and off; Figure 2's narrowest
    for lanes in 1 0; do # 1: the plan's default (the lanes up to 8 wide); 0: ATen's kernel
        setting=()
        [[ $lanes == 0 ]] && setting=(HEADLAB_CPU_ATTENTION=0)
        env "${setting[@]}" "${PIN[@]}" "$BENCH" single --device cpu --threads "$THREADS" \
            --shapes 24x12,24x1 --batch 256 --steps 100 --profile 1 2>/dev/null |
            sed "s/^{/{\"lanes\": $lanes, /" | emit
    done
    # Figure 2's shapes that miss: the narrow ones' operator calls; the wide ones product by product
    # under the profiler (their shapes, GFLOP/s, share of the peak; the profiler slows the step
    # 4-5x, so part `timed` gives the rates).
    read -r narrow wide < <(missed_shapes)
    [[ $narrow != - ]] && "${PIN[@]}" "$BENCH" single --device cpu --threads "$THREADS" \
        --shapes "$narrow" --batch 64 --steps 300 --profile 1 2>/dev/null | sed "s/^{/{\"lanes\": 1, /" | emit
    [[ $wide != - ]] && "${PIN[@]}" "$BENCH" single --device cpu --threads "$THREADS" --shapes "$wide" \
        --batch 64 --steps 100 --profile 1 --products 1 2>/dev/null | sed "s/^{/{\"lanes\": 1, /" | emit
    # The text classroom's step (d 64, batch 16), at its widest and its narrowest heads.
    for schedule in 16,16,16,16 1,2,4,8; do
        "${PIN[@]}" "$BENCH" preset --preset head-progression-classroom --device cpu \
            --threads "$THREADS" --runs 1 --schedules "$schedule" --steps 60 --profile 1 2>/dev/null |
            grep '"profile"' | "$PY" -c 'import json,sys
for line in sys.stdin:
    r = json.loads(line)
    r["heads"] = r["heads"].replace(" ", ",")
    print(json.dumps({"lanes": 1, "task": "text", "m": 64, "batch": 16, **r}))' | emit
    done
fi

# Figure 2's shapes that miss (missed_shapes), timed by the clock without the profiler (--timed 1): each
# product's rate in the step, the optimizer and the rest (report.py --cpu-timed); then the same
# products alone (bench/cpu_products_isolated.py, from the profile rows' shapes, or those of
# PRODUCTS_PROFILE; report.py --cpu-alone), into cpu-products-alone.jsonl beside the results.
if part timed; then
    read -r narrow wide < <(missed_shapes)
    for shape in ${narrow//,/ } ${wide//,/ }; do
        [[ $shape == - ]] && continue
        "${PIN[@]}" "$BENCH" single --device cpu --threads "$THREADS" --shapes "$shape" --batch 64 \
            --steps $(($(steps_for "${shape%x*}") * 5 / 2)) --timed 1 2>/dev/null | emit
    done
    shapes="${PRODUCTS_PROFILE:-$RESULTS}" # ONLY=timed: a file of part profile's rows
    if grep -q '"cpu-product"' "$shapes"; then
        "${PIN[@]}" "$PY" "$ROOT/bench/cpu_products_isolated.py" --threads "$THREADS" \
            --profile "$shapes" --top 6 > "$OUTDIR/cpu-products-alone.jsonl"
    fi
fi

# A lever on (its switch 1) and off (0), in turn, twice: lever NAME SWITCH BENCH-ARGS..., each
# result tagged {"lever": NAME, NAME: 1 or 0, "repeat": 1 or 2} (report.py's lever_pairs reads them).
lever() {
    local name=$1 switch=$2 repeat on
    shift 2
    for repeat in 1 2; do
        for on in 1 0; do
            env "$switch=$on" "${PIN[@]}" "$BENCH" "$@" --device cpu --threads "$THREADS" |
                sed "s/^{/{\"lever\": \"$name\", \"$name\": $on, \"repeat\": $repeat, /" | emit
        done
    done
}

# Addition shapes as WIDTHxHEADS:BATCH, each through lever NAME SWITCH.
addition_lever() {
    local name=$1 switch=$2 shape batch
    shift 2
    for shape in "$@"; do
        batch=${shape#*:} shape=${shape%:*}
        lever "$name" "$switch" single --shapes "$shape" --batch "$batch" --steps "$(steps_for "${shape%x*}")"
    done
}

# The lever: Adam as one pass over the parameters on the CPU (HEADLAB_FUSED_ADAM=1, the default)
# against ATen's passes (=0); the classroom's batch of 256 at 24 wide, then Figure 2's.
if part adam; then
    addition_lever adam HEADLAB_FUSED_ADAM 24x1:256 24x12:256 24x1:64 48x3:64 96x3:64 192x3:64 \
        192x12:64 384x3:64 384x12:64
fi

# The lever: the nearest-neighbour points in one CPU loop (HEADLAB_FUSED_POINTS=1, the default)
# against ATen's passes (=0), at nn-classroom's six runs.
if part points; then
    for layers in 1 2; do
        for h in 1 4 16; do
            lever points HEADLAB_FUSED_POINTS preset --preset nn-classroom --runs 1 \
                --layers "$layers" --heads "$h" --steps 300
        done
    done
fi

# The lever: the lanes (HEADLAB_CPU_ATTENTION=1: at every head width) against ATen's kernel (=0):
# where they win sets kLaneMaxHeadDim (core/attention/AttentionPlan.h).
if part lanes; then
    addition_lever lanes HEADLAB_CPU_ATTENTION 24x12:64 24x6:64 24x3:64 96x12:64 48x3:64 96x3:64
fi

# The levers of HeadLab's own CPU loops, each on (its switch 1, the default) against off (0), at the
# classroom's two shapes, Figure 2's that missed at 24, 48 and 384 wide (and 96 × 3), and the text
# classroom's widest and narrowest heads; one row each, PART SWITCH:
#   loopthreads  HEADLAB_CPU_LOOP_THREADS  the loops on the intra-op threads, against one thread
#   layernorm    HEADLAB_FUSED_LAYER_NORM  the LayerNorm as one loop each way, against ATen's passes
#   embedding    HEADLAB_FUSED_EMBEDDING   the token embedding and positions as one loop each way
LOOP_LEVERS=(loopthreads:HEADLAB_CPU_LOOP_THREADS layernorm:HEADLAB_FUSED_LAYER_NORM
    embedding:HEADLAB_FUSED_EMBEDDING)
LOOP_SHAPES=(24x1:256 24x12:256 24x1:64 24x2:64 48x2:64 96x3:64 384x1:64)
for row in "${LOOP_LEVERS[@]}"; do
    name=${row%%:*} switch=${row#*:}
    part "$name" || continue
    addition_lever "$name" "$switch" "${LOOP_SHAPES[@]}"
    for schedule in 16,16,16,16 1,2,4,8; do
        lever "$name" "$switch" preset --preset head-progression-classroom --runs 1 \
            --schedules "$schedule" --steps 60
    done
done
