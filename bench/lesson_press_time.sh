#!/usr/bin/env bash
# lesson_press_time.sh — how soon the lesson strip's pressed runs train (issue 79, item 4): runs
# test_ui_training's aLessonPressOnTheClassroomTrainsAtOnce (the classroom preset opened as a
# teacher opens it, trained, then an η of its strip that it did not run pressed) REPEATS times on
# this machine idle, then as often beside one busy process (a spinning Python loop, as
# bench/classroom_time.py has it), and writes one JSON line per press: milliseconds from the press
# until the first pressed run, and both, have reported their first steps on screen.
# bench/report.py --lesson-press turns the file into PERFORMANCE.md's table.
#
#   bench/lesson_press_time.sh [OUT.jsonl]    default docs/data/issue79/lesson-press.jsonl
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TEST="$ROOT/build/tests/ui/test_ui_training"
OUTFILE="${1:-$ROOT/docs/data/issue79/lesson-press.jsonl}"
REPEATS="${REPEATS:-5}"
[[ -x "$TEST" ]] || { echo "lesson_press_time.sh: build first (scripts/test.sh): $TEST" >&2; exit 2; }
cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "{\"machine\": \"cpu\", \"cpu\": \"$cpu\", \"cores\": $(nproc), \"date\": \"$(date -u +%F)\", \"commit\": \"$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo none)\"}" > "$OUTFILE"
busy=""
trap '[[ -n "$busy" ]] && kill "$busy" 2>/dev/null; true' EXIT
for condition in idle "one busy process"; do
    if [[ $condition != idle ]]; then
        python3 -c 'while True: pass' &
        busy=$!
    fi
    for ((i = 1; i <= REPEATS; i++)); do
        line="$(env -u OMP_NUM_THREADS QT_QPA_PLATFORM=offscreen "$TEST" aLessonPressOnTheClassroomTrainsAtOnce 2>&1 |
            grep 'classroom lesson press')" || { echo "lesson_press_time.sh: the case failed" >&2; exit 1; }
        read -r first both < <(sed -E 's/.* after ([0-9]+) ms .* and ([0-9]+) ms .*/\1 \2/' <<< "$line")
        echo "{\"condition\": \"$condition\", \"repeat\": $i, \"first_ms\": $first, \"both_ms\": $both}" | tee -a "$OUTFILE"
    done
done
