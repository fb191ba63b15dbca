"""stabilizer_tasks_findings.py DIR FIGDIR — the nearest-neighbour and text comparison of the
stabilizers on the GPU (issue 23; bench/gpu_stabilizer_tasks.sh): from what that script brought
back into DIR (docs/data/issue23: TASK-gpu-runs.csv, headlab-cli export-csv's run table, and
TASK-gpu-lr-sensitivity.csv, headlab-cli summary --lr-sensitivity), prints docs/FINDINGS.md's
tables (median final test loss per η and choice, with the range over seeds, and the sensitivity)
and draws FIGDIR/TASK-gpu-loss-vs-lr.png: final test loss against η, one line per choice (the
median over seeds, the bars from the lowest seed to the highest), its sensitivity in the legend.

    .venv/bin/python bench/stabilizer_tasks_findings.py docs/data/issue23 docs/figures/stabilizers
"""
import csv
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import LogLocator, NullFormatter  # noqa: E402

# The choices, in the order the tables and the legend give them: (name, label columns' values).
CHOICES = [
    ("none", {}),
    ("qk-layernorm, gains", {"qk_norm": "gain"}),
    ("soft-cap 10", {"softcap": "10"}),
    ("z-loss 1e-4", {"z_loss": "1.0e-04"}),
    ("σReparam qk", {"sigma_reparam": "qk"}),
]
STABILIZER_KEYS = ("qk_norm", "softcap", "z_loss", "sigma_reparam")
# Okabe–Ito, as the app's palette.
COLOURS = ["#000000", "#E69F00", "#56B4E9", "#009E73", "#D55E00"]
# And a line style and marker each (the "stabilizers as line styles"), so that choices
# whose lines lie on each other (qk-layernorm and σReparam on text) stay apart.
STYLES = [("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1, 1, 1)), "v")]
UNITS = {"nn": "final test loss (MSE × d)", "text": "final test loss (nats per byte)"}


def choice_of(row, prefix):
    values = {k: (row.get(prefix + k) or "") for k in STABILIZER_KEYS}
    values = {k: v for k, v in values.items() if v and v != "off"}
    for name, wanted in CHOICES:
        if values == wanted:
            return name
    raise SystemExit(f"a run with stabilizers {values} is no choice of this script")


def eta(lr):
    """1e-3, 3e-2: the η of the tables."""
    mantissa, exponent = f"{lr:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def fmt(x):
    return f"{x:.2g}" if x < 0.1 else f"{x:.2f}"


def task_findings(directory, figures, task):
    runs = list(csv.DictReader(open(os.path.join(directory, f"{task}-gpu-runs.csv"))))
    sens = {choice_of(r, ""): r for r in
            csv.DictReader(open(os.path.join(directory, f"{task}-gpu-lr-sensitivity.csv")))}
    losses = {}  # choice -> lr -> [final test loss per seed]
    for r in runs:
        if r["status"] != "done":
            raise SystemExit(f"{task}: run {r['run']} is {r['status']}, not done")
        losses.setdefault(choice_of(r, "label_"), {}).setdefault(float(r["lr"]), []).append(
            float(r["final_test_loss"]))
    lrs = sorted({lr for by_lr in losses.values() for lr in by_lr})
    seeds = {len(v) for by_lr in losses.values() for v in by_lr.values()}
    names = [name for name, _ in CHOICES if name in losses]

    print(f"\n{task}: {len(runs)} runs, {sorted(seeds)} seeds per point; median final test loss "
          f"[lowest, highest seed]; sensitivity: median [q1, q3] over seeds\n")
    print("| " + task + " | " + " | ".join(eta(lr) for lr in lrs) + " | sensitivity |")
    print("|---" * (len(lrs) + 2) + "|")
    for name in names:
        cells = []
        best = min(statistics.median(v) for v in losses[name].values())
        for lr in lrs:
            v = losses[name][lr]
            m = statistics.median(v)
            cell = f"{fmt(m)} [{fmt(min(v))}, {fmt(max(v))}]"
            cells.append(f"**{cell}**" if m == best else cell)
        s = sens[name]
        print(f"| {name} | " + " | ".join(cells) +
              f" | {fmt(float(s['median']))} [{fmt(float(s['q1']))}, {fmt(float(s['q3']))}] |")

    fig, ax = plt.subplots(figsize=(6.4, 4.6), dpi=150)
    for name in names:
        index = [n for n, _ in CHOICES].index(name)  # one colour and style per choice, both tasks
        colour, (style, marker) = COLOURS[index], STYLES[index]
        med = [statistics.median(losses[name][lr]) for lr in lrs]
        lo = [m - min(losses[name][lr]) for m, lr in zip(med, lrs)]
        hi = [max(losses[name][lr]) - m for m, lr in zip(med, lrs)]
        ax.errorbar(lrs, med, yerr=[lo, hi], color=colour, marker=marker, markersize=4,
                    linestyle=style,
                    capsize=3, linewidth=1.5,
                    label=f"{name} (sensitivity {fmt(float(sens[name]['median']))})")
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("learning rate η")
    ax.set_ylabel(UNITS[task])
    ax.set_ylim(bottom=0)
    ax.grid(True, which="major", alpha=0.3)
    n = sorted(seeds)[0]
    ax.set_title(f"{task}, GPU: final loss against η per stabilizer (median, range over {n} seeds)",
                 fontsize=9)
    # Below the plot: inside it would cover points (σReparam's at small η on nn).
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    fig.tight_layout()
    os.makedirs(figures, exist_ok=True)
    out = os.path.join(figures, f"{task}-gpu-loss-vs-lr.png")
    fig.savefig(out)
    print(f"\nwrote {out}")


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    for task in ("nn", "text"):
        task_findings(sys.argv[1], sys.argv[2], task)


if __name__ == "__main__":
    main()
