#!/usr/bin/env python3
"""classroom_message.py — the whole classroom message per seed, from a screen's test curves.

Reads the runs.csv and test.csv.gz that bench/classroom_screen.sh brings back for one or more
screen sessions of the same protocol (their runs are pooled by d_model, heads, η and seed) and
replays each run under stop_after_learned S with at most N answer steps: a run ends once its test
loss has stayed below 5/6 ln 10 (HeadLab's default learned rule) for S steps, else after N answer
steps. For every choice of one head against several heads, a small η against a large one, S and N,
it counts the seeds in which the paper's message holds:
  - at the small η, one head and several heads both end below 5/6 ln 10;
  - at the large η, one head ends at or above it and several heads below it;
  - "strict" also asks the one head at the large η to end above ln 10 - 0.1 (on the plateau).
It also estimates the four runs' wall time on 2 CPU cores, trained side by side as HeadLab's CPU
plan trains them (longest first, two at a time), from per-step costs measured on the 2-core
development machine (AMD EPYC, one thread, 2026-11-27: m 24, one head 7.3 ms an answer step at
batch 256; twelve heads 2.5 times that). The estimate ranks choices; the preset's time is measured.

    python3 bench/classroom_message.py WARMUP_STEPS DIR [DIR...]     (runs.csv or runs.csv.gz)
    TOP=N   print the N best choices (default 25)
"""
import collections
import csv
import gzip
import math
import os
import statistics
import sys

LEFT = 5 / 6 * math.log(10)
ON = math.log(10) - 0.1
STOPS = [300, 500]
LENGTHS = [3000, 3500, 4000, 4500, 5000]
ANSWER_SECONDS = 7.3e-3  # one head, m 24, batch 256, one answer step, one thread (measured)
WARMUP_SECONDS = 1.2e-3  # one head, m 24, batch 32, one warm-up step


def step_cost(heads, d_model, batch):
    """Seconds of one answer step relative to the measured one-head m 24 step."""
    by_heads = 1 + 0.135 * (heads - 1)  # 1, 6 and 12 heads measured: 1, 1.71, 2.48
    return ANSWER_SECONDS * by_heads * (d_model / 24) ** 1.5 * batch / 256


def load(folders):
    runs = {}
    for folder in folders:
        path = f"{folder}/runs.csv"
        with (open(path) if os.path.exists(path) else gzip.open(path + ".gz", "rt")) as f:
            meta = {r["run"]: r for r in csv.DictReader(f)}
        curves = collections.defaultdict(list)
        with gzip.open(f"{folder}/test.csv.gz", "rt") as f:
            for row in csv.DictReader(f):
                curves[row["run"]].append((int(row["step"]), float(row["loss"])))
        for run, r in meta.items():
            key = (int(r["d_model"]), int(r["label_heads"]), float(r["lr"]), int(r["label_seed"]))
            runs[key] = sorted(curves[run])
    return runs


def replay(curve, warmup, stop, length):
    """(final loss, answer steps trained) under stop_after_learned `stop` and `length` steps."""
    end = warmup + length
    start = None
    last = None
    for step, loss in curve:
        if step > end:
            break
        last = (step, loss)
        if loss < LEFT:
            start = step if start is None else start
            if step > warmup and step - start >= stop:
                return loss, step - warmup
        else:
            start = None
    return (last[1] if last else float("nan")), length


def two_lanes(costs):
    lanes = [0.0, 0.0]
    for c in sorted(costs, reverse=True):
        lanes[lanes.index(min(lanes))] += c
    return max(lanes)


def main():
    warmup = int(sys.argv[1])
    runs = load(sys.argv[2:])
    widths = sorted({k[0] for k in runs})
    heads = sorted({k[1] for k in runs})
    rates = sorted({k[2] for k in runs})
    seeds = sorted({k[3] for k in runs})
    batch = 256
    rows = []
    for m in widths:
        for one in heads[:1]:
            for many in heads[1:]:
                for i, small in enumerate(rates):
                    for large in rates[i + 1:]:
                        for stop in STOPS:
                            for length in LENGTHS:
                                holds = strict = 0
                                walls = []
                                failures = collections.Counter()
                                for s in seeds:
                                    keys = [(m, one, small, s), (m, many, small, s),
                                            (m, one, large, s), (m, many, large, s)]
                                    if not all(k in runs for k in keys):
                                        continue
                                    out = [replay(runs[k], warmup, stop, length) for k in keys]
                                    f = [o[0] for o in out]
                                    ok = f[0] < LEFT and f[1] < LEFT and f[2] >= LEFT and f[3] < LEFT
                                    holds += ok
                                    strict += ok and f[2] > ON
                                    for name, bad in (("1 small", f[0] >= LEFT),
                                                      ("n small", f[1] >= LEFT),
                                                      ("1 large", f[2] < LEFT),
                                                      ("n large", f[3] >= LEFT)):
                                        failures[name] += bad
                                    costs = [warmup * WARMUP_SECONDS * (1 + 0.135 * (k[1] - 1)) +
                                             o[1] * step_cost(k[1], m, batch)
                                             for k, o in zip(keys, out)]
                                    walls.append(two_lanes(costs))
                                if not walls:
                                    continue
                                n = len(walls)
                                rows.append((holds / n, strict / n, -max(walls), m, one, many, small,
                                             large, stop, length, n, statistics.median(walls),
                                             max(walls), dict(failures)))
    rows.sort(reverse=True)
    print(f"{' '.join(sys.argv[2:])}: warm-up {warmup}; message per seed under stop_after_learned")
    print("holds strict  m  1h nH  small    large    stop  N     seeds  wall med/max (s, 2 cores)  fails")
    for r in rows[:int(os.environ.get("TOP", "25"))]:
        (rate, srate, _, m, one, many, small, large, stop, length, n, med, worst, fails) = r
        print(f"{rate:5.2f} {srate:6.2f}  {m:<2} {one:<2} {many:<2} {small:<8.1e} {large:<8.1e} "
              f"{stop:<5} {length:<5} {n:<5} {med:5.0f} / {worst:<5.0f}        "
              + ", ".join(f"{k} {v}" for k, v in sorted(fails.items()) if v))


if __name__ == "__main__":
    main()
