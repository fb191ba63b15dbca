#!/usr/bin/env bash
# broken_kernel_check.sh — shows that a CUDA kernel's equivalence test in tests/cuda fails when
# the kernel is broken on purpose: applies a sed expression to the kernel's source, rebuilds
# test_cuda in build-core/ (scripts/build-core.sh), runs the one test function, and puts the source
# back (and rebuilds). Run after scripts/gpu-tests.sh on the GPU machine.
#   bench/broken_kernel_check.sh FILE SED_EXPRESSION TEST_FUNCTION
# Exit status 0 when the test failed as it must, 1 when it passed with the kernel broken.
# HEADLAB_BROKEN_UNDER: a command the test runs under (compute-sanitizer and its options; see
# bench/sanitizer_control.sh); HEADLAB_BROKEN_EXPECT: the exit status that counts as caught (the
# sanitizer's --error-exitcode, so that the test's own failure does not pass for the tool's).
# Example: bench/broken_kernel_check.sh core/model/cuda/UnitPoints.cu 's/0x846ca68bU/0x846ca68aU/' fusedPointsEqualAten
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
file="$1" expression="$2" function="$3"
say() { printf '[broken_kernel_check %s] %s\n' "$(date +%T)" "$*"; }
cp "$ROOT/$file" "$ROOT/$file.orig"
trap 'mv "$ROOT/$file.orig" "$ROOT/$file" && touch "$ROOT/$file"' EXIT
sed -i "$expression" "$ROOT/$file"
if cmp -s "$ROOT/$file" "$ROOT/$file.orig"; then say "the expression changed nothing in $file"; exit 1; fi
say "broken: $(diff "$ROOT/$file.orig" "$ROOT/$file" | grep '^>' | head -3)"
# The Qt that scripts/gpu-tests.sh unpacked (HEADLAB_QT_PREFIX, and LD_LIBRARY_PATH, which moc
# needs while building): build-core.sh keeps the test suites configured.
source "$ROOT/scripts/carried-qt.sh"
carried_qt || { say "the carried Qt is not usable"; exit 1; }
build() {
    bash "$ROOT/scripts/build-core.sh" test_cuda > "$ROOT/build-core/broken-build.log" 2>&1 ||
        { say "build failed:"; tail -15 "$ROOT/build-core/broken-build.log"; return 1; }
}
build || exit 1
# shellcheck disable=SC2086 # the wrapper is a command and its words
${HEADLAB_BROKEN_UNDER:-} "$ROOT/build-core/tests/cuda/test_cuda" "$function" > "$ROOT/build-core/broken.log" 2>&1
status=$?
grep -E "^(PASS|FAIL|   Loc|Totals)|ERROR SUMMARY|RACECHECK SUMMARY|Invalid __global__|Error: Race" \
    "$ROOT/build-core/broken.log" | head -12
# touch: the restored copy is older than the broken build, and make would keep that build.
mv "$ROOT/$file.orig" "$ROOT/$file" && touch "$ROOT/$file"; trap - EXIT
build || exit 1
if [[ -n "${HEADLAB_BROKEN_EXPECT:-}" ]]; then
    if [[ $status -eq $HEADLAB_BROKEN_EXPECT ]]; then say "as it must: caught under ${HEADLAB_BROKEN_UNDER%% *} (exit $status)"; exit 0; fi
    say "NOT CAUGHT under ${HEADLAB_BROKEN_UNDER%% *}: exit $status, not $HEADLAB_BROKEN_EXPECT"; exit 1
fi
if [[ $status -ne 0 ]]; then say "as it must: $function FAILED with the kernel broken"; exit 0; fi
say "WRONG: $function passed with the kernel broken"; exit 1
