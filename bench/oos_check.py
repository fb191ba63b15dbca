#!/usr/bin/env python3
"""oos_check.py SUMMARY... PREDICTIONS... — the out-of-sample check of issue 77, item 4: each
configuration's η* as the search measured it against what the Figure 2 law predicted for it.

SUMMARY (.csv, one or more): `headlab-cli summary SESSION -o SUMMARY.csv` of the searches
(bench/sessions/oos-boundary.yaml and oos-wide.yaml, one search split in two by
bench/split_search.py, trained by bench/gpu_search.sh). PREDICTIONS (.jsonl): `headlab-cli predict --json` of each configuration,
one a line, one file per law (its "law" key: "power" where it has none, the files written before
predict said it):
  docs/data/issue77/oos-predictions.jsonl       the power law's (round 0 was placed by them)
  docs/data/issue77/oos-predictions-bent.jsonl  the bent law's (`predict --law bent`), from the
                                                Figure 2 archive alone, as the power law's
Prints a Markdown table per law (the prediction and its 95 % interval, the measured crossing and
its interval, how far apart in decades, whether the prediction interval holds the measured
crossing) and its coverage over the configurations whose search has stopped with an interval
(converged or budget spent).

  bench/oos_check.py docs/data/issue77/oos-{boundary,wide}.summary.csv docs/data/issue77/oos-predictions*.jsonl

--figure OUT (with --fitted SUMMARY.csv, the searches that fitted the law) also draws OUT.png and
OUT.svg with matplotlib (.venv/bin/python): η* against head dimension m_H, the fitted
configurations in grey, each law's prediction with its 95 % interval, and the measured crossing
with its interval (hollow while its search has not stopped; a side it left open has no bar).
docs/FINDINGS.md's figure is

  .venv/bin/python bench/oos_check.py docs/data/issue77/oos-{boundary,wide}.summary.csv \\
      docs/data/issue77/oos-predictions*.jsonl --fitted docs/data/issue53/fig2-boundary.summary.csv \\
      --figure docs/figures/issue77/oos-coverage
"""
import argparse
import csv
import json
import math
import os


def read_predictions(path):
    predictions = {}
    law = "power"
    for line in open(path):
        if not line.strip():
            continue
        p = json.loads(line)
        law = p.get("law", "power")
        head_dim, heads = p["law_axes"]["head_dim"], p["law_axes"]["heads"]
        predictions[(round(head_dim * heads), round(heads))] = p
    return law, predictions


def table(law, predictions, rows):
    print(f"\n### The {law} law\n")
    print("| d_model × heads | m_H | predicted η* [95 % interval] | beyond the fit | measured η* [interval] | "
          "state | off (decades) | held |")
    print("|---|---|---|---|---|---|---|---|")
    held = stopped = 0
    for row in rows:
        key = (int(row["d_model"]), int(row["heads"]))
        p = predictions.get(key)
        if p is None:
            continue
        measured = has_estimate(row)
        done = has_stopped(row)
        off = math.log10(float(row["estimate"]) / p["estimate"]) if measured else None
        inside = done and p["low"] <= float(row["estimate"]) <= p["high"]
        if done:
            stopped += 1
            held += inside
        interval = measured_interval(row) if done else "—"
        print(f"| {key[0]} × {key[1]} | {key[0] / key[1]:g} | {p['estimate']:.3g} [{p['low']:.3g}, "
              f"{p['high']:.3g}] | {', '.join(p['beyond']) or '—'} | {interval} | {row['state']} | "
              f"{'' if off is None else f'{off:+.2f}'} | {('yes' if inside else 'no') if done else '—'} |")
    print(f"\nHeld by the {law} law: {held} of {stopped} configurations whose search stopped with an "
          f"interval ({len(predictions)} predicted).")


def measured_interval(row):
    """The measured crossing and its interval; a side the search left open reads "(—" or "—)"."""
    low = "(—" if is_open(row, "low") else f"[{float(row['low']):.3g}"
    high = "—)" if is_open(row, "high") else f"{float(row['high']):.3g}]"
    return f"{float(row['estimate']):.3g} {low}, {high}"


def has_estimate(row):
    return row["estimate"] not in ("", "nan")


def has_stopped(row):
    return row["state"] in ("converged", "budget spent") and has_estimate(row)


def is_open(row, side):
    """Whether the search left this side ("low" or "high") of its interval open (summary's low_open,
    high_open: its bound is then the range's end, 1e-9 or 1e3, not a measurement)."""
    return row.get(f"{side}_open") == "1"


def bars(rows, estimates):
    """The error bars of measured crossings: a side the search has left open gets none."""
    return [[0 if is_open(r, "low") else v - float(r["low"]) for v, r in zip(estimates, rows)],
            [0 if is_open(r, "high") else float(r["high"]) - v for v, r in zip(estimates, rows)]]


def figure(out, laws, rows, fitted):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.2, 4.6))
    m_h = lambda row: int(row["d_model"]) / int(row["heads"])  # noqa: E731
    closed = [r for r in fitted if has_stopped(r)]
    if closed:
        x = [m_h(r) for r in closed]
        y = [float(r["estimate"]) for r in closed]
        ax.errorbar(x, y, yerr=bars(closed, y), fmt="o", ms=3.5, color="0.65", elinewidth=0.8, capsize=0,
                    label=f"fitted: Figure 2's {len(closed)} configurations")
    # Each law a little to one side of the measured point, so that the three intervals stand apart.
    styles = {"bent": ("tab:blue", "s", 0.92), "power": ("tab:orange", "D", 1.08)}
    for law, predictions in laws:
        color, marker, shift = styles.get(law, ("tab:green", "^", 1.0))
        keys = sorted(predictions, key=lambda k: k[0] / k[1])
        x = [k[0] / k[1] * shift for k in keys]
        y = [predictions[k]["estimate"] for k in keys]
        err = [[v - predictions[k]["low"] for v, k in zip(y, keys)], [predictions[k]["high"] - v for v, k in zip(y, keys)]]
        ax.errorbar(x, y, yerr=err, fmt=marker, ms=5, color=color, mfc="white", elinewidth=1.4, capsize=3,
                    label=f"predicted by the {law} law, 95 % prediction interval")
    for done in (True, False):
        chosen = [r for r in rows if has_stopped(r) == done and has_estimate(r)]
        if not chosen:
            continue
        x = [m_h(r) for r in chosen]
        y = [float(r["estimate"]) for r in chosen]
        ax.errorbar(x, y, yerr=bars(chosen, y), fmt="o", ms=6, color="black", mfc="black" if done else "white",
                    elinewidth=1.6, capsize=3,
                    label="measured out of sample, 95 % interval" + ("" if done else " (search not stopped)"))
    for r in rows:  # each label above the highest of its three intervals
        key = (int(r["d_model"]), int(r["heads"]))
        tops = [p[key]["high"] for _, p in laws if key in p]
        if r["high"] not in ("", "nan") and not is_open(r, "high"):
            tops.append(float(r["high"]))
        if tops:
            ax.annotate(f"{key[0]}×{key[1]}", (m_h(r), max(tops)), textcoords="offset points", xytext=(0, 5),
                        ha="center", fontsize=8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("head dimension m_H = d_model / heads")
    ax.set_ylabel("η* (the learning rate where half the runs learn)")
    ax.set_title("Addition: η* out of sample against the Figure 2 law's predictions")
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.grid(True, which="major", color="0.9", lw=0.6)
    ax.legend(fontsize=8, loc="lower left", frameon=False)
    fig.tight_layout()
    matplotlib.rcParams["svg.hashsalt"] = "headlab"  # the same SVG from the same data: no churn
    for ext in ("png", "svg"):
        fig.savefig(f"{out}.{ext}", dpi=150, metadata={"Date": None} if ext == "svg" else {})
    print(f"wrote {out}.png and {out}.svg")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", metavar="SUMMARY.csv|PREDICTIONS.jsonl")
    ap.add_argument("--figure", metavar="OUT", help="also draw OUT.png and OUT.svg")
    ap.add_argument("--fitted", metavar="SUMMARY.csv", help="the searches that fitted the law, for the figure")
    args = ap.parse_args()
    if len(args.inputs) < 2:
        ap.error("give the searches' summaries (.csv) and the laws' predictions (.jsonl)")
    summaries = [a for a in args.inputs if a.endswith(".csv")]
    rows = [row for path in summaries for row in csv.DictReader(open(path))]
    laws = [read_predictions(path) for path in args.inputs if path not in summaries]
    for law, predictions in laws:
        table(law, predictions, rows)
    if args.figure:
        os.makedirs(os.path.dirname(args.figure) or ".", exist_ok=True)
        fitted = list(csv.DictReader(open(args.fitted))) if args.fitted else []
        figure(args.figure, laws, rows, fitted)


if __name__ == "__main__":
    main()
