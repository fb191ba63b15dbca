#!/usr/bin/env python3
"""plot_findings.py — the figures of docs/FINDINGS.md from the runs.csv files that
`headlab-cli export-csv` writes (copies in docs/data/). Needs matplotlib.

    .venv/bin/python bench/plot_findings.py   # writes docs/figures/*.png and *.svg
"""
import csv
import json
import math
import os
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DATA = os.path.join(ROOT, "docs", "data")
FIGS = os.path.join(ROOT, "docs", "figures")


def rows(name):
    with open(os.path.join(DATA, name)) as f:
        return list(csv.DictReader(f))


def save(fig, name):
    os.makedirs(FIGS, exist_ok=True)
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(FIGS, f"{name}.{ext}"), dpi=130, bbox_inches="tight")
    plt.close(fig)


def nn_loss_vs_rank():
    best = defaultdict(dict)  # (layers, w) -> rank -> best over seeds
    for r in rows("nn-reduced-runs.csv"):
        rank = int(r["d_model"]) // int(r["label_heads"])
        key = (int(r["label_layers"]), int(r["label_width_multiplier"]))
        v = float(r["best_epoch_mean"])
        best[key][rank] = min(v, best[key].get(rank, math.inf))
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for key in sorted(best):
        ranks = sorted(best[key])
        ax.plot(ranks, [best[key][k] for k in ranks], marker="o", label=f"{key[0]} layer{'s' if key[0] > 1 else ''}, w = {key[1]}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("rank = head dimension (d / n_H)")
    ax.set_ylabel("best epoch-mean training loss (MSE × d)")
    ax.set_title("Nearest-neighbour retrieval, d = 64, N = 16 (nn-reduced, 3,000 steps)")
    ax.axhline(1.0, color="grey", ls="--", lw=1)
    ax.text(1.05, 1.02, "predict 0", color="grey", fontsize=8)
    ax.legend(fontsize=8)
    save(fig, "nn-reduced-loss-vs-rank")


def head_progression():
    loss = defaultdict(list)
    for r in rows("head-progression-runs.csv"):
        scheme, total = r["label_head_schedule"].split(":")
        loss[(scheme, int(r["total_heads"]))].append(float(r["final_test_loss"]))
    speed = {}
    path = os.path.join(DATA, "head-progression-timing.csv")
    if os.path.exists(path):
        for r in rows("head-progression-timing.csv"):
            speed[(r["schedule"].split(":")[0], int(r["total_heads"]))] = float(r["steps_per_second"])
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for scheme in ("ascending", "constant", "descending"):
        xs = sorted(t for s, t in loss if s == scheme)
        a.plot(xs, [sum(loss[(scheme, t)]) / len(loss[(scheme, t)]) for t in xs], marker="o", label=scheme)
        if speed:
            ys = sorted(t for s, t in speed if s == scheme)
            b.plot(ys, [speed[(scheme, t)] for t in ys], marker="o", label=scheme)
    a.set_xlabel("total heads")
    a.set_ylabel("validation loss (nats/byte), mean of 2 seeds")
    a.set_title("Head schedules, d_model 256, 4 layers (step ≈ 2,500 of 4,000)")
    a.legend()
    b.set_xlabel("total heads")
    b.set_ylabel("steps/s, each schedule alone (H200)")
    b.set_title("Training speed")
    b.legend()
    save(fig, "head-progression")


def median(vals):
    vals = sorted(vals)
    n = len(vals)
    return vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2


def reference_traces():
    """The reference Encoder's run of the same line (bench/fig1_reference_long.sh): rank -> (steps
    in thousands, median, min, max over its seeds), from its trace of every tenth epoch."""
    out = {}
    with open(os.path.join(DATA, "issue24", "fig1-reference-100k-h200.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if r.get("mode") != "train":
                continue
            trace = r["trace"][1:]  # epoch 0 is the untrained model at lr 0
            out[r["rank"]] = ([(t["epoch"] + 1) / 10 for t in trace],
                              [median(t["epoch_mean"]) for t in trace],
                              [min(t["epoch_mean"]) for t in trace],
                              [max(t["epoch_mean"]) for t in trace])
    return out


def nn_fig1_3layer_100k():
    """Issue 24, item 5: Figure 1's 3-layer line at the paper's 100,000 steps, epoch-mean training
    loss against step for rank 64 and rank 1 (w 1), median over seeds with the min-max band, in
    HeadLab and (dashed) in the paper's reference code."""
    with open(os.path.join(DATA, "issue24", "fig1-100k-epoch-means.csv")) as f:
        table = list(csv.DictReader(f))
    reference = reference_traces()
    fig, ax = plt.subplots(figsize=(8, 4.8))
    for heads, rank, label, colour in (("1", 64, "rank 64 (1 head of 64)", "tab:blue"),
                                       ("64", 1, "rank 1 (64 heads of 1)", "tab:red")):
        columns = [k for k in table[0] if k.startswith(f"heads={heads} ")]
        xs, med, lo, hi, counts, full_until = [], [], [], [], set(), 0
        for row in table:
            vals = sorted(float(row[k]) for k in columns if row[k])
            if not vals:
                continue
            counts.add(len(vals))
            if len(vals) == len(columns):
                full_until = int(row["step"])
            xs.append(int(row["step"]) / 1000)
            med.append(median(vals))
            lo.append(vals[0])
            hi.append(vals[-1])
        seeds = f"{max(counts)} seeds"
        if len(counts) > 1:  # some seeds stopped early (their device time ran out)
            seeds += f" to step {full_until:,}, {min(counts)} after"
        ax.fill_between(xs, lo, hi, color=colour, alpha=0.25, linewidth=0)
        ax.plot(xs, med, color=colour, linewidth=1.6,
                label=f"{label}, HeadLab: median, min–max of {seeds}")
        if rank in reference:
            rx, rmed, rlo, rhi = reference[rank]
            ax.fill_between(rx, rlo, rhi, color=colour, alpha=0.12, linewidth=0)
            ax.plot(rx, rmed, color="black" if rank == 64 else "dimgrey", linewidth=1.1,
                    linestyle="--", label=f"{label}, reference code: the same, 5 seeds")
    ax.axvline(5, color="grey", linestyle=":", linewidth=1)
    ax.text(5.8, 2.2, "end of warm-up (5 %)", color="grey", fontsize=9)
    ax.set_yscale("log")
    ax.set_ylim(0.004, 3)
    ax.set_yticks([0.01, 0.1, 1])
    ax.set_yticklabels(["0.01", "0.1", "1"])
    ax.set_xlim(0, 100)
    ax.set_xticks(range(0, 101, 20))
    ax.set_xlabel("step (thousands)")
    ax.set_ylabel("training loss, mean over each 100-step epoch")
    ax.set_title("Nearest neighbour, 3 layers, w 1, d 64, N 16: the paper's 100,000 steps\n"
                 "(HeadLab on H100s, rank 1's seeds 2–4 resumed at step 26,400 on an H200;\n"
                 "the reference code on an H200, every tenth epoch)", fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="lower left", fontsize=9)
    save(fig, "nn-fig1-3layer-100k")


if __name__ == "__main__":
    nn_loss_vs_rank()
    head_progression()
    nn_fig1_3layer_100k()
