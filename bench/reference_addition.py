#!/usr/bin/env python3
"""reference_addition.py — the baseline HeadLab is measured against: the addition paper's model in
eager PyTorch (optionally under torch.compile), one run at a time, with pre-tokenized batches
already on the device. Prints one JSON line per shape: {"impl", "m", "heads", "steps_per_s", ...}.

The model follows EXPERIMENTS.md §1: 2 pre-norm layers, no biases, custom LayerNorm (unbiased
variance, eps 1e-9), per-head output projection (a zero-initialised m×m linear on the concatenated
heads), GELU MLP 4m, untied zero unembedding, loss at position 17 only. Like the paper's code it
runs the whole sequence through every layer. Attention uses F.scaled_dot_product_attention, the
fastest eager attention PyTorch offers, so the baseline is not handicapped.

With --ensemble R it trains R copies (seeds 0..R-1) as one torch.func ensemble: parameters stacked
(stack_module_state), the model called through functional_call under vmap, attention as PyTorch's
math decomposition there (the fused kernels' backward has no batching rule), Adam over the stacked
tensors (elementwise: each copy's update is its own), the losses summed. Before it is timed, each
copy's loss on one batch is checked against the model trained alone with its seed (`check_error`,
at most 1e-5 relative, else the row says so and nothing is timed). Under --compile the whole step is
compiled: mode "default" or "reduce-overhead" compile in seconds to a minute; "max-autotune" tunes
every product and took longer than the measurement (issue 24).
"""
import copy
import argparse
import json
import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state
from torch.nn.attention import SDPBackend, sdpa_kernel


def make_samples(count, pair_base):
    out = np.zeros((count, 19), dtype=np.int64)
    for s in range(count):
        p, i = s // 3 + pair_base, s % 3
        rs = np.random.RandomState(p)
        a, b = rs.randint(0, 999), rs.randint(0, 999)
        c = (a + b) // (10 ** i) % 10
        d = lambda v: 12 + v
        out[s] = [4, 7, 6, 8, d(a // 100), d(a // 10 % 10), d(a % 10), 9, d(b // 100), d(b // 10 % 10),
                  d(b % 10), 10, 6, d(i), 8, 11, 5, 7, d(c)]
    return out


class LayerNorm(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(m))
        self.shift = nn.Parameter(torch.zeros(m))

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, unbiased=True, keepdim=True)
        return (x - mean) / torch.sqrt(var + 1e-9) * self.gain + self.shift


class Block(nn.Module):
    def __init__(self, m, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = LayerNorm(m), LayerNorm(m)
        self.q, self.k, self.v = (nn.Linear(m, m, bias=False) for _ in range(3))
        self.o = nn.Linear(m, m, bias=False)
        nn.init.zeros_(self.o.weight)
        self.fc1 = nn.Linear(m, 4 * m, bias=False)
        self.fc2 = nn.Linear(4 * m, m, bias=False)
        nn.init.zeros_(self.fc2.weight)

    def forward(self, x):
        B, T, m = x.shape
        h = self.ln1(x)
        split = lambda t: t.view(B, T, self.heads, m // self.heads).transpose(1, 2)
        a = F.scaled_dot_product_attention(split(self.q(h)), split(self.k(h)), split(self.v(h)), is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(B, T, m))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Model(nn.Module):
    def __init__(self, m, heads, layers=2, vocab=22, positions=19):
        super().__init__()
        self.emb = nn.Parameter(torch.randn(vocab, m))
        self.pos = nn.Parameter(torch.randn(positions, m))
        self.blocks = nn.ModuleList(Block(m, heads) for _ in range(layers))
        self.ln = LayerNorm(m)
        self.unembed = nn.Linear(m, vocab, bias=False)
        nn.init.zeros_(self.unembed.weight)

    def forward(self, tokens):
        x = self.emb[tokens] + self.pos[: tokens.shape[1]]
        for b in self.blocks:
            x = b(x)
        return self.unembed(self.ln(x))


def compiled(step, compile_mode):
    """`step` under torch.compile(mode=compile_mode) (eager when None), compiled afresh for this
    shape: each shape starts from an empty Dynamo cache with static shapes, as in a process of its
    own. Without the reset the next shape's `step` (the same code object) recompiles with symbolic
    sizes, which the vmap ensemble cannot trace ("Cannot call numel() on tensor with symbolic
    sizes", H200, torch 2.11, 2026-11-28)."""
    if not compile_mode:
        return step
    torch._dynamo.reset()
    return torch.compile(step, mode=compile_mode, dynamic=False)


def bench(m, heads, steps, warmup, device, compile_mode, data):
    torch.manual_seed(0)
    model = Model(m, heads).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step(batch):
        logits = model(batch)
        loss = F.cross_entropy(logits[:, 17], batch[:, 18])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.detach()

    return timed(compiled(step, compile_mode), batches_of(data), steps, warmup, device)


BATCH = 64  # samples per step; main sets it from --batch (the classroom preset's answer phase: 256)


def batches_of(data):
    n = data.shape[0]
    return [data[(k * BATCH) % n:(k * BATCH) % n + BATCH] for k in range(n // BATCH)]


TIMINGS = 3  # timed passes; main sets it from --timings


def timed(fn, batches, steps, warmup, device):
    """Steps/s of the step `fn` over `steps` batches after `warmup` (which compiles, under
    torch.compile), the fastest of TIMINGS passes, and the warm-up's seconds."""
    t_compile = time.perf_counter()
    for k in range(warmup):
        fn(batches[k % len(batches)])
    if device.type == "cuda":
        torch.cuda.synchronize()
    compile_s = time.perf_counter() - t_compile
    best = float("inf")
    for _ in range(TIMINGS):  # the fastest of TIMINGS passes, as headlab-bench takes its least wall
        t0 = time.perf_counter()
        acc = torch.zeros((), device=device)
        for k in range(steps):
            acc += fn(batches[k % len(batches)])
        if device.type == "cuda":
            torch.cuda.synchronize()
        else:
            acc.item()
        best = min(best, time.perf_counter() - t0)
    return steps / best, compile_s


def ensemble_loss_fn(m, heads, runs, device):
    """The R-run ensemble's forward, its stacked parameters and the check of each copy against the
    model built alone with the same seed."""
    models = []
    for seed in range(runs):
        torch.manual_seed(seed)
        models.append(Model(m, heads).to(device))
        # The zero-initialised products would make every copy predict 0, whatever the ensemble
        # did with the rest: small weights there make the check (and the timed work) real.
        with torch.no_grad():
            for p in models[-1].parameters():
                if p.abs().sum() == 0:
                    p.normal_(0, 0.02)
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")
    batched = torch.vmap(lambda p, b, x: functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))

    def losses(batch):
        with sdpa_kernel(SDPBackend.MATH):
            logits = batched(params, buffers, batch)  # (R, B, T, V)
        return F.cross_entropy(logits[:, :, 17].reshape(-1, logits.shape[-1]),
                               batch[:, 18].repeat(runs), reduction="none").view(runs, -1).mean(1)

    def check(batch):
        with torch.no_grad():
            together = losses(batch)
            alone = torch.stack([F.cross_entropy(mod(batch)[:, 17], batch[:, 18]) for mod in models])
        return ((together - alone).abs() / alone.abs().clamp_min(1.0)).max().item()

    return losses, list(params.values()), check


def bench_ensemble(m, heads, runs, steps, warmup, device, compile_mode, data):
    losses, params, check = ensemble_loss_fn(m, heads, runs, device)
    batches = batches_of(data)
    error = check(batches[0])
    if error > 1e-5:
        return None, None, error
    opt = torch.optim.Adam(params, lr=1e-3)

    def step(batch):
        loss = losses(batch).sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.detach()

    return (*timed(compiled(step, compile_mode), batches, steps, warmup, device), error)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="24x1,96x3,384x12", help="comma list of MxHEADS")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--compile", default="", help="torch.compile mode, e.g. reduce-overhead")
    ap.add_argument("--ensemble", type=int, default=0, help="R runs as one torch.func vmap ensemble")
    ap.add_argument("--timings", type=int, default=3, help="timed passes of --steps; the fastest counts")
    ap.add_argument("--batch", type=int, default=64, help="samples per step (the paper's 64)")
    args = ap.parse_args()
    global TIMINGS, BATCH
    TIMINGS = max(1, args.timings)
    BATCH = args.batch
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    data = torch.from_numpy(make_samples(64 * 64, 0)).to(device)
    assert data[0].tolist() == [4, 7, 6, 8, 18, 20, 16, 9, 17, 17, 21, 10, 6, 12, 8, 11, 5, 7, 15]
    for shape in args.shapes.split(","):
        m, h = (int(v) for v in shape.split("x"))
        impl = "torch.compile(" + args.compile + ")" if args.compile else "eager"
        if args.ensemble:
            sps, compile_s, error = bench_ensemble(m, h, args.ensemble, args.steps, args.warmup, device,
                                                   args.compile or None, data)
            row = {"impl": "vmap " + impl, "device": str(device), "m": m, "heads": h, "runs": args.ensemble,
                   "check_error": error, "torch": torch.__version__}
            if sps is None:
                row["error"] = "an ensemble copy's loss differs from the model alone: not timed"
            else:
                row.update({"steps_per_s": round(sps, 2), "run_steps_per_s": round(sps * args.ensemble, 2),
                            "warmup_s": round(compile_s, 2)})
            print(json.dumps(row), flush=True)
            continue
        sps, compile_s = bench(m, h, args.steps, args.warmup, device, args.compile or None, data)
        print(json.dumps({"impl": impl, "device": str(device), "threads": torch.get_num_threads(), "m": m,
                          "heads": h, "batch": BATCH, "steps_per_s": round(sps, 2),
                          "warmup_s": round(compile_s, 2), "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
