#!/usr/bin/env python3
"""roles_figure.py SESSION [--run N] [-o PREFIX] — when each head role appears against the loss
curve's plateaus (docs/FINDINGS.md, "How many heads can go"; issue 76).

Reads a session through the headlab package: the run's test loss with the spans of the plateaus
the session's detector logged (runs(): plateau_<name>_entered / _left) and the loss held on each,
and, at each evaluation, each role score's largest value over the heads (the role is there when
one head has it) and the heads' mean attention entropy. A dot marks where each role appears: the first
evaluation at which its best head reaches 90 % of the most any head had over the run. Writes
PREFIX.png, PREFIX.svg and PREFIX.csv (each plateau's span and loss, each role's step)."""
import argparse
import math
import os
import sys

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import headlab  # noqa: E402

ROLES = {"previous_token": "previous token", "positional": "fixed offset", "induction": "induction",
         "duplicate_token": "duplicate token"}
REACHED = 0.9


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("session")
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("-o", "--output", default="roles")
    a = ap.parse_args()
    s = headlab.open(a.session)
    run = s.runs().set_index("run").loc[a.run]
    curves = s.curves()
    test = curves[(curves["run"] == a.run) & (curves["metric"] == "test")].sort_values("step")
    stats = s.head_stats(statistics=list(ROLES) + ["entropy"], runs=a.run)
    per_step = stats.groupby(["step", "statistic"], observed=True)["value"].agg(["max", "mean"]).unstack()

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True, height_ratios=[1, 1.1])
    top.plot(test["step"], test["value"], color="k", lw=1.4, label="test loss")
    spans = []
    # The plateaus the session's detector logged (plateau_<name>_entered / _left in runs()): each
    # drawn as its span and a line at the loss it held there.
    names = [c[len("plateau_"):-len("_entered")] for c in run.index
             if c.startswith("plateau_") and c.endswith("_entered")]
    for i, name in enumerate(names):
        entered, left = run[f"plateau_{name}_entered"], run[f"plateau_{name}_left"]
        if pd.isna(entered):
            continue
        end = left if pd.notna(left) else test["step"].max()
        level = test[(test["step"] >= entered) & (test["step"] <= end)]["value"].median()
        top.axhline(level, color="0.4", lw=0.8, ls=":")
        top.text(0.995, level, f"{level / math.log(10):.2f} ln 10", transform=top.get_yaxis_transform(),
                 ha="right", va="bottom", fontsize=8, color="0.3")
        for ax in (top, bottom):
            ax.axvspan(entered, end, color=f"C{i}", alpha=0.1, lw=0)
        spans.append({"what": f"plateau {name}", "from": int(entered), "to": int(left) if pd.notna(left) else None,
                      "loss": level})
    top.set_ylabel("test loss (nats)")
    top.set_ylim(0, 2.6)
    top.grid(alpha=0.3)
    top.legend(loc="center right", fontsize=8)
    firsts = []
    handles = []
    for i, (stat, label) in enumerate(ROLES.items()):
        if ("max", stat) not in per_step:
            continue
        y = per_step[("max", stat)]
        handles += bottom.plot(y.index, y.values, color=f"C{i + 3}", lw=1.4, label=f"{label} (best head)")
        # Where the role appears: the first evaluation at which the best head reaches REACHED of
        # the most any head had over the run.
        first = int(y.index[np.argmax(y.values >= REACHED * np.nanmax(y.values))])
        bottom.plot([first], [y.loc[first]], "o", color=f"C{i + 3}", ms=5)
        firsts.append({"what": f"{stat} reaches {REACHED:.0%} of its most", "from": first, "to": None,
                       "score": float(y.loc[first]), "most": float(np.nanmax(y.values))})
    if ("mean", "entropy") in per_step:
        twin = bottom.twinx()
        e = per_step[("mean", "entropy")]
        handles += twin.plot(e.index, e.values, color="0.5", lw=1.0, ls="--", label="entropy (mean over heads)")
        twin.set_ylabel("attention entropy (nats)", color="0.4")
    bottom.set_ylim(0, 1.3)
    bottom.set_yticks(np.arange(0, 1.01, 0.2))
    bottom.set_ylabel("role score")
    bottom.set_xlabel("step")
    bottom.grid(alpha=0.3)
    bottom.legend(handles=handles, loc="upper center", ncol=3, fontsize=7.5, frameon=False)
    c = run
    top.set_title(f"{s.name}: run {a.run} (d_model {int(c['config.model.d_model'])}, "
                  f"{int(c['uniform_heads'])} heads, seed {int(c['config.seed'])})", fontsize=10)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(f"{a.output}.{ext}", dpi=150)
    pd.DataFrame(spans + firsts).to_csv(f"{a.output}.csv", index=False)
    print(pd.DataFrame(spans + firsts).to_string(index=False))


if __name__ == "__main__":
    main()
