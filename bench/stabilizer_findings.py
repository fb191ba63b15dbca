"""stabilizer_findings.py DIR — the tables of docs/FINDINGS.md's stabilizer section, from what
bench/gpu_stabilizers.sh brought back into DIR (docs/data/issue23): summary.csv (η* per
configuration with its 95 % interval, headlab-cli summary) and boundary.export.yaml.gz (every run's
metrics, read with the headlab package).

Per stabilizer: η* at m_H 8, 32, 96 and its ratio to no stabilizer; the exponent α of
log10 η* = log10 C − α log10 m_H over its three configurations by weighted least squares (each
crossing's error from its interval in log10, the half-width / 1.96, widened by sqrt(χ²/dof) when
the points misfit, as HeadLab's own law fit does); and what it costs in final loss: the median
final test loss of its runs that learned, per m_H (at the η the search placed, which differ
between choices: a rough measure).

    .venv/bin/python bench/stabilizer_findings.py docs/data/issue23
"""
import csv
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import headlab  # noqa: E402

D_MODEL = 96


def choice(row):
    for key in ("qk_norm", "sigma_reparam", "softcap"):
        if row.get(key) or row.get("label_" + key):
            return f"{key}={row.get(key) or row.get('label_' + key)}"
    rule = row.get("qk_rule") or row.get("label_qk_rule")
    return "QK rule" if rule in ("on", "true") else "none"


def fit(points):
    """Weighted least squares of log10 η* on log10 m_H: α, its 95 % half-width."""
    x = np.array([math.log10(m) for m, _, _, _ in points])
    y = np.array([math.log10(e) for _, e, _, _ in points])
    s = np.array([(math.log10(h) - math.log10(l)) / (2 * 1.96) for _, _, l, h in points])
    w = 1 / s**2
    A = np.vstack([np.ones_like(x), -x]).T
    cov = np.linalg.inv(A.T @ (A * w[:, None]))
    a, alpha = cov @ (A.T @ (w * y))
    chi2 = float(np.sum(w * (y - A @ np.array([a, alpha])) ** 2))
    dof = len(points) - 2
    scale = math.sqrt(max(1.0, chi2 / dof)) if dof > 0 else 1.0
    return alpha, 1.96 * math.sqrt(cov[1, 1]) * scale, chi2


def main(folder):
    rows = list(csv.DictReader(open(os.path.join(folder, "summary.csv"))))
    by = {}
    for r in rows:
        m_h = D_MODEL // int(r["heads"])
        by.setdefault(choice(r), []).append((m_h, float(r["estimate"]), float(r["low"]), float(r["high"])))
    base = {m: e for m, e, _, _ in by["none"]}
    print("choice            m_H   eta*       95 % interval          x none   alpha [95 %]")
    for name, points in by.items():
        points.sort()
        alpha, half, chi2 = fit(points)
        for k, (m, e, l, h) in enumerate(points):
            tail = f"{alpha:.2f} ± {half:.2f} (χ² {chi2:.2f})" if k == 0 else ""
            print(f"{name:17s} {m:3d}   {e:.2e}   [{l:.2e}, {h:.2e}]   {e / base[m]:5.2f}   {tail}")
    runs = headlab.open(os.path.join(folder, "boundary.export.yaml.gz")).runs()
    runs["choice"] = [choice(r) for r in runs.to_dict("records")]
    learned = runs[runs["learned"] == 1]
    print("\nfinal test loss of the runs that learned, per m_H: median, best (runs), at the η the "
          "search placed")
    table = learned.groupby(["choice", "uniform_head_dim"])["final_test_loss"].agg(
        ["median", "min", "count"])
    for (name, m), r in table.iterrows():
        print(f"{name:17s} m_H {int(m):3d}: {r['median']:.4f}, best {r['min']:.4f} ({int(r['count'])})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/data/issue23")
