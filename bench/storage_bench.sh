#!/usr/bin/env bash
# storage_bench.sh — what saving and loading cost (issue "Results are never lost"), in one run on
# this machine's CPU. Needs the build (scripts/test.sh). Output: JSON lines in
# ${OUT:-bench-out}/storage.jsonl, each measurement beside its baseline from the same run:
#   1. a 2,000-run sweep of tiny CPU runs (bench/sessions/save-2000-tiny.yaml, ~2 ms of training
#      a run, and a 5x longer variant) trained without saving, saving beside training as
#      headlab-cli does, and saving inside the training thread (headlab-bench save-sweep);
#   2. a 2,000-run session of 300-point curves written in the stored layout (a file per run) and
#      as one file, and the cost of one finished run (headlab-bench storage);
#   3. loading it (headlab-cli validate) in both layouts: seconds and peak memory;
#   4. opening it in the app and exporting every figure (headless), where the app is built.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/bench-out}"; mkdir -p "$OUTDIR"
RESULTS="$OUTDIR/storage.jsonl"; : > "$RESULTS"
BUILD="${BUILD:-$ROOT/build}"
WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT
echo "{\"cpu\": \"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)\", \"cores\": $(nproc), \"disk\": \"$(df -T "$WORK" | awk 'NR==2 {print $2}')\"}" >> "$RESULTS"

# 1. Saving during a sweep.
"$BUILD/bench/headlab-bench" save-sweep --session "$ROOT/bench/sessions/save-2000-tiny.yaml" \
    --out "$WORK/sweep" | tee -a "$RESULTS"
# The 25x longer variant takes ~10 minutes; STORAGE_BENCH_QUICK=1 leaves it out.
if [[ -z "${STORAGE_BENCH_QUICK:-}" ]]; then
    sed 's/steps: 20,/steps: 500,/; s/d_model: 8/d_model: 16/; s/layers: 1/layers: 2/' \
        "$ROOT/bench/sessions/save-2000-tiny.yaml" > "$WORK/longer.yaml"
    "$BUILD/bench/headlab-bench" save-sweep --session "$WORK/longer.yaml" --out "$WORK/sweep" \
        | sed 's/"save-bench"/"save-bench x25 steps"/' | tee -a "$RESULTS"
fi

# 2. Writing a large session.
"$BUILD/bench/headlab-bench" storage --runs 2000 --points 300 --out "$WORK/big" | tee -a "$RESULTS"

# 2b. Per-head curves (issue 25): 250 runs with 216 per-head curves each (12 heads x 2 layers x 9
# statistics, 300 points: a 30,500-step run evaluated every 100) in the stored layout (binary files
# beside the run files) and in the previous release's (text in the run files).
"$BUILD/bench/headlab-bench" storage --runs 250 --points 300 --head-curves 216 --out "$WORK/heads" \
    | sed 's/"storage"/"storage, 250 runs with per-head curves"/' | tee -a "$RESULTS"
for layout in stored inline; do
    echo "{\"disk\": \"250 runs x 216 per-head curves, $layout\", \"results_mb\": $(du -sm "$WORK/heads/$layout.results" | cut -f1), \"one_run_file_kb\": $(( $(ls -l "$WORK/heads/$layout.results/runs/"*.yaml | awk 'NR==1 {print $5}') / 1024 )), \"one_heads_file_kb\": $(( $(ls -l "$WORK/heads/$layout.results/runs/"*.safetensors 2>/dev/null | awk 'NR==1 {print $5}' || echo 0) / 1024 ))}" | tee -a "$RESULTS"
done

# 3 and 4. Loading it, and the app's open + export.
measure() { # NAME COMMAND...: wall seconds and peak resident memory of one command
    local name="$1"; shift
    /usr/bin/time -f "%e %M" -o "$WORK/time" "$@" > /dev/null 2>&1 || echo "(exit $?)" >&2
    read -r secs kb < "$WORK/time"
    echo "{\"load\": \"$name\", \"seconds\": $secs, \"peak_rss_mb\": $((kb / 1024))}" | tee -a "$RESULTS"
}
measure "cli presets (the process alone, torch loaded)" "$BUILD/app/cli/headlab-cli" presets
measure "cli validate, stored layout" "$BUILD/app/cli/headlab-cli" validate "$WORK/big/stored.yaml"
measure "cli validate, one file" "$BUILD/app/cli/headlab-cli" validate "$WORK/big/single.yaml"
measure "cli validate, 250 runs with per-head curves, binary files" "$BUILD/app/cli/headlab-cli" validate "$WORK/heads/stored.yaml"
measure "cli validate, 250 runs with per-head curves, as text" "$BUILD/app/cli/headlab-cli" validate "$WORK/heads/inline.yaml"
measure "python headlab.open().runs(), 2,000 runs" "$ROOT/.venv/bin/python" -c "import sys; sys.path.insert(0, '$ROOT/python'); import headlab; headlab.open('$WORK/big/stored.yaml').runs()"
measure "python head_stats(), 250 runs, binary files" "$ROOT/.venv/bin/python" -c "import sys; sys.path.insert(0, '$ROOT/python'); import headlab; headlab.open('$WORK/heads/stored.yaml').head_stats()"
measure "python head_stats(), 250 runs, as text" "$ROOT/.venv/bin/python" -c "import sys; sys.path.insert(0, '$ROOT/python'); import headlab; headlab.open('$WORK/heads/inline.yaml').head_stats()"
if [[ -x "$BUILD/app/gui/headlab" ]]; then
    measure "app open + export every figure" "$BUILD/app/gui/headlab" \
        --session "$WORK/big/stored.yaml" --export-all "$WORK/figures"
    echo "{\"export\": \"largest SVG\", \"bytes\": $(ls -S -l "$WORK/figures"/*.svg | awk 'NR==1 {print $5}')}" | tee -a "$RESULTS"
fi
