#!/usr/bin/env python3
"""joint_replay.py — issue 53, items 2 and 6: the boundary search replayed on its archived runs,
with the separate model (a logistic per configuration, the law through the crossings) and the
joint model (JointLaw.h: one slope, the law inside the likelihood, τ the scatter about it).

    .venv/bin/python bench/joint_replay.py [OUT.txt]

For each archive and model, round by round: each configuration keeps the runs of the rounds up to
the one at which the model stopped it (converged, budget spent, out of range), as the search
would have with that model deciding; `headlab-cli summary --model M` reads the session so cut.
Reported per round: runs per configuration, the law's α with its interval, configurations stopped.
At the end: runs per configuration, α, and each configuration's interval against the estimate
from every archived run (the same model's), i.e. the replay's coverage.

The replay can only drop runs, never place new ones: the joint model's placement would have put
its later points elsewhere, so its costs here are what the archive's placement gives it.
"""
import csv
import gzip
import math
import os
import re
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CLI = os.path.join(ROOT, "build", "app", "cli", "headlab-cli")
ARCHIVES = [
    ("Figure 4 search (issue 27), 5 configurations", "docs/data/issue27/fig4-boundary.export.yaml.gz"),
    ("Figure 2 campaign (issue 53), 25 configurations", "docs/data/issue53/fig2-boundary.export.yaml.gz"),
]
STOPPED = {"converged", "budget spent", "out of range", "no crossing"}


def load(path):
    with gzip.open(os.path.join(ROOT, path), "rt") as f:
        return yaml.safe_load(f)


def key(at):
    return tuple(sorted((str(k), str(v)) for k, v in at.items()))


def summary(doc, model, workdir):
    """headlab-cli summary of `doc` with `model`: (rows by configuration, law text)."""
    session = os.path.join(workdir, "replay.yaml")
    with open(session, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    table = os.path.join(workdir, "replay.csv")
    out = subprocess.run([CLI, "summary", session, "--model", model, "-o", table],
                         capture_output=True, text=True, check=True).stdout
    rows = {}
    with open(table) as f:
        for r in csv.DictReader(f):
            rows[tuple(sorted((k, r[k]) for k in ("d_model", "heads")))] = r
    law = re.search(r"α = ([-\d.]+) \[([-\d.]+), ([-\d.]+)\]", out)
    tau = re.search(r"τ = ([\d.]+)", out)
    return rows, (tuple(float(v) for v in law.groups()) if law else None), \
        (float(tau.group(1)) if tau and model == "joint" else None)


def replay(doc, model, workdir, log):
    probes = doc["search"]["probes"]
    rounds = max(p["round"] for p in probes) + 1
    stopped_at = {}
    configurations = {key(p["at"]) for p in probes}
    for r in range(rounds):
        kept = [p for p in probes if p["round"] <= r and p["round"] <= stopped_at.get(key(p["at"]), r)]
        cut = dict(doc)
        cut["search"] = dict(doc["search"], probes=kept)
        rows, law, tau = summary(cut, model, workdir)
        runs = sum(p["replicates"] for p in kept)
        for k, row in rows.items():
            if row["state"] in STOPPED and k not in stopped_at:
                stopped_at[k] = r
        log(f"  round {r}: {runs / len(configurations):5.1f} runs per configuration, "
            f"{len(stopped_at):2d} of {len(configurations)} stopped, "
            + (f"α = {law[0]:.3f} [{law[1]:.3f}, {law[2]:.3f}] (±{(law[2] - law[1]) / 2:.3f})" if law else "no law")
            + (f", τ = {tau:.3f}" if tau is not None else ""))
        if len(stopped_at) == len(configurations):
            break
    return rows, law, runs / len(configurations)


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else None
    lines = []

    def log(text):
        print(text, flush=True)
        lines.append(text)

    log("The boundary search replayed on its archives (bench/joint_replay.py)")
    with tempfile.TemporaryDirectory() as workdir:
        for name, path in ARCHIVES:
            doc = load(path)
            log(f"\n{name}: {path}")
            full = {m: summary(doc, m, workdir) for m in ("separate", "joint")}
            for model in ("separate", "joint"):
                log(f" {model} model, stopping where it decides:")
                rows, law, per = replay(doc, model, workdir, log)
                reference = full[model][0]
                covered = widths = n = 0
                for k, row in rows.items():
                    if not row["estimate"] or not reference[k]["estimate"]:
                        continue
                    n += 1
                    truth = math.log10(float(reference[k]["estimate"]))
                    lo, hi = math.log10(float(row["low"])), math.log10(float(row["high"]))
                    covered += lo <= truth <= hi
                    widths += hi - lo
                log(f"  end: {per:.1f} runs per configuration; "
                    + (f"α = {law[0]:.3f} [{law[1]:.3f}, {law[2]:.3f}]" if law else "no law")
                    + f"; {covered} of {n} intervals hold the all-runs estimate; "
                    f"mean width {widths / max(n, 1):.3f} decades")
    if out_path:
        with open(out_path, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
