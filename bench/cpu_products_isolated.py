"""cpu_products_isolated.py — each matrix product of a wide addition step, timed alone on the CPU.

Beside `headlab-bench single --profile 1 --products 1` (each product's rate inside HeadLab's
training step, cpu-product rows), this times the same shapes one at a time, in a loop, with the
same BLAS (the torch wheel's MKL) on the same cores: what the product costs without the step
around it. The gap between the two is the step's doing, not the shape's (docs/PERFORMANCE.md, the
CPU section; issue 79).

    taskset -c 0,1 .venv/bin/python bench/cpu_products_isolated.py --threads 2 \\
        --profile docs/data/issue79/cpu-wide-products-2core-2026-12-05.jsonl > OUT.jsonl

--profile: the headlab-bench output whose cpu-product rows name the shapes (aten::bmm A B [OUT]).
Prints one JSON line per shape: its inside-the-step rate from the profile and its rate alone.
"""
import argparse
import json
import time

import torch


def best_ms(f, calls=30, repeats=5):
    f()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best * 1e3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--profile", required=True)
    p.add_argument("--top", type=int, default=8, help="the products of most time in each shape's step")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    rows = [json.loads(line) for line in open(a.profile) if '"cpu-product"' in line]
    by_step = {}
    for r in rows:
        if r["op"].startswith("aten::bmm ") and r["calls_per_step"] >= 1:
            by_step.setdefault((r["m"], r["heads"]), []).append(r)
    for (m, heads), products in by_step.items():
        for r in sorted(products, key=lambda r: -r["ms_per_step"])[: a.top]:
            shapes = [tuple(int(d) for d in s.split("x")) for s in r["op"].split()[1:3]]
            x, w = torch.randn(*shapes[0]), torch.randn(*shapes[1]) * 0.05
            ms = best_ms(lambda: torch.bmm(x, w))
            flop = 2 * shapes[0][0] * shapes[0][1] * shapes[0][2] * shapes[1][2]
            print(json.dumps({"impl": "bmm-alone", "threads": a.threads, "m": m, "heads": heads, "op": r["op"],
                              "gflops_in_step": r["gflops"], "peak_share_in_step": r["peak_share"],
                              "gflops_alone": round(flop / ms / 1e6, 1),
                              "peak_share_alone": round(flop / ms / 1e6 / (r["gflops"] / r["peak_share"]), 3)}))


if __name__ == "__main__":
    main()
