#!/usr/bin/env python3
"""alignment_check.py SESSION [-o CSV] — the update alignment of bench/sessions/alignment-check.yaml
(issue 77, item 6), folded for docs/FINDINGS.md.

For each run: the median over its heads, layers and evaluations of the answer phase's first 400
steps of each weight's alignment (wq_align ... wo_align: ‖X·ΔW_h‖ over its size for a change
independent of the inputs; 1 independent, √fan-in aligned with every input). Then, per weight and
learning-rate factor (a third of η*, η*, three times), the exponent e of alignment ∝ fan-in^e over
the configurations by least squares in logs: 0 when the updates stay independent of the inputs
as the model widens, ½ when they align fully (Everett et al. 2024). Fan-in is d_model for W_Q,
W_K and W_V and head_dim for W_O. Prints the table as Markdown; -o writes the per-run medians.

  headlab-cli run bench/sessions/alignment-check.yaml -o OUT.yaml --device cpu
  bench/alignment_check.py OUT.yaml -o docs/data/issue77/alignment-check.csv
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import headlab  # noqa: E402

WEIGHTS = ["wq_align", "wk_align", "wv_align", "wo_align"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("session")
    parser.add_argument("-o", "--output", help="the per-run medians as CSV")
    args = parser.parse_args()
    session = headlab.open(args.session)
    runs = session.runs()
    stats = session.head_stats(statistics=WEIGHTS)
    stats = stats[stats["phase"] == "answer"]
    per_run = stats.groupby(["run", "statistic"], observed=True)["value"].median().unstack()
    columns = ["run", "d_model", "uniform_heads", "head_dim", "lr", "final_test_loss", "learned"]
    table = runs[[c for c in columns if c in runs.columns]].set_index("run").join(per_run)
    # The factor of each run's η against its configuration's middle η (the measured η*).
    table["eta_star"] = table.groupby(["d_model", "uniform_heads"])["lr"].transform("median")
    # Each run's η is a third of η*, η* or three times it: named by the nearest power of three.
    table["factor"] = np.power(3.0, np.round(np.log(table["lr"] / table["eta_star"]) / np.log(3.0)))
    if args.output:
        table.reset_index().to_csv(args.output, index=False, float_format="%.4g")
    print("| weight | η / η* | alignment, median over runs [min, max] | exponent e in fan-in (alignment ∝ fan-in^e) |")
    print("|---|---|---|---|")
    for weight in WEIGHTS:
        fan_in = table["head_dim"] if weight == "wo_align" else table["d_model"]
        for factor, rows in table.groupby("factor"):
            x, y = np.log(fan_in[rows.index].astype(float)), np.log(rows[weight].astype(float))
            ok = np.isfinite(y)
            slope, _ = np.polyfit(x[ok], y[ok], 1) if ok.sum() >= 2 else (np.nan, np.nan)
            v = rows[weight]
            name = "⅓" if factor < 0.5 else "3" if factor > 2 else "1"
            print(f"| {weight.split('_')[0]} | {name} | {v.median():.2f} [{v.min():.2f}, {v.max():.2f}] | "
                  f"{slope:.2f} |")


if __name__ == "__main__":
    main()
