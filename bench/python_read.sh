#!/usr/bin/env bash
# python_read.sh — issue 55's reading target: a session opens in Python within 2x the time and
# peak memory of `headlab-cli export-csv`, the baseline measured in the same run on the same files.
#
#   bench/python_read.sh            (needs the build: headlab-bench, headlab-cli; and .venv)
#
# Sessions (headlab-bench storage writes them: an lr x seed sweep, 300-point curves):
#   - 2,000 runs, stored layout (a file per run) and one file (as export-yaml writes, 81 MB);
#   - 250 runs with 216 per-head curves each, stored layout (binary side files) and the previous
#     release's (the per-head curves as text in the run files). As one file these runs are 413 MB,
#     over the 256 MiB both the CLI and the package read: an export is not the form for them.
# Python reads everything a notebook reads first: runs(), curves() and, where there are per-head
# curves, head_stats(); the CLI writes runs.csv and curves.csv (every curve, per-head ones too).
# Output: one JSON line per measurement and the ratios, also in ${OUT:-bench-out}/python-read.jsonl.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
OUTDIR="${OUT:-$ROOT/bench-out}"; mkdir -p "$OUTDIR"
RESULTS="$OUTDIR/python-read.jsonl"; : > "$RESULTS"
WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT
machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "{\"machine\": \"$machine\", \"date\": \"$(date -u +%F)\", \"commit\": \"$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)\"}" | tee -a "$RESULTS"

"$BUILD/bench/headlab-bench" storage --runs 2000 --points 300 --out "$WORK/big" > /dev/null
"$BUILD/bench/headlab-bench" storage --runs 250 --points 300 --head-curves 216 --out "$WORK/heads" > /dev/null

measure() { # NAME COMMAND...: prints "seconds peak_mb" and logs a JSON line
    local name="$1"; shift
    /usr/bin/time -f "%e %M" -o "$WORK/time" "$@" > /dev/null 2> "$WORK/err" ||
        { cat "$WORK/err" >&2; echo "$name failed" >&2; exit 1; }
    read -r secs kb < "$WORK/time"
    echo "{\"read\": \"$name\", \"seconds\": $secs, \"peak_rss_mb\": $((kb / 1024))}" >> "$RESULTS"
    echo "$secs $((kb / 1024))"
}
cat > "$WORK/read.py" <<PY
import sys; sys.path.insert(0, "$ROOT/python"); import headlab
s = headlab.open(sys.argv[1]); s.runs(); s.curves()
if sys.argv[2] == "1": s.head_stats()
PY
ok=1
for case in "big/stored 2,000 runs, stored layout:0" "big/single 2,000 runs, one file:0" \
            "heads/stored 250 runs x 216 per-head curves, stored layout:1" \
            "heads/inline 250 runs x 216 per-head curves, as text in the run files:1"; do
    file="${case%% *}"; rest="${case#* }"; label="${rest%:*}"; heads="${rest##*:}"
    read -r cli_s cli_mb < <(measure "cli export-csv, $label" "$BUILD/app/cli/headlab-cli" export-csv \
        "$WORK/$file.yaml" -o "$WORK/csv")
    read -r py_s py_mb < <(measure "python, $label" "$ROOT/.venv/bin/python" "$WORK/read.py" "$WORK/$file.yaml" "$heads")
    rt=$(printf "%.2f" "$(echo "scale=4; $py_s / $cli_s" | bc)")
    rm_=$(printf "%.2f" "$(echo "scale=4; $py_mb / $cli_mb" | bc)")
    echo "{\"ratio\": \"python / cli, $label\", \"time\": $rt, \"memory\": $rm_, \"python_s\": $py_s, \"cli_s\": $cli_s, \"python_mb\": $py_mb, \"cli_mb\": $cli_mb}" | tee -a "$RESULTS"
    if (( $(echo "$rt > 2 || $rm_ > 2" | bc) )); then ok=0; fi
done
[[ $ok == 1 ]] && echo "every session within 2x the CLI's time and memory" || echo "a session is over 2x the CLI (see above)"
