#!/usr/bin/env bash
# gpu_search.sh — runs (or goes on with) a boundary search on the GPU machine, under a wall-clock
# cap, so that a search longer than one device call goes on across calls: the preset
# addition-fig4-boundary (issue 27), or any search session (issue 53's Figure 2 campaign:
# HEADLAB_SEARCH_NAME=fig2-boundary HEADLAB_SEARCH_SESSION=bench/sessions/fig2-boundary.yaml
# HEADLAB_SEARCH_DATA=docs/data/issue53).
#
# State lives in out/gpu_search/ (ignored by git, so it stays on the machine while it is warm):
# the session, its run files and its checkpoints. A call on a fresh machine starts from
# $DATA/$NAME.export.yaml.gz when that exists (the state a previous session brought back: every
# finished run with its metrics; the runs of an unfinished round start again), else from the
# preset or session. At the cap headlab-cli gets SIGINT: it saves the runs in progress (as stopped, with
# their checkpoints), so the next call on the same machine resumes them from their last checkpoint.
#
# Environment: HEADLAB_SEARCH_CAP_S (default 480) the training time of this call;
#              HEADLAB_SEARCH_DEVICE (default: every GPU, "all");
#              HEADLAB_SEARCH_NAME (default fig4-boundary), HEADLAB_SEARCH_SESSION (a session
#              file; default: the preset addition-$NAME), HEADLAB_SEARCH_DATA (default
#              docs/data/issue27: where the state of earlier sessions is committed).
# Writes under $OUT (default ./out/gpu_search-out): $NAME.export.yaml.gz (self-contained, results
# included, curves left out), summary.txt and summary.csv (headlab-cli summary), run-log.txt,
# status.txt.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUTDIR="${OUT:-$ROOT/out/gpu_search-out}"
STATE="$ROOT/out/gpu_search"
CAP="${HEADLAB_SEARCH_CAP_S:-480}"
DEVICE="${HEADLAB_SEARCH_DEVICE:-all}"
NAME="${HEADLAB_SEARCH_NAME:-fig4-boundary}"
DATA="$ROOT/${HEADLAB_SEARCH_DATA:-docs/data/issue27}"
CLI="$ROOT/build-core/app/cli/headlab-cli"
mkdir -p "$OUTDIR" "$STATE"
say() { printf '[gpu_search %s] %s\n' "$(date +%T)" "$*"; }

nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$OUTDIR/gpu.txt" || true
if [[ ! -x "$CLI" ]] || [[ -n "$(find "$ROOT/core" "$ROOT/app" -newer "$CLI" -name '*.[ch]*' | head -1)" ]]; then
    say "build"
    bash "$ROOT/scripts/build-core.sh" headlab-cli > "$OUTDIR/build.log" 2>&1 || { tail -30 "$OUTDIR/build.log"; exit 1; }
fi
SESSION="$STATE/$NAME.yaml"
SOURCE=(--preset "addition-$NAME")
[[ -n "${HEADLAB_SEARCH_SESSION:-}" ]] && SOURCE=("$ROOT/$HEADLAB_SEARCH_SESSION")
if [[ ! -f "$SESSION" && -f "$DATA/$NAME.export.yaml.gz" ]]; then
    say "starting from $DATA/$NAME.export.yaml.gz"
    gunzip -c "$DATA/$NAME.export.yaml.gz" > "$STATE/$NAME.start.yaml"
    SOURCE=("$STATE/$NAME.start.yaml")
fi
[[ -f "$SESSION" ]] && SOURCE=("$SESSION")
say "training for at most $CAP s on $DEVICE"
status=0
timeout -s INT -k 60 "$CAP" "$CLI" run "${SOURCE[@]}" -o "$SESSION" --device "$DEVICE" \
    > "$OUTDIR/run-log.txt" 2>&1 || status=$?
say "headlab-cli run ended with $status"
grep -v '^progress' "$OUTDIR/run-log.txt" | grep -E 'round|saved|resuming|boundary|^\S+=|law|α' | tail -40 || true
"$CLI" summary "$SESSION" -o "$OUTDIR/summary.csv" | tee "$OUTDIR/summary.txt"
# The state without checkpoints, compressed (a run file holds every curve: ~0.7 MB): what a later
# session brings back and goes on from.
"$CLI" export-yaml "$SESSION" -o "$STATE/$NAME.export.yaml"
# Curves are left out (empty) of what comes back: the verdicts and metrics are what a search goes
# on from; the full curves stay in the run files on the machine.
sed -E 's/\{steps: \[[^]]*\], values: \[[^]]*\]\}/{steps: [], values: []}/g' \
    "$STATE/$NAME.export.yaml" | gzip -9 > "$OUTDIR/$NAME.export.yaml.gz"
ls -la "$OUTDIR"
"$CLI" status "$SESSION" | tee "$OUTDIR/status.txt"
