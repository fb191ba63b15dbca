#!/usr/bin/env bash
# install_test.sh — `pip install ./python` in a fresh virtual environment reads every fixture
# session (ctest python_install). The package is copied out first, so that building it leaves
# nothing in the source tree. Without a package index to reach (no network, no wheel cache) the
# test is skipped (exit 77), naming pip's words; any other failure fails it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TMP="$(mktemp -d /tmp/headlab-pip-XXXXXX)"
trap 'rm -rf "$TMP"' EXIT
# install VENV WHAT PACKAGES...: a fresh environment with these; skipped (77) where no package
# index can be reached, saying what could not be installed; any other failure fails the test.
install() {
    local venv="$1" what="$2"
    shift 2
    python3 -m venv "$venv"
    if ! "$venv/bin/python" -m pip install --no-input --progress-bar off "$@" >"$venv.log" 2>&1; then
        if grep -qiE 'NewConnectionError|Temporary failure in name resolution|No matching distribution|Could not find a version|Network is unreachable' "$venv.log"; then
            echo "SKIP: $what cannot be installed here (no package index reachable):"
            grep -iE 'error|could not' "$venv.log" | head -3
            exit 77
        fi
        cat "$venv.log"
        exit 1
    fi
}
cp -r "$ROOT/python" "$TMP/src"
install "$TMP/venv" "the package" "$TMP/src"
cd "$TMP" # not the source tree: the installed copy must be the one imported
"$TMP/venv/bin/python" - "$ROOT" <<'PY'
import os, sys
import headlab
root = sys.argv[1]
assert headlab.__file__.startswith(sys.prefix), f"imported {headlab.__file__}, not the installed package"
fixtures = ["tests/session/fixtures/v2-addition.yaml", "tests/session/fixtures/v2-nn.yaml",
            "tests/session/fixtures/v2-text.yaml", "tests/session/fixtures/v2-addition.export.yaml",
            "tests/session/fixtures/v2-nn.export.yaml", "tests/session/fixtures/v2-text.export.yaml",
            "tests/storage/fixtures/previous-release.yaml", "docs/data/issue27/fig4-boundary.export.yaml.gz"]
for f in fixtures:
    s = headlab.open(os.path.join(root, f))
    runs, curves = s.runs(), s.curves()
    assert len(runs) > 0 and (len(curves) > 0 or f.endswith(".gz")), f
    print(f"{f}: {len(runs)} runs, {len(curves)} curve points")
try:
    import torch  # noqa: F401
    raise SystemExit("torch should not be needed, nor installed, by `pip install ./python`")
except ImportError:
    pass
PY

# The same dtypes under every supported pandas: the oldest the package declares (pandas 1.5, with
# the numpy of its time) against the project's (.venv, scripts/setup.sh's pins).
if [[ -x "$ROOT/.venv/bin/python" ]]; then
    install "$TMP/oldest" "pandas 1.5.3" "$TMP/src" "pandas==1.5.3" "numpy==1.26.4"
    "$TMP/oldest/bin/python" "$ROOT/tests/python/dtypes_dump.py" "$ROOT" > "$TMP/oldest.json"
    PYTHONPATH="$ROOT/python" "$ROOT/.venv/bin/python" "$ROOT/tests/python/dtypes_dump.py" "$ROOT" > "$TMP/project.json"
    if ! diff -u "$TMP/oldest.json" "$TMP/project.json"; then
        echo "FAIL: the tables' dtypes differ between pandas $("$TMP/oldest/bin/python" -c 'import pandas; print(pandas.__version__)') and $("$ROOT/.venv/bin/python" -c 'import pandas; print(pandas.__version__)') (diff above)"
        exit 1
    fi
    echo "the same dtypes under pandas $("$TMP/oldest/bin/python" -c 'import pandas; print(pandas.__version__)') and $("$ROOT/.venv/bin/python" -c 'import pandas; print(pandas.__version__)'): $(grep -c '": "' "$TMP/project.json") columns"
fi
