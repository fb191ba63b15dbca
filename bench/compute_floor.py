#!/usr/bin/env python3
"""compute_floor.py — the compute floor of a task's work on this GPU.

  compute_floor.py                 the addition paper's full grid (below)
  compute_floor.py --task nn       nearest neighbour: a run-step at layers {1,3,5} × w {1,8,64}, and
                                   the nn-fig1-full sweep (63 runs × 100,000 steps)
  compute_floor.py --task text     the head-progression preset's run-step (d 256, 4 layers, T 128)
  compute_floor.py --task addition-single
                                   one answer-only addition run's step at each shape of the grid
                                   (m × n_H: 24 × 1 … 384 × 12, batch 64), as bench/gpu_bench.sh
                                   single times it

For nn, text and addition-single every matrix product of a training step (forward, and the two products of each in
the backward pass) is listed with its shape, batched over an ensemble of --runs runs as HeadLab
computes it, each distinct shape is timed on the card in FP32 and in TF32, and the floor of a step
is the sum of FLOPs / measured rate over its products: the time the products alone would take.

Addition: measures the card's FP32 and TF32 matmul rates (an 8192² square product, and the grid's batched
products at m = 384: 50 × [1216×384]·[384×1536]), counts the matmul FLOPs of the grid as HeadLab
computes it (answer-only training runs layer 2's queries, MLP and unembedding at one position),
and prints the floor = FLOPs / rate as JSON lines.
"""
import json
import time

import torch

WIDTHS = [24, 48, 96, 192, 384]
HEADS = 5          # head counts per width
LRS = 10           # learning rates per configuration
T = 18             # positions fed to the model (the answer token is never an input)
V = 22


def fwd_flops_answer(m):
    """Matmul FLOPs of one answer-only forward sample."""
    layer1 = T * (24 * m * m + 4 * T * m)                 # QKV, O, MLP and attention at every position
    layer2 = T * 4 * m * m + 20 * m * m + 4 * T * m       # K, V everywhere; Q, O, MLP at one position
    return layer1 + layer2 + 2 * m * V


def fwd_flops_next_token(m):
    return T * (2 * (24 * m * m + 4 * T * m) + 2 * m * V)


def grid_flops():
    total = 0
    for m in WIDTHS:
        per_run = 3 * (30000 * 64 * fwd_flops_answer(m) + 500 * 32 * fwd_flops_next_token(m))
        total += HEADS * LRS * per_run
    return total


def sync(t):
    if t.is_cuda:
        torch.cuda.synchronize()


def rate(a, b, reps=20):
    for _ in range(3):
        torch.matmul(a, b)
    sync(a)
    t0 = time.perf_counter()
    for _ in range(reps):
        torch.matmul(a, b)
    sync(a)
    dt = (time.perf_counter() - t0) / reps
    flops = 2 * a.shape[-2] * a.shape[-1] * b.shape[-1] * (a.shape[0] if a.dim() == 3 else 1)
    return flops / dt


def products_nn(layers, w, runs, batch=256, points=16, d=64, ffn=2048):
    """(batch count, M, K, N, times) of every forward product of one nn step of `runs` runs."""
    n = batch * points
    inner = w * d  # w modules of H heads of d / H: H·m_H = d each
    per_layer = [(runs, n, d, 3 * inner, 1), (runs, n, inner, d, 1), (runs, n, d, ffn, 1), (runs, n, ffn, d, 1)]
    # attention per head: scores (T × m_H)(m_H × T) and (T × T)(T × m_H); counted at rank 64 (1 head),
    # the largest; lower ranks have the same FLOPs in more, smaller products.
    per_layer += [(runs * batch * w, points, d, points, 1), (runs * batch * w, points, points, d, 1)]
    return per_layer * layers


def products_text(schedule=(4, 4, 4, 4), runs=2, batch=64, T=128, d=256, vocab=256):
    n = batch * T
    out = [(runs, n, vocab, d, 1), (runs, n, d, vocab, 1)]  # one-hot embedding product, unembedding
    for h in schedule:
        hd = d // h
        out += [(runs, n, d, 3 * d, 1), (runs, n, d, d, 1), (runs, n, d, 4 * d, 1), (runs, n, 4 * d, d, 1),
                (runs * batch * h, T, hd, T, 1), (runs * batch * h, T, T, hd, 1)]
    return out


def products_addition(m, heads, runs=1, batch=64):
    """The forward products of one answer-only step of the addition model (two layers, width m,
    FFN 4m, T input positions): layer 1 everywhere; layer 2's keys and values everywhere, its query,
    output, MLP and attention at the one answer position; the unembedding there. Their FLOPs are
    fwd_flops_answer(m) a sample."""
    n, hd = batch * T, m // heads
    return [(runs, n, m, 3 * m, 1), (runs, n, m, m, 1), (runs, n, m, 4 * m, 1), (runs, n, 4 * m, m, 1),
            (runs * batch * heads, T, hd, T, 1), (runs * batch * heads, T, T, hd, 1),
            (runs, n, m, 2 * m, 1), (runs, batch, m, m, 1), (runs, batch, m, m, 1), (runs, batch, m, 4 * m, 1),
            (runs, batch, 4 * m, m, 1), (runs * batch * heads, 1, hd, T, 1), (runs * batch * heads, 1, T, hd, 1),
            (runs, batch, m, V, 1)]


_rates = {}


def product_rate(b, M, K, N, dev):
    """FLOP/s of a (b, M, K)·(b, K, N) product on this card (cached per shape and TF32 setting)."""
    key = (b, M, K, N, torch.backends.cuda.matmul.allow_tf32)
    if key not in _rates:
        reps = max(3, min(200, int(2e11 / max(1, 2 * b * M * K * N))))
        _rates[key] = rate(torch.randn(b, M, K, device=dev), torch.randn(b, K, N, device=dev), reps=reps)
    return _rates[key]


def step_floor(products, dev):
    """(FLOPs, seconds) of a training step: each forward product and its two backward products
    (dX = dY·Wᵀ, (M, N)·(N, K); dW = Xᵀ·dY, (K, M)·(M, N))."""
    flops = seconds = 0.0
    for b, M, K, N, times in products:
        for shape in ((b, M, K, N), (b, M, N, K), (b, K, M, N)):
            f = 2.0 * b * M * K * N * times
            flops += f
            seconds += f / product_rate(*shape, dev)
    return flops, seconds


def main_nn(dev, name, runs):
    for tf32 in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        sweep_s, sweep_flops = 0.0, 0.0
        for layers in (1, 3, 5):
            for w in (1, 8, 64):
                flops, secs = step_floor(products_nn(layers, w, runs), dev)
                # nn-fig1-full: 7 ranks at each (layers, w), 100,000 steps each, in ensembles of `runs`
                sweep_s += 7 * 100000 * secs / runs
                sweep_flops += 7 * 100000 * flops / runs
                print(json.dumps({"floor": "tf32" if tf32 else "fp32", "task": "nn", "gpu": name, "layers": layers, "w": w,
                                  "runs": runs, "gflop_per_run_step": round(flops / runs / 1e9, 4),
                                  "floor_run_steps_per_s": round(runs / secs, 1),
                                  "rate_tflops": round(flops / secs / 1e12, 2)}), flush=True)
        print(json.dumps({"floor": "tf32" if tf32 else "fp32", "task": "nn", "gpu": name, "sweep": "nn-fig1-full",
                          "pflop": round(sweep_flops / 1e15, 1), "floor_minutes": round(sweep_s / 60, 1)}), flush=True)


def main_text(dev, name, runs, schedules):
    for tf32 in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        total_flops = total_s = 0.0
        for schedule in schedules:
            flops, secs = step_floor(products_text(schedule, runs), dev)
            total_flops += flops
            total_s += secs
            print(json.dumps({"floor": "tf32" if tf32 else "fp32", "task": "text", "gpu": name,
                              "heads": ",".join(map(str, schedule)), "runs": runs,
                              "gflop_per_run_step": round(flops / runs / 1e9, 3),
                              "floor_run_steps_per_s": round(runs / secs, 1)}), flush=True)
        print(json.dumps({"floor": "tf32" if tf32 else "fp32", "task": "text", "gpu": name, "heads": "all",
                          "runs": runs * len(schedules), "floor_run_steps_per_s": round(runs * len(schedules) / total_s, 1),
                          "rate_tflops": round(total_flops / total_s / 1e12, 2)}), flush=True)


def main_addition_single(dev, name, shapes):
    for tf32 in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        for m, heads in shapes:
            flops, secs = step_floor(products_addition(m, heads), dev)
            print(json.dumps({"floor": "tf32" if tf32 else "fp32", "task": "addition", "gpu": name, "m": m,
                              "heads": heads, "runs": 1, "gflop_per_run_step": round(flops / 1e9, 4),
                              "floor_run_steps_per_s": round(1 / secs, 1),
                              "rate_tflops": round(flops / secs / 1e12, 2)}), flush=True)


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="addition", choices=["addition", "addition-single", "nn", "text"])
    ap.add_argument("--shapes", default="24x1,24x12,48x2,96x3,192x6,384x1,384x12",
                    help="addition-single: MxHEADS, ',' between")
    ap.add_argument("--runs", type=int, default=0, help="ensemble size (nn default 8, text 2: the preset's seeds)")
    ap.add_argument("--schedules", default="1,2,4,8;4,4,4,4;8,4,2,1", help="text: heads per layer, ';' between")
    ap.add_argument("--device", default="cuda", help="cuda (the floor), or cpu to try the script")
    args = ap.parse_args()
    dev = torch.device(args.device)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    if args.task == "nn":
        return main_nn(dev, name, args.runs or 8)
    if args.task == "text":
        return main_text(dev, name, args.runs or 2,
                         [tuple(int(h) for h in s.split(",")) for s in args.schedules.split(";")])
    if args.task == "addition-single":
        return main_addition_single(dev, name, [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")])
    main_addition(dev, name)


def main_addition(dev, name):
    flops = grid_flops()
    for tf32 in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        sq = rate(torch.randn(8192, 8192, device=dev), torch.randn(8192, 8192, device=dev), reps=10)
        batched = rate(torch.randn(50, 1216, 384, device=dev), torch.randn(50, 384, 1536, device=dev), reps=50)
        print(json.dumps({"floor": "tf32" if tf32 else "fp32", "gpu": name,
                          "square_8192_tflops": round(sq / 1e12, 1), "batched_grid_tflops": round(batched / 1e12, 1),
                          "grid_tflop": round(flops / 1e12, 1), "floor_minutes": round(flops / batched / 60, 2)}), flush=True)


if __name__ == "__main__":
    main()
