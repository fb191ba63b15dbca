#!/usr/bin/env bash
# ui_latency.sh — how responsive the app stays while it trains: the event-loop latency of a 5 ms
# timer on the GUI thread (what a user feels as lag), with the quick demo training and its loss
# curves redrawn live, under Xvfb at 1280×720 (else Qt's offscreen platform). A benchmark, not a
# test: tests/ui asserts counts of work (redraws per progress batch), this measures the time.
#
#   bench/ui_latency.sh [SECONDS]     default 30 s of training, then the app quits (its screenshot)
#
# Prints the app's line "event-loop latency (5 ms timer): p50 …, p99 …, max …" and the machine.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
APP="${HEADLAB_APP:-$ROOT/build/app/gui/headlab}"
AFTER="${1:-30}"
[[ -x "$APP" ]] || { echo "ui_latency: build first ($APP is missing)" >&2; exit 1; }
shot="$(mktemp -d)/shot.png"
args=(--preset default --start --figure loss --latency --screenshot "$shot" --screenshot-after "$AFTER")
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
if command -v xvfb-run >/dev/null 2>&1; then
    xvfb-run -a -s "-screen 0 1280x720x24" env QT_QPA_PLATFORM=xcb "$APP" "${args[@]}" 2>&1 |
        grep -E "latency|error" || true
else
    QT_QPA_PLATFORM=offscreen "$APP" "${args[@]}" 2>&1 | grep -E "latency|error" || true
fi
