#!/usr/bin/env bash
# sanitize-app.sh — the app under a sanitizer: tests/ui/test_ui_stress (a teacher pressing the
# lesson strip's buttons, presenter mode, Stop, Start, Pause and the tabs at random while runs
# train, 1,000 actions) built with gcc's AddressSanitizer or ThreadSanitizer and run offscreen.
# Fails on any report: a use after free, a data race between the training threads and the window.
#
#   scripts/sanitize-app.sh address|thread      build in build-asan/ or build-tsan/ and run
#   scripts/sanitize-app.sh address --broken WHAT   a control: a rule broken on purpose, which
#       must be reported (the source is put back and rebuilt afterwards). WHAT:
#       markers   FigureChartView restyles a marker series that was just emptied (Qt Charts then
#                 reads its point −1: the crash of issue 75 after F11 mid-run)
#       handoff   the Mailbox runs a worker's call on the worker's thread instead of handing it
#                 to the GUI thread (a training thread then writes the session model the window
#                 reads): ThreadSanitizer must report it
#   HEADLAB_STRESS_ACTIONS=N HEADLAB_STRESS_SEED=S   passed to the test (default 1000, 75)
#
# .ci/scheduled runs it (both kinds and a control of each), not .ci/run: each sanitized build
# compiles the core, the UI and the test anew (ccache keeps them for the next run). HeadLab's own code is instrumented; Qt and
# LibTorch are the distributions' and are not, so ThreadSanitizer ignores their modules
# (ignore_noninstrumented_modules) and the suppressions in tests/ui/tsan.supp name what their
# uninstrumented internals make it see, each with why.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KIND="${1:-}"
BROKEN="${2:-}" WHAT="${3:-}"
case "$KIND" in
    address) BUILD="$ROOT/build-asan" FLAGS="-fsanitize=address -fno-omit-frame-pointer" ;;
    thread) BUILD="$ROOT/build-tsan" FLAGS="-fsanitize=thread" ;;
    *) echo "usage: scripts/sanitize-app.sh address|thread" >&2; exit 2 ;;
esac
say() { printf '[sanitize-app %s %s] %s\n' "$KIND" "$(date +%T)" "$*"; }
VENV="$ROOT/.venv"
[[ -x "$VENV/bin/python" ]] || { say "no .venv: run scripts/setup.sh first"; exit 1; }
export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
torch_prefix="$("$VENV/bin/python" -c 'import importlib.util as u, os
print(os.path.join(u.find_spec("torch").submodule_search_locations[0], "share", "cmake"))')"
if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
    say "configuring $BUILD"
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_PREFIX_PATH="$torch_prefix" -DHEADLAB_BUILD_BENCH=OFF -DHEADLAB_CUDA_KERNELS=OFF \
        -DCMAKE_CXX_FLAGS="$FLAGS -g -O1" -DCMAKE_EXE_LINKER_FLAGS="$FLAGS" \
        -DCMAKE_SHARED_LINKER_FLAGS="$FLAGS" > "$ROOT/.sanitize-configure.log" 2>&1 ||
        { tail -20 "$ROOT/.sanitize-configure.log"; exit 1; }
    mv "$ROOT/.sanitize-configure.log" "$BUILD/configure.log"
fi
build() { cmake --build "$BUILD" --parallel "${HEADLAB_JOBS:-$(nproc)}" --target test_ui_stress; }
if [[ "$BROKEN" == --broken ]]; then
    case "$WHAT" in
        markers) FILE="$ROOT/ui/figures/FigureChartView.cpp"
                 EXPR='s/        if (series->count() == 0) {/        if (false) { \/\/ BROKEN on purpose/' ;;
        handoff) FILE="$ROOT/ui/model/Mailbox.cpp"
                 EXPR='s/    if (!m_closed) m_calls.push_back(std::move(call));/    if (!m_closed) call(); \/\/ BROKEN on purpose/' ;;
        *) echo "usage: scripts/sanitize-app.sh address|thread --broken markers|handoff" >&2
           exit 2 ;;
    esac
    cp "$FILE" "$FILE.orig"
    trap 'mv "$FILE.orig" "$FILE" && touch "$FILE" && build > /dev/null' EXIT
    sed -i "$EXPR" "$FILE"
    cmp -s "$FILE" "$FILE.orig" && { say "the break changed nothing"; exit 1; }
    say "broken: $(grep -n 'BROKEN on purpose' "$FILE")"
fi
say "building test_ui_stress"
build
LOG="$BUILD/stress.log"
export QT_QPA_PLATFORM=offscreen
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1:detect_stack_use_after_return=1"
export TSAN_OPTIONS="halt_on_error=1:ignore_noninstrumented_modules=1:report_signal_unsafe=0:suppressions=$ROOT/tests/ui/tsan.supp:history_size=4"
say "running (log: $LOG)"
set +e
"$BUILD/tests/ui/test_ui_stress" > "$LOG" 2>&1
status=$?
set -e
grep -E "^(PASS|FAIL|   Loc|Totals|QINFO)|ERROR: AddressSanitizer|WARNING: ThreadSanitizer|SUMMARY:" "$LOG" | head -20
reported=0
if [[ $status -ne 0 ]] || grep -qE "ERROR: AddressSanitizer|WARNING: ThreadSanitizer" "$LOG"; then
    reported=1
fi
if [[ "$BROKEN" == --broken ]]; then
    [[ $reported == 1 ]] && { say "as it must: the broken $WHAT rule was reported (exit $status)"; exit 0; }
    say "NOT CAUGHT: the broken $WHAT rule ran without a report"; exit 1
fi
[[ $reported == 1 ]] && { say "FAILED (exit $status): see $LOG"; exit 1; }
say "no report: $(grep -o '[0-9]* actions in [0-9.]* s' "$LOG")"
