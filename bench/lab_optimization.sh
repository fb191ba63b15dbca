#!/usr/bin/env bash
# lab_optimization.sh — whether compiling the code outside the training path at -O1
# (HEADLAB_LAB_OPTIMIZATION, cmake/HeadlabLayer.cmake) costs time where a user waits for it: the
# commands that read a large session and compute on it, run by two builds of the same checkout in
# turn, the baseline with every file at -O3.
#
#   bash bench/lab_optimization.sh BUILD_O3 BUILD_LAB [SESSION] [OUT.jsonl]
#
# BUILD_O3: a build configured with -DHEADLAB_LAB_OPTIMIZATION= (every file at the build type's
# -O3); BUILD_LAB: one with the default. SESSION: default the Figure 2 campaign's export
# (docs/data/issue53/fig2-boundary.export.yaml.gz, 657 runs); the app writes every figure of
# FIGURES_SESSION (default the Figure 2 grid with three seeds, docs/data/, 75 runs with their
# curves) as PNG, SVG and CSV, as bench/export_bench.sh does. Each command runs REPEATS times
# (default 3) in the -O3 build, then REPEATS times in the other, and the fastest of each counts. Writes one JSON line per command
# and build: {"command", "build", "optimization", "seconds", "ratio" (to the -O3 build), "machine",
# "cores", "date", "commit"}; default OUT bench/results/lab-optimization-<cores>core-<date>.jsonl.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BASE="$1"
LAB="$2"
SESSION="${3:-$ROOT/docs/data/issue53/fig2-boundary.export.yaml.gz}"
DATE="$(date -u +%F)"
OUT="${4:-$ROOT/bench/results/lab-optimization-$(nproc)core-$DATE.jsonl}"
REPEATS="${REPEATS:-3}"
WORK="$(mktemp -d /tmp/headlab-labopt.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
CPU="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
COMMIT="$(git -C "$ROOT" rev-parse --short HEAD)"
FIGURES="${FIGURES_SESSION:-$ROOT/docs/data/addition-fig2-grid-seeds-h100.yaml}"
declare -A COMMANDS=(
    [summary]="summary $SESSION"
    [report]="report $SESSION -o $WORK/report.html"
    [export-csv]="export-csv $SESSION --output $WORK/csv"
    [predict]="predict $SESSION --d_model 768 --heads 16"
    [export-all]="--session $FIGURES --export-all $WORK/figures --size 1600x1000"
)
program() { # build name -> the executable that runs it
    if [[ "$2" == export-all ]]; then echo "$1/app/gui/headlab"; else echo "$1/app/cli/headlab-cli"; fi
}
best() { # program arguments repeats work -> the fastest of REPEATS runs, seconds
    python3 - "$@" <<'PY'
import shutil, subprocess, sys, time
cli, args, repeats, work = sys.argv[1], sys.argv[2].split(), int(sys.argv[3]), sys.argv[4]
times = []
for _ in range(repeats):
    for out in ("csv", "figures"):  # each repeat writes its outputs afresh
        shutil.rmtree(f"{work}/{out}", ignore_errors=True)
    t = time.perf_counter()
    subprocess.run([cli] + args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times.append(time.perf_counter() - t)
print(f"{min(times):.3f}")
PY
}
: > "$OUT.tmp"
export QT_QPA_PLATFORM=offscreen
level="$(sed -n 's/^HEADLAB_LAB_OPTIMIZATION:STRING=//p' "$LAB/CMakeCache.txt")"
for name in summary report export-csv predict export-all; do
    base=$(best "$(program "$BASE" $name)" "${COMMANDS[$name]}" "$REPEATS" "$WORK")
    lab=$(best "$(program "$LAB" $name)" "${COMMANDS[$name]}" "$REPEATS" "$WORK")
    for pair in "O3 -O3 $base" "lab ${level:-?} $lab"; do
        read -r build opt seconds <<< "$pair"
        python3 -c 'import json,sys; a=sys.argv; print(json.dumps({"command": a[1], "build": a[2], "optimization": a[3], "seconds": float(a[4]), "ratio": round(float(a[4]) / float(a[5]), 3), "machine": a[6], "cores": int(a[7]), "date": a[8], "commit": a[9]}))' \
            "$(basename "$(program . $name)") $name" "$build" "$opt" "$seconds" "$base" "$CPU" "$(nproc)" "$DATE" "$COMMIT" >> "$OUT.tmp"
    done
    echo "$name: -O3 $base s, lab $lab s"
done
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT"
