"""dtypes_dump.py ROOT — the column dtypes of every table the package builds, on sessions of each
kind (stored, export, a search with its report, a session without curves), as JSON. install_test.sh
runs it under the oldest pandas the package supports and under the project's, and compares."""
import json
import sys

import headlab

root = sys.argv[1]
out = {}
for f in ["tests/session/fixtures/v2-addition.yaml", "tests/session/fixtures/v2-nn.export.yaml",
          "tests/session/fixtures/v2-text.yaml", "docs/data/issue27/fig4-boundary.export.yaml.gz"]:
    s = headlab.open(f"{root}/{f}")
    report = s.search()
    tables = {"runs": s.runs(), "runs(index=True)": s.runs(index=True).reset_index(),
              "curves": s.curves(), "head_stats": s.head_stats()}
    if report is not None:
        tables["search().configurations"] = report.configurations
        tables["search().law.coefficients"] = report.law.coefficients
    for name, frame in tables.items():
        out[f"{f}: {name}"] = {c: str(t) for c, t in frame.dtypes.items()}
json.dump(out, sys.stdout, indent=1, sort_keys=True)
