#!/usr/bin/env bash
# check-format.sh — checks that every C++ file of the repository is formatted as .clang-format
# says (ctest runs it as the test `format`). With --fix, formats them in place instead.
#
#   scripts/check-format.sh          exit 1 and list the files that differ, with the first hunk
#   scripts/check-format.sh --fix    clang-format -i every file
#
# The files: the tracked *.cpp, *.h and *.cu (git ls-files; every such file under the top-level
# folders when there is no git). The formatter is Debian 12's clang-format 14 (scripts/setup.sh
# installs it); other versions format a few constructs differently, so CLANG_FORMAT may name
# another binary only to try it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
FORMAT="${CLANG_FORMAT:-clang-format}"
command -v "$FORMAT" >/dev/null || { echo "check-format: no $FORMAT (scripts/setup.sh installs it)" >&2; exit 1; }

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu')
else
    mapfile -t files < <(find app core ui tests bench \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' \) | sort)
fi
((${#files[@]} > 0)) || { echo "check-format: no C++ files found under $ROOT" >&2; exit 1; }

if [[ "${1:-}" == --fix ]]; then
    "$FORMAT" -i "${files[@]}"
    echo "check-format: formatted ${#files[@]} files"
    exit 0
fi

bad=()
for f in "${files[@]}"; do
    if ! "$FORMAT" --dry-run -Werror "$f" >/dev/null 2>&1; then
        bad+=("$f")
    fi
done
if ((${#bad[@]} == 0)); then
    echo "check-format: ${#files[@]} files formatted as .clang-format says ($("$FORMAT" --version))"
    exit 0
fi
echo "check-format: ${#bad[@]} of ${#files[@]} files differ from .clang-format; run scripts/check-format.sh --fix" >&2
for f in "${bad[@]}"; do
    echo "  $f" >&2
    diff -u "$f" <("$FORMAT" "$f") | sed -n '3,12p' | sed 's/^/      /' >&2 || true
done
exit 1
