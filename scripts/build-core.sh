#!/usr/bin/env bash
# build-core.sh [TARGET...] — builds the training core and the headless CLI
# (build-core/app/cli/headlab-cli; other targets if named, e.g. headlab-bench) without Qt, against
# the torch of the system python. For the GPU machine: Ubuntu 24.04, CUDA 13,
# CMake 4, PyTorch 2.11 and yaml-cpp 0.8 installed, nothing to download. Installs nothing.
#
# Environment: PYTHON (default python3), CUDA_HOME (default /usr/local/cuda),
#              HEADLAB_JOBS (default: the number of CPU cores).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build-core"
PYTHON="${PYTHON:-python3}"
JOBS="${HEADLAB_JOBS:-$(nproc)}"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"

die() { printf '[build-core] error: %s\n' "$*" >&2; exit 1; }

torch_prefix="$("$PYTHON" -c 'import torch; print(torch.utils.cmake_prefix_path)')" \
    || die "$PYTHON cannot import torch; set PYTHON to a python that has PyTorch 2.11"
if [[ -x "$CUDA_HOME/bin/nvcc" ]]; then
    export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
elif "$PYTHON" -c 'import sys, torch; sys.exit(torch.version.cuda is None)'; then
    die "this torch is a CUDA build, and its CMake config needs the CUDA toolkit (nvcc), which is
    not at $CUDA_HOME; set CUDA_HOME to the toolkit"
fi

# HEADLAB_QT_PREFIX: a Qt 6 Core/Test prefix (scripts/gpu-tests.sh unpacks one): the test suites
# that need no GUI are built too.
if [[ -n "${HEADLAB_QT_PREFIX:-}" ]]; then
    args=(-DCMAKE_PREFIX_PATH="$torch_prefix;$HEADLAB_QT_PREFIX" -DCMAKE_BUILD_TYPE=Release
          -DHEADLAB_BUILD_GUI=OFF -DHEADLAB_BUILD_TESTS=ON
          -DQt6_DIR="$HEADLAB_QT_PREFIX/lib/x86_64-linux-gnu/cmake/Qt6")
else
    args=(-DCMAKE_PREFIX_PATH="$torch_prefix" -DCMAKE_BUILD_TYPE=Release
          -DHEADLAB_BUILD_GUI=OFF -DHEADLAB_BUILD_TESTS=OFF)
fi
[[ -f "$BUILD/CMakeCache.txt" ]] || ! command -v ninja >/dev/null || args+=(-G Ninja)
cmake -S "$ROOT" -B "$BUILD" "${args[@]}"
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(headlab-cli)
cmake --build "$BUILD" --parallel "$JOBS" --target "${targets[@]}"
echo "[build-core] built ${targets[*]} in $BUILD"
