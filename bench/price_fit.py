#!/usr/bin/env python3
"""price_fit.py — issue 72, item 2: refits the scheduler's price of one ensemble step
(ensembleWork, core/train/SweepRunner.cpp; the score constants in core/attention/AttentionPlan.cpp)
to steps measured alone on one card by bench/price_fit.sh.

    python3 bench/price_fit.py DIR [--check]     # needs scipy, which HeadLab's .venv leaves out

DIR holds price_fit.sh's price.jsonl and plan.jsonl. Each measured ensemble is priced again by the
headlab-bench this script finds (HEADLAB_BENCH, else build-core/ or build/): its step's products and
its attention scores counted by path (`headlab-bench price`, the "step" object), so the model is
stated once, in the C++, and this script only weighs its counts. The fit:

    seconds per step = (F^p + W^p)^(1/p) / R,
    W = products + mix + c_micro·micro_heads + c_narrow·sdpa_narrow + c_fused·sdpa_fused
        + c_run·sdpa_runs + 1000·(sdpa_long + explicit)

a smooth maximum of the per-step floor F and the step's work W (the host's launches and the
card's work overlap: a step takes about the longer of the two), in FLOP-equivalents at the rate R.
F, R, p and the four score constants are fitted to every measured row by least squares on the
logarithm. Prints the constants and each row's price over its measured time: the price the
measurement ran under (its "work"), the build's, and the fit's, each up to one rate; --check exits 1 unless the build's price already is the fit's
(each row within 1 % of the fitted price's ratio): run it after the constants are written in.
Writes DIR/fit.json.
"""
import argparse
import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
from scipy.optimize import least_squares

from multi4_balance import bench_binary  # the headlab-bench this script prices with

ROOT = pathlib.Path(__file__).resolve().parent.parent

def priced(source, layers, w, heads, steps, d_model=0, forced=None):
    """The build's `headlab-bench price` line of one ensemble (source: a preset's name or a
    session file)."""
    env = dict(os.environ)
    env.pop("HEADLAB_ATTENTION", None)
    if forced:
        env["HEADLAB_ATTENTION"] = forced
    where = ["--session", source] if source.endswith(".yaml") else ["--preset", source]
    out = subprocess.run([bench_binary(), "price", *where, "--layers", str(layers),
                          "--d-model", str(d_model), "--steps", str(steps),
                          "--ensembles", f"{w}:{heads}"],
                         env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.splitlines()[-1])


def rows(directory, sessions):
    """(label, measured seconds per step, the build's step, the price the measurement ran under
    over its measured seconds) of every measured ensemble."""
    out = []
    for line in open(directory / "price.jsonl"):
        r = json.loads(line)
        if r.get("price") != "ensemble" or not r.get("measured_s_per_step"):
            continue
        p = priced(r["preset"], r["layers"], r["w"], r["heads"], r["steps"], forced=r.get("forced"))
        label = f"nn w {r['w']} ({r['heads']}){', sdpa forced' if r.get('forced') else ''}, {p['path']}"
        then = r["work"] / (r["measured_s_per_step"] * r["steps"])
        out.append((label, r["measured_s_per_step"], p["step"], then))
    session = None
    for line in open(directory / "plan.jsonl"):
        r = json.loads(line)
        if r.get("plan") == "summary":
            session = None
        if r.get("plan") != "ensemble" or not r.get("measured_s_per_step"):
            continue
        source = sessions["addition" if r["task"] == "addition" else "nn5"]
        p = priced(str(source), r["layers"], r["w"], r["heads"], r["steps"], d_model=r["d_model"])
        label = f"{r['task']} d {r['d_model']} w {r['w']} ({r['heads']})"
        out.append((label, r["measured_s_per_step"], p["step"], r["work"] / r["measured_s"]))
    return out


def work(step, c_micro, c_narrow, c_fused, c_run):
    return (step["products"] + step["mix"] + c_micro * step["micro_heads"]
            + c_narrow * step["sdpa_narrow"] + c_fused * step["sdpa_fused"]
            + c_run * step["sdpa_runs"]
            + 1000.0 * (step["sdpa_long"] + step["explicit"]))


def seconds(step, x):
    log_floor, log_rate, p, c_micro, c_narrow, c_fused, c_run = x
    W = work(step, c_micro, c_narrow, c_fused, c_run)
    F = math.exp(log_floor)
    top = max(F, W)
    return top * ((F / top) ** p + (W / top) ** p) ** (1 / p) / math.exp(log_rate)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir", type=pathlib.Path)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["bash", str(ROOT / "bench" / "multi4_sessions.sh"), tmp], check=True,
                       env={**os.environ, "STEPS_ADD": "3000", "STEPS_NN": "700"})
        data = rows(args.dir, {"addition": pathlib.Path(tmp) / "addition.yaml",
                               "nn5": pathlib.Path(tmp) / "nn5.yaml"})
    measured = np.array([m for _, m, _, _ in data])

    def residuals(x):
        return np.array([math.log(seconds(s, x) / m) for _, m, s, _ in data])

    start = [math.log(2e10), math.log(22e12), 4.0, 1000.0, 1000.0, 5100.0, 1000.0]
    fit = least_squares(residuals, start,
                        bounds=([math.log(1e8), math.log(1e11), 1.0, 0, 0, 0, 0],
                                [math.log(1e12), math.log(1e15), 16.0, 1e5, 1e5, 1e5, 1e7]))
    x = fit.x
    # Each price up to one rate: its ratios to measured, scaled to a geometric mean of 1.
    def unit(ratios):
        ratios = np.array(ratios)
        return ratios / math.exp(np.mean(np.log(ratios)))

    then = unit([t for _, _, _, t in data])
    build = unit([s["price"] for _, _, s, _ in data] / measured)
    after = np.array([seconds(s, x) for _, _, s, _ in data]) / measured
    result = {
        "rows": len(data),
        "floor_work": math.exp(x[0]), "rate_flop_eq_per_s": math.exp(x[1]),
        "floor_ms": math.exp(x[0]) / math.exp(x[1]) * 1e3, "sharpness": x[2],
        "micro_score_work": x[3], "narrow_sdpa_score_work": x[4], "fused_score_work": x[5], "sdpa_run_work": x[6],
        "rms_log_error_fit": float(np.sqrt(np.mean(np.log(after) ** 2))),
        "rms_log_error_build": float(np.sqrt(np.mean(np.log(build) ** 2))),
        "rms_log_error_then": float(np.sqrt(np.mean(np.log(then) ** 2))),
    }
    print("| ensemble | measured ms/step | price then ÷ measured | the build's ÷ measured "
          "| the fit's ÷ measured |")
    print("|---|---|---|---|---|")
    for (label, m, _, _), t, b, a in zip(data, then, build, after):
        print(f"| {label} | {m * 1e3:.2f} | {t:.2f} | {b:.2f} | {a:.2f} |")
    print(json.dumps(result, indent=1))
    (args.dir / "fit.json").write_text(json.dumps(result, indent=1) + "\n")
    if args.check:
        off = [abs(b / a - 1) for b, a in zip(build, after)]
        if max(off) > 0.01:
            print(f"price_fit.py: the build's price is not the fit's (a row {max(off):.1%} off)")
            sys.exit(1)


if __name__ == "__main__":
    main()
