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
"""
import csv
import json
import math
import sys


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
        measured = row["estimate"] not in ("", "nan")
        done = row["state"] in ("converged", "budget spent") and measured
        off = math.log10(float(row["estimate"]) / p["estimate"]) if measured else None
        inside = done and p["low"] <= float(row["estimate"]) <= p["high"]
        if done:
            stopped += 1
            held += inside
        interval = (f"{float(row['estimate']):.3g} [{float(row['low']):.3g}, {float(row['high']):.3g}]"
                    if done else "—")
        print(f"| {key[0]} × {key[1]} | {key[0] / key[1]:g} | {p['estimate']:.3g} [{p['low']:.3g}, "
              f"{p['high']:.3g}] | {', '.join(p['beyond']) or '—'} | {interval} | {row['state']} | "
              f"{'' if off is None else f'{off:+.2f}'} | {('yes' if inside else 'no') if done else '—'} |")
    print(f"\nHeld by the {law} law: {held} of {stopped} configurations whose search stopped with an "
          f"interval ({len(predictions)} predicted).")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    summaries = [a for a in sys.argv[1:] if a.endswith(".csv")]
    rows = [row for path in summaries for row in csv.DictReader(open(path))]
    for path in sys.argv[1:]:
        if path not in summaries:
            table(*read_predictions(path), rows)


if __name__ == "__main__":
    main()
