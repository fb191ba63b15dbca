#!/usr/bin/env bash
# stage-deps.sh — copies the header-only libraries the core's build needs into .deps/ (ignored by
# git), so that they travel to a machine that cannot install them (the GPU machine: no network).
# CLI11 from Debian's libcli11-dev (/usr/include/CLI) to .deps/cli11/include/CLI, and nlohmann/json
# from nlohmann-json3-dev (/usr/include/nlohmann) to .deps/nlohmann/include/nlohmann.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ -f /usr/include/CLI/CLI.hpp ]] || { echo "[stage-deps] error: no /usr/include/CLI (apt-get install libcli11-dev)" >&2; exit 1; }
mkdir -p "$ROOT/.deps/cli11/include"
rm -rf "$ROOT/.deps/cli11/include/CLI"
cp -r /usr/include/CLI "$ROOT/.deps/cli11/include/CLI"
echo "[stage-deps] CLI11 headers in $ROOT/.deps/cli11/include"
[[ -f /usr/include/nlohmann/json.hpp ]] || { echo "[stage-deps] error: no /usr/include/nlohmann (apt-get install nlohmann-json3-dev)" >&2; exit 1; }
mkdir -p "$ROOT/.deps/nlohmann/include"
rm -rf "$ROOT/.deps/nlohmann/include/nlohmann"
cp -r /usr/include/nlohmann "$ROOT/.deps/nlohmann/include/nlohmann"
echo "[stage-deps] nlohmann/json headers in $ROOT/.deps/nlohmann/include"

# CUTLASS's headers as the pinned wheel itself (scripts/setup.sh's CUTLASS_VERSION, 6 MB), which
# cmake/HeadlabCutlass.cmake unpacks into the build tree: from the clone's .venv's installer cache
# or PyPI.
cutlass_version="$(sed -n 's/^CUTLASS_VERSION="\(.*\)"$/\1/p' "$ROOT/scripts/setup.sh")"
cutlass_wheel="$ROOT/.deps/nvidia_cutlass-$cutlass_version-py3-none-any.whl"
if [[ ! -f "$cutlass_wheel" ]]; then
    rm -f "$ROOT"/.deps/nvidia_cutlass-*.whl
    python="$ROOT/.venv/bin/python"
    [[ -x "$python" ]] || python=python3
    "$python" -m pip download --quiet --no-deps --dest "$ROOT/.deps" "nvidia-cutlass==$cutlass_version" ||
        { echo "[stage-deps] error: could not download nvidia-cutlass==$cutlass_version" >&2; exit 1; }
fi
echo "[stage-deps] CUTLASS $cutlass_version headers (its wheel) in $cutlass_wheel"

# Qt 6 Core and Test, for the test suites on the GPU machine (no Qt there, nothing to download):
# Debian 12's libraries, headers, CMake files and moc, with the libraries Qt Core needs that
# Ubuntu 24.04 lacks or has at other versions (ICU 72, double-conversion, libb2, PCRE2-16, GLib),
# packed as .deps/qt6-core-test.tar.xz (about 15 MB) under usr/ with Debian's layout. Qt's CMake
# files find everything relative to themselves, so scripts/gpu-tests.sh unpacks it anywhere and
# points Qt6_DIR there. Built from the installed packages (qt6-base-dev, qt6-base-dev-tools); the
# tarball is remade only when a package changed.
QT_LIB=/usr/lib/x86_64-linux-gnu
if [[ -f $QT_LIB/libQt6Test.so.6 && -x /usr/lib/qt6/libexec/moc ]]; then
    stamp="$( (dpkg-query -W -f='${Package} ${Version}\n' libqt6core6 libqt6test6 qt6-base-dev qt6-base-dev-tools libicu72 2>/dev/null; cat "${BASH_SOURCE[0]}") | sha1sum | cut -c1-16)"
    tarball="$ROOT/.deps/qt6-core-test.tar.xz"
    if [[ ! -f "$tarball" || "$(cat "$ROOT/.deps/qt6-core-test.stamp" 2>/dev/null)" != "$stamp" ]]; then
        files=(/usr/include/x86_64-linux-gnu/qt6/QtCore /usr/include/x86_64-linux-gnu/qt6/QtTest
               $QT_LIB/qt6/mkspecs/linux-g++ $QT_LIB/qt6/mkspecs/common
               $QT_LIB/cmake/Qt6 $QT_LIB/cmake/Qt6Core $QT_LIB/cmake/Qt6CoreTools $QT_LIB/cmake/Qt6Test
               $QT_LIB/cmake/Qt6BuildInternals $QT_LIB/cmake/Qt6HostInfo)
        # Every file the CMake targets name must exist (CMake checks): moc, rcc, qmake6, ...
        for path in $(grep -ho '"${_IMPORT_PREFIX}/[^";]*"' $QT_LIB/cmake/Qt6CoreTools/*.cmake $QT_LIB/cmake/Qt6Core/*.cmake \
                      $QT_LIB/cmake/Qt6Test/*.cmake | tr -d '"' | sed 's|${_IMPORT_PREFIX}|/usr|' | sort -u); do
            [[ -f "$path" ]] && files+=("$path") && [[ -L "$path" ]] && files+=("$(readlink -f "$path")")
        done
        for lib in libQt6Core.so libQt6Test.so libicuuc.so.72 libicui18n.so.72 libicudata.so.72 \
                   libdouble-conversion.so.3 libb2.so.1 libpcre2-16.so.0 libglib-2.0.so.0; do
            files+=($QT_LIB/$lib*)
        done
        tar -C / -cJf "$tarball.tmp" "${files[@]#/}"
        mv "$tarball.tmp" "$tarball"
        echo "$stamp" > "$ROOT/.deps/qt6-core-test.stamp"
    fi
    echo "[stage-deps] Qt 6 Core and Test for the GPU machine in $tarball ($(du -h "$tarball" | cut -f1))"
else
    echo "[stage-deps] note: no Qt 6 Test here (apt-get install qt6-base-dev qt6-base-dev-tools): the GPU suites cannot be built there" >&2
fi
