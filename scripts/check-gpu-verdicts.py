#!/usr/bin/env python3
"""Every GPU verdict kept in docs/data/gpu-tests/ names one commit, and its first line says the same.

A verdict file is DATE-GPU-COMMIT[-what].txt (scripts/gpu-tests.sh names it); its first line
records the commit it ran at ("... at COMMIT, ..." or "... at COMMIT (...)"). The two must agree
(one a prefix of the other), so that a verdict cannot say one tree while its name says another.
A file whose header says its tree was checked (scripts/gpu-tests.sh: "tree verified") ran on
exactly that commit's files.

  scripts/check-gpu-verdicts.py [FOLDER]     exit 1, naming each file, where they disagree
"""
import os
import re
import sys

FOLDER = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "docs", "data", "gpu-tests")
NAME = re.compile(r"^\d{4}-\d{2}-\d{2}-.*?-([0-9a-f]{7,40})(-[A-Za-z0-9_.-]+)?\.txt$")
HEADER = re.compile(r"\bat ([0-9a-f]{7,40})\b")


def main():
    bad = 0
    files = sorted(f for f in os.listdir(FOLDER) if f.endswith(".txt"))
    for name in files:
        match = NAME.match(name)
        if not match:
            print(f"{name}: the name holds no commit (DATE-GPU-COMMIT[-what].txt)")
            bad += 1
            continue
        named = match.group(1)
        with open(os.path.join(FOLDER, name), encoding="utf-8") as f:
            first = f.readline()
        said = HEADER.search(first)
        if not said:
            print(f"{name}: the first line names no commit: {first.strip()!r}")
            bad += 1
        elif not (said.group(1).startswith(named) or named.startswith(said.group(1))):
            print(f"{name}: named {named}, but its first line says {said.group(1)}")
            bad += 1
    if not bad:
        print(f"{len(files)} verdicts: each name and first line name the same commit")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
