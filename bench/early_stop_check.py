#!/usr/bin/env python3
"""early_stop_check.py — issue 53, item 5: rules that stop an addition run once its outcome is
decided, measured on this repository's archived full-protocol runs before any is used.

    .venv/bin/python bench/early_stop_check.py [OUT.txt]

Two kinds of rule, each evaluated on every finished run that has a verdict (learned = left the
ln 10 plateau: final test loss below 5/6 ln 10, the sessions' rule):

- stay(S): at step S the run sits on the ln 10 plateau (entered it, not yet left: the run's
  plateau_3_entered / plateau_3_left metrics, PlateauDetector's 4 % band): stop it and call it
  "not learned". A false stop is a run so stopped that learned by the end.
- learned(N): the test loss has been below 5/6 ln 10 at every evaluation of the last N steps:
  stop it and call it "learned". A false stop is a run so stopped that ended not learned. Needs
  the test curve, which only the Figure 2 grid keeps (the searches' exports leave curves out).

For each rule: runs it stops, false stops, and the share of the archive's training steps it saves
(steps after the stop, over all steps the runs trained). A rule is safe here only with no false
stop on every archive. The archives: the 178-run Figure 4 search (issue 27), the 359-run
stabilizer search (issue 23), the Figure 2 campaign so far (issue 53) and the 75-run Figure 2 grid
with three seeds (every curve).
"""
import math
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
import headlab  # noqa: E402

ARCHIVES = [
    ("Figure 4 search (issue 27)", "docs/data/issue27/fig4-boundary.export.yaml.gz"),
    ("stabilizer search (issue 23)", "docs/data/issue23/boundary.export.yaml.gz"),
    ("Figure 2 campaign so far (issue 53)", "docs/data/issue53/fig2-boundary.export.yaml.gz"),
    ("Figure 2 grid, 3 seeds (75 runs)", "docs/data/addition-fig2-grid-seeds-h100.yaml"),
]
LEARNED_LEVEL = 5.0 / 6.0 * math.log(10.0)
STAY_AT = [2500, 5000, 10000, 15000, 20000, 25000]
LEARNED_FOR = [0, 500, 1000, 2000, 5000]


def finished_with_verdict(runs):
    keep = (runs["status"] == "done") & runs["left_ln10_plateau"].notna()
    return runs[keep]


def stay_rule(runs, step):
    stopped = false = saved = 0
    for _, r in runs.iterrows():
        entered, left = r["plateau_3_entered"], r["plateau_3_left"]
        on_plateau = 0 <= entered <= step and (left < 0 or left > step)
        if on_plateau and step < r["steps_done"]:
            stopped += 1
            false += int(r["left_ln10_plateau"] == 1)
            saved += r["steps_done"] - step
    return stopped, false, saved


def learned_rule(runs, curves, window):
    stopped = false = saved = 0
    for _, r in runs.iterrows():
        test = curves[(curves["run"] == r["run"]) & (curves["metric"] == "test")].sort_values("step")
        steps, values = test["step"].to_numpy(), test["value"].to_numpy()
        below_since = None
        for step, value in zip(steps, values):
            if value < LEARNED_LEVEL:
                below_since = step if below_since is None else below_since
                if step - below_since >= window:
                    if step < r["steps_done"]:
                        stopped += 1
                        false += int(r["left_ln10_plateau"] == 0)
                        saved += r["steps_done"] - step
                    break
            else:
                below_since = None
    return stopped, false, saved


def main():
    out = []
    say = out.append
    say("Early stopping of decided runs, measured on the archives (bench/early_stop_check.py)")
    totals = {}
    for name, path in ARCHIVES:
        full = os.path.join(ROOT, path)
        if not os.path.exists(full):
            say(f"\n{name}: {path} missing, left out")
            continue
        session = headlab.open(full)
        runs = finished_with_verdict(session.runs())
        steps = float(runs["steps_done"].sum())
        learned = int((runs["left_ln10_plateau"] == 1).sum())
        say(f"\n{name}: {len(runs)} finished runs ({learned} learned), {steps:.4g} steps ({path})")
        say("  rule            stopped  false stops  steps saved")
        for s in STAY_AT:
            stopped, false, saved = stay_rule(runs, s)
            totals.setdefault(f"stay({s})", [0, 0, 0.0, 0.0])
            t = totals[f"stay({s})"]
            t[0] += stopped; t[1] += false; t[2] += saved; t[3] += steps
            say(f"  stay({s:>5})     {stopped:>7}  {false:>11}  {100 * saved / steps:10.1f} %")
        if session.runs()["run"].size and "test" in set(session.curves()["metric"].astype(str)):
            curves = session.curves()
            for n in LEARNED_FOR:
                stopped, false, saved = learned_rule(runs, curves, n)
                say(f"  learned({n:>4})   {stopped:>7}  {false:>11}  {100 * saved / steps:10.1f} %")
        else:
            say("  learned(N): no curves in this archive")
    say("\nAll archives together (stay rules):")
    for rule, (stopped, false, saved, steps) in totals.items():
        say(f"  {rule:<14} stopped {stopped:>4}, false stops {false:>3}, saves {100 * saved / steps:5.1f} %"
            f"{'' if false else '  (no false stop)'}")
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
