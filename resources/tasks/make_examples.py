#!/usr/bin/env python3
"""make_examples.py — writes the example files of the sequence-file task (core/schema/sequence_file).

    python3 resources/tasks/make_examples.py     # from the repository root; rewrites both files

multiplication.tsv    two-digit multiplication asked digit by digit, as the addition task asks
                      sums: `ab*cd:i=` -> the i-th digit of the product (0 = ones), grouped by i.
                      Characters as tokens; K = 10 answers, G = 4 groups.
modular-addition.csv  a + b mod 97 for all a, b < 97 (the grokking task): `a + b =` -> the sum mod
                      97, one answer token. Words as tokens, CSV with a header; K = 97, no groups.
Deterministic: the same bytes on every run.
"""
import csv
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def multiplication(path):
    with open(path, "w", newline="\n") as out:
        out.write("# Two-digit multiplication, one product digit per example (make_examples.py).\n")
        out.write("# PROMPT<tab>ANSWER<tab>GROUP: `ab*cd:i=` asks for digit i of ab*cd, 0 = ones.\n")
        for a in range(10, 100):
            for b in range(10, 100):
                product = a * b
                for i in range(4):
                    digit = (product // 10 ** i) % 10
                    out.write(f"{a}*{b}:{i}=\t{digit}\tdigit {i}\n")


def modular_addition(path, p=97):
    with open(path, "w", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["prompt", "answer"])
        for a in range(p):
            for b in range(p):
                writer.writerow([f"{a} + {b} =", str((a + b) % p)])


if __name__ == "__main__":
    multiplication(os.path.join(HERE, "multiplication.tsv"))
    modular_addition(os.path.join(HERE, "modular-addition.csv"))
