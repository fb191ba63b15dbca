#!/usr/bin/env bash
# classroom_check.sh — trains the classroom preset on several seeds on CPU cores (issue 22,
# docs/FINDINGS.md) and prints bench/classroom_check.py's per-seed verdict. The check session is
# made from resources/presets/classroom.yaml itself, with a seed axis, so that it cannot drift from
# the preset. Each run trains alone on one thread, as HeadLab's CPU plan trains it on a laptop;
# SHARDS processes train side by side. Results: $OUT/classroom-check/{runs.csv,test.csv.gz,verdict.txt}.
#
#   bash bench/classroom_check.sh [SHARDS]      default 8
#   CHECK_SEEDS   the seeds (default "0 1 2 3 4 5 6 7 8 9")
#   HEADLAB_CLI   the headlab-cli to use (default: build it into build-core/)
set -euo pipefail
RESULTS_NAME=classroom-check.jsonl
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
shards="${1:-8}"
CLI="${HEADLAB_CLI:-$CLI}"
[[ -x "$CLI" ]] || build_core
work="$ROOT/build-core/classroom-check"
# A check is of this CLI on these seeds: nothing of an earlier check (its session, its results) is
# taken over.
rm -rf "$work"
mkdir -p "$work"
session="$work/classroom-check.yaml"
# shellcheck disable=SC2086
python3 - "$ROOT/resources/presets/classroom.yaml" "$session" ${CHECK_SEEDS:-0 1 2 3 4 5 6 7 8 9} <<'PY'
import re, sys
preset, out, seeds = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(preset).read()
text = re.sub(r"^name: .*$", "name: classroom-check", text, count=1, flags=re.M)
text = re.sub(r"^sweep:\n", "sweep:\n  seed: [" + ", ".join(seeds) + "]\n", text, count=1, flags=re.M)
open(out, "w").write(text)
PY
log "training the preset on seeds ${CHECK_SEEDS:-0-9} in $shards CPU shards"
for ((i = 1; i <= shards; i++)); do
    "$CLI" run "$session" --device cpu --threads 1 --max-ensemble 1 --concurrent 1 \
        --shard "$i/$shards" > "$work/shard-$i.log" 2>&1 &
done
wait
"$CLI" merge "$session" >&2
mkdir -p "$work/csv" "$OUTDIR/classroom-check"
"$CLI" export-csv "$session" -o "$work/csv" >&2
cp "$work/csv/runs.csv" "$OUTDIR/classroom-check/"
{ echo "run,step,loss"; awk -F, 'NR > 1 && $2 == "test" { print $1 "," $3 "," $4 }' \
    "$work/csv/curves.csv"; } | gzip -9 > "$OUTDIR/classroom-check/test.csv.gz"
python3 "$ROOT/bench/classroom_check.py" "$work/csv" | tee "$OUTDIR/classroom-check/verdict.txt"
