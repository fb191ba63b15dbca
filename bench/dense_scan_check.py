"""dense_scan_check.py — issue 53, item 6: does the boundary search's interval for η* cover what a
dense scan with fresh seeds measures?

    .venv/bin/python bench/dense_scan_check.py docs/data/issue53 > docs/data/issue53/dense-scan-check.txt

For each docs/data/issue53/dense-scan-*.runs.csv (headlab-cli export-csv of bench/dense_scan.sh's
sessions): the logistic P(learned) = 1 / (1 + exp(b · (log10 η − log10 η*))) fitted by maximum
likelihood to the runs' verdicts (runs.csv's `learned`, the session's rule), η* with its 95 %
profile-likelihood interval (the η* whose best fit is within χ²₁(0.95)/2 = 1.92 of the maximum log
likelihood), set against the issue-27 search's interval for the same configuration (FINDINGS.md,
`docs/data/issue27/summary.csv`). Plain numpy: the fit is two parameters.
"""
import csv
import glob
import math
import os
import sys

import numpy as np

# The issue-27 search (docs/FINDINGS.md, "Trainability as a measured law"): η* and its 95 % interval.
SEARCH = {(12, 96): (4.02e-3, 3.21e-3, 5.02e-3), (12, 24): (1.03e-2, 7.69e-3, 1.34e-2),
          (12, 384): (1.51e-3, 1.23e-3, 1.85e-3), (6, 384): (6.4e-4, 4.56e-4, 8.18e-4),
          (2, 384): (1.80e-4, 1.18e-4, 2.73e-4)}


def log_likelihood(x, y, x0, b):
    z = np.clip(b * (x - x0), -50, 50)  # P(learned) falls as η grows
    p = 1.0 / (1.0 + np.exp(z))
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return float(np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)))


def best_slope(x, y, x0):
    slopes = np.exp(np.linspace(math.log(0.1), math.log(200.0), 400))
    values = [log_likelihood(x, y, x0, b) for b in slopes]
    k = int(np.argmax(values))
    return values[k], slopes[k]


def fit(x, y):
    grid = np.linspace(x.min() - 1.0, x.max() + 1.0, 1201)
    profile = np.array([best_slope(x, y, x0)[0] for x0 in grid])
    k = int(np.argmax(profile))
    inside = grid[profile >= profile[k] - 1.92]
    return grid[k], best_slope(x, y, grid[k])[1], inside.min(), inside.max()


def main(folder):
    for path in sorted(glob.glob(os.path.join(folder, "dense-scan-*.runs.csv"))):
        with open(path) as f:
            rows = [r for r in csv.DictReader(f) if r["status"] in ("done", "diverged")]
        heads = int(rows[0]["heads"].split()[0])
        d_model = int(rows[0]["d_model"])
        x = np.array([math.log10(float(r["lr"])) for r in rows])
        y = np.array([float(r["learned"]) for r in rows])
        x0, b, low, high = fit(x, y)
        seeds = sorted({r["label_seed"] for r in rows})
        print(f"{os.path.basename(path)}: n_H {heads}, m {d_model}: {len(rows)} runs, "
              f"{len(set(x))} η × {len(seeds)} seeds ({seeds[0]}–{seeds[-1]})")
        for lr in sorted(set(x)):
            at = y[x == lr]
            print(f"  η {10 ** lr:.3g}: learned {int(at.sum())}/{len(at)}")
        print(f"  fit: η* = {10 ** x0:.3g} [{10 ** low:.3g}, {10 ** high:.3g}] (95 % profile), "
              f"slope {b:.1f} per decade of η")
        if (heads, d_model) in SEARCH:
            s, s_low, s_high = SEARCH[(heads, d_model)]
            covers = s_low <= 10 ** x0 <= s_high
            overlap = not (10 ** high < s_low or 10 ** low > s_high)
            print(f"  the search (issue 27): η* = {s:.3g} [{s_low:.3g}, {s_high:.3g}]: "
                  f"{'covers' if covers else 'does NOT cover'} the dense scan's η*; "
                  f"the two intervals {'overlap' if overlap else 'do not overlap'}; "
                  f"the scan's η* is {math.log10(10 ** x0 / s):+.2f} decades from the search's")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/data/issue53")
