#!/usr/bin/env bash
# cold_start.sh — what a new user waits for before HeadLab's window appears, and then for the
# tests (issue 73): a fresh clone of this checkout, no compiler cache, each phase timed.
#
#   bash bench/cold_start.sh [OUT.jsonl]      default bench/results/cold-start-<machine>-<date>.jsonl
#
# 1. `git clone` of this checkout's HEAD into a fresh folder;
# 2. `scripts/run.sh --screenshot F --screenshot-after 0` under Xvfb, as the README's first command
#    with the window's first frame saved: the phases of scripts/setup.sh (Debian packages, Python
#    packages, CUDA toolkit, configure and build), then the app from its start to the drawn window;
# 3. `scripts/test.sh` in the same clone (HEADLAB_COLD_TESTS=0 leaves it out): the rest of the
#    build and every test;
# 4. a change to one file of core/ (a comment appended to core/session/RunFilter.cpp, and one to
#    core/model/Transformer.cpp, which includes LibTorch), rebuilt as the first command rebuilds it;
# 5. the baseline, in the same run: the same targets configured and built again in a second build
#    folder of the clone with the precompiled headers off (-DHEADLAB_PCH=OFF), as every file was
#    compiled before them (HEADLAB_COLD_BASELINE=0 leaves it out).
#
# The compiler cache is off (CCACHE_DISABLE=1) and build/ is new. Python's wheels come from a fresh
# uv cache (a new user downloads them) unless HEADLAB_COLD_WHEELS=0, which keeps ~/.cache/uv (the
# wheels hard-linked, as a second clone gets them). Debian's packages are whatever this machine
# already has: the script does not uninstall them. Each line of the data file is one phase:
# {"phase", "seconds", "mb", "machine", "cores", "date", "commit", "ccache", "wheels"}.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATE="$(date -u +%F)"
CORES="$(nproc)"
OUT="${1:-$ROOT/bench/results/cold-start-cpu-${CORES}core-$DATE.jsonl}"
WORK="$(mktemp -d /tmp/headlab-cold.XXXXXX)"
CLONE="$WORK/headlab"
TIMES="$WORK/setup-times.tsv"
COMMIT="$(git -C "$ROOT" rev-parse --short HEAD)"
CPU="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
WHEELS="fresh uv cache"
export CCACHE_DISABLE=1
if [[ "${HEADLAB_COLD_WHEELS:-1}" == 1 ]]; then
    export UV_CACHE_DIR="$WORK/uv-cache"
else
    WHEELS="warm uv cache (hard links)"
fi
command -v xvfb-run >/dev/null || { echo "[cold] needs xvfb-run (scripts/setup.sh installs it)" >&2; exit 1; }
[[ -z "$(git -C "$ROOT" status --porcelain --untracked-files=no)" ]] ||
    echo "[cold] note: the checkout has uncommitted changes; the clone measures HEAD ($COMMIT)" >&2

record() { # PHASE SECONDS [MB]
    printf '{"phase": "%s", "seconds": %s, "mb": %s, "machine": "%s", "cores": %s, "date": "%s", "commit": "%s", "ccache": "off", "wheels": "%s"}\n' \
        "$1" "$2" "${3:-null}" "$CPU" "$CORES" "$DATE" "$COMMIT" "$WHEELS" >>"$OUT"
    printf '[cold] %-28s %6s s\n' "$1" "$2" >&2
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

mkdir -p "$(dirname "$OUT")"
: >"$OUT"
echo "[cold] $CPU, $CORES cores; clone in $CLONE; data -> $OUT" >&2

t=$(now)
git clone --quiet "$ROOT" "$CLONE"
record "git clone" "$(since "$t")"

# The first command, to the first frame of the window on the default session.
t=$(now)
shot="$WORK/window.png"
HEADLAB_SETUP_TIMES="$TIMES" xvfb-run -a -s "-screen 0 1280x720x24" \
    env QT_QPA_PLATFORM=xcb bash "$CLONE/scripts/run.sh" --screenshot "$shot" --screenshot-after 0 \
    >"$WORK/run.log" 2>&1 || { cat "$WORK/run.log" >&2; exit 1; }
total=$(since "$t")
[[ -s "$shot" ]] || { echo "[cold] the app drew no window ($shot missing)" >&2; exit 1; }
setup_sum=0
while IFS=$'\t' read -r name seconds mb; do
    record "first command: $name" "$seconds" "$mb"
    setup_sum=$((setup_sum + seconds))
done <"$TIMES"
record "first command: app to window" "$(awk -v a="$total" -v b="$setup_sum" 'BEGIN { printf "%.1f", a - b }')"
record "first command: total" "$total"
cp "$shot" "$(dirname "$OUT")/cold-start-window-$DATE.png" 2>/dev/null || true

# One file of core/ changed, rebuilt as the first command rebuilds it.
for file in core/session/RunFilter.cpp core/model/Transformer.cpp; do
    echo "// cold_start.sh: a change" >>"$CLONE/$file"
    t=$(now)
    HEADLAB_SETUP_TIMES=/dev/null bash "$CLONE/scripts/setup.sh" >>"$WORK/rebuild.log" 2>&1
    record "rebuild after $file" "$(since "$t")"
    git -C "$CLONE" checkout --quiet -- "$file"
    HEADLAB_SETUP_TIMES=/dev/null bash "$CLONE/scripts/setup.sh" >>"$WORK/rebuild.log" 2>&1
done

# The baseline: the first command's targets without precompiled headers, in the same clone.
if [[ "${HEADLAB_COLD_BASELINE:-1}" == 1 ]]; then
    args="$(cat "$CLONE/build/.headlab-configure-args")"
    t=$(now)
    # shellcheck disable=SC2086 # the arguments setup.sh configured with, one word each
    (cd "$CLONE" && cmake -S . -B build-nopch -G Ninja $args -DHEADLAB_PCH=OFF >"$WORK/baseline.log" 2>&1 &&
        cmake --build build-nopch --parallel "$CORES" --target headlab headlab-cli >>"$WORK/baseline.log" 2>&1)
    record "baseline: configure and build without precompiled headers" "$(since "$t")"
    rm -rf "$CLONE/build-nopch"
fi

# Nothing changed: the first command again, to the point where it starts the app.
t=$(now)
bash "$CLONE/scripts/setup.sh" >>"$WORK/rebuild.log" 2>&1
record "first command again, nothing changed (setup)" "$(since "$t")"

if [[ "${HEADLAB_COLD_TESTS:-1}" == 1 ]]; then
    : >"$TIMES"
    t=$(now)
    status=0
    HEADLAB_SETUP_TIMES="$TIMES" bash "$CLONE/scripts/test.sh" >"$WORK/test.log" 2>&1 || status=$?
    total=$(since "$t")
    while IFS=$'\t' read -r name seconds mb; do
        record "second command: $name" "$seconds" "$mb"
    done <"$TIMES"
    ctest_s="$(sed -n 's/.*Total Test time (real) = *\([0-9.]*\) sec.*/\1/p' "$WORK/test.log" | tail -1)"
    record "second command: ctest" "${ctest_s:-null}"
    record "second command: total" "$total"
    grep -E "tests passed|tests failed" "$WORK/test.log" | tail -1 >&2 || true
    [[ $status -eq 0 ]] || echo "[cold] scripts/test.sh exited $status (log: $WORK/test.log)" >&2
fi
echo "[cold] done; logs in $WORK (remove it when read: it holds a clone and its build)" >&2
