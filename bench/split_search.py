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
import gzip
import subprocess
import sys
from pathlib import Path

import yaml


def matches(labels: dict, wanted: dict) -> bool:
    return all(str(labels.get(k)) == v for k, v in wanted.items())


def part(session: dict, wanted: dict, keep: bool) -> dict:
    out = {k: v for k, v in session.items() if k != "search_report"}
    pick = lambda labels: matches(labels, wanted) == keep
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
    text = subprocess.run([cli, "summary", str(path)], check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in text.splitlines():
        fields = line.split()
        if fields and "=" in fields[0] and not line.startswith(("law", "width", "check", "learned")):
            key = " ".join(f for f in fields if "=" in f and not f.startswith("("))
            rows[key] = line[len(key):].split()[:4]
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("session")
    parser.add_argument("--match", action="append", required=True, help="AXIS=VALUE (repeatable: all must hold)")
    parser.add_argument("matched")
    parser.add_argument("rest")
    parser.add_argument("--cli", default=str(Path(__file__).resolve().parent.parent / "build-core/app/cli/headlab-cli"))
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
