#!/usr/bin/env python3
"""fig1_findings.py — the data of issue 24's item 5 (Figure 1's 3-layer line at 100,000 steps,
bench/fig1_long.sh) from the session exported on the GPU machine, for docs/data/issue24/:

    python3 bench/fig1_findings.py fig1-all.yaml.gz   # (or a plain .yaml)

writes fig1-100k-runs.jsonl (one line per run: its labels, status, steps, best epoch mean, the
epoch mean at round steps, device, wall seconds, message) and fig1-100k-epoch-means.csv (step, then
one column per run: heads=H seed=S). bench/plot_findings.py draws the figure from the CSV.
"""
import csv
import gzip
import json
import os
import sys

import yaml

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "data", "issue24")
MARKS = [1000, 5000, 10000, 20000, 50000, 100000]


def main(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        session = yaml.safe_load(f)
    curves = {}
    with open(os.path.join(OUT, "fig1-100k-runs.jsonl"), "w") as lines:
        for run in session["runs"]:
            labels = run["labels"]
            em = run["curves"]["epoch_mean"]
            at = dict(zip(em["steps"], em["values"]))
            best = min(em["values"])
            lines.write(json.dumps({
                "heads": int(labels["heads"]), "rank": 64 // int(labels["heads"]),
                "layers": int(labels["layers"]), "w": int(labels["width_multiplier"]),
                "seed": int(labels["seed"]), "status": run["status"],
                "steps_done": run["steps_done"], "best_epoch_mean": best,
                "best_at_step": em["steps"][em["values"].index(best)],
                "epoch_mean_at": {str(m): at[m] for m in MARKS if m in at},
                "device": run["device"], "wall_seconds": round(run["wall_seconds"], 1),
                "provenance": {k: run["provenance"][k] for k in
                               ("device", "attention", "cuda_graphs", "fused_adam",
                                "task.fused_points", "fused_ffn", "fused_norm", "tf32",
                                "libtorch")
                               if k in run["provenance"]},
                "message": run["message"]}) + "\n")
            curves[f"heads={labels['heads']} seed={labels['seed']}"] = at
    steps = sorted({s for c in curves.values() for s in c})
    with open(os.path.join(OUT, "fig1-100k-epoch-means.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step"] + list(curves))
        for s in steps:
            w.writerow([s] + [f"{curves[k][s]:.6g}" if s in curves[k] else "" for k in curves])


if __name__ == "__main__":
    main(sys.argv[1])
