#!/usr/bin/env bash
# hidden_toolkit_test.sh — issue 54: HeadLab built as on a teaching laptop with no CUDA toolkit.
# In a private mount namespace (unshare -m) the machine's toolkit is hidden (/usr/local/cuda*,
# /usr/local/nvvm and the nvcc wrappers of /usr/local/bin are covered by empty folders); a fresh
# clone of this repository runs scripts/setup.sh, which must take the toolkit's compiler from PyPI
# into .venv and build the CLI; the CLI then trains a tiny session. The clone's .venv starts as a
# hard-linked copy of this checkout's (so the ~3 GB of wheels are not downloaded again). Then the
# clone is moved, and the CLI, whose RUNPATH names no absolute path of it, trains again.
#
#   tests/setup/hidden_toolkit_test.sh [SOURCE]     SOURCE: the repository to clone (default: this one)
#
# Exit 77 (ctest: skipped, with the reason on stdout) where a mount namespace cannot be made.
set -euo pipefail
SOURCE="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/../..}" && pwd)"
say() { printf 'hidden-toolkit-test: %s\n' "$*"; }
if [[ "${HEADLAB_IN_NAMESPACE:-}" != 1 ]]; then
    if ! unshare -m true 2>/dev/null; then
        say "SKIPPED: no private mount namespace here (unshare -m needs root or user namespaces)"
        exit 77
    fi
    [[ -x "$SOURCE/.venv/bin/python" ]] || { say "SKIPPED: no .venv in $SOURCE (run scripts/setup.sh)"; exit 77; }
    # The work folder is removed out here, where the namespace's mounts no longer cover it.
    WORK="$(mktemp -d /tmp/headlab-no-toolkit.XXXXXX)"
    trap 'rm -rf "$WORK"' EXIT
    status=0
    env HEADLAB_IN_NAMESPACE=1 HEADLAB_WORK="$WORK" unshare -m bash "$0" "$SOURCE" || status=$?
    exit $status
fi

WORK="$HEADLAB_WORK"
mkdir -p "$WORK/empty" "$WORK/local-bin"
mount --make-rprivate / 2>/dev/null || true
for dir in /usr/local/cuda /usr/local/cuda-* /usr/local/nvvm; do
    [[ -d "$dir" ]] && mount --bind "$WORK/empty" "$dir"
done
if [[ -d /usr/local/bin ]]; then
    cp -a /usr/local/bin/. "$WORK/local-bin/"
    rm -f "$WORK"/local-bin/{nvcc,nvlink,ptxas,fatbinary,cudafe++,bin2c,__nvcc_device_query}
    mount --bind "$WORK/local-bin" /usr/local/bin
fi
if command -v nvcc >/dev/null 2>&1 || [[ -e /usr/local/cuda/bin/nvcc ]]; then
    say "FAILED: the toolkit is still visible ($(command -v nvcc))"
    exit 1
fi
say "toolkit hidden; cloning $SOURCE"
git clone -q "$SOURCE" "$WORK/clone"
cp -al "$SOURCE/.venv" "$WORK/clone/.venv"
# Its own pointer to the Python package (a hard link would be the source checkout's file).
rm -f "$WORK"/clone/.venv/lib/python3*/site-packages/headlab-source.pth
cd "$WORK/clone"
start=$SECONDS
if ! HEADLAB_SETUP_TARGETS=headlab-cli CUDA_HOME=/usr/local/cuda bash scripts/setup.sh \
        > "$WORK/setup.log" 2>&1; then
    tail -n 40 "$WORK/setup.log"
    say "FAILED: setup without a toolkit"
    exit 1
fi
grep '^\[setup\]' "$WORK/setup.log"
grep -q "CUDA toolkit from PyPI" "$WORK/setup.log" || { say "FAILED: setup did not take the toolkit from PyPI"; exit 1; }
say "setup and the CLI's build took $((SECONDS - start)) s"
cp "$SOURCE/tests/setup/tiny.yaml" "$WORK/tiny.yaml"
./build/app/cli/headlab-cli run "$WORK/tiny.yaml" -o "$WORK/tiny-out.yaml" --threads 1 > "$WORK/run.log" 2>&1 ||
    { cat "$WORK/run.log"; say "FAILED: the CLI built without a toolkit did not train"; exit 1; }
grep -q "1 done" "$WORK/run.log" || { cat "$WORK/run.log"; say "FAILED: no finished run"; exit 1; }
# Relocatable: the binary names no absolute path of the clone, and runs after the clone moved.
if readelf -d build/app/cli/headlab-cli | grep -i 'runpath\|rpath' | grep -q "$WORK/clone"; then
    readelf -d build/app/cli/headlab-cli | grep -i 'runpath\|rpath'
    say "FAILED: the CLI's RUNPATH names the clone's absolute path"
    exit 1
fi
cd /
mv "$WORK/clone" "$WORK/moved"
"$WORK/moved/build/app/cli/headlab-cli" run "$WORK/tiny.yaml" -o "$WORK/tiny-moved.yaml" \
    --threads 1 > "$WORK/run-moved.log" 2>&1 ||
    { cat "$WORK/run-moved.log"; say "FAILED: the CLI did not run after its clone moved"; exit 1; }
say "PASS: built with the toolkit from PyPI, trained, and trained again after the clone moved"
