#!/usr/bin/env python3
"""classroom_check.py — the per-seed verdict of the classroom preset (issue 22, docs/FINDINGS.md).

Reads runs.csv of the check session bench/classroom_check.sh makes (the preset on several seeds)
and says, for each seed, whether the paper's message holds at the end of the preset's protocol:
  - at the small η, one head and several heads both left the ln 10 plateau (test loss below
    5/6 ln 10, HeadLab's default learned rule);
  - at the large η, one head did not leave it and several heads did.
It also applies a stricter reading of "one head stays on ln 10": its test loss above ln 10 - 0.1.
Exits 1 when the message holds in fewer than 9 of the seeds.

    python3 bench/classroom_check.py DIR
"""
import collections
import csv
import math
import sys

LEFT = 5 / 6 * math.log(10)
ON = math.log(10) - 0.1


def main():
    folder = sys.argv[1]
    runs = list(csv.DictReader(open(f"{folder}/runs.csv")))
    final = {}
    for r in runs:
        final[(int(r["label_seed"]), int(r["label_heads"]), float(r["lr"]))] = float(r["final_test_loss"])
    seeds = sorted({k[0] for k in final})
    heads = sorted({k[1] for k in final})
    rates = sorted({k[2] for k in final})
    one, several = heads[0], heads[-1]
    small, large = rates[0], rates[-1]
    holds = strict = 0
    print(f"seed  {one}h@{small:g}  {several}h@{small:g}  {one}h@{large:g}  {several}h@{large:g}  message  strict")
    for s in seeds:
        f = {k[1:]: v for k, v in final.items() if k[0] == s}
        ok = (f[(one, small)] < LEFT and f[(several, small)] < LEFT and f[(one, large)] >= LEFT
              and f[(several, large)] < LEFT)
        ok_strict = ok and f[(one, large)] > ON
        holds += ok
        strict += ok_strict
        print(f"{s:<5} {f[(one, small)]:>8.3f} {f[(several, small)]:>9.3f} {f[(one, large)]:>8.3f} "
              f"{f[(several, large)]:>9.3f}  {'holds' if ok else 'FAILS':<7}  {'holds' if ok_strict else 'FAILS'}")
    print(f"message holds in {holds} of {len(seeds)} seeds ({strict} with one head above ln 10 - 0.1)")
    sys.exit(0 if holds >= 0.9 * len(seeds) else 1)


if __name__ == "__main__":
    main()
