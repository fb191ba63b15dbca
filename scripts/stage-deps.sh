#!/usr/bin/env bash
# stage-deps.sh — copies the header-only libraries the core's build needs into .deps/ (ignored by
# git), so that they travel to a machine that cannot install them (the GPU machine: no network).
# CLI11 from Debian's libcli11-dev (/usr/include/CLI) to .deps/cli11/include/CLI, and nlohmann/json
# from nlohmann-json3-dev (/usr/include/nlohmann) to .deps/nlohmann/include/nlohmann.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ -f /usr/include/CLI/CLI.hpp ]] || { echo "[stage-deps] error: no /usr/include/CLI (apt-get install libcli11-dev)" >&2; exit 1; }
mkdir -p "$ROOT/.deps/cli11/include"
rm -rf "$ROOT/.deps/cli11/include/CLI"
cp -r /usr/include/CLI "$ROOT/.deps/cli11/include/CLI"
echo "[stage-deps] CLI11 headers in $ROOT/.deps/cli11/include"
[[ -f /usr/include/nlohmann/json.hpp ]] || { echo "[stage-deps] error: no /usr/include/nlohmann (apt-get install nlohmann-json3-dev)" >&2; exit 1; }
mkdir -p "$ROOT/.deps/nlohmann/include"
rm -rf "$ROOT/.deps/nlohmann/include/nlohmann"
cp -r /usr/include/nlohmann "$ROOT/.deps/nlohmann/include/nlohmann"
echo "[stage-deps] nlohmann/json headers in $ROOT/.deps/nlohmann/include"
