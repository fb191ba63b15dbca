#!/usr/bin/env python3
"""classroom_pick.py — reads the classroom screen's runs.csv and curves.csv (bench/classroom_screen.sh)
and prints, for each configuration (d_model, heads, lr) and for several answer-phase lengths, how
many seeds have left the ln 10 plateau (test loss below 5/6 ln 10, HeadLab's default learned rule)
and how many are still on it (test loss above ln 10 - 0.1). The classroom preset needs, at its
small η, every head count left; at its large η, one head on the plateau and several heads left.

    python3 bench/classroom_pick.py DIR WARMUP_STEPS [ANSWER_STEPS...]
"""
import collections
import csv
import math
import sys

LEFT = 5 / 6 * math.log(10)
ON = math.log(10) - 0.1


def main():
    folder, warmup = sys.argv[1], int(sys.argv[2])
    lengths = [int(s) for s in sys.argv[3:]] or [1000, 2000, 3000, 4000, 5000]
    runs = {r["run"]: r for r in csv.DictReader(open(f"{folder}/runs.csv"))}
    test = collections.defaultdict(dict)
    with open(f"{folder}/curves.csv") as f:
        for row in csv.DictReader(f):
            if row["curve"] == "test":
                test[row["run"]][int(row["step"])] = float(row["value"])
    groups = collections.defaultdict(list)
    for run, r in runs.items():
        groups[(int(r["d_model"]), int(r["label_heads"]), float(r["lr"]))].append(run)
    print(f"{folder}: warm-up {warmup}; per answer length: left/on of the seeds")
    print("m   nH  lr       " + "  ".join(f"{n:>9}" for n in lengths))
    for key in sorted(groups):
        cells = []
        for n in lengths:
            at = warmup + n
            losses = [test[run].get(at) for run in groups[key]]
            losses = [v for v in losses if v is not None]
            left = sum(v < LEFT for v in losses)
            on = sum(v > ON for v in losses)
            cells.append(f"{left:>2}/{on:<2}({len(losses):>2})")
        print(f"{key[0]:<3} {key[1]:<3} {key[2]:<8.1e} " + "  ".join(cells))


if __name__ == "__main__":
    main()
