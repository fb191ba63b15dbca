#!/usr/bin/env python3
"""multi4_balance.py — issue 24, item 4: how well the scheduler's cost model balanced the cards of a
nearest-neighbour `--device all` run of bench/gpu_multi4.sh, and what each piece costs alone.

    python3 bench/multi4_balance.py [--bound 64] RUNS_CSV
    python3 bench/multi4_balance.py --bench MICRO_HEADS_JSONL

RUNS_CSV is the run's `headlab-cli export-csv` runs.csv (docs/data/issue24/multi4-*-runs.csv). The
runs of one ensemble share a device and a wall time, so each (device, wall_seconds) group is one
piece. Each piece's work is ensembleWork's (core/train/SweepRunner.cpp) for the nearest-neighbour
task, restated here for that task alone (d 64, N = T = 16 points, FFN 2048, no vocabulary): the
products' FLOPs per sample, plus the attention scores' passes by the path the GPU takes
(microHeadCount, core/config/RunConfig.cpp): where the least common multiple M of the runs' w·H is
at most 512 (128 where the runs have several head counts), each run pays SCORE_WORK (1000) per
score for each of M micro-heads; otherwise each run pays for its own w·H heads, FUSED_SCORE_WORK
(5100) where their width is a multiple of 4 (PyTorch's memory-efficient kernel), SCORE_WORK where
it is not. Runs of several head counts with micro-heads also pay for the mix, one (M, M) product
each way: 4·M² FLOPs per score. Steps and batch are the same for every run and left out. Prints
each card's pieces, its work in the model's units, the second its last piece ended (its runs' wall
seconds; the run's start-up is not in them) and the seconds per unit: equal on every card when the
model is right. When kScoreWork, kFusedScoreWork, the micro-heads bounds or the FLOP count change in the
C++, they change here too. ATTENTION (sdpa or micro-heads, as HEADLAB_ATTENTION) prices the path
that switch takes.

--bench reads bench/micro_heads_cost.sh's `headlab-bench preset` lines instead (one ensemble alone
on one card a line) and prints each ensemble's measured seconds per step against the model's work,
both relative to the ensemble of 64 heads at w 1 (or the first line): the same ratio in both
columns when the model prices that ensemble right. Each line is priced by the path it took (its
"attention": micro-heads or sdpa); the table also names the path the model picks by default.
"""
import argparse
import collections
import csv
import json
import math
import os

T, M_MODEL, FFN, SCORE_WORK, FUSED_SCORE_WORK = 16, 64, 2048, 1000, 5100
MAX_MICRO_HEADS, MAX_MIXED_MICRO_HEADS = 512, 128
BOUNDS = [MAX_MICRO_HEADS, MAX_MIXED_MICRO_HEADS]  # --bound: a run's commit's own (64 before 6ebf4fa)


def products(w):
    inner = 64 * w  # rank r heads of 64 / r dims: heads x head_dim = 64 at every rank
    per_token = (2 * M_MODEL * 3 * inner + 2 * inner * M_MODEL + 2 * 2 * T * inner
                 + 2 * 2 * M_MODEL * FFN)
    return 3 * T * per_token


def micro_heads(w, heads):
    """microHeadCount: the ensemble's micro-heads per run, 0 where each run attends head by head."""
    micro = math.lcm(*(h * w for h in heads))
    mode = os.environ.get("ATTENTION", "")
    bound = BOUNDS[1] if len(set(heads)) > 1 else BOUNDS[0]
    if mode == "sdpa" or (64 * w) % micro or (micro > bound and mode != "micro-heads"):
        return 0
    return micro


def piece_work(w, heads, took=None):
    """The model's work of one ensemble: by the path microHeadCount gives, or by `took`
    ("micro-heads" or "sdpa", the path a measured line ran)."""
    micro = micro_heads(w, heads)
    if took == "micro-heads":
        micro = math.lcm(*(h * w for h in heads))
    elif took == "sdpa":
        micro = 0
    work = 0
    for h in heads:
        if micro:
            scores = SCORE_WORK * micro
        else:  # scaled_dot_product_attention: its memory-efficient kernel where 4 divides the width
            scores = (FUSED_SCORE_WORK if (64 // h) % 4 == 0 else SCORE_WORK) * h * w
        work += products(w) + T * T * scores
        if micro and len(set(heads)) > 1:  # the mix: one (M, M) product each way
            work += 2 * 2 * micro * micro * T * T
    return work


def bench_lines(path):
    """Measured seconds per step and the model's work of each `headlab-bench preset` line."""
    out = []
    for line in open(path):
        r = json.loads(line)
        if (r.get("impl") != "headlab-preset" or r.get("status") != "done"
                or r.get("timing") == "profiled"):  # a profile's steps are slowed by it
            continue
        schedules = [int(s.split(",")[0]) for s in r["schedules"].split(";")]
        heads = (schedules * r["runs"])[: r["runs"]]  # one schedule: every run has it
        label = (f"w {r['w']}, heads {'/'.join(map(str, sorted(set(heads))))} x {r['runs']}, "
                 f"ran {r.get('attention', '?')}")
        out.append((label, r["w"], heads, 1 / r["steps_per_s"],
                    piece_work(r["w"], heads, r.get("attention"))))
    return out


def bench(path):
    rows = bench_lines(path)
    if not rows:
        raise SystemExit(f"{path}: no finished headlab-preset lines")
    base = next((row for row in rows if row[1] == 1 and row[2] == [64] * len(row[2])), rows[0])
    print(f"base: {base[0]}")
    print("ensemble | default path | s per step, relative | model's work, relative | measured / model")
    for label, w, heads, seconds, work in rows:
        measured, model = seconds / base[3], work / base[4]
        micro = micro_heads(w, heads)
        path = f"micro-heads {micro}" if micro else "sdpa"
        print(f"{label} | {path} | {measured:.2f} | {model:.2f} | {measured / model:.2f}")


def balance(path):
    pieces = collections.defaultdict(list)
    reader = csv.DictReader(open(path))
    for r in reader:
        if (r["task"], r["layers"], r["d_model"]) != ("nearest_neighbour", "1", "64"):
            raise SystemExit(f"{path}:{reader.line_num}: run {r['run']} is {r['task']}, "
                             f"{r['layers']} layers, d_model {r['d_model']}; the model here is for "
                             "1-layer nearest neighbour at d 64")
        pieces[(r["device"], r["wall_seconds"])].append(
            (int(r["label_width_multiplier"]), int(r["heads"])))
    cards = collections.defaultdict(list)  # device -> [(wall seconds, w, heads of its runs, work)]
    for (device, wall), runs in pieces.items():
        w, heads = runs[0][0], [h for _, h in runs]
        cards[device].append((float(wall), w, heads, piece_work(w, heads)))
    total = sum(work for parts in cards.values() for *_, work in parts)
    print("device | pieces (w: heads x runs, path) | work, share | ends at s | s per share")
    for device in sorted(cards):
        parts = sorted(cards[device])
        desc = []
        for wall, w, heads, _ in parts:
            counts = collections.Counter(heads)
            runs = ",".join(f"{h}x{n}" for h, n in sorted(counts.items()))
            micro = micro_heads(w, list(counts))
            path = f"M {micro}" if micro else "sdpa"
            desc.append(f"w{w}: {runs} ({path}, {wall:.0f} s)")
        share = sum(work for *_, work in parts) / total
        end = max(wall for wall, *_ in parts)
        print(f"{device} | {'; '.join(desc)} | {share:.3f} | {end:.1f} | {end / share:.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs_csv", nargs="?")
    ap.add_argument("--bench", help="bench/micro_heads_cost.sh's JSON lines")
    ap.add_argument("--bound", type=int, help="the micro-heads bound of the commit that ran "
                    "RUNS_CSV, for one head count and several alike (64 before 6ebf4fa)")
    args = ap.parse_args()
    if args.bound:
        BOUNDS[:] = [args.bound, args.bound]
    if args.bench:
        bench(args.bench)
    elif args.runs_csv:
        balance(args.runs_csv)
    else:
        ap.error("give RUNS_CSV or --bench FILE")


if __name__ == "__main__":
    main()
