#!/usr/bin/env python3
"""roles_figure.py SESSION [--run N] [-o PREFIX] — when each head role appears against the loss
curve's plateaus (docs/FINDINGS.md, "How many heads can go"; issue 76).

Reads a session through the headlab package: the run's test loss with the plateau lines ln 10,
2/3 ln 10 and 1/3 ln 10 and the spans the session's plateau detector logged (runs(): plateau_*),
and, at each evaluation, each role score's largest value over the heads (the role is there when
one head has it) and the heads' mean attention entropy. Writes PREFIX.png, PREFIX.svg and
PREFIX.csv (the step each role first passes STRONG and each plateau's span)."""
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
STRONG = 0.5
PLATEAUS = {"ln10": (math.log(10), "ln 10"), "two_thirds_ln10": (2 / 3 * math.log(10), "⅔ ln 10"),
            "third_ln10": (1 / 3 * math.log(10), "⅓ ln 10")}


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
    for i, (key, (level, label)) in enumerate(PLATEAUS.items()):
        top.axhline(level, color="0.4", lw=0.8, ls=":")
        top.text(test["step"].max(), level, f" {label}", va="center", fontsize=8, color="0.3")
        entered, left = run.get(f"plateau_{key}_entered"), run.get(f"plateau_{key}_left")
        if pd.notna(entered):
            end = left if pd.notna(left) else test["step"].max()
            for ax in (top, bottom):
                ax.axvspan(entered, end, color=f"C{i}", alpha=0.08, lw=0)
            spans.append({"what": f"plateau {label}", "from": int(entered), "to": int(end) if pd.notna(left) else None})
    top.set_ylabel("test loss (nats)")
    top.set_ylim(0, 2.6)
    top.grid(alpha=0.3)
    top.legend(loc="upper right", fontsize=8)
    firsts = []
    for i, (stat, label) in enumerate(ROLES.items()):
        if ("max", stat) not in per_step:
            continue
        y = per_step[("max", stat)]
        bottom.plot(y.index, y.values, color=f"C{i + 3}", lw=1.4, label=f"{label} (best head)")
        above = y[y > STRONG]
        first = int(above.index[0]) if len(above) else None
        if first is not None:
            bottom.plot([first], [y.loc[first]], "o", color=f"C{i + 3}", ms=5)
        firsts.append({"what": f"{stat} > {STRONG}", "from": first, "to": None})
    if ("mean", "entropy") in per_step:
        twin = bottom.twinx()
        e = per_step[("mean", "entropy")]
        twin.plot(e.index, e.values, color="0.5", lw=1.0, ls="--", label="entropy (mean over heads)")
        twin.set_ylabel("attention entropy (nats)", color="0.4")
        twin.legend(loc="upper right", fontsize=8)
    bottom.axhline(STRONG, color="0.6", lw=0.8, ls=":")
    bottom.set_ylim(0, 1.02)
    bottom.set_ylabel("role score")
    bottom.set_xlabel("step")
    bottom.grid(alpha=0.3)
    bottom.legend(loc="center right", fontsize=8)
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
