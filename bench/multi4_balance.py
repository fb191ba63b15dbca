#!/usr/bin/env python3
"""multi4_balance.py — issue 24, item 4: how well the scheduler's cost model balanced the cards of a
nearest-neighbour `--device all` run of bench/gpu_multi4.sh.

    python3 bench/multi4_balance.py RUNS_CSV

RUNS_CSV is the run's `headlab-cli export-csv` runs.csv (docs/data/issue24/multi4-*-runs.csv). The
runs of one ensemble share a device and a wall time, so each (device, wall_seconds) group is one
piece. Each piece's work is ensembleWork's (core/train/SweepRunner.cpp) for the nearest-neighbour
task, restated here for that task alone (d 64, N = T = 16 points, FFN 2048, no vocabulary): the
products' FLOPs per sample, plus kScoreWork (1200) FLOP-equivalents per attention score per
micro-head, where an ensemble's micro-heads are the least common multiple of its runs' head
counts. Steps and batch are the same for every run and left out. Prints each card's pieces, its
work in the model's units, the second its last piece ended (its runs' wall seconds; the run's
start-up is not in them) and the seconds per unit: equal on every card when the model is right.
"""
import argparse
import collections
import csv
import math

T, M_MODEL, FFN, SCORE_WORK = 16, 64, 2048, 1200


def products(w):
    inner = 64 * w  # rank r heads of 64 / r dims: heads x head_dim = 64 at every rank
    per_token = 2 * M_MODEL * 3 * inner + 2 * inner * M_MODEL + 2 * 2 * T * inner + 2 * 2 * M_MODEL * FFN
    return 3 * T * per_token


def piece_work(w, heads):
    micro = math.lcm(*heads)
    if micro > 64 or (64 * w) % micro:
        micro = 0
    return sum(products(w) + SCORE_WORK * T * T * w * (micro or h) for h in heads)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs_csv")
    args = ap.parse_args()
    pieces = collections.defaultdict(list)
    for r in csv.DictReader(open(args.runs_csv)):
        pieces[(r["device"], r["wall_seconds"])].append(
            (int(r["label_width_multiplier"]), int(r["heads"])))
    cards = collections.defaultdict(list)
    for (device, wall), runs in pieces.items():
        cards[device].append((float(wall), runs))
    total = sum(piece_work(runs[0][0], [h for _, h in runs])
                for parts in cards.values() for _, runs in parts)
    print("device | pieces (w: heads x runs, micro-heads) | work, share | ends at s | s per share")
    for device in sorted(cards):
        parts = sorted(cards[device])
        work = sum(piece_work(runs[0][0], [h for _, h in runs]) for _, runs in parts)
        end = max(wall for wall, _ in parts)
        desc = []
        for wall, runs in parts:
            counts = collections.Counter(h for _, h in runs)
            heads = ",".join(f"{h}x{n}" for h, n in sorted(counts.items()))
            desc.append(f"w{runs[0][0]}: {heads} (M {math.lcm(*counts)}, {wall:.0f} s)")
        share = work / total
        print(f"{device} | {'; '.join(desc)} | {share:.3f} | {end:.1f} | {end / share:.1f}")


if __name__ == "__main__":
    main()
