#!/usr/bin/env bash
# fuzz-python.sh — the Python package's readers under atheris (tests/fuzz/fuzz_python.py).
#
#   scripts/fuzz-python.sh TARGET                 run for HEADLAB_FUZZ_SECONDS seconds (default 60; 10 in CI)
#   scripts/fuzz-python.sh TARGET --runs N        run N inputs instead (e.g. 200000)
#   scripts/fuzz-python.sh TARGET --regressions   only replay its seeds and regressions
#
# TARGET: a folder of tests/fuzz/corpus-python (session, run_file, head_curves, search_report,
# checkpoint, checkpoint_unverified; fuzz_python.py says what each reads).
# Seeds: tests/fuzz/corpus-python/TARGET; regressions (inputs that once found a defect, kept so
# that every run replays them): tests/fuzz/regressions-python/TARGET. What the fuzzer learns goes
# to build-fuzz/python-TARGET/corpus (not committed); a finding is saved there as crash-* and
# stops the run with exit 1. Uses the project's .venv (scripts/setup.sh installs atheris in it).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET="${1:?usage: scripts/fuzz-python.sh TARGET (a folder of tests/fuzz/corpus-python) [--runs N | --regressions]}"
shift
SECONDS_TO_RUN="${HEADLAB_FUZZ_SECONDS:-$([[ -n "${CI:-}" ]] && echo 10 || echo 60)}"
OUT="$ROOT/build-fuzz/python-$TARGET"
SEEDS="$ROOT/tests/fuzz/corpus-python/$TARGET"
REGRESSIONS="$ROOT/tests/fuzz/regressions-python/$TARGET"
mkdir -p "$OUT/corpus" "$OUT/findings"
PYTHON="$ROOT/.venv/bin/python"
if ! "$PYTHON" -c 'import atheris' 2>/dev/null; then
    echo "[fuzz-python] no atheris in .venv: run scripts/setup.sh" >&2
    exit 1
fi
# A fixed seed (HEADLAB_FUZZ_SEED, default 1) and hash seed: a bounded run explores the same
# sequence of inputs on every machine, a slower one a prefix of a faster one's, so what CI runs
# has been run here first; a longer search takes another seed.
export PYTHONHASHSEED=0
args=(-artifact_prefix="$OUT/findings/" -max_len=65536 -timeout=20 -rss_limit_mb=3072
      -seed="${HEADLAB_FUZZ_SEED:-1}")
case "${1:-}" in
    --runs) args+=(-runs="${2:?--runs needs a number}") ;;
    --regressions) args+=(-runs=0) ;;
    "") args+=(-max_total_time="$SECONDS_TO_RUN") ;;
    *) echo "usage: scripts/fuzz-python.sh TARGET [--runs N | --regressions]" >&2; exit 2 ;;
esac
dirs=("$OUT/corpus" "$SEEDS")
[[ -d "$REGRESSIONS" ]] && dirs+=("$REGRESSIONS")
echo "[fuzz-python] $TARGET: ${args[*]: -1} over ${dirs[*]#$ROOT/}" >&2
exec "$PYTHON" tests/fuzz/fuzz_python.py "$TARGET" "${args[@]}" "${dirs[@]}"
