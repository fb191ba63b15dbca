#!/usr/bin/env bash
# sanitizer_control.sh — shows that scripts/gpu-tests.sh's compute-sanitizer runs see HeadLab's own
# kernels, so that their "0 errors" and "0 hazards" are not vacuous: each kernel is broken on
# purpose (bench/broken_kernel_check.sh) and the sanitizer, with the filter and environment
# gpu-tests.sh gives it, must report the break (its --error-exitcode, 97).
#   racecheck: the forward micro-attention kernel's barrier between loading its tiles into shared
#              memory and reading them removed;
#   memcheck:  its output stored one group of rows further on, so that the last group's rows are
#              written past the output tensor; with PyTorch's caching allocator off, as gpu-tests.sh
#              runs it, and (for the record, not a failure) on, where a store can land inside
#              the allocator's segment unseen (this one, a whole group of rows past, was caught
#              either way at b6ec3fa).
# Run after scripts/gpu-tests.sh on the GPU machine (its build-core/ and carried Qt). Each line of the
# output says caught or not; the exit status is non-zero when a check the verdict relies on missed.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
[[ -n "$sanitizer" ]] || { echo "compute-sanitizer: not found"; exit 1; }
kernel=core/model/cuda/MicroAttention.cu
export HEADLAB_SANITIZING=1 HEADLAB_CUDA_GRAPHS=0 CUDA_MODULE_LOADING=LAZY HEADLAB_BROKEN_EXPECT=97
under() { echo "timeout ${SANITIZER_TIMEOUT:-150} $sanitizer --tool $1 --error-exitcode 97 --kernel-name kns=headlab"; }
status=0
# The barrier after the forward kernel's loadTiles<3> (the first __syncthreads of forwardKernel).
echo "## racecheck, forward barrier removed"
HEADLAB_BROKEN_UNDER="$(under racecheck)" bash "$ROOT/bench/broken_kernel_check.sh" "$kernel" \
    '/loadTiles<3>(dst, src, stride, row0, col0, T, cols, pitch);/{n;n;s/__syncthreads();//}' \
    fusedMicroAttentionEqualsAten || status=1
store='s/a\.o\[(row0 + t0 + u) \* oStride/a.o[(row0 + T + t0 + u) * oStride/'
echo "## memcheck, output stored a group further on, caching allocator off"
PYTORCH_NO_CUDA_MEMORY_CACHING=1 HEADLAB_BROKEN_UNDER="$(under memcheck)" \
    bash "$ROOT/bench/broken_kernel_check.sh" "$kernel" "$store" fusedMicroAttentionEqualsAten || status=1
echo "## memcheck, the same break, caching allocator on (for the record)"
HEADLAB_BROKEN_UNDER="$(under memcheck)" \
    bash "$ROOT/bench/broken_kernel_check.sh" "$kernel" "$store" fusedMicroAttentionEqualsAten || true
exit $status
