#!/usr/bin/env python3
"""split_search.py — one boundary search's session split in two by its configurations, so that
cheap configurations go on without waiting for expensive ones (a search plans its next round when
every run of the last has a result; issue 77's 512-wide out-of-sample runs held back the others).

    python3 bench/split_search.py EXPORT.yaml[.gz] --match d_model=512 MATCHED.yaml REST.yaml

Each output keeps the session as it is (experiment, search settings, learned rule) with only its
configurations: the sweep's combinations, the search's start intervals and probes, and the runs
whose labels match (MATCHED) or do not (REST). The cached search report is left out; HeadLab
recomputes it. `headlab-cli summary` of the two gives the rows of the one, configuration by
configuration (checked here)."""
import argparse
import csv
import gzip
import itertools
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml


def matches(labels: dict, wanted: dict) -> bool:
    return all(str(labels.get(k)) == v for k, v in wanted.items())


def part(session: dict, wanted: dict, keep: bool) -> dict:
    out = {k: v for k, v in session.items() if k != "search_report"}
    def pick(labels: dict) -> bool:
        return matches(labels, wanted) == keep

    out["sweep"] = dict(session["sweep"])
    out["sweep"]["combinations"] = [c for c in session["sweep"]["combinations"] if pick(c)]
    search = dict(session["search"])
    for key in ("start", "probes"):
        if key in search:
            search[key] = [entry for entry in search[key] if pick(entry["at"])]
    out["search"] = search
    out["runs"] = [run for run in session.get("runs") or [] if pick(run["labels"])]
    return out


def summary_rows(cli: str, path: Path) -> dict:
    """`headlab-cli summary -o CSV` of a session: its rows by configuration (their labels)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "summary.csv"
        subprocess.run([cli, "summary", str(path), "-o", str(out)], check=True, capture_output=True)
        rows = list(csv.DictReader(out.open()))
    # A row is its configuration's labels, then its statistics from `runs` on.
    return {tuple(itertools.takewhile(lambda kv: kv[0] != "runs", row.items())): row for row in rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("session")
    parser.add_argument("--match", action="append", required=True, help="AXIS=VALUE (repeatable: all must hold)")
    parser.add_argument("matched")
    parser.add_argument("rest")
    root = Path(__file__).resolve().parent.parent
    built = [root / d / "app/cli/headlab-cli" for d in ("build", "build-core")]
    parser.add_argument("--cli", default=str(next((p for p in built if p.exists()), built[0])),
                        help="headlab-cli for the check (default: the build's)")
    args = parser.parse_args()
    wanted = dict(m.split("=", 1) for m in args.match)
    opener = gzip.open if args.session.endswith(".gz") else open
    with opener(args.session, "rt") as f:
        session = yaml.safe_load(f)
    for path, keep, suffix in ((args.matched, True, "matched"), (args.rest, False, "rest")):
        out = part(session, wanted, keep)
        out["name"] = Path(path).stem
        with open(path, "w") as f:
            yaml.safe_dump(out, f, sort_keys=False, allow_unicode=True, width=120)
        print(f"{path}: {len(out['sweep']['combinations'])} configurations, {len(out['runs'])} runs ({suffix})")
    if Path(args.cli).exists():
        whole = Path(args.matched).with_suffix(".whole.yaml")
        with open(whole, "w") as f:
            yaml.safe_dump(session, f, sort_keys=False, allow_unicode=True, width=120)
        before = summary_rows(args.cli, whole)
        after = {**summary_rows(args.cli, Path(args.matched)), **summary_rows(args.cli, Path(args.rest))}
        whole.unlink()
        if before != after:
            print(f"split_search.py: the parts' summaries differ from the whole's:\n{before}\n{after}", file=sys.stderr)
            return 1
        print(f"the parts' {len(after)} configurations summarise as the whole's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
