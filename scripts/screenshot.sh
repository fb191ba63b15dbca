#!/usr/bin/env bash
# screenshot.sh — takes the README's picture of HeadLab mid-sweep: opens a preset (the default
# session unless HEADLAB_PRESET names another), starts its sweep, waits, saves the window as a
# PNG and quits. Runs under Xvfb when it is installed (a real X server, real fonts), else on Qt's
# offscreen platform; it needs no display either way.
#
#   scripts/screenshot.sh [OUT.png]          default docs/screenshot.png
#   HEADLAB_SCREENSHOT_AFTER=40              seconds of training before the picture (default 18)
#   HEADLAB_FIGURE=heatmap                   the figure shown: loss, heatmap, scaling, lr, grid,
#                                            rank, heads, inside
#   HEADLAB_SCREEN=1280x720                  the Xvfb screen (default 1600x1000)
#   HEADLAB_PRESENTER=1                      in presenter mode (full screen, large type)
#   HEADLAB_LESSON=1                         with the lesson strip (heads and η buttons)
#   HEADLAB_APP=path/to/headlab              default build/app/gui/headlab
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
APP="${HEADLAB_APP:-$ROOT/build/app/gui/headlab}"
OUT="${1:-$ROOT/docs/screenshot.png}"
AFTER="${HEADLAB_SCREENSHOT_AFTER:-18}"
FIGURE="${HEADLAB_FIGURE:-loss}"
PRESET="${HEADLAB_PRESET:-default}"
SCREEN="${HEADLAB_SCREEN:-1600x1000}"

if [[ ! -x "$APP" ]]; then
    echo "[screenshot] error: $APP is missing; build first (scripts/run.sh or cmake --build build)" >&2
    exit 1
fi
mkdir -p "$(dirname "$OUT")"
args=(--preset "$PRESET" --start --figure "$FIGURE" --screenshot "$OUT" --screenshot-after "$AFTER")
[[ "${HEADLAB_PRESENTER:-0}" == 1 ]] && args+=(--presenter)
[[ "${HEADLAB_LESSON:-0}" == 1 ]] && args+=(--lesson)

if command -v xvfb-run >/dev/null 2>&1; then
    echo "[screenshot] Xvfb $SCREEN: $PRESET, $AFTER s of training, figure $FIGURE -> $OUT"
    xvfb-run -a -s "-screen 0 ${SCREEN}x24" env QT_QPA_PLATFORM=xcb "$APP" "${args[@]}"
else
    echo "[screenshot] offscreen: $PRESET, $AFTER s of training, figure $FIGURE -> $OUT"
    QT_QPA_PLATFORM=offscreen "$APP" "${args[@]}"
fi
