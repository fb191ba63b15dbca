#!/usr/bin/env python3
"""reference_nn.py — the peer HeadLab's nearest-neighbour task is measured against: the model of
EXPERIMENTS.md §2 written with PyTorch's own modules, in eager PyTorch or under torch.compile, as one
run or as a torch.func (vmap) ensemble of runs. Prints one JSON line per measurement.

Model: a stack of nn.TransformerEncoderLayer (post-norm, dropout 0, ReLU FFN d → ffn → d, biases)
whose two norms are replaced by the unit-scale norm s · x / ||x|| (one learned scalar, no epsilon),
and whose self-attention is w nn.MultiheadAttention modules averaged when w > 1 (each a full module
with its own output projection and biases). Points are the tokens; no embedding. Every weight keeps
PyTorch's default initialisation. Loss: mean squared error times d. AdamW (β 0.9, 0.95, no weight
decay). Data: fresh standard normal points on the unit sphere each step, made on the device (the
paper's code made them in CPU loader workers; making them on the device only helps the peer).

Modes:
  speed      steps/s of the training step (no schedule), for --layers × --w at --heads.
             impl eager | compile (one run), vmap | vmap-compile (an ensemble of --runs runs).
  train      the full protocol (lr warmed up from 0 over 5% of the epochs, cosine to 0, stepped
             once per 100-step epoch) for --steps steps, every seed of --seeds at once as one vmap
             ensemble; prints each seed's lowest epoch-mean loss, its epoch means every
             --report epochs, and the final norm scales. With --state FILE it stops at an epoch's end
             on SIGTERM, after --budget seconds or --max-epochs epochs, saves what it needs to go on
             in FILE and exits with status 3; run again with the same FILE, it goes on from there and
             ends as if never stopped (the same parameters, AdamW state and data).
"""
import argparse
import copy
import json
import math
import os
import signal
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state
from torch.nn.attention import SDPBackend, sdpa_kernel


class UnitNorm(nn.Module):
    """s · x / ||x||, one learned scalar s starting at 1, no epsilon."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return self.scale * x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)


class ParallelAttention(nn.Module):
    """w full nn.MultiheadAttention modules whose outputs are averaged (the width multiplier)."""

    def __init__(self, d, heads, w):
        super().__init__()
        self.batch_first = True
        self.modules_ = nn.ModuleList(nn.MultiheadAttention(d, heads, dropout=0.0, bias=True, batch_first=True)
                                      for _ in range(w))

    def forward(self, q, k, v, attn_mask=None, key_padding_mask=None, need_weights=False, is_causal=False):
        outs = [m(q, k, v, need_weights=False)[0] for m in self.modules_]
        return torch.stack(outs).mean(0), None


def make_model(d, heads, layers, w, ffn):
    stack = []
    for _ in range(layers):
        layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=ffn, dropout=0.0, activation="relu",
                                           batch_first=True, norm_first=False)
        layer.norm1, layer.norm2 = UnitNorm(), UnitNorm()
        if w > 1:
            layer.self_attn = ParallelAttention(d, heads, w)
        stack.append(layer)
    return nn.Sequential(*stack)


def batch(shape, d, generator, device):
    """Points (…, N, d) on the unit sphere and, at each position, the point with the smallest
    inner product with it."""
    x = torch.randn(*shape, d, device=device, generator=generator)
    x = x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)
    nearest = (x @ x.transpose(-1, -2)).argmin(-1)
    return x, torch.gather(x, -2, nearest.unsqueeze(-1).expand_as(x))


def loss_of(out, target, d):
    return ((out - target) ** 2).mean(dim=(-1, -2, -3)) * d  # per run when there is a run axis


def multiplier(epoch, epochs, warmup_fraction=0.05):
    """The schedule per epoch: epoch/W for epoch < W = round(0.05·E), then cosine to 0 (HeadLab's
    warmup_cosine with step_every 100, core/train/Trainer.cpp)."""
    warmup = math.floor(warmup_fraction * epochs + 0.5)  # rounds half up, as llround does
    if epoch < warmup:
        return epoch / max(1, warmup)
    return 0.5 * (1 + math.cos(math.pi * (epoch - warmup) / max(1, epochs - warmup)))


class Ensemble:
    """R copies of the model (seeded seed_r) as stacked parameters, called through vmap."""

    def __init__(self, seeds, make, device):
        models = []
        for s in seeds:
            torch.manual_seed(s)
            models.append(make().to(device))
        self.params, self.buffers = stack_module_state(models)
        base = copy.deepcopy(models[0]).to("meta")

        def one(p, b, x):
            return functional_call(base, (p, b), (x,))

        batched = torch.vmap(one, in_dims=(0, 0, 0))

        def forward(x):
            # The fused attention kernels' backward rejects vmap's batched layout ("LSE is not
            # correctly aligned"); under vmap attention runs as PyTorch's math decomposition.
            with sdpa_kernel(SDPBackend.MATH):
                return batched(self.params, self.buffers, x)

        self.forward = forward

    def parameters(self):
        return list(self.params.values())


def make_step(model_call, params, d, lr, compile_mode, whole=True):
    """The training step; under torch.compile the whole step (whole) or only the model."""
    opt = torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.95), weight_decay=0.0, eps=1e-8)
    if compile_mode is not None and not whole:
        model_call, compile_mode = torch.compile(model_call, mode=compile_mode), None

    def step(x, y):
        loss = loss_of(model_call(x), y, d)
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        opt.step()
        return loss.detach()

    fn = torch.compile(step, mode=compile_mode) if compile_mode is not None else step
    return fn, opt


def speed(args, device):
    gen = torch.Generator(device=device)
    gen.manual_seed(0)
    for layers in args.layers:
        for w in args.w:
            impl = args.impl
            runs = args.runs if impl.startswith("vmap") else 1
            compile_mode = args.compile_mode if impl.endswith("compile") else None
            make = lambda: make_model(args.d, args.heads, layers, w, args.ffn)
            if runs > 1 or impl.startswith("vmap"):
                ens = Ensemble(range(runs), make, device)
                call, params = ens.forward, ens.parameters()
                shape = (runs, args.batch, args.points)
            else:
                torch.manual_seed(0)
                model = make().to(device)
                call, params = model, list(model.parameters())
                shape = (args.batch, args.points)
            try:
                fn, _ = make_step(call, params, args.d, 1e-3, compile_mode)
                t0 = time.perf_counter()
                for _ in range(args.warmup):
                    fn(*batch(shape, args.d, gen, device))
                if device.type == "cuda":
                    torch.cuda.synchronize()
                warm = time.perf_counter() - t0
                acc = torch.zeros((), device=device)
                dt = float("inf")
                for _ in range(args.timings):  # the fastest pass, as headlab-bench takes its least wall
                    t0 = time.perf_counter()
                    for _ in range(args.steps):
                        acc += fn(*batch(shape, args.d, gen, device)).sum()
                    if device.type == "cuda":
                        torch.cuda.synchronize()
                    dt = min(dt, time.perf_counter() - t0)
                row = {"peer": "nn", "impl": impl, "layers": layers, "w": w, "heads": args.heads, "runs": runs,
                       "steps_per_s": round(args.steps / dt, 2), "run_steps_per_s": round(runs * args.steps / dt, 2),
                       "warmup_s": round(warm, 1), "loss_finite": bool(torch.isfinite(acc).item())}
            except Exception as e:  # a failed compile or vmap is a result too
                row = {"peer": "nn", "impl": impl, "layers": layers, "w": w, "heads": args.heads, "runs": runs,
                       "error": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"}
            row.update({"device": str(device), "torch": torch.__version__})
            print(json.dumps(row), flush=True)
            if device.type == "cuda":
                torch.cuda.empty_cache()


class Stop:
    """SIGTERM (the device call's limit, or a user) asks train() to stop at the end of the epoch."""

    asked = False

    @classmethod
    def ask(cls, *_):
        cls.asked = True


def save_state(path, ens, opt, gen, epoch, best, trace, wall):
    """Everything train() needs to go on after `epoch` epochs, written atomically (a temporary file,
    then a rename): the stacked parameters, AdamW's state, the data generator, the best epoch means
    and the trace so far."""
    tmp = path + ".tmp"
    torch.save({"epoch": epoch, "params": {k: v.detach().cpu() for k, v in ens.params.items()},
                "opt": opt.state_dict(), "gen": gen.get_state(), "best": best, "trace": trace,
                "wall_s": wall}, tmp)
    os.replace(tmp, path)


def train(args, device):
    layers, w = args.layers[0], args.w[0]
    seeds = args.seeds
    ens = Ensemble(seeds, lambda: make_model(args.d, args.heads, layers, w, args.ffn), device)
    compile_mode = args.compile_mode if args.impl.endswith("compile") else None
    # The learning rate changes each epoch: compiling the optimizer would recompile it per value.
    fn, opt = make_step(ens.forward, ens.parameters(), args.d, args.lr, compile_mode, whole=False)
    gen = torch.Generator(device=device)
    gen.manual_seed(1000 + seeds[0])
    epochs = (args.steps + 99) // 100
    best = torch.full((len(seeds),), float("inf"))
    trace = []
    first, wall_before = 0, 0.0
    if args.state and os.path.exists(args.state):
        # Resume: the same parameters, optimizer state and data stream as if never stopped.
        saved = torch.load(args.state, map_location="cpu", weights_only=False)
        with torch.no_grad():
            for k, v in ens.params.items():
                v.copy_(saved["params"][k].to(device))
        opt.load_state_dict(saved["opt"])
        gen.set_state(saved["gen"])
        first, best, trace, wall_before = saved["epoch"], saved["best"], saved["trace"], saved["wall_s"]
        print(json.dumps({"peer": "nn", "mode": "train-resume", "epoch": first, "of": epochs,
                          "wall_s_before": round(wall_before, 1)}), flush=True)
    signal.signal(signal.SIGTERM, Stop.ask)
    t0 = time.perf_counter()
    for e in range(first, epochs):
        if e > first and (Stop.asked or (args.budget and time.perf_counter() - t0 >= args.budget)
                          or (args.max_epochs and e - first >= args.max_epochs)):
            if args.state:
                save_state(args.state, ens, opt, gen, e, best, trace, wall_before + time.perf_counter() - t0)
            print(json.dumps({"peer": "nn", "mode": "train-stopped", "epoch": e, "of": epochs,
                              "state": args.state or None,
                              "wall_s": round(wall_before + time.perf_counter() - t0, 1)}), flush=True)
            sys.exit(3)
        lr = args.lr * multiplier(e, epochs)
        for group in opt.param_groups:
            group["lr"] = lr
        total = torch.zeros(len(seeds), device=device)
        n = min(100, args.steps - 100 * e)
        for _ in range(n):
            total += fn(*batch((len(seeds), args.batch, args.points), args.d, gen, device))
        mean = (total / n).cpu()
        best = torch.minimum(best, torch.nan_to_num(mean, nan=float("inf")))
        if e % args.report == 0 or e == epochs - 1:
            trace.append({"epoch": e, "lr": lr, "epoch_mean": [round(v, 5) for v in mean.tolist()]})
            # A line as it goes, so that a run cut short by a wall-clock cap still tells.
            print(json.dumps({"peer": "nn", "mode": "train-progress", "layers": layers, "w": w, "steps": args.steps,
                              "seeds": list(seeds), **trace[-1], "best_so_far": [round(v, 5) for v in best.tolist()],
                              "wall_s": round(wall_before + time.perf_counter() - t0, 1)}), flush=True)
    scales = {k: [round(v, 4) for v in t.detach().flatten(1)[:, 0].tolist()]
              for k, t in ens.params.items() if k.endswith("scale")}
    print(json.dumps({"peer": "nn", "mode": "train", "impl": args.impl, "layers": layers, "w": w, "heads": args.heads,
                      "steps": args.steps, "seeds": list(seeds), "best_epoch_mean": [round(v, 5) for v in best.tolist()],
                      "trace": trace, "final_norm_scales": scales,
                      "wall_s": round(wall_before + time.perf_counter() - t0, 1), "resumed_at_epoch": first,
                      "device": str(device), "torch": torch.__version__}), flush=True)
    if args.state:
        save_state(args.state, ens, opt, gen, epochs, best, trace, wall_before + time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["speed", "train"])
    ap.add_argument("--impl", default="eager", choices=["eager", "compile", "vmap", "vmap-compile"])
    ap.add_argument("--compile-mode", default="default", help="torch.compile mode (default, reduce-overhead, ...)")
    ap.add_argument("--layers", default="1,3,5", type=lambda s: [int(v) for v in s.split(",")])
    ap.add_argument("--w", default="1,8,64", type=lambda s: [int(v) for v in s.split(",")])
    ap.add_argument("--heads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=8, help="ensemble size of the vmap impls")
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--points", type=int, default=16)
    ap.add_argument("--ffn", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--timings", type=int, default=3, help="speed: timed passes of --steps; the fastest counts")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seeds", default="0", type=lambda s: [int(v) for v in s.split(",")])
    ap.add_argument("--report", type=int, default=20, help="train: epochs between epoch-mean reports")
    ap.add_argument("--state", default="", help="train: a file to resume from and to save to when stopped")
    ap.add_argument("--budget", type=float, default=0,
                    help="train: seconds, after which it saves --state at the next epoch's end and exits 3")
    ap.add_argument("--max-epochs", type=int, default=0, help="train: epochs this call at most (then as --budget)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--tf32", action="store_true")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.backends.cudnn.allow_tf32 = args.tf32
    device = torch.device(args.device)
    (speed if args.mode == "speed" else train)(args, device)


if __name__ == "__main__":
    main()
