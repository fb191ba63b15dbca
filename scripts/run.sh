#!/usr/bin/env bash
# run.sh — installs what is missing, builds, and starts the HeadLab desktop app on its default
# session. Arguments are passed to `headlab`. Without a display it builds, then says how to go on.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"

APP="$ROOT/build/app/gui/headlab"
[[ -x "$APP" ]] || { echo "[run] error: the build did not produce $APP" >&2; exit 1; }

if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" && "${QT_QPA_PLATFORM:-}" != offscreen ]]; then
    cat >&2 <<MSG
[run] HeadLab is built, but there is no display (neither DISPLAY nor WAYLAND_DISPLAY is set),
      so the desktop app cannot open a window. Either
        - start it under a virtual X server:  xvfb-run -a $APP
        - or use the headless CLI:            $ROOT/build/app/cli/headlab-cli --help
MSG
    exit 0
fi
exec "$APP" "$@"
