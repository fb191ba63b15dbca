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
# The tree: the device's copy has no git metadata of its own commit, so the workstation writes
# .gpu-tree (scripts/gpu-tree.py write: refused unless the working tree is HEAD's) and the call
# carries it; here every file is checked against it before anything is built, and a tree that
# differs is refused (exit 2) with the files that differ. The verdict is then named after that
# commit, and its header says the tree was verified. A git checkout that is clean is its own proof.
#
# compute-sanitizer: where it is found and test_cuda is among the suites, tests/cuda's kernel cases
# (KERNEL_CASES below) run under memcheck and racecheck after the suites (HEADLAB_SANITIZE=0: not);
# each case and tool is a section of the same verdict file, and a reported error fails the call.
#
# Exit status: ctest's (non-zero when a test fails), 1 when the build fails, 2 when the tree is
# not a commit's. The verdicts are written to docs/data/gpu-tests/ (and $OUT; see the end).
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
# The tree first: nothing is built or run on a tree that is not the commit's.
head=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || true)
if tree=$(python3 "$ROOT/scripts/gpu-tree.py" verify "$ROOT"); then
    commit=$tree
    provenance="tree verified: every file is $commit's (scripts/gpu-tree.py)"
elif [[ -n "$head" && -z "$(git -C "$ROOT" status --porcelain 2>/dev/null)" && ! -e "$ROOT/.gpu-tree" ]]; then
    commit=$head
    provenance="a clean git checkout of $commit"
else
    say "refused: the tree is not one commit's"
    printf '%s\n' "$tree" >&2
    exit 2
fi
if [[ -n "${HEADLAB_COMMIT:-}" && "$HEADLAB_COMMIT" != "$commit"* && "$commit" != "$HEADLAB_COMMIT"* ]]; then
    say "refused: HEADLAB_COMMIT is $HEADLAB_COMMIT, but the tree is $commit's"
    exit 2
fi
say "$provenance"
SUITES=(test_core test_session test_search test_storage test_checkpoints test_heads test_tasks test_nn test_text test_golden test_cuda)
# HEADLAB_SUITES="test_cuda test_golden": build and run these only (a call of its own for the
# sanitizer, which a device call's time limit would not fit beside every suite).
if [[ -n "${HEADLAB_SUITES:-}" ]]; then read -r -a SUITES <<< "$HEADLAB_SUITES"; fi
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
verdicts="docs/data/gpu-tests/$(date -u +%F)-${gpu:-no-gpu}-$commit${HEADLAB_VERDICT_SUFFIX:+-$HEADLAB_VERDICT_SUFFIX}.txt"
mkdir -p "$ROOT/docs/data/gpu-tests"
{
    if [[ "${HEADLAB_SANITIZE_ONLY:-0}" == 1 ]]; then what="(compute-sanitizer alone)"
    elif [[ -n "${HEADLAB_SUITES:-}" ]]; then what="(suites: ${SUITES[*]})"
    else what="(default suites)"; fi
    [[ "${HEADLAB_SANITIZE:-1}" == 1 ]] || what="$what, no compute-sanitizer"
    echo "# scripts/gpu-tests.sh ${1:-$what} at $commit, $(date -u '+%F %T') UTC"
    echo "# $provenance"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "no GPU"
} > "$ROOT/$verdicts"
# CTEST_ARGS: more ctest options (bench/gpu_tasks.sh passes -V to keep every case's verdict).
set +e
# HEADLAB_SANITIZE_ONLY=1: no suite, the sanitizer's cases alone (a device call of their own).
[[ "${HEADLAB_SANITIZE_ONLY:-0}" == 1 ]] && set -- '^$'
ctest --output-on-failure ${CTEST_ARGS:-} -R "${1:-^($(IFS='|'; echo "${SUITES[*]}"))\$}" --timeout 900 \
    2>&1 | tee -a "$ROOT/$verdicts"
status=${PIPESTATUS[0]}
set -e
# compute-sanitizer over the kernels' cases of tests/cuda: memcheck (out-of-bounds and misaligned
# accesses, leaks of device memory) on every kernel case, racecheck (shared-memory hazards) on
# those whose kernels share memory. Each case runs alone under each tool, checking HeadLab's own
# kernels only (--kernel-name kns=headlab: they live in namespace headlab::cuda; LibTorch's thousands
# of kernels would take the call's time, and "Kernel", the filter until 2026-12-04, also took in
# PyTorch's memory-efficient attention, PyTorchMemEffAttention::AttentionKernel, whose racecheck
# hazards then filled the verdict and ran the cases past their time); a tool that reports an
# error fails the call. HEADLAB_SANITIZING shortens the cases' training runs to a few steps and
# their kernels' shapes to few rows. PyTorch's caching allocator is off under the sanitizer
# (PYTORCH_NO_CUDA_MEMORY_CACHING=1), as PyTorch advises for compute-sanitizer: with it, tensors
# are slices of larger segments, and a store just past a tensor can land inside its segment,
# where memcheck sees no error; without it each tensor is an allocation of its own.
# bench/sanitizer_control.sh shows memcheck catching a kernel broken to store one group of rows
# past its output (at b6ec3fa, with the allocator on as well: that store went past the segment,
# so it does not show the difference). Steps are launched eagerly (HEADLAB_CUDA_GRAPHS=0): without
# the caching allocator a captured step would call cudaMalloc, which invalidates the capture
# (memcheck reported each such capture as API errors, 3f3bd7a); the kernels and their arguments
# are those a graph replays. The verdict is copied to $OUT after each case.
MEMCHECK_CASES=(fusedMicroAttentionEqualsAten fusedLayerNormEqualsAten fusedUnitNormEqualsAten
                fusedFeedForwardEqualsAten fusedAdamEqualsAten:addition)
RACECHECK_CASES=(fusedMicroAttentionEqualsAten fusedLayerNormEqualsAten fusedUnitNormEqualsAten)
# HEADLAB_MEMCHECK_CASES, HEADLAB_RACECHECK_CASES: other cases (space-separated), for a short call.
if [[ -n "${HEADLAB_MEMCHECK_CASES:-}" ]]; then read -r -a MEMCHECK_CASES <<< "$HEADLAB_MEMCHECK_CASES"; fi
if [[ -n "${HEADLAB_RACECHECK_CASES:-}" ]]; then read -r -a RACECHECK_CASES <<< "$HEADLAB_RACECHECK_CASES"; fi
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1 || true)
if [[ "${HEADLAB_SANITIZE:-1}" == 1 && -n "$sanitizer" && " ${SUITES[*]} " == *" test_cuda "* ]]; then
    for tool in memcheck racecheck; do
        if [[ $tool == memcheck ]]; then cases=("${MEMCHECK_CASES[@]}"); else cases=("${RACECHECK_CASES[@]}"); fi
        for case in "${cases[@]}"; do
            echo "## compute-sanitizer --tool $tool --kernel-name kns=headlab: test_cuda $case" >> "$ROOT/$verdicts"
            say "compute-sanitizer $tool: $case"
            set +e
            HEADLAB_SANITIZING=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1 HEADLAB_CUDA_GRAPHS=0 \
                CUDA_MODULE_LOADING=LAZY timeout "${SANITIZER_TIMEOUT:-150}" \
                "$sanitizer" --tool "$tool" --error-exitcode 97 --kernel-name kns=headlab \
                ${SANITIZER_ARGS:-} "$ROOT/build-core/tests/cuda/test_cuda" "$case" \
                > "$ROOT/build-core/sanitizer.log" 2>&1
            one=$?
            # The cases' verdicts and the tool's summary; the last lines too where it failed.
            grep -E "^(PASS|FAIL|Totals|=========)|ERROR SUMMARY|Hazard|Invalid" \
                "$ROOT/build-core/sanitizer.log" | tail -40 >> "$ROOT/$verdicts"
            if [[ $one -ne 0 ]]; then tail -8 "$ROOT/build-core/sanitizer.log" >> "$ROOT/$verdicts"; fi
            set -e
            echo "## exit $one$([[ $one == 124 ]] && echo ' (stopped at the time limit)')" >> "$ROOT/$verdicts"
            if [[ $one -ne 0 ]]; then status=$one; fi
            if [[ -n "${OUT:-}" ]]; then cp "$ROOT/$verdicts" "$OUT/$(basename "$verdicts")"; fi
        done
    done
elif [[ "${HEADLAB_SANITIZE:-1}" == 1 && -z "$sanitizer" ]]; then
    echo "## compute-sanitizer: not found on this machine" >> "$ROOT/$verdicts"
fi
# To $OUT's top level: the device tool brings back files at most two folders down, and
# docs/data/gpu-tests/ is three.
if [[ -n "${OUT:-}" ]]; then
    cp "$ROOT/$verdicts" "$OUT/$(basename "$verdicts")"
fi
say "verdicts in $verdicts (exit $status)"
exit "$status"
