#!/usr/bin/env bash
# examples_memory.sh — what reading a file task's examples costs in memory: the peak resident
# memory of `headlab-cli validate` on a session whose examples file has N lines (default
# 1,000,000 lines, 10 MB), less that of the same session on a 5-line file (LibTorch's own share).
#
#   bench/examples_memory.sh [LINES]      prints the file's size, the extra peak and their ratio
#
# Needs GNU time (/usr/bin/time, Debian's `time`) and build/app/cli/headlab-cli.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLI="${HEADLAB_CLI:-$ROOT/build/app/cli/headlab-cli}"
LINES="${1:-1000000}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
python3 - "$WORK/ex.txt" "$LINES" <<'PY'
import random, sys
random.seed(1)
with open(sys.argv[1], "w") as f:
    for _ in range(int(sys.argv[2])):
        a, b = random.randint(10, 99), random.randint(10, 99)
        f.write(f"{a}*{b}=\t{a * b % 100:02d}\n")
PY
head -n 5 "$WORK/ex.txt" >"$WORK/small.txt"
session() { # FILE
    printf 'schema_version: 1\nexperiment:\n  task: {kind: sequence_file, path: %s}\n  model: {d_model: 8, layers: 1}\n  phases:\n    - {name: answer, objective: answer, steps: 1, batch_size: 4}\n  device: cpu\n' "$1"
}
session ex.txt >"$WORK/big.yaml"
session small.txt >"$WORK/small.yaml"
peak() { /usr/bin/time -f '%M' "$CLI" validate "$1" 2>&1 >/dev/null | tail -n1; } # KiB
big=$(peak "$WORK/big.yaml") small=$(peak "$WORK/small.yaml")
bytes=$(stat -c %s "$WORK/ex.txt")
python3 - "$bytes" "$big" "$small" <<'PY'
import sys
size, big, small = int(sys.argv[1]), int(sys.argv[2]) * 1024, int(sys.argv[3]) * 1024
extra = big - small
print(f"examples file {size / 1e6:.1f} MB; peak memory {big / 1e6:.0f} MB, {small / 1e6:.0f} MB for 5 lines; "
      f"reading it costs {extra / 1e6:.0f} MB = {extra / size:.1f}x the file")
PY
