#!/usr/bin/env bash
# gpu-tests.sh — builds and runs HeadLab's test suites on the GPU machine (Ubuntu 24.04, CUDA 13,
# PyTorch 2.11 in the system python, no Qt, nothing to download): the core, session, search, storage,
# checkpoint, heads, task, nearest-neighbour and text suites, and tests/cuda, whose cases compare
# every CUDA path with the path it replaces (they skip where there is no GPU, as on CI).
#
# Qt: the suites are QtTest programs. The GPU machine has no Qt, so scripts/stage-deps.sh (run on
# the workstation) packs Debian 12's Qt 6 Core and Test, moc and the few libraries they need into
# .deps/qt6-core-test.tar.xz; it travels with the working tree (the device tool's carry) and is
# unpacked here into build-core/qt6. No GUI library is needed or built.
#
#   scripts/gpu-tests.sh [CTEST_REGEX]     default: the suites above (not the fuzzer, Slurm or the
#                                          layering checks, which need no GPU)
#
# Exit status: ctest's (non-zero when a test fails), 1 when the build fails. The verdicts are
# written to docs/data/gpu-tests/ (and $OUT; see the end).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { printf '[gpu-tests %s] %s\n' "$(date +%T)" "$*" >&2; }

source "$ROOT/scripts/carried-qt.sh"
carried_qt || { say "error: the carried Qt is not usable"; exit 1; }

# LibTorch's CPU paths (the CPU sides of tests/cuda, the CPU suites) use one thread per core by
# default. On the GPU machine's 64 cores that made the small models of the tests ~50x slower than
# 8 threads (2026-11-27, 4 x H100 host: cpuAndCudaAgree of stabilized text passed QtTest's 300 s
# limit; with 8 threads both file and text cases took 5.7 s), so the CPU gets 8 unless told.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-8}"
SUITES=(test_core test_session test_search test_storage test_checkpoints test_heads test_tasks test_nn test_text test_cuda)
say "building ${SUITES[*]} and headlab-cli"
start=$SECONDS
bash "$ROOT/scripts/build-core.sh" headlab-cli "${SUITES[@]}" >&2
say "built in $((SECONDS - start)) s"
# HEADLAB_GPU_TESTS_BUILD_ONLY=1: the suites built (with the carried Qt), none run (bench/ scripts
# that run single cases).
[[ "${HEADLAB_GPU_TESTS_BUILD_ONLY:-0}" == 1 ]] && exit 0
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >&2 || true

cd "$ROOT/build-core"
# The verdicts go to a file of the repository, docs/data/gpu-tests/DATE-GPU-COMMIT.txt (with the
# commit, the GPU, the driver and every suite's line), and to $OUT's top level under the same name when the
# device tool runs this, so that they come back to the workstation as written, not pasted.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr -c 'A-Za-z0-9\n' '-' || true)
# The device's copy of the tree may have no .git: HEADLAB_COMMIT names the commit then.
commit=${HEADLAB_COMMIT:-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)}
verdicts="docs/data/gpu-tests/$(date -u +%F)-${gpu:-no-gpu}-$commit.txt"
mkdir -p "$ROOT/docs/data/gpu-tests"
# Whether the tree differs from the commit, asked before the verdicts file exists (it would count
# as a change itself); the build directory and carried files are ignored by git.
# Only against the commit named: a device's copy can hold a .git left from an older tree, whose
# HEAD is not HEADLAB_COMMIT (2026-12-03: "differs" from bf2a50e listed files that did not).
head=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || true)
if [[ -n "$head" && "$head" == "$commit"* ]]; then
    dirty=$(git -C "$ROOT" status --porcelain 2>/dev/null || true)
elif [[ -n "$head" ]]; then
    dirty="?? not known: this copy's git HEAD is $head, not $commit"
else
    dirty=""
fi
{
    echo "# scripts/gpu-tests.sh ${1:-(default suites)} at $commit, $(date -u '+%F %T') UTC"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "no GPU"
    if [[ -n "$dirty" ]]; then
        echo "(working tree differs from $commit:"
        printf '%s\n' "$dirty" | head -5 | sed 's/^/   /'
        echo ")"
    fi
} > "$ROOT/$verdicts"
# CTEST_ARGS: more ctest options (bench/gpu_tasks.sh passes -V to keep every case's verdict).
set +e
ctest --output-on-failure ${CTEST_ARGS:-} -R "${1:-^($(IFS='|'; echo "${SUITES[*]}"))\$}" --timeout 900 \
    2>&1 | tee -a "$ROOT/$verdicts"
status=${PIPESTATUS[0]}
set -e
# To $OUT's top level: the device tool brings back files at most two folders down, and
# docs/data/gpu-tests/ is three.
if [[ -n "${OUT:-}" ]]; then
    cp "$ROOT/$verdicts" "$OUT/$(basename "$verdicts")"
fi
say "verdicts in $verdicts (exit $status)"
exit "$status"
