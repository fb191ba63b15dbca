#!/usr/bin/env python3
"""classroom_time.py — how long a class waits for the classroom preset's message (issue 52 item 6).

Trains the `classroom` preset with headlab-cli as the app trains it on this machine's CPU (the
same SweepRunner plan: on 2 cores two runs side by side, in the sweep's order), once on an idle
machine and once beside one other busy process (a spinning Python loop), and reads from each run's
stored result when the message is on screen, and when the run that shows it has ended:

  the moment the several-heads run at the large η has left the ln 10 plateau (its test loss first
  below 5/6 ln 10, HeadLab's learned level), while the one-head run at that η has trained at least
  as long and is still on it.

A run's start is the end of the run before it on the same worker (the runner starts the next run
the moment one ends); a step's time within a run is its share of the run's wall time. Prints one
line per condition and writes them to OUT (default docs/data/issue52/classroom-time.txt).

    python3 bench/classroom_time.py [OUT]
    HEADLAB_CPU_ATTENTION=0 python3 bench/classroom_time.py OUT   (without the lanes, issue 79)
    HEADLAB_CLI  the headlab-cli (default build/app/cli/headlab-cli)
"""
import glob
import math
import multiprocessing
import os
import platform
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.environ.get("HEADLAB_CLI", os.path.join(ROOT, "build", "app", "cli", "headlab-cli"))
LEFT = 5 / 6 * math.log(10)


def spin(stop):
    while not stop.is_set():
        pass


def train(folder, extra=(), env=None):
    """Trains the preset into folder (headlab-cli run with `extra` arguments: the runner's plan
    when none; `env` added to the environment); returns its runs in the order they ended, with
    wall time."""
    out = os.path.join(folder, "classroom.yaml")
    begin = time.monotonic()
    subprocess.run([CLI, "run", "--preset", "classroom", "-o", out, *extra], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, **(env or {})})
    total = time.monotonic() - begin
    runs = []
    for path in glob.glob(os.path.join(folder, "classroom.results", "runs", "*.yaml")):
        with open(path) as f:
            doc = yaml.safe_load(f)
        test = (doc.get("curves") or {}).get("test") or {}
        runs.append({"heads": int(doc["labels"]["heads"]), "lr": float(doc["labels"]["lr"]),
                     "wall": float(doc["wall_seconds"]), "steps": int(doc["steps_done"]),
                     "test": test, "finished": os.path.getmtime(path)})
    return runs, total


def test_points(run):
    """(step, loss) pairs of a run's test curve: the run file stores {steps: [...], values: [...]}."""
    return list(zip(run["test"].get("steps", []), run["test"].get("values", [])))


def message_time(runs):
    """Seconds from the start until the message is on screen (see the module's text)."""
    # Starts: each run began when its worker's previous run ended; runs ended in `finished` order,
    # so a run's start is its end less its wall time.
    for run in runs:
        run["end"] = run["finished"]
        run["start"] = run["end"] - run["wall"]
    origin = min(r["start"] for r in runs)
    large = max(r["lr"] for r in runs)
    many = next(r for r in runs if r["lr"] == large and r["heads"] > 1)
    one = next(r for r in runs if r["lr"] == large and r["heads"] == 1)
    left_step = next((s for s, v in test_points(many) if v < LEFT), None)
    if left_step is None:
        return math.nan, many, one
    left_at = many["start"] + many["wall"] * left_step / max(1, many["steps"])
    # The one-head run must have trained at least as long by then, and be on ln 10.
    shown = max(left_at, one["start"] + (left_at - many["start"]))
    return shown - origin, many, one


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        ROOT, "docs", "data", "issue52", "classroom-time.txt")
    lines = [f"# bench/classroom_time.py on {platform.node()}, {os.cpu_count()} cores, "
             f"{time.strftime('%Y-%m-%d %H:%M')}",
             "# condition  seconds_to_message  whole_preset_seconds  "
             "one_head_large_eta_start_s  many_heads_large_eta_start_s  many_heads_large_eta_end_s"
             + "".join(f"  {k}={v}" for k, v in sorted(os.environ.items()) if k.startswith("HEADLAB_"))]
    for condition in ("idle", "one busy process"):
        stop = multiprocessing.Event()
        busy = None
        if condition != "idle":
            busy = multiprocessing.Process(target=spin, args=(stop,))
            busy.start()
        with tempfile.TemporaryDirectory() as folder:
            runs, total = train(folder)
        if busy:
            stop.set()
            busy.join()
        seconds, many, one = message_time(runs)
        origin = min(r["start"] for r in runs)
        line = (f"{condition:17s}  {seconds:6.1f}  {total:6.1f}  {one['start'] - origin:6.1f}  "
                f"{many['start'] - origin:6.1f}  {many['end'] - origin:6.1f}")
        print(line, flush=True)
        lines.append(line)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
