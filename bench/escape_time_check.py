#!/usr/bin/env python3
"""escape_time_check.py — issue 53, item 2: do the plateau steps carry information about η* that
the learned/not-learned verdict does not? Measured on the Figure 2 campaign's 657 runs.

    .venv/bin/python bench/escape_time_check.py [OUT.txt]

For every run that left the ln 10 plateau: the step it left it (plateau_3_left) against its
distance from its configuration's η* (log10 η − log10 η*, η* from `headlab-cli summary --model
joint`), binned; and the final level (ln 10, ⅔ ln 10, ⅓ ln 10, solved) of every run against the
same distance. A time-to-escape model (log T against log η, censored at the budget) pays only if
T grows steadily towards the crossing; an ordinal model only if the level falls steadily.
"""
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import pandas as pd

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
import headlab  # noqa: E402

ARCHIVE = os.path.join(ROOT, "docs/data/issue53/fig2-boundary.export.yaml.gz")
CLI = os.path.join(ROOT, "build", "app", "cli", "headlab-cli")
BINS = [(-3, -1), (-1, -0.5), (-0.5, -0.25), (-0.25, 0), (0, 0.25), (0.25, 0.5), (0.5, 3)]


def main():
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        table = os.path.join(tmp, "joint.csv")
        subprocess.run([CLI, "summary", ARCHIVE, "--model", "joint", "-o", table], check=True,
                       capture_output=True)
        joint = pd.read_csv(table)
    crossing = {(a, b): math.log10(e) for a, b, e in zip(joint.d_model, joint.heads, joint.estimate)}
    runs = headlab.open(ARCHIVE).runs()
    runs = runs[(runs.status == "done") & runs.left_ln10_plateau.notna()].copy()
    runs["distance"] = np.log10(runs.lr) - [crossing[(a, b)] for a, b in zip(runs.d_model, runs.heads)]
    ln10 = math.log(10)
    loss = runs.final_test_loss
    runs["level"] = (loss < 5 / 6 * ln10).astype(int) + (loss < 0.5 * ln10).astype(int) + \
        (loss < 1 / 6 * ln10).astype(int)
    learned = runs[(runs.left_ln10_plateau == 1) & (runs.plateau_3_left > 0)]
    t = np.log10(learned.plateau_3_left)
    lines.append(f"Escape steps and final levels against the distance from η* (bench/escape_time_check.py)")
    lines.append(f"docs/data/issue53/fig2-boundary.export.yaml.gz: {len(runs)} runs with a verdict, "
                 f"{len(learned)} left the ln 10 plateau")
    near = learned.distance.abs() < 0.5
    lines.append(f"correlation of log10 T_escape with the distance: {np.corrcoef(t, learned.distance)[0, 1]:.2f} "
                 f"(all), {np.corrcoef(t[near], learned.distance[near])[0, 1]:.2f} (within 0.5 decades, "
                 f"{int(near.sum())} runs)")
    lines.append("")
    lines.append("distance (decades)   runs  learned  T_escape median [IQR]     final level 0/1/2/3")
    for lo, hi in BINS:
        b = runs[(runs.distance >= lo) & (runs.distance < hi)]
        bl = learned[(learned.distance >= lo) & (learned.distance < hi)]
        levels = "/".join(str(int((b.level == k).sum())) for k in range(4))
        if len(bl):
            q = np.percentile(bl.plateau_3_left, [25, 50, 75])
            escape = f"{q[1]:7.0f} [{q[0]:.0f}, {q[2]:.0f}]"
        else:
            escape = "      -"
        lines.append(f"[{lo:+.2f}, {hi:+.2f})      {len(b):5d}  {len(bl):7d}  {escape:24s}  {levels}")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
