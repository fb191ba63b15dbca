#!/usr/bin/env bash
# fuzz.sh — builds a libFuzzer target with ASan and UBSan and runs it.
#
#   scripts/fuzz.sh [TARGET]                 run for HEADLAB_FUZZ_SECONDS seconds (default 60; 180 in CI)
#   scripts/fuzz.sh [TARGET] --runs N        run N inputs instead (e.g. 1000000)
#   scripts/fuzz.sh [TARGET] --regressions   only replay its seeds and regressions
#
# TARGET (default session), one row each in the table below:
#   session     the session loader: each input is parsed as a session and as a run file, expanded,
#               written, parsed again and compared (docs/STORAGE.md);
#   checkpoint  the checkpoint reader: safetensors bytes, header, metadata, config and curves;
#   task_input  what users type or hand to a task: the addition input, prompts, examples files.
# Seeds are the target's folders below; what the fuzzer learns goes to build-fuzz/TARGET/corpus/
# (not committed). A finding stops the run with exit 1 and is saved as
# build-fuzz/TARGET/findings/crash-*; copy it into the target's regressions folder once fixed, so
# that every later run replays it. ctest runs each target as the test fuzz_TARGET
# (scripts/test.sh). Installs clang-14 and libclang-rt-14-dev (libFuzzer, the sanitizer runtimes)
# when they are missing, as setup.sh installs the rest. Needs yaml-cpp and nlohmann/json (setup.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SECONDS_TO_RUN="${HEADLAB_FUZZ_SECONDS:-$([[ -n "${CI:-}" ]] && echo 180 || echo 60)}"
TARGET=session
case "${1:-}" in session|checkpoint|task_input) TARGET="$1"; shift ;; esac
MODE=time RUNS=0
case "${1:-}" in
    --runs) MODE=runs; RUNS="${2:?--runs needs a number}" ;;
    --regressions) MODE=regressions ;;
    "") ;;
    *) echo "usage: scripts/fuzz.sh [session|checkpoint|task_input] [--runs N | --regressions]" >&2; exit 2 ;;
esac
OUT="$ROOT/build-fuzz/$TARGET"

say() { printf '[fuzz] %s\n' "$*" >&2; }

# --- the compiler and libFuzzer -------------------------------------------------------------------
CLANG="$(command -v clang++-14 || command -v clang++ || true)"
FUZZER_LIB="$(ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a 2>/dev/null \
    | head -n1 || true)"
if [[ -z "$CLANG" || -z "$FUZZER_LIB" ]]; then
    sudo=()
    [[ $EUID -ne 0 ]] && sudo=(sudo)
    say "installing clang-14 and libclang-rt-14-dev (libFuzzer and the sanitizers)"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        clang-14 libclang-rt-14-dev libyaml-cpp-dev
    CLANG="$(command -v clang++-14)"
fi

# --- the targets -----------------------------------------------------------------------------------
# The torch-free part of the core that reading a session touches: config, the session files, the
# metrics, and the task table with every task's torch-free files (all but its *Task.cpp; specs
# built without factories: HEADLAB_SPECS_ONLY, core/tasks/TaskSpec.h), so a new task is fuzzed too.
TASK_SOURCES=()
for f in core/tasks/*/*.cpp; do [[ "$f" == *Task.cpp ]] || TASK_SOURCES+=("$f"); done
CORE_SOURCES=(core/config/*.cpp core/session/Session.cpp core/session/SweepAxes.cpp core/session/SessionStore.cpp core/session/Search.cpp
              core/session/CsvExport.cpp
              core/metrics/LearnedRule.cpp core/metrics/Metrics.cpp core/metrics/Logistic.cpp core/tasks/TaskTable.cpp core/tasks/RunConfigFields.cpp
              "${TASK_SOURCES[@]}")
case "$TARGET" in
    session)
        SOURCES=(tests/fuzz/fuzz_session.cpp "${CORE_SOURCES[@]}")
        SEEDS=(resources/presets tests/fuzz/corpus tests/storage/fixtures tests/fuzz/regressions)
        MAX_LEN=8192 ;;
    checkpoint)
        SOURCES=(tests/fuzz/fuzz_checkpoint.cpp core/train/CheckpointReader.cpp "${CORE_SOURCES[@]}")
        SEEDS=(tests/fuzz/corpus-checkpoint tests/fuzz/regressions-checkpoint)
        MAX_LEN=65536 ;;
    task_input)
        SOURCES=(tests/fuzz/fuzz_task_input.cpp "${CORE_SOURCES[@]}")
        SEEDS=(tests/fuzz/corpus-task-input tests/fuzz/regressions-task-input)
        MAX_LEN=65536 ;;
esac

# --- build (only when a source changed) --------------------------------------------------------
BINARY="$OUT/fuzz_$TARGET"
mkdir -p "$OUT/corpus" "$OUT/findings"
newest="$(ls -t "${SOURCES[@]}" core/*/*.h core/*/*/*.h "$0" | head -n1)"
if [[ ! -x "$BINARY" || "$newest" -nt "$BINARY" ]]; then
    say "building $BINARY (clang, libFuzzer, ASan, UBSan)"
    "$CLANG" -std=c++20 -O1 -g -fno-omit-frame-pointer -I "$ROOT" -DHEADLAB_SPECS_ONLY \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -fsanitize-address-use-after-scope \
        "${SOURCES[@]}" -lyaml-cpp -o "$BINARY.new"
    mv "$BINARY.new" "$BINARY"
fi

# --- regressions: every input that ever found something, and the seeds --------------------------
regressions=()
for dir in "${SEEDS[@]}"; do
    for f in "$dir"/*; do [[ -f "$f" ]] && regressions+=("$f"); done
done
say "replaying ${#regressions[@]} seed and regression inputs"
"$BINARY" -runs=1 "${regressions[@]}" >"$OUT/regressions.log" 2>&1 || {
    cat "$OUT/regressions.log" >&2
    say "FAILED: a seed or regression input crashes or breaks the round trip"
    exit 1
}
[[ "$MODE" == regressions ]] && { say "0 findings"; exit 0; }

# --- fuzz -------------------------------------------------------------------------------------------
limit=(-max_total_time="$SECONDS_TO_RUN")
[[ "$MODE" == runs ]] && limit=(-runs="$RUNS")
say "fuzzing $TARGET (${limit[*]#-}), corpus build-fuzz/$TARGET/corpus"
set +e
"$BINARY" "${limit[@]}" -max_len="$MAX_LEN" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$OUT/findings/" "$OUT/corpus" "${SEEDS[@]}" >"$OUT/fuzz.log" 2>&1
status=$?
set -e
runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$OUT/fuzz.log" | tail -n1 | grep -o '[0-9]*$' || echo '?')"
secs="$(grep -o 'Done [0-9]* runs in [0-9]* second' "$OUT/fuzz.log" | grep -o 'in [0-9]*' | grep -o '[0-9]*' || true)"
findings="$(ls "$OUT/findings" | wc -l)"
coverage="$(grep -o 'cov: [0-9]*' "$OUT/fuzz.log" | tail -n1 || true)"
if [[ $status -ne 0 ]]; then
    tail -n 60 "$OUT/fuzz.log" >&2
    say "FAILED: $runs inputs, $findings finding(s) in build-fuzz/$TARGET/findings/"
    exit 1
fi
say "$TARGET: $runs inputs in ${secs:-$SECONDS_TO_RUN} s, 0 findings (${coverage:-cov: ?} edges; corpus: $(ls "$OUT/corpus" | wc -l) inputs)"
