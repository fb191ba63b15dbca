#!/usr/bin/env python3
"""nanogpt_peer.py — nanoGPT's own model.py (karpathy/nanoGPT, unchanged, imported from a clone;
scripts/fetch-peers.sh puts one in .peers/nanoGPT) as the peer of HeadLab's text task (issue 24).

    python3 bench/nanogpt_peer.py check --checkpoint CKPT.safetensors
        Builds nanoGPT's GPT with a HeadLab text checkpoint's weights and compares its logits and
        next-token loss on seeded bytes with the checkpoint's model as headlab.checkpoint computes
        it. Exit status 1 when they differ by more than --tolerance (relative, on the loss).
    python3 bench/nanogpt_peer.py speed --schedules "1,2,4,8;4,4,4,4" [--compile 1] [--steps N]
        Trains nanoGPT at HeadLab's head-progression shapes, one run per schedule, one after
        another (the way a user runs several nanoGPT runs), and prints steps/s per run and in all.
        --resume FILE and --budget S spread the runs over several calls (exit status 3: runs left).

nanoGPT has one head count for every layer; a schedule sets each block's `attn.n_head` after the
model is built (model.py reads it at every forward), which changes no line of model.py. Its other
choices are kept as shipped: tied embeddings, AdamW from `configure_optimizers` (fused on CUDA),
F.scaled_dot_product_attention (flash) with the 1/sqrt(head_dim) scale, exact GELU, dropout 0.

What the check maps, because HeadLab's text model and nanoGPT differ in four places:
- HeadLab's LayerNorm divides by the unbiased deviation with eps 1e-9 (the addition paper's
  convention; it is sqrt((n-1)/n) times the usual one) and has a shift. nanoGPT's gain gets
  HeadLab's gain times sqrt((n-1)/n), its bias the shift (so the check builds nanoGPT with
  bias=True, its Linear biases zero); the eps differ (1e-5 in nanoGPT), a relative 1e-5 at most.
- nanoGPT ties its unembedding to the embedding: the check ties HeadLab's too (its unembedding
  replaced by the embedding's transpose) before comparing.
- nanoGPT scales attention logits by 1/sqrt(head_dim): the checkpoint must too
  (model.logit_scale: inv_sqrt_head_dim; the head-progression preset has none, which costs the
  same).
"""
import argparse
import json
import math
import os
import sys
import time

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def nanogpt_model(path):
    sys.path.insert(0, os.path.abspath(path))
    try:
        import model  # nanoGPT's model.py, as it is
    except ImportError as e:
        sys.exit(f"nanogpt_peer: no nanoGPT model.py in {path} ({e}); run scripts/fetch-peers.sh")
    return model


def build(model, d, schedule, context, bias):
    cfg = model.GPTConfig(block_size=context, vocab_size=256, n_layer=len(schedule),
                          n_head=schedule[0], n_embd=d, dropout=0.0, bias=bias)
    gpt = model.GPT(cfg)
    for block, heads in zip(gpt.transformer.h, schedule):
        assert d % heads == 0, f"{heads} heads do not divide d {d}"
        block.attn.n_head = heads
    return gpt


def check(args):
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from headlab import checkpoint as hc

    ckpt = hc.load(args.checkpoint)
    m = ckpt.model
    d, schedule = m["d_model"], m["heads"]
    problems = []
    if m["width_multiplier"] != 1:
        problems.append("width_multiplier is not 1")
    if m["norm"] != "layer_norm_unbiased_eps_1e-9" or m["placement"] != "pre" or not m["final_norm"]:
        problems.append("nanoGPT is pre-norm LayerNorm with a final norm")
    if m["activation"] != "gelu" or not m["causal"] or m["bias"]:
        problems.append("nanoGPT's MLP is GELU, its attention causal, and the check maps no Linear bias")
    for layer, (scale, hd) in enumerate(zip(m["logit_scales"], m["head_dims"])):
        if abs(scale - 1 / math.sqrt(hd)) > 1e-12:
            problems.append(f"layer {layer}'s logit scale is {scale}, nanoGPT's 1/sqrt({hd})")
    if problems:
        sys.exit("nanogpt_peer check: " + "; ".join(problems))
    context = ckpt.tensors["positions"].shape[0]
    t = ckpt.tensors
    t["unembedding"] = t["embedding"].T.contiguous()  # nanoGPT's tied unembedding
    gpt = build(nanogpt_model(args.nanogpt), d, schedule, context, bias=True)
    n = d
    unbiased = math.sqrt((n - 1) / n)
    with torch.no_grad():
        for p in gpt.parameters():
            p.zero_()
        tr = gpt.transformer
        tr.wte.weight.copy_(t["embedding"])
        tr.wpe.weight.copy_(t["positions"])
        for l, block in enumerate(tr.h):
            p = f"layers.{l}."
            block.ln_1.weight.copy_(t[p + "norm1.gain"] * unbiased)
            block.ln_1.bias.copy_(t[p + "norm1.shift"])
            block.ln_2.weight.copy_(t[p + "norm2.gain"] * unbiased)
            block.ln_2.bias.copy_(t[p + "norm2.shift"])
            block.attn.c_attn.weight.copy_(torch.cat([t[p + "wq"], t[p + "wk"], t[p + "wv"]], 1).T)
            block.attn.c_proj.weight.copy_(t[p + "wo"].T)
            block.mlp.c_fc.weight.copy_(t[p + "w1"].T)
            block.mlp.c_proj.weight.copy_(t[p + "w2"].T)
        tr.ln_f.weight.copy_(t["final_norm.gain"] * unbiased)
        tr.ln_f.bias.copy_(t["final_norm.shift"])
    gpt.eval()
    g = torch.Generator().manual_seed(args.seed)
    tokens = torch.randint(0, 256, (args.batch, context), generator=g)
    targets = torch.roll(tokens, -1, 1)
    with torch.no_grad():
        theirs, loss = gpt(tokens, targets)
        ours = hc.forward(ckpt, tokens)
        ours_loss = torch.nn.functional.cross_entropy(ours.reshape(-1, 256), targets.reshape(-1))
    gap = abs(loss.item() - ours_loss.item()) / max(1.0, abs(ours_loss.item()))
    row = {"peer": "nanoGPT model.py", "check": "same loss at the same weights and bytes",
           "checkpoint": os.path.basename(args.checkpoint), "step": ckpt.step, "d": d,
           "heads": schedule, "context": context, "batch": args.batch,
           "headlab_loss": ours_loss.item(), "nanogpt_loss": loss.item(),
           "relative_gap": gap, "max_logit_diff": (theirs - ours).abs().max().item(),
           "note": "both models tied (HeadLab's unembedding replaced by its embedding's "
                   "transpose), so the loss is not the run's",
           "ok": gap <= args.tolerance}
    print(json.dumps(row))
    return 0 if row["ok"] else 1


def speed(args):
    model = nanogpt_model(args.nanogpt)
    device = args.device
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = bool(args.tf32)
    schedules = [[int(h) for h in s.split(",")] for s in args.schedules.split(";")]
    g = torch.Generator().manual_seed(0)
    corpus = (torch.frombuffer(bytearray(open(args.corpus, "rb").read()), dtype=torch.uint8)
              if args.corpus else torch.randint(0, 256, (4_000_000,), generator=g, dtype=torch.uint8))
    corpus = corpus.to(device=device, dtype=torch.long)
    # --resume FILE: the runs already in FILE (a line each, with its wall seconds from building the
    # model to its last step) are not trained again; each run that ends is appended. So runs one
    # after another can spread over several calls of a machine with a time limit (--budget).
    done = {}
    if args.resume and os.path.exists(args.resume):
        for line in open(args.resume):
            r = json.loads(line)
            done[(r["schedule"], r["seed"])] = r
    total_steps, t_all = 0, time.perf_counter()
    for seed in range(args.repeats):
        for schedule in schedules:
            if (",".join(map(str, schedule)), seed) in done:
                continue
            if args.budget and time.perf_counter() - t_all >= args.budget:
                left = args.repeats * len(schedules) - len(done)
                print(json.dumps({"impl": "nanogpt" + ("-compile" if args.compile else "-eager"),
                                  "unfinished": True, "runs_left": left}), flush=True)
                return 3
            t_run = time.perf_counter()
            if args.compile:
                # Each run compiles afresh, as a run in its own process would. Without this, one
                # process's ninth schedule passes dynamo's recompile limit (8: each head count is a
                # new graph) and the runs after it train eagerly (seen 2026-11-28 on the H200).
                torch._dynamo.reset()
            torch.manual_seed(seed)
            gpt = build(model, args.d, schedule, args.context, bias=False).to(device)
            opt = gpt.configure_optimizers(0.1, args.lr, (0.9, 0.95), "cuda" if "cuda" in device else "cpu")
            step_fn = gpt
            t_compile = time.perf_counter()
            if args.compile:
                step_fn = torch.compile(gpt)
            gen = torch.Generator(device=device).manual_seed(seed)

            def batch():
                start = torch.randint(0, corpus.numel() - args.context - 1, (args.batch, 1),
                                      device=device, generator=gen)
                idx = start + torch.arange(args.context + 1, device=device)
                window = corpus[idx]
                return window[:, :-1].contiguous(), window[:, 1:].contiguous()

            def step():
                x, y = batch()
                _, loss = step_fn(x, y)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                return loss

            for _ in range(args.warmup):
                step()
            if "cuda" in device:
                torch.cuda.synchronize()
            warm = time.perf_counter() - t_compile
            dt = float("inf")
            for _ in range(args.timings):  # the fastest pass, as headlab-bench takes its least wall
                t0 = time.perf_counter()
                for _ in range(args.steps):
                    loss = step()
                if "cuda" in device:
                    torch.cuda.synchronize()
                dt = min(dt, time.perf_counter() - t0)
                total_steps += args.steps
            row = {"impl": "nanogpt" + ("-compile" if args.compile else "-eager"),
                   "schedule": ",".join(map(str, schedule)), "seed": seed,
                   "d": args.d, "context": args.context, "batch": args.batch,
                   "tf32": bool(args.tf32), "device": device,
                   "steps": args.steps, "steps_per_s": args.steps / dt,
                   "warmup_and_compile_s": round(warm, 2), "loss": loss.item(),
                   "run_seconds": round(time.perf_counter() - t_run, 3)}
            print(json.dumps(row), flush=True)
            done[(row["schedule"], seed)] = row
            if args.resume:
                with open(args.resume, "a") as f:
                    f.write(json.dumps(row) + "\n")
    # The total: with --resume, the sum of every run's own wall seconds (the runs of earlier calls
    # included); else this call's wall.
    seconds = (sum(r["run_seconds"] for r in done.values()) if args.resume
               else time.perf_counter() - t_all)
    print(json.dumps({"impl": "nanogpt" + ("-compile" if args.compile else "-eager"), "total": True,
                      "runs": args.repeats * len(schedules), "steps_per_run": args.steps,
                      "seconds_with_compile": seconds,
                      "timed_steps": args.steps * args.timings * len(done) if args.resume else total_steps}))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nanogpt", default=os.path.join(ROOT, ".peers", "nanoGPT"))
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check")
    c.add_argument("--checkpoint", required=True)
    c.add_argument("--batch", type=int, default=4)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--tolerance", type=float, default=1e-5)
    s = sub.add_parser("speed")
    s.add_argument("--schedules", default="1,2,4,8;4,4,4,4;8,4,2,1")
    s.add_argument("--d", type=int, default=256)
    s.add_argument("--context", type=int, default=128)
    s.add_argument("--batch", type=int, default=64)
    s.add_argument("--lr", type=float, default=1e-3)
    s.add_argument("--steps", type=int, default=200)
    s.add_argument("--warmup", type=int, default=20)
    s.add_argument("--repeats", type=int, default=1, help="runs of each schedule (seeds 0..R-1)")
    s.add_argument("--timings", type=int, default=3,
                   help="timed passes of --steps in each run; the fastest counts (1 for end-to-end runs)")
    s.add_argument("--compile", type=int, default=0)
    s.add_argument("--resume", default="",
                   help="JSON lines of finished runs: skipped, and each run that ends is appended")
    s.add_argument("--budget", type=float, default=0,
                   help="seconds: no run starts after them (exit status 3 when runs are left)")
    s.add_argument("--tf32", type=int, default=1)
    s.add_argument("--corpus", default="")
    s.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args()
    return check(args) if args.command == "check" else speed(args)


if __name__ == "__main__":
    sys.exit(main())
