#!/usr/bin/env python3
"""compute_floor.py — the compute floor of the addition paper's full grid on this GPU.

Measures the card's FP32 and TF32 matmul rates (an 8192² square product, and the grid's batched
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


def rate(a, b, reps=20):
    for _ in range(3):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    dt = (time.perf_counter() - t0) / reps
    flops = 2 * a.shape[-2] * a.shape[-1] * b.shape[-1] * (a.shape[0] if a.dim() == 3 else 1)
    return flops / dt


def main():
    dev = torch.device("cuda")
    name = torch.cuda.get_device_name(dev)
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
