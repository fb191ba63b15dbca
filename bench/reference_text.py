#!/usr/bin/env python3
"""reference_text.py — the peer HeadLab's text task is measured against: a nanoGPT-style byte-level
language model of the head-progression preset's shape, in eager PyTorch or under torch.compile, one
run at a time. Prints one JSON line per head schedule and a total.

Model (the preset's shape, EXPERIMENTS.md §3): 256 byte tokens, learned positions, pre-norm blocks
of causal self-attention (F.scaled_dot_product_attention, the fused kernels) and a GELU MLP 4·d, no
biases, LayerNorm, a final LayerNorm and an untied unembedding; each layer has its own head count
(--schedules "1,2,4,8;4,4,4,4" lists them), head dimension d / heads, attention logits unscaled as
the preset has them (logit_scale: none). AdamW (0.9, 0.95), weight decay 0.1. Batches of random
windows of a byte corpus already on the device (--corpus FILE, else seeded random bytes).
"""
import argparse
import json
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d, bias=False), nn.LayerNorm(d, bias=False)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d, bias=False)
        self.fc = nn.Linear(d, 4 * d, bias=False)
        self.out = nn.Linear(4 * d, d, bias=False)

    def forward(self, x):
        B, T, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        split = lambda t: t.view(B, T, self.heads, d // self.heads).transpose(1, 2)
        a = F.scaled_dot_product_attention(split(q), split(k), split(v), is_causal=True, scale=1.0)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, d, schedule, context, vocab=256):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(context, d)
        self.blocks = nn.ModuleList(Block(d, h) for h in schedule)
        self.ln = nn.LayerNorm(d, bias=False)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schedules", default="1,2,4,8;4,4,4,4;8,4,2,1", help="heads per layer, ';' between runs")
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--context", type=int, default=128)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--compile", default="", help="torch.compile mode ('default', 'max-autotune', ...); empty: eager")
    ap.add_argument("--corpus", default="")
    ap.add_argument("--tf32", action="store_true")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.backends.cudnn.allow_tf32 = args.tf32
    device = torch.device(args.device)
    if args.corpus:
        data = torch.frombuffer(bytearray(open(args.corpus, "rb").read()), dtype=torch.uint8)
    else:
        data = torch.randint(0, 256, (1 << 20,), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))
    data = data.to(device=device, dtype=torch.long)
    gen = torch.Generator(device=device)
    gen.manual_seed(0)
    offsets = torch.arange(args.context + 1, device=device)

    def batch():
        start = torch.randint(0, data.numel() - args.context - 1, (args.batch, 1), device=device, generator=gen)
        window = data[start + offsets]
        return window[:, :-1], window[:, 1:]

    impl = f"torch.compile({args.compile})" if args.compile else "eager"
    total_steps, total_s = 0, 0.0
    for text in args.schedules.split(";"):
        schedule = [int(h) for h in text.split(",")]
        torch.manual_seed(0)
        model = GPT(args.d, schedule, args.context).to(device)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1)

        def step(x, y):
            loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            return loss.detach()

        fn = torch.compile(step, mode=args.compile) if args.compile else step
        t0 = time.perf_counter()
        for _ in range(args.warmup):
            fn(*batch())
        if device.type == "cuda":
            torch.cuda.synchronize()
        warm = time.perf_counter() - t0
        acc = torch.zeros((), device=device)
        t0 = time.perf_counter()
        for _ in range(args.steps):
            acc += fn(*batch())
        if device.type == "cuda":
            torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        total_steps += args.steps
        total_s += dt
        print(json.dumps({"peer": "text", "impl": impl, "heads": text, "tf32": args.tf32, "steps_per_s": round(args.steps / dt, 2),
                          "warmup_s": round(warm, 1), "final_loss": round(float(acc) / args.steps, 4),
                          "device": str(device), "torch": torch.__version__}), flush=True)
    print(json.dumps({"peer": "text", "impl": impl, "heads": "all", "tf32": args.tf32, "runs": len(args.schedules.split(";")),
                      "run_steps_per_s": round(total_steps / total_s, 2), "device": str(device)}), flush=True)


if __name__ == "__main__":
    main()
