#!/usr/bin/env bash
# test.sh — installs what is missing, builds, and runs every test (ctest, CPU only, Qt offscreen).
# Extra arguments go to ctest, e.g. `scripts/test.sh -R session`. Exit status: ctest's.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Every target: the app and the CLI (scripts/run.sh builds only those), the tests and the bench.
HEADLAB_SETUP_TARGETS=all "$ROOT/scripts/setup.sh"
# The phase times are this setup's (bench/cold_start.sh); the tests that run setup.sh in clones of
# their own must not add theirs.
unset HEADLAB_SETUP_TIMES
# The fuzz targets, as the build makes them (quick when nothing changed): the fuzz tests only
# replay and fuzz. Where they cannot be built (no clang and no root to install it), every other
# test still runs, and the fuzz tests fail saying why.
cmake --build "$ROOT/build" --target fuzzers ||
    echo "[test] the fuzz targets did not build (above); the fuzz tests will fail, the others run" >&2

export QT_QPA_PLATFORM=offscreen
# The cores, counted before OMP_NUM_THREADS is set below (nproc counts it).
JOBS="${HEADLAB_TEST_JOBS:-$(nproc)}"
# One CPU thread per test process (HeadLab's CPU sweeps plan with OMP_NUM_THREADS: SweepRunner.h),
# as many processes as cores: two tests that each trained on every core of a 2-core machine, with
# LibTorch's threads spinning while they wait, took 2-4 times as long side by side as alone.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
start=$SECONDS
status=0
# As many tests at once as there are cores (HEADLAB_TEST_JOBS to change it); the tests that must
# run alone say so (RUN_SERIAL, RESOURCE_LOCK in their CMakeLists.txt).
ctest --test-dir "$ROOT/build" --output-on-failure --no-tests=error \
    -j "$JOBS" "$@" || status=$?
# What the real-Slurm test did (it starts daemons and submits jobs; ctest shows only its verdict).
grep -h "^slurm-test: \(PASS\|SKIPPED\|FAILED\)" "$ROOT/build/Testing/Temporary/LastTest.log" 2>/dev/null || true
# Every test or case that skipped, with its reason: a skip passes in ctest, and is listed here so
# that it is never mistaken for a pass (QtTest's SKIP lines, unittest's skipped '…', the shell
# tests' SKIPPED: lines; ctest's own list names the tests that exited with their skip code).
skips="$(grep -hE "^SKIP   : | \.\.\. skipped '|SKIPPED: " \
    "$ROOT/build/Testing/Temporary/LastTest.log" 2>/dev/null | sort -u || true)"
if [[ -n "$skips" ]]; then
    echo "[test] skipped, each with its reason:"
    sed 's/^/[test]   /' <<<"$skips"
fi
if [[ $status -eq 0 ]]; then
    echo "[test] all tests passed ($((SECONDS - start)) s)"
else
    echo "[test] FAILED: ctest exited with status $status ($((SECONDS - start)) s)" >&2
fi
exit $status
