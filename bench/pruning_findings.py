#!/usr/bin/env python3
"""pruning_findings.py DIR [--figures DIR] — folds bench/pruning_findings.sh's inspections into
the table of docs/FINDINGS.md "How many heads can go" and its figures.

For each preset, configuration (head count or width), curve (method and order) and ablation: the
share of heads removable within each bound `inspect` reports (1 %, 5 % and +0.05 nats above the
model's loss before any head went; the rule is core/train's PruningCurve::removableWithin), over
the seeds: mean, min and max (random orders averaged within a run first). Writes DIR/pruning-table.csv, and the table as
Markdown to DIR/table.md and standard output; with --figures, two PNGs and SVGs per preset: the loss increase against the share of
heads removed, each curve's mean over seeds with its min-max band (PRESET: every method with zero
ablation; PRESET-ablations: the post-hoc orders with zero, mean and optimal-constant ablation). Then which heads survive
(DIR/pruning-roles.csv): the role scores of the heads the greedy order removes within 5 % against
those it keeps."""
import argparse
import glob
import json
import os
import re
import sys

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import headlab  # noqa: E402

NAME = re.compile(r"insp-(?P<preset>.+)-(?P<run>\d+)-(?P<ablation>zero|mean|optimal)\.json$")


def curve_name(c):
    if c["method"] == "l0":
        return "L0 gates"
    order = c["order"]
    return order if c["method"] == "post-hoc" else f"{c['method']} ({order})"


def inspections(directory):
    """Each insp-PRESET-RUN-ABLATION.json of `directory`: (its name's parts, its document)."""
    out = []
    for path in sorted(glob.glob(os.path.join(directory, "insp-*.json"))):
        m = NAME.search(os.path.basename(path))
        if not m:
            continue
        doc = json.load(open(path))
        if "bounds" not in doc:
            sys.exit(f"{path}: written before inspect counted removable heads per bound; "
                     "`headlab-cli recount` it")
        out.append((m, doc))
    return out


def rows_of(directory, docs):
    """Each curve's share of heads removable within each bound, as `inspect` counted it (one rule,
    core/train: PruningCurve::removableWithin), and its points; the bounds `inspect` named."""
    rows, curves, bounds = [], [], {}
    for m, doc in docs:
        preset, run, ablation = m["preset"], int(m["run"]), m["ablation"]
        bounds.update({b["name"]: b for b in doc["bounds"]})
        # The session bench/pruning_findings.sh exported, or its runs table as docs/data keeps it.
        session, table = os.path.join(directory, preset + ".yaml"), os.path.join(directory, f"runs-{preset}.csv")
        runs = pd.read_csv(table) if os.path.exists(table) else headlab.open(session).runs()
        r = runs[runs["run"] == run].iloc[0]
        config = f"{int(r['uniform_heads'])} heads" if preset.endswith("text") else f"m {int(r['config.model.d_model'])}"
        intact, total = doc["test_loss"], len(doc["head_stats"])
        for c in doc["pruning"]:
            name = curve_name(c)
            key = dict(preset=preset, config=config, seed=int(r["config.seed"]), run=run, ablation=ablation, curve=name,
                       method=c["method"], intact=intact)
            rows.append({**key, **{f"within_{b['name']}": c[f"removable_{b['name']}"] / total for b in doc["bounds"]}})
            for s in c["steps"]:
                curves.append({**key, "order_seed": c["seed"], "fraction": s["fraction"],
                               "increase": s["test_loss"] / intact - 1, "nats": s["test_loss"] - intact})
    return pd.DataFrame(rows), pd.DataFrame(curves), list(bounds.values())


def table(rows, bounds):
    # Random orders: averaged within a run first; then over seeds.
    per_run = rows.groupby(["preset", "config", "ablation", "curve", "method", "seed"], as_index=False).mean(numeric_only=True)
    out = []
    for key, g in per_run.groupby(["preset", "config", "ablation", "curve", "method"], sort=False):
        row = dict(zip(["preset", "config", "ablation", "curve", "method"], key), seeds=len(g),
                   intact_loss=g["intact"].mean())
        for col in [f"within_{b['name']}" for b in bounds]:
            row[col + "_mean"], row[col + "_min"], row[col + "_max"] = g[col].mean(), g[col].min(), g[col].max()
        out.append(row)
    return pd.DataFrame(out)


def markdown(t, bounds):
    lines = ["| preset | configuration | intact loss | ablation | curve | seeds | "
             + " | ".join(f"≤ {b['label']}" + (": share removed" if i == 0 else "") for i, b in enumerate(bounds)) + " |",
             "|---|---|---|---|---|---|" + "---|" * len(bounds)]
    for _, r in t.iterrows():
        cell = lambda c: f"{100 * r[c + '_mean']:.0f} % [{100 * r[c + '_min']:.0f}, {100 * r[c + '_max']:.0f}]"
        lines.append(f"| {r['preset']} | {r['config']} | {r['intact_loss']:.3g} | {r['ablation']} | {r['curve']} | "
                     f"{r['seeds']} | " + " | ".join(cell(f"within_{b['name']}") for b in bounds) + " |")
    return "\n".join(lines)


ROLES = ("previous_token", "positional", "induction", "duplicate_token", "entropy")
STRONG = 0.5  # a role score above which a head is said to have the role


def roles(docs, curve=("post-hoc", "greedy"), bound="5pct"):
    """Which heads survive: per run, the heads the greedy order removes within the 5 % bound
    against those it keeps, by their role scores at the checkpoint (inspect's head_stats): each
    score's mean over the removed and over the kept, and how many heads score above STRONG on a
    role and how many of those went. One row per preset, configuration and seed."""
    out = []
    for m, doc in docs:
        if m["ablation"] != "zero":
            continue
        c = next(c for c in doc["pruning"] if (c["method"], c["order"]) == curve)
        gone = {(s["layer"], s["head"]) for s in c["steps"][1:c[f"removable_{bound}"] + 1]}
        stats = pd.DataFrame(doc["head_stats"])
        stats["gone"] = [(l, h) in gone for l, h in zip(stats["layer"], stats["head"])]
        row = dict(preset=m["preset"], run=int(m["run"]), heads=len(stats), gone=int(stats["gone"].sum()))
        for r in ROLES:
            row[f"{r}_kept"] = stats.loc[~stats["gone"], r].mean()
            row[f"{r}_gone"] = stats.loc[stats["gone"], r].mean()
            row[f"{r}_max"] = stats[r].max()
            if r != "entropy":
                row[f"{r}_strong"] = int((stats[r] > STRONG).sum())
                row[f"{r}_strong_gone"] = int(((stats[r] > STRONG) & stats["gone"]).sum())
        out.append(row)
    return pd.DataFrame(out)


def figures(curves, bounds, folder):
    """Per preset, PRESET.png/svg: every curve with zero ablation; PRESET-ablations.png/svg: the
    three post-hoc orders that have them (colour) with zero, mean and optimal-constant ablation
    (line style)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(folder, exist_ok=True)
    orders = ["greedy", "single-shot", "gradient"]
    styles = {"zero": "-", "mean": "--", "optimal": ":"}
    for preset, p in curves.groupby("preset"):
        # Text's losses sit near 1.55 nats: the increase in %; addition's near 0: in nats.
        relative = p["intact"].min() > 0.5
        metric, scale = ("increase", 100) if relative else ("nats", 1)
        configs = sorted(p["config"].unique(), key=lambda c: int(re.findall(r"\d+", c)[0]))

        def draw(selected, line, suffix, title, band, legend):
            fig, axes = plt.subplots(1, len(configs), figsize=(4.2 * len(configs), 3.6), sharey=True,
                                     squeeze=False)
            for ax, config in zip(axes[0], configs):
                c = selected[selected["config"] == config]
                for i, ((name, ablation), g) in enumerate(c.groupby(["curve", "ablation"], sort=False)):
                    # Mean over seeds (random orders: over seeds and orders) at each share removed.
                    per = g.groupby(["fraction", "seed"])[metric].mean().unstack()
                    x = per.index.values
                    y = scale * per.values
                    colour, style, label = line(i, name, ablation)
                    ax.plot(x, np.nanmean(y, axis=1), style, color=colour, lw=1.6, marker="o", ms=2.5,
                            label=label)
                    ax.fill_between(x, np.nanmin(y, axis=1), np.nanmax(y, axis=1), color=colour,
                                    alpha=band, lw=0)
                for b in bounds:  # the bounds of the figure's unit
                    if b["absolute"] != relative:
                        ax.axhline(scale * b["value"], color="0.5", lw=0.8, ls=":")
                ax.set_title(f"{preset}: {config}{title}", fontsize=10)
                ax.set_xlabel("share of heads removed")
                ax.set_xlim(0, 1)
                ax.set_ylim(*((-5, 50) if relative else (-0.1, 1.0)))
                ax.grid(alpha=0.3)
            axes[0][0].set_ylabel("test loss increase (%)" if relative else "test loss increase (nats)")
            axes[0][-1].legend(fontsize=7, loc=legend)
            fig.tight_layout()
            for ext in ("png", "svg"):
                fig.savefig(os.path.join(folder, f"{preset}{suffix}.{ext}"), dpi=150)
            plt.close(fig)

        def method_line(i, name, ablation):
            style = "--" if name.startswith("fine-tune") else ("-." if name.startswith("scratch") else "-")
            return f"C{i}", style, name

        draw(p[p["ablation"] == "zero"], method_line, "", "", 0.15, "upper left")
        ablated = p[p["curve"].isin(orders) & p["ablation"].isin(list(styles))]
        if (ablated["ablation"] != "zero").any():
            draw(ablated.sort_values("curve", key=lambda s: s.map(orders.index), kind="stable"),
                 lambda i, name, ablation: (f"C{orders.index(name)}", styles[ablation],
                                            f"{name}, {ablation}"),
                 "-ablations", ", by ablation", 0.07, "lower right")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("directory")
    ap.add_argument("--figures")
    a = ap.parse_args()
    docs = inspections(a.directory)
    rows, curves, bounds = rows_of(a.directory, docs)
    if rows.empty:
        sys.exit(f"{a.directory}: no insp-PRESET-RUN-ABLATION.json")
    t = table(rows, bounds)
    t.to_csv(os.path.join(a.directory, "pruning-table.csv"), index=False, float_format="%.4g")
    text = markdown(t, bounds)
    with open(os.path.join(a.directory, "table.md"), "w") as f:
        f.write(text + "\n")
    print(text)
    r = roles(docs)
    r.to_csv(os.path.join(a.directory, "pruning-roles.csv"), index=False, float_format="%.4g")
    print("\nroles of the heads the greedy order removes within 5 % (gone) and of those it keeps (kept):")
    print(r.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    if a.figures:
        figures(curves, bounds, a.figures)


if __name__ == "__main__":
    main()
