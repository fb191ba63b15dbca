#!/usr/bin/env bash
# same_outputs.sh — two builds of headlab-cli read, write and export every session file of the
# repository alike: a refactoring's check that behaviour did not change (issue 71).
#
#   bash bench/same_outputs.sh OLD_CLI NEW_CLI [OUT_DIR]
#
# For every *.yaml and *.yaml.gz under tests/, docs/data/ and resources/ (run files under runs/
# and results folders left out: they are read through their sessions), each CLI runs `validate`,
# `export-yaml` (the session read and written again, every result in one file), `export-csv`
# (runs.csv and curves.csv) and `summary`, each in a fresh copy of the file's folder so that
# neither writes beside the original. Their exit codes, outputs and files must be byte-identical;
# every difference is listed and the script exits 1. A file both refuse counts as the same when
# they refuse it with the same message. Prints one line: files compared, files equal.
set -uo pipefail
OLD="$(realpath "$1")" NEW="$(realpath "$2")"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${3:-$(mktemp -d /tmp/headlab-same.XXXXXX)}"
mkdir -p "$OUT"
cd "$ROOT"

run_all() { # CLI SESSION DIR: every command's output into DIR
    local cli="$1" session="$2" dir="$3" work
    work="$(mktemp -d /tmp/headlab-same-work.XXXXXX)"
    cp -r "$(dirname "$session")/." "$work/" 2>/dev/null
    local copy
    copy="$work/$(basename "$session")"
    mkdir -p "$dir"
    for command in validate export-yaml export-csv summary; do
        local args=("$command" "$copy")
        case "$command" in
        export-yaml) args+=(-o "$dir/export.yaml") ;;
        export-csv) args+=(-o "$dir/csv") ;;
        esac
        (cd "$work" && "$cli" "${args[@]}") >"$dir/$command.out" 2>"$dir/$command.err"
        echo "$?" >"$dir/$command.status"
        # The temporary folder's name is not the program's doing.
        sed -i "s#$work#WORK#g; s#$dir#OUT#g" "$dir/$command.out" "$dir/$command.err"
    done
    rm -rf "$work"
}

compared=0 equal=0 differing=()
while IFS= read -r session; do
    name="$(echo "$session" | tr '/' '_')"
    run_all "$OLD" "$session" "$OUT/old/$name"
    run_all "$NEW" "$session" "$OUT/new/$name"
    compared=$((compared + 1))
    if diff -r "$OUT/old/$name" "$OUT/new/$name" >"$OUT/$name.diff" 2>&1; then
        equal=$((equal + 1))
        rm -f "$OUT/$name.diff"
    else
        differing+=("$session")
    fi
done < <(find tests docs/data resources \( -name '*.yaml' -o -name '*.yaml.gz' \) \
             -not -path '*/runs/*' -not -path '*.results/*' | sort)

echo "same_outputs: $compared session files compared, $equal alike (outputs in $OUT)"
if ((${#differing[@]})); then
    printf 'same_outputs: differs: %s (see %s/*.diff)\n' "${differing[@]}" "$OUT" >&2
    exit 1
fi
