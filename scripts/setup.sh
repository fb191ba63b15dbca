#!/usr/bin/env bash
# setup.sh — installs what HeadLab needs on Debian 12 and builds it into build/.
#
# Called by scripts/run.sh and scripts/test.sh; safe to run again, and quick when nothing changed:
#   1. Debian packages (Qt 6, yaml-cpp, ccache, ...), only those dpkg says are missing;
#   2. the virtual environment .venv with the pinned PyPI torch wheel (it carries LibTorch),
#      numpy, safetensors, pandas, PyYAML and matplotlib, and HeadLab's Python package (python/,
#      editable), installed only when the pinned versions are not already there;
#   3. a CUDA toolkit for the torch wheel's CMake config: the installed one, else its compiler
#      from PyPI into .venv (no root; ensure_cuda_toolkit below);
#   4. CMake configure (only when build/ is new or its settings changed) and build, through ccache:
#      the app and the CLI (what scripts/run.sh starts) unless told otherwise; scripts/test.sh
#      asks for everything (the tests, the bench).
# Each phase that took time or disk prints both.
#
# Environment:
#   HEADLAB_JOBS  parallel compile jobs (default: the number of CPU cores)
#   CUDA_HOME     CUDA toolkit the torch wheel's CMake config needs (default: /usr/local/cuda; when
#                 it has no bin/nvcc, one is installed from PyPI into .venv)
#   HEADLAB_SETUP_TARGETS  build only these targets (default: headlab headlab-cli, the app and the
#                 CLI; "all" builds every target, as scripts/test.sh does)
#   HEADLAB_SETUP_TIMES    append each phase's seconds to this file, one "phase seconds" a line
#                 (bench/cold_start.sh reads it)
#   CCACHE_DIR    compiler cache, shared by every clone (default: ~/.cache/headlab-ccache)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

TORCH_VERSION="2.11.0"
NUMPY_VERSION="2.4.6"
# safetensors: for the documented notebook snippet that loads a checkpoint (tests/checkpoints runs it).
SAFETENSORS_VERSION="0.8.0"
# The Python package (python/, docs/NOTEBOOKS.md): pandas and PyYAML are its dependencies,
# matplotlib draws the figures of docs/NOTEBOOKS.md (tests/python runs it).
PANDAS_VERSION="3.1.1"
PYYAML_VERSION="6.0.4"
MATPLOTLIB_VERSION="3.11.2"
# atheris: libFuzzer for Python, which fuzzes the Python package's readers (scripts/fuzz-python.sh).
ATHERIS_VERSION="3.0.0"
# The Python package's bridges (headlab.export, its extras; tests/python/test_bridges.py): TensorBoard
# event files with the HParams view, MLflow runs (the skinny client: no server), Optuna studies.
TENSORBOARD_VERSION="2.21.0"
MLFLOW_SKINNY_VERSION="3.17.2"
OPTUNA_VERSION="5.0.0"
# CUTLASS's C++ headers (the nvidia-cutlass wheel carries them; 27 MB, no binaries) for the one
# kernel built on them, the feed-forward block's product with its bias and ReLU in the epilogue
# (core/model/cuda/BiasReluProduct.cu), compiled only where nvcc is (cmake/HeadlabCutlass.cmake).
# Installed without its dependencies: they serve its Python kernel generator (scipy, cuda-python,
# pydot, treelib: ~180 MB), which HeadLab never runs; CMake finds the headers by path.
CUTLASS_VERSION="4.2.0.0"
# uv installs the wheels into .venv: from its cache (~/.cache/uv) it hard-links a wheel's files
# instead of unpacking them again, so a second clone's .venv takes seconds instead of a minute of
# unpacking torch, at no second copy on disk. pip as before where uv cannot be had.
UV_VERSION="0.13.9"
JOBS="${HEADLAB_JOBS:-$(nproc)}"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
VENV="$ROOT/.venv"
BUILD="$ROOT/build"

# Debian 12 names. libqt6opengl6-dev is only a Recommends of qt6-base-dev, but Qt Charts' CMake
# config needs Qt6OpenGL; xauth is only a Recommends of xvfb, but xvfb-run needs it.
APT_PACKAGES=(
    g++ cmake ninja-build ccache pkg-config
    qt6-base-dev qt6-base-dev-tools qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl1-mesa-dev
    libyaml-cpp-dev libcli11-dev nlohmann-json3-dev zlib1g-dev
    xvfb xauth
    clang-format
    node-d3 # D3, which the report (headlab-cli report, File > Export report) copies into its page
)
# The tests also open reports in a real browser (tests/report): Chromium and its WebDriver.
if [[ "${HEADLAB_SETUP_TARGETS:-}" == all ]]; then
    APT_PACKAGES+=(chromium chromium-driver)
fi

say() { printf '[setup] %s\n' "$*" >&2; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

# --- 1. Debian packages ---------------------------------------------------------------------------
install_missing_packages() {
    local missing=() pkg installed
    if [[ ! -x "$VENV/bin/python" ]] && ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
        APT_PACKAGES+=(python3-venv)
    fi
    installed=" $(dpkg-query -W -f='${db:Status-Status}:${Package} ' "${APT_PACKAGES[@]}" \
        2>/dev/null || true) "
    for pkg in "${APT_PACKAGES[@]}"; do
        [[ "$installed" == *" installed:$pkg "* ]] || missing+=("$pkg")
    done
    [[ ${#missing[@]} -eq 0 ]] && return 0

    local sudo=()
    if [[ $EUID -ne 0 ]]; then
        command -v sudo >/dev/null 2>&1 \
            || die "missing Debian packages and no sudo; as root run: apt-get install ${missing[*]}"
        sudo=(sudo)
    fi
    say "installing Debian packages: ${missing[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# --- 2. Virtual environment with torch, and the Python package ---------------------------------
venv_versions() { # prints the installed versions of PACKAGES in the venv, "none" for a missing one
    "$VENV/bin/python" - "$@" <<'PY' 2>/dev/null || echo "none"
import importlib.metadata as m, sys
def version(name):
    try:
        return m.version(name)
    except m.PackageNotFoundError:
        return "none"
print(" ".join(name + "==" + version(name) for name in sys.argv[1:]))
PY
}

# pip_install ARGS...: the packages into .venv, by uv when it is there (ensure_uv), else by pip.
# uv is told what pip's settings say (an index, local wheels, the certificates) unless set for it.
pip_install() {
    if [[ -x "$VENV/bin/uv" ]]; then
        local settings=() pair
        for pair in SSL_CERT_FILE:PIP_CERT UV_INDEX_URL:PIP_INDEX_URL \
            UV_EXTRA_INDEX_URL:PIP_EXTRA_INDEX_URL UV_FIND_LINKS:PIP_FIND_LINKS; do
            local mine="${pair%%:*}" pips="${pair##*:}"
            [[ -z "${!mine:-}" && -n "${!pips:-}" ]] && settings+=("$mine=${!pips}")
        done
        # --compile-bytecode: as pip does. Where PYTHONDONTWRITEBYTECODE is set (this image sets
        # it), Python never writes .pyc files itself, and every process compiled pandas and torch
        # anew: the Python tests took twice as long.
        if env "${settings[@]}" "$VENV/bin/uv" pip install --quiet --compile-bytecode \
            --python "$VENV/bin/python" "$@"; then
            return 0
        fi
        say "uv could not install $*; trying pip"
    fi
    local flags=(--no-input --no-cache-dir) # no second copy of the wheels in ~/.cache/pip
    [[ -t 1 ]] || flags+=(--progress-bar off)
    "$VENV/bin/python" -m pip install "${flags[@]}" "$@"
}

ensure_uv() {
    [[ "$("$VENV/bin/uv" --version 2>/dev/null)" == "uv $UV_VERSION"* ]] && return 0
    "$VENV/bin/python" -m pip install --no-input --quiet --disable-pip-version-check \
        "uv==$UV_VERSION" >/dev/null 2>&1 || say "uv $UV_VERSION could not be installed: pip installs"
}

ensure_venv() {
    if [[ ! -x "$VENV/bin/python" ]] || ! "$VENV/bin/python" -c '' >/dev/null 2>&1; then
        say "creating the virtual environment $VENV"
        rm -rf "$VENV"
        python3 -m venv "$VENV"
    fi
    local pins=("torch==$TORCH_VERSION" "numpy==$NUMPY_VERSION" "safetensors==$SAFETENSORS_VERSION"
                "pandas==$PANDAS_VERSION" "PyYAML==$PYYAML_VERSION" "matplotlib==$MATPLOTLIB_VERSION"
                "atheris==$ATHERIS_VERSION" "tensorboard==$TENSORBOARD_VERSION"
                "mlflow-skinny==$MLFLOW_SKINNY_VERSION" "optuna==$OPTUNA_VERSION"
                "nvidia-cutlass==$CUTLASS_VERSION") # last: installed alone, without its dependencies
    local names=("${pins[@]%%==*}")
    local found
    found="$(venv_versions "${names[@]}")"
    if [[ "$found" != "${pins[*]}" ]]; then
        ensure_uv
        say "installing ${pins[*]} from PyPI into .venv (found: $found; torch with its CUDA" \
            "libraries is ~3 GB)"
        # torch unpacks to ~5 GB beside a ~3 GB download; a full disk otherwise surfaces as
        # pip's "[Errno 28]" halfway through, leaving a half-installed venv.
        local free_kib need_kib=$((9 * 1024 * 1024))
        free_kib="$(df -Pk "$ROOT" | awk 'NR == 2 { print $4 }')"
        if [[ -n "$free_kib" && "$free_kib" -lt "$need_kib" ]]; then
            die "installing torch needs about 9 GB free on $(df -P "$ROOT" | awk 'NR == 2 { print $6 }');" \
                "$((free_kib / 1024)) MB are free. Free some space (old clones, ~/.cache/pip, ~/.cache/uv) and run" \
                "this again."
        fi
        # torch first without its dependencies, then those it names but triton: triton (641 MB
        # unpacked) is torch.compile's code generator for Python, which LibTorch C++ never loads;
        # HEADLAB_WITH_TRITON=1 keeps it (bench/ peers that compile run on the GPU machine's own
        # torch). The installer evaluates each requirement's marker, so a torch extra is left out as usual.
        pip_install --no-deps "torch==$TORCH_VERSION"
        local torch_deps=()
        mapfile -t torch_deps < <("$VENV/bin/python" -c 'import importlib.metadata as m, sys
for r in m.requires("torch") or []:
    if sys.argv[1] == "1" or not r.replace(" ", "").lower().startswith("triton"):
        print(r)' "${HEADLAB_WITH_TRITON:-0}")
        [[ "${HEADLAB_WITH_TRITON:-0}" == 1 ]] ||
            say "torch's dependencies without triton (641 MB that LibTorch C++ never loads; the installer" \
                "may say torch requires it: expected. HEADLAB_WITH_TRITON=1 installs it)"
        # The other pins without torch's: a torch named again would bring its every requirement.
        # CUTLASS last and alone, without its dependencies (above).
        pip_install "${torch_deps[@]}" "${pins[@]:1:${#pins[@]}-2}"
        pip_install --no-deps "${pins[-1]}"
    fi
    # HeadLab's own package: the venv imports python/headlab of this clone, as an editable
    # install would, through a .pth file (no build backend needed; `pip install ./python` is for
    # other environments, tests/python/install_test.sh checks it).
    local site
    site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    if [[ "$(cat "$site/headlab-source.pth" 2>/dev/null)" != "$ROOT/python" ]]; then
        say "pointing .venv at HeadLab's Python package ($ROOT/python)"
        # A new file renamed over the old: a hard-linked copy of the venv keeps its own.
        printf '%s\n' "$ROOT/python" >"$site/headlab-source.pth.new"
        mv "$site/headlab-source.pth.new" "$site/headlab-source.pth"
    fi
}

# --- 3. CUDA toolkit (the PyPI torch wheel is a CUDA build; its CMake config runs nvcc) -----------
# An installed toolkit ($CUDA_HOME, default /usr/local/cuda) is used as it is. Without one (a
# laptop, a machine without root), the toolkit's compiler parts come from PyPI: the wheels
# nvidia-cuda-nvcc, nvidia-nvvm, nvidia-cuda-crt and nvidia-cuda-cccl of the CUDA version the
# pinned torch wheel names (its cuda-toolkit requirement, ~265 MB unpacked), installed into .venv
# beside the CUDA libraries the torch wheel already brought (nvidia/cu13/{include,lib}); that
# folder is then the CUDA_HOME. Nothing outside the clone is written.
ensure_cuda_toolkit() {
    if [[ -x "$CUDA_HOME/bin/nvcc" ]]; then
        export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
        return 0
    fi
    local site requirement version major
    site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    requirement="$("$VENV/bin/python" -c 'import importlib.metadata as m
print(next(r for r in m.requires("torch") if r.startswith("cuda-toolkit")))' 2>/dev/null || true)"
    version="$(sed -n 's/.*==\([0-9][0-9.]*\).*/\1/p' <<<"$requirement")"
    [[ -n "$version" ]] || die "no CUDA toolkit at $CUDA_HOME, and torch names no cuda-toolkit
        version to take one from PyPI (a CPU torch?). Install the CUDA toolkit, or set CUDA_HOME."
    major="${version%%.*}"
    local home="$site/nvidia/cu$major"
    if [[ ! -x "$home/bin/nvcc" ]]; then
        say "no CUDA toolkit at $CUDA_HOME: installing its compiler (nvcc, nvvm, crt, cccl) for CUDA" \
            "$version from PyPI into .venv (~265 MB)"
        ensure_uv
        pip_install "cuda-toolkit[nvcc,nvvm,crt,cccl]==$version"
        [[ -x "$home/bin/nvcc" ]] || die "the CUDA $version wheels did not bring $home/bin/nvcc"
    fi
    # nvcc links from lib64 (its nvcc.profile); the wheels have lib.
    [[ -e "$home/lib64" ]] || ln -s lib "$home/lib64"
    # The unversioned names CMake's FindCUDAToolkit looks for (libcudart.so → libcudart.so.13).
    local lib
    for lib in "$home"/lib/lib*.so.[0-9]*; do
        [[ -e "${lib%%.so.*}.so" ]] || ln -s "$(basename "$lib")" "${lib%%.so.*}.so"
    done
    CUDA_HOME="$home"
    export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
    say "CUDA toolkit from PyPI: $CUDA_HOME"
}

# --- 4. Configure and build -----------------------------------------------------------------------
configure_and_build() {
    export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/headlab-ccache}"
    export CCACHE_BASEDIR="$ROOT" # relative paths in the hash: fresh clones elsewhere hit too
    # The files compiled from a precompiled header (cmake/HeadlabPch.cmake) are cached only when
    # ccache ignores the header's time stamps and the time macros it defines; the header itself
    # is hashed by its content.
    export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
    mkdir -p "$CCACHE_DIR"

    # torch.utils.cmake_prefix_path is <torch package>/share/cmake; found here without importing
    # torch, which alone takes seconds.
    local torch_prefix
    torch_prefix="$("$VENV/bin/python" -c 'import importlib.util as u, os
print(os.path.join(u.find_spec("torch").submodule_search_locations[0], "share", "cmake"))')"
    local args=(-DCMAKE_PREFIX_PATH="$torch_prefix" -DCMAKE_BUILD_TYPE=Release
                -DHEADLAB_BUILD_GUI=ON -DHEADLAB_BUILD_TESTS=ON
                -DCMAKE_CUDA_COMPILER="$CUDA_HOME/bin/nvcc" -DCUDAToolkit_ROOT="$CUDA_HOME")
    # Configure only when build/ is new or the arguments changed; otherwise `cmake --build`
    # re-runs CMake by itself whenever a CMakeLists.txt changed.
    local stamp="$BUILD/.headlab-configure-args"
    if [[ ! -f "$BUILD/CMakeCache.txt" || "$(cat "$stamp" 2>/dev/null)" != "${args[*]}" ]]; then
        local generator=()
        [[ -f "$BUILD/CMakeCache.txt" ]] || generator=(-G Ninja)
        say "configuring $BUILD"
        cmake -S "$ROOT" -B "$BUILD" "${generator[@]}" "${args[@]}"
        printf '%s' "${args[*]}" >"$stamp"
    fi
    # HEADLAB_SETUP_TARGETS: only these targets; by default the app and the CLI, which is all
    # that scripts/run.sh starts (the tests and the bench are two fifths of the compile time).
    local targets=(--target ${HEADLAB_SETUP_TARGETS:-headlab headlab-cli})
    [[ "${HEADLAB_SETUP_TARGETS:-}" == all ]] && targets=()
    say "building ($JOBS jobs, ccache in $CCACHE_DIR)"
    cmake --build "$BUILD" --parallel "$JOBS" "${targets[@]}"
}

# Each phase with its time and the disk it took (of the clone's file system).
phase() {
    local name="$1" start=$SECONDS before after
    shift
    before="$(df -Pk "$ROOT" | awk 'NR == 2 { print $3 }')"
    "$@"
    after="$(df -Pk "$ROOT" | awk 'NR == 2 { print $3 }')"
    local took=$((SECONDS - start)) grew=$(( (after - before) / 1024 ))
    if (( took > 0 || grew > 10 )); then say "$name: ${took} s, ${grew} MB"; fi
    [[ -z "${HEADLAB_SETUP_TIMES:-}" ]] || printf '%s\t%s\t%s\n' "$name" "$took" "$grew" >>"$HEADLAB_SETUP_TIMES"
}
# The Python package first: a notebook user has it even where the C++ build cannot be made.
phase "Debian packages" install_missing_packages
phase "Python packages (.venv)" ensure_venv
phase "CUDA toolkit" ensure_cuda_toolkit
phase "configure and build" configure_and_build
