#!/usr/bin/env bash
# fetch-peers.sh — the peers' own code that bench/ times HeadLab against, in .peers/ (ignored by
# git; carry it to the GPU machine, which cannot download): nanoGPT (karpathy/nanoGPT, its
# model.py is imported unchanged by bench/nanogpt_peer.py), at the commit the benchmarks used.
# NANOGPT_SOURCE: where to clone from (default GitHub; a local mirror works too).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SOURCE="${NANOGPT_SOURCE:-https://github.com/karpathy/nanoGPT}"
COMMIT=3adf61e154c3fe3fca428ad6bc3818b27a3b8291
mkdir -p "$ROOT/.peers"
if [[ ! -d "$ROOT/.peers/nanoGPT/.git" ]]; then
    git clone -q "$SOURCE" "$ROOT/.peers/nanoGPT"
fi
git -C "$ROOT/.peers/nanoGPT" checkout -q "$COMMIT"
echo "[fetch-peers] nanoGPT at $(git -C "$ROOT/.peers/nanoGPT" rev-parse --short HEAD) in .peers/nanoGPT"
