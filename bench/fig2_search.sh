#!/usr/bin/env bash
# fig2_search.sh — issue 53's GPU campaign: the boundary search over the paper's 25 Figure 2
# configurations (bench/sessions/fig2-boundary.yaml), one device call at a time. It goes on from
# docs/data/issue53/fig2-boundary.export.yaml.gz (the state the last session brought back) or,
# within one session on a warm machine, from out/gpu_search/ with its checkpoints.
#
#   OUT=DIR bench/fig2_search.sh      (the device tool sets OUT)
#
# Training stops (SIGINT: runs in progress are saved with their checkpoints) so that a 10-minute
# call has time left to summarise and pack: HEADLAB_SEARCH_CAP_S, default what is left of 540 s
# after the build. Copy $OUT/fig2-boundary.export.yaml.gz and the summary into docs/data/issue53/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
start=$SECONDS
if [[ ! -x "$ROOT/build-core/app/cli/headlab-cli" ]]; then
    bash "$ROOT/scripts/build-core.sh" headlab-cli > "${OUT:-/tmp}/build.log" 2>&1 ||
        { tail -30 "${OUT:-/tmp}/build.log"; exit 1; }
fi
export HEADLAB_SEARCH_NAME=fig2-boundary
export HEADLAB_SEARCH_SESSION=bench/sessions/fig2-boundary.yaml
export HEADLAB_SEARCH_DATA=docs/data/issue53
export HEADLAB_SEARCH_DEVICE="${HEADLAB_SEARCH_DEVICE:-cuda}"
export HEADLAB_SEARCH_CAP_S="${HEADLAB_SEARCH_CAP_S:-$((540 - (SECONDS - start)))}"
exec bash "$ROOT/bench/gpu_search.sh"
