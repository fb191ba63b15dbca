#!/usr/bin/env bash
# dense_scan.sh — issue 53, item 6: the dense scans of bench/sessions/dense-scan-*.yaml (5 η × 8
# fresh seeds at one Figure 4 configuration each) trained on the GPU, to check the boundary
# search's intervals on real runs. Both sessions train at once on GPU 0, each in its own process.
#
#   OUT=DIR bench/dense_scan.sh         (the device tool sets OUT; default ./bench-out)
#
# Resumable across device calls: a session found in docs/data/issue53/ (with its results folder,
# as an earlier call left it) goes on from there; every run keeps a checkpoint each 5,000 steps.
# Each process is sent SIGTERM after TRAIN_SECONDS (default: what a 10-minute call leaves after the
# build) and saves its runs in progress.
# Trains in build-core/issue53 (kept on a warm machine); writes to $OUT one NAME.tar.gz per session
# (the session file, its results folder, its run log, `status` and `summary` as text and CSV; the
# device tool brings back at most 8 files) and the card's line. Unpack into docs/data/issue53/.
#
# PATTERN=paired bench/dense_scan.sh trains bench/sessions/paired-*.yaml instead (issue 53, item
# 4: a search with paired seeds), the same way: any session whose file name starts with PATTERN.
set -euo pipefail
PATTERN="${PATTERN:-dense-scan}"
RESULTS_NAME="$PATTERN.jsonl"
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
DEST="$ROOT/build-core/issue53"
mkdir -p "$DEST"
record_gpu
build_core
# What is left of a 10-minute device call after the build, less a minute to save and pack.
TRAIN_SECONDS="${TRAIN_SECONDS:-$((530 - SECONDS))}"
pids=()
for session in "$ROOT"/bench/sessions/"$PATTERN"-*.yaml; do
    name="$(basename "$session" .yaml)"
    if [[ -f "$DEST/$name.yaml" ]]; then # this machine's earlier call
        :
    elif [[ -f "$ROOT/docs/data/issue53/$name.yaml" ]]; then # an earlier call's state, committed
        cp "$ROOT/docs/data/issue53/$name.yaml" "$DEST/"
        [[ -d "$ROOT/docs/data/issue53/$name.results" ]] &&
            cp -r "$ROOT/docs/data/issue53/$name.results" "$DEST/"
    else
        cp "$session" "$DEST/"
    fi
    log "training $name for at most $TRAIN_SECONDS s"
    timeout --signal=TERM "$TRAIN_SECONDS" "$CLI" run "$DEST/$name.yaml" --device cuda:0 \
        > "$DEST/$name.run.log" 2>&1 &
    pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
log "training ended (last status $status)"
for session in "$DEST"/"$PATTERN"-*.yaml; do
    name="$(basename "$session" .yaml)"
    "$CLI" status "$session" > "$DEST/$name.status.txt" 2>&1 || true
    # Finished runs need no checkpoint to be resumed; unfinished runs keep theirs (prune leaves
    # them alone), so the folder that comes back is what the next call resumes from.
    "$CLI" prune "$session" --keep none >> "$DEST/$name.status.txt" 2>&1 || true
    "$CLI" summary "$session" -o "$DEST/$name.summary.csv" > "$DEST/$name.summary.txt" 2>&1 || true
done
for session in "$DEST"/"$PATTERN"-*.yaml; do
    name="$(basename "$session" .yaml)"
    tar czf "$OUTDIR/$name.tar.gz" -C "$DEST" "$name.yaml" "$name.results" "$name.run.log" \
        "$name.status.txt" "$name.summary.txt" "$name.summary.csv"
done
ls -la "$OUTDIR" >&2
