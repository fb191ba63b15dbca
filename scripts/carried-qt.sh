# carried-qt.sh — sourced on the GPU machine by scripts/gpu-tests.sh and bench/kernels_check.sh:
# the Qt 6 Core and Test that scripts/stage-deps.sh packs into .deps/qt6-core-test.tar.xz (carried
# with the working tree) are unpacked into build-core/qt6 when that is missing or older than the
# tarball, and HEADLAB_QT_PREFIX (for scripts/build-core.sh) and LD_LIBRARY_PATH (for moc and the
# test programs) are exported. Returns 1, with a message, when the tarball or a runnable moc is
# missing. Needs ROOT set to the repository.
carried_qt() {
    local tarball="$ROOT/.deps/qt6-core-test.tar.xz" qt="$ROOT/build-core/qt6"
    if [[ ! -f "$tarball" ]]; then
        echo "no $tarball: run scripts/stage-deps.sh on the workstation and carry .deps" >&2
        return 1
    fi
    if [[ ! -f "$qt/.unpacked" || "$tarball" -nt "$qt/.unpacked" ]]; then
        rm -rf "$qt" && mkdir -p "$qt" && tar -C "$qt" -xJf "$tarball" && touch "$qt/.unpacked" ||
            return 1
    fi
    export HEADLAB_QT_PREFIX="$qt/usr"
    export LD_LIBRARY_PATH="$qt/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    "$qt/usr/lib/qt6/libexec/moc" --version > /dev/null ||
        { echo "the carried moc does not run here" >&2; return 1; }
}
