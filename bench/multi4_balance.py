#!/usr/bin/env python3
"""multi4_balance.py — issue 24, item 4: how well the scheduler's cost model balanced the cards of a
nearest-neighbour `--device all` run of bench/gpu_multi4.sh, and what each piece costs alone.

    python3 bench/multi4_balance.py [--bound 64] RUNS_CSV
    python3 bench/multi4_balance.py --bench MICRO_HEADS_JSONL

RUNS_CSV is the run's `headlab-cli export-csv` runs.csv (docs/data/issue24/multi4-*-runs.csv). The
runs of one ensemble share a device and a wall time, so each (device, wall_seconds) group is one
piece. Each piece's work is the scheduler's own (ensembleWork, core/train/SweepRunner.cpp), asked of
`headlab-bench price` (HEADLAB_BENCH, else build-core/bench/headlab-bench or build/bench/headlab-bench):
the model is stated once, in the C++, and this script prices with the build it finds (--bound gives
it an earlier commit's micro-heads bound; for that commit's prices, point HEADLAB_BENCH at its
build). Prints
each card's pieces, its work in the model's units, the second its last piece ended (its runs' wall
seconds; the run's start-up is not in them) and the seconds per unit: equal on every card when the
model is right. ATTENTION (sdpa or micro-heads, as HEADLAB_ATTENTION) prices the path that switch
takes.

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
import os
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent


def bench_binary():
    """headlab-bench: $HEADLAB_BENCH, or the first build of it under the repository."""
    if os.environ.get("HEADLAB_BENCH"):
        return os.environ["HEADLAB_BENCH"]
    for build in ("build-core", "build"):
        path = ROOT / build / "bench" / "headlab-bench"
        if path.is_file():
            return str(path)
    raise SystemExit("multi4_balance.py: no headlab-bench (build it, or set HEADLAB_BENCH)")


def price(ensembles, path=None):
    """The scheduler's work and first-layer micro-heads of each (w, heads of its runs) ensemble
    (`headlab-bench price`, 1-layer nearest neighbour), by the path `path` forces (HEADLAB_ATTENTION:
    "micro-heads", "sdpa"), or by the default path (ATTENTION, as HEADLAB_ATTENTION, else none)."""
    if not ensembles:
        return []
    env = dict(os.environ)
    env.pop("HEADLAB_ATTENTION", None)
    mode = path or os.environ.get("ATTENTION", "")
    if mode:
        env["HEADLAB_ATTENTION"] = mode
    spec = ";".join(f"{w}:{','.join(map(str, heads))}" for w, heads in ensembles)
    out = subprocess.run([bench_binary(), "price", "--preset", "nn-fig1-full", "--layers", "1",
                          "--ensembles", spec], env=env, check=True, capture_output=True, text=True)
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    return [(r["work"], r["micro_heads"]) for r in rows]


def bench_lines(path):
    """Measured seconds per step and the model's work of each `headlab-bench preset` line, priced by
    the path the line took (its "attention"), with the micro-heads the default path would take."""
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
        out.append((label, r["w"], heads, 1 / r["steps_per_s"], r.get("attention")))
    work = {}  # line -> the model's work by the path it took
    for took in {line[4] for line in out}:
        lines = [i for i, line in enumerate(out) if line[4] == took]
        forced = took if took in ("micro-heads", "sdpa") else None
        priced = price([(out[i][1], out[i][2]) for i in lines], forced)
        work.update((i, cost) for i, (cost, _) in zip(lines, priced))
    defaults = price([(line[1], line[2]) for line in out])
    return [(label, w, heads, seconds, work[i], micro)
            for i, ((label, w, heads, seconds, _), (_, micro)) in enumerate(zip(out, defaults))]


def bench(path):
    rows = bench_lines(path)
    if not rows:
        raise SystemExit(f"{path}: no finished headlab-preset lines")
    base = next((row for row in rows if row[1] == 1 and row[2] == [64] * len(row[2])), rows[0])
    print(f"base: {base[0]}")
    print("ensemble | default path | s per step, relative | model's work, relative | measured / model")
    for label, w, heads, seconds, work, micro in rows:
        measured, model = seconds / base[3], work / base[4]
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
    cards = collections.defaultdict(list)  # device -> [(wall seconds, w, heads, work, micro-heads)]
    keys = list(pieces)
    priced = price([(pieces[k][0][0], [h for _, h in pieces[k]]) for k in keys])
    for (device, wall), (work, micro) in zip(keys, priced):
        runs = pieces[(device, wall)]
        cards[device].append((float(wall), runs[0][0], [h for _, h in runs], work, micro))
    total = sum(work for parts in cards.values() for *_, work, _ in parts)
    print("device | pieces (w: heads x runs, path) | work, share | ends at s | s per share")
    for device in sorted(cards):
        parts = sorted(cards[device])
        desc = []
        for wall, w, heads, _, micro in parts:
            counts = collections.Counter(heads)
            runs = ",".join(f"{h}x{n}" for h, n in sorted(counts.items()))
            path = f"M {micro}" if micro else "sdpa"
            desc.append(f"w{w}: {runs} ({path}, {wall:.0f} s)")
        share = sum(work for *_, work, _ in parts) / total
        end = max(wall for wall, *_ in parts)
        print(f"{device} | {'; '.join(desc)} | {share:.3f} | {end:.1f} | {end / share:.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs_csv", nargs="?")
    ap.add_argument("--bench", help="bench/micro_heads_cost.sh's JSON lines")
    ap.add_argument("--bound", type=int, help="the micro-heads bound of the commit that ran "
                    "RUNS_CSV, for one head count and several alike (64 before 6ebf4fa): "
                    "HEADLAB_MICRO_HEADS_BOUND for headlab-bench price")
    args = ap.parse_args()
    if args.bound:
        os.environ["HEADLAB_MICRO_HEADS_BOUND"] = str(args.bound)
    if args.bench:
        bench(args.bench)
    elif args.runs_csv:
        balance(args.runs_csv)
    else:
        ap.error("give RUNS_CSV or --bench FILE")


if __name__ == "__main__":
    main()
