#!/usr/bin/env bash
# peers_all.sh — issue 24's comparison of every task against its strongest peer, HeadLab and each
# peer timed in the same run on the GPU machine, then issue 24's targets table (bench/report.py
# --targets-only). It runs the scripts of each task as parts:
#   nn-1-3    bench/nn_speed.sh at 1 and 3 layers, w 1, 8 runs, compiled vmap (reduce-overhead)
#   nn-5      the same at 5 layers
#   nn-w8     the same at 1 layer, w 8
#   nn-w8-35  the same at 3 and 5 layers, w 8 (issue 24's nn target names w 1 and 8 at each)
#   nn-64     (not in the default PARTS) 1 layer, w 1, 64 runs as one ensemble: the peer compiled
#             (default and reduce-overhead) and eager
#   text      bench/text_speed.sh: the loss check, then nanoGPT's model.py eager and compiled
#             (carry .peers/nanoGPT/model.py, which scripts/fetch-peers.sh fetches)
#   addition  bench/gpu_bench.sh single compile (every grid shape), then vmap at 24x1,96x3,384x12
#   text-e2e  (not in the default PARTS) the text part with E2E=1 (after the text part, E2E=only):
#             the 18-run preset end to end against compiled nanoGPT's same runs one after another
#             (HeadLab 188 s, nanoGPT more than 275 s on the H200: it spreads over calls)
#   nn-fig1   HeadLab alone at each (layers, w) of nn-fig1-full (rank 64, 8 runs), FP32 and TF32:
#             with floors, the sweep's time against its FP32 and TF32 floors
#   grid      bench/gpu_bench.sh floor grid: the addition grid through the scheduler against its floors
#   floors    bench/compute_floor.py: the products-alone floor of each step above (nn, text one run,
#             addition one run at each shape) and of the addition grid, FP32 and TF32
# Each part keeps its JSON lines in bench-out/peers/PART/; a part that finished is not run again (nor
# a line of nn-fig1, nor a side of text-e2e), so the whole spreads over several device calls on a
# warm machine (one call is at most 10 minutes).
# On the H200 on 2026-11-28 the parts took 57–100 s each, addition 323 s on a fresh machine (its
# compiles) and 149 s again, and the build 66 s; the least-of-three timing since then makes the
# HeadLab side about twice as long. BUDGET (seconds after the build, default 540): no part starts
# after it is spent. Each call puts the finished parts' lines in one archive (peers-parts.tar.gz:
# the device tool brings back at most 8 files) and the targets so far (peers-targets.md) in $OUT.
# Environment: PARTS (all nine), BUDGET, SKIP_BUILD=1, FRESH=1
# (forget earlier parts).
set -uo pipefail
RESULTS_NAME=peers-calls.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
STATE="$ROOT/bench-out/peers"
[[ "${FRESH:-0}" == 1 ]] && rm -rf "$STATE"
mkdir -p "$STATE"
BUDGET="${BUDGET:-540}"
PARTS="${PARTS:-nn-1-3 nn-5 nn-w8 nn-w8-35 text addition floors nn-fig1 grid}"
[[ "${SKIP_BUILD:-0}" == 1 && -x "$BENCH" && -x "$CLI" ]] || build_core
start=$SECONDS

run_part() {
    local part=$1 dir="$STATE/$1"
    rm -rf "$dir" && mkdir -p "$dir"
    case $part in
    nn-1-3) OUT=$dir SKIP_BUILD=1 LAYERS=1,3 COMPILE_MODES=reduce-overhead bash "$ROOT/bench/nn_speed.sh" ;;
    nn-5) OUT=$dir SKIP_BUILD=1 LAYERS=5 COMPILE_MODES=reduce-overhead bash "$ROOT/bench/nn_speed.sh" ;;
    nn-w8) OUT=$dir SKIP_BUILD=1 LAYERS=1 W=8 COMPILE_MODES=reduce-overhead bash "$ROOT/bench/nn_speed.sh" ;;
    nn-w8-35) OUT=$dir SKIP_BUILD=1 LAYERS=3,5 W=8 COMPILE_MODES=reduce-overhead bash "$ROOT/bench/nn_speed.sh" ;;
    nn-64) OUT=$dir SKIP_BUILD=1 LAYERS=1 RUNS=64 COMPILE_MODES="default reduce-overhead" EAGER=1 \
        bash "$ROOT/bench/nn_speed.sh" ;;
    text) OUT=$dir SKIP_BUILD=1 bash "$ROOT/bench/text_speed.sh" ;;
    text-e2e)
        # With the text part done, its lines and the end to end alone; the end to end's finished
        # sides are kept in $STATE/text-e2e-state, so that it spreads over calls.
        local mode=1
        [[ -f "$STATE/text/.done" ]] && { cp "$STATE/text/text_speed.jsonl" "$dir/" && mode=only; }
        OUT=$dir SKIP_BUILD=1 E2E=$mode E2E_STATE="$STATE/text-e2e-state" \
            E2E_BUDGET=$((BUDGET - (SECONDS - start))) bash "$ROOT/bench/text_speed.sh"
        ;;
    addition)
        OUT=$dir bash "$ROOT/bench/gpu_bench.sh" single compile &&
            OUT=$dir SHAPES=24x1,96x3,384x12 VMAP_MODES=reduce-overhead bash "$ROOT/bench/gpu_bench.sh" vmap
        ;;
    nn-fig1)
        # 18 lines, each kept as it ends (in $STATE/nn-fig1-lines, which a new call keeps): a call
        # whose budget is spent stops between lines, and the next call on this machine goes on.
        local lines="$STATE/nn-fig1-lines"
        mkdir -p "$lines"
        for tf32 in 0 1; do
            for layers in 1 3 5; do
                for w in 1 8 64; do
                    local line="$lines/$tf32-$layers-$w.jsonl"
                    [[ -s $line ]] && continue
                    if ((SECONDS - start >= BUDGET)); then
                        log "nn-fig1: budget spent before tf32 $tf32, $layers layers, w $w"
                        return 1
                    fi
                    HEADLAB_BENCH_TF32=$tf32 "$BENCH" preset --preset nn-fig1-full --layers "$layers" \
                        --w "$w" --heads 1 --runs 8 --steps 200 --device cuda:0 > "$line.part" &&
                        mv "$line.part" "$line" || return 1
                done
            done
        done
        cat "$lines"/{0,1}-{1,3,5}-{1,8,64}.jsonl > "$dir/fig1.jsonl"
        ;;
    grid) OUT=$dir bash "$ROOT/bench/gpu_bench.sh" floor grid ;;
    floors)
        { python3 "$ROOT/bench/compute_floor.py" --task nn &&
            python3 "$ROOT/bench/compute_floor.py" --task text --runs 1 &&
            python3 "$ROOT/bench/compute_floor.py" --task addition-single &&
            python3 "$ROOT/bench/compute_floor.py"; } > "$dir/floors.jsonl"
        ;;
    *) log "no part $part"; return 1 ;;
    esac
}

for part in $PARTS; do
    if [[ -f "$STATE/$part/.done" ]]; then
        log "$part: done in an earlier call"
        continue
    fi
    if ((SECONDS - start >= BUDGET)); then
        log "$part: not started, the budget of $BUDGET s is spent (run again on this machine)"
        continue
    fi
    log "$part"
    t0=$SECONDS
    if run_part "$part" > "$STATE/$part.log" 2>&1; then
        touch "$STATE/$part/.done"
        printf '{"part": "%s", "seconds": %d, "date": "%s"}\n' "$part" $((SECONDS - t0)) "$(date -u +%FT%TZ)" >> "$RESULTS"
    else
        log "$part failed:"
        tail -20 "$STATE/$part.log" >&2
    fi
done

args=()
for part in nn-1-3 nn-5 nn-w8 nn-w8-35 nn-64; do
    [[ -f "$STATE/$part/.done" ]] && args+=(--nn "$STATE/$part/nn_speed.jsonl")
done
if [[ -f "$STATE/text-e2e/.done" ]]; then
    args+=(--text "$STATE/text-e2e/text_speed.jsonl")
elif [[ -f "$STATE/text/.done" ]]; then
    args+=(--text "$STATE/text/text_speed.jsonl")
fi
[[ -f "$STATE/addition/.done" ]] && args+=(--addition "$STATE/addition/bench.jsonl")
[[ -f "$STATE/floors/.done" ]] && args+=(--floors "$STATE/floors/floors.jsonl")
[[ -f "$STATE/nn-fig1/.done" ]] && args+=(--fig1 "$STATE/nn-fig1/fig1.jsonl")
[[ -f "$STATE/grid/.done" ]] && args+=(--grid "$STATE/grid/bench.jsonl")
parts=()
for part in $PARTS; do
    for f in "$STATE/$part"/{nn_speed,text_speed,bench,floors,fig1}.jsonl; do
        [[ -f $f && -f "$STATE/$part/.done" ]] && parts+=("$part/$(basename "$f")")
    done
done
# the lines of an unfinished nn-fig1 and text-e2e too
for keep in nn-fig1-lines text-e2e-state; do [[ -d "$STATE/$keep" ]] && parts+=("$keep"); done
((${#parts[@]})) && tar -C "$STATE" -czf "$OUTDIR/peers-parts.tar.gz" "${parts[@]}"
if ((${#args[@]})); then
    python3 "$ROOT/bench/report.py" --targets-only "${args[@]}" | tee "$OUTDIR/peers-targets.md"
fi
