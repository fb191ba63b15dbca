"""Per-tensor gradient goldens in llm.c's manner (its test_gpt2): for the plain model of each task
at a small shape, a transformer written here in plain PyTorch from EXPERIMENTS.md's definitions
(none of HeadLab's code, C++ or Python) draws its weights and one batch, and writes the step-0
logits, every parameter's gradient and the losses of 10 Adam steps on that batch.
tests/golden/test_golden.cpp loads the weights into HeadLab's Transformer, computes the same with
HeadLab's model, loss functions and Adam, and compares each tensor with a tolerance of its own
scale, on the CPU in CI and on the GPU in scripts/gpu-tests.sh.

  .venv/bin/python tests/golden/gradient_golden.py            # writes tests/golden/*.safetensors
  .venv/bin/python tests/golden/gradient_golden.py --check    # the checked-in files are its output

The conventions HeadLab's session files name (docs/SESSION_FORMAT.md): weights are stored
(in, out) and a layer computes x W + b; LayerNorm divides by sqrt(unbiased variance + 1e-9), then
a gain and a shift; the unit-scale norm is g · x / ||x||; heads split the width into n_H blocks;
the attention logits are scaled by 1/sqrt(m_H), 1/m_H or 1; pre-norm adds each block's output to
the residual stream, post-norm normalises the sum; nearest neighbour's loss is the mean over
points of the squared distance to the farthest other point of the set.
"""
import argparse
import json
import math
import os
import sys

import torch
from safetensors import safe_open
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
COMMAND = ".venv/bin/python tests/golden/gradient_golden.py"
STEPS = 10
ADAM = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}

# The plain model of each task, at a small shape (session-file keys of `model:`).
CASES = {
    "addition": {
        "objective": "answer", "vocab": 22, "positions": 19, "batch": 4,
        "model": {"d_model": 16, "heads": [2, 2], "head_dim": "auto", "ffn_width": "auto",
                  "activation": "gelu", "norm": "layer_norm", "placement": "pre_norm",
                  "final_norm": True, "causal": True, "bias": False,
                  "logit_scale": "inv_sqrt_head_dim", "zero_init_outputs": False},
    },
    "text": {
        "objective": "next_token", "vocab": 256, "positions": 32, "batch": 4,
        "model": {"d_model": 32, "heads": [2, 4], "head_dim": "auto", "ffn_width": 128,
                  "activation": "gelu", "norm": "layer_norm", "placement": "pre_norm",
                  "final_norm": True, "causal": True, "bias": False,
                  "logit_scale": "inv_head_dim", "zero_init_outputs": False},
    },
    "nearest_neighbour": {
        "objective": "regression", "vocab": 0, "positions": 0, "batch": 4, "points": 8,
        "model": {"d_model": 16, "heads": [4], "head_dim": "auto", "ffn_width": 64,
                  "activation": "relu", "norm": "unit_scale", "placement": "post_norm",
                  "final_norm": False, "causal": False, "bias": True,
                  "logit_scale": "inv_sqrt_head_dim", "zero_init_outputs": False},
    },
}


def shapes(case):
    """Every parameter's name and shape, as HeadLab names them."""
    m = case["model"]
    d, V, P = m["d_model"], case["vocab"], case["positions"]
    F = 4 * d if m["ffn_width"] == "auto" else m["ffn_width"]
    norm_width = d if m["norm"] == "layer_norm" else 1
    out = []
    if V:
        out.append(("embedding", (V, d)))
    if P:
        out.append(("positions", (P, d)))
    for l, heads in enumerate(m["heads"]):
        p = f"layers.{l}."
        inner = heads * (d // heads)
        out.append((p + "norm1.gain", (norm_width,)))
        if m["norm"] == "layer_norm":
            out.append((p + "norm1.shift", (d,)))
        out += [(p + "wq", (d, inner)), (p + "wk", (d, inner)), (p + "wv", (d, inner))]
        if m["bias"]:
            out += [(p + "bq", (inner,)), (p + "bk", (inner,)), (p + "bv", (inner,))]
        out.append((p + "wo", (inner, d)))
        if m["bias"]:
            out.append((p + "bo", (d,)))
        out.append((p + "norm2.gain", (norm_width,)))
        if m["norm"] == "layer_norm":
            out.append((p + "norm2.shift", (d,)))
        out.append((p + "w1", (d, F)))
        if m["bias"]:
            out.append((p + "b1", (F,)))
        out.append((p + "w2", (F, d)))
        if m["bias"]:
            out.append((p + "b2", (d,)))
    if m["final_norm"]:
        out.append(("final_norm.gain", (norm_width,)))
        if m["norm"] == "layer_norm":
            out.append(("final_norm.shift", (d,)))
    if V:
        out.append(("unembedding", (d, V)))
    return out


def draw_weights(case, generator):
    """Gains near 1, everything else uniform in ±1/sqrt(fan-in) (embeddings normal)."""
    weights = {}
    for name, shape in shapes(case):
        if name.endswith(".gain"):
            w = 1 + 0.1 * torch.randn(shape, generator=generator)
        elif name in ("embedding", "positions"):
            w = torch.randn(shape, generator=generator)
        else:
            fan_in = shape[0] if len(shape) == 2 else case["model"]["d_model"]
            w = (torch.rand(shape, generator=generator) * 2 - 1) / math.sqrt(fan_in)
        weights[name] = w.float()
    return weights


def draw_batch(case, generator):
    B = case["batch"]
    if case["objective"] == "answer":  # the answer token follows the sequence it answers
        tokens = torch.randint(0, case["vocab"], (B, case["positions"]), generator=generator)
        return tokens[:, :-1].contiguous(), tokens[:, -1:].contiguous()
    if case["objective"] == "next_token":
        tokens = torch.randint(0, case["vocab"], (B, case["positions"] + 1), generator=generator)
        return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()
    d = case["model"]["d_model"]
    points = torch.randn((B, case["points"], d), generator=generator)
    points = points / points.norm(dim=-1, keepdim=True)
    gram = points @ points.transpose(-1, -2) + torch.diag(torch.full((case["points"],), math.inf))
    farthest = gram.argmin(-1)  # the smallest inner product on the sphere is the farthest point
    return points, torch.stack([points[b, farthest[b]] for b in range(B)])


def norm(model, x, gain, shift):
    if model["norm"] == "unit_scale":
        return gain * x / x.norm(dim=-1, keepdim=True)
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).sum(-1, keepdim=True) / (x.shape[-1] - 1)
    return (x - mean) / torch.sqrt(var + 1e-9) * gain + shift


def forward(case, w, x):
    model = case["model"]
    d = model["d_model"]
    if case["vocab"]:
        h = w["embedding"][x]
    else:
        h = x
    if case["positions"]:
        h = h + w["positions"][: x.shape[1]]
    act = torch.nn.functional.gelu if model["activation"] == "gelu" else torch.relu

    def lin(t, name, bias):
        y = t @ w[name]
        return y + w[bias] if model["bias"] else y

    def attention(t, l, heads):
        B, T, _ = t.shape
        hd = d // heads
        p = f"layers.{l}."
        split = lambda u: u.view(B, T, heads, hd).transpose(1, 2)
        q, k, v = (split(lin(t, p + n, p + b)) for n, b in (("wq", "bq"), ("wk", "bk"), ("wv", "bv")))
        scale = {"inv_sqrt_head_dim": 1 / math.sqrt(hd), "inv_head_dim": 1 / hd, "none": 1.0}
        s = (q @ k.transpose(-1, -2)) * scale[model["logit_scale"]]
        if model["causal"]:
            s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        o = (s.softmax(-1) @ v).transpose(1, 2).reshape(B, T, heads * hd)
        return lin(o, p + "wo", p + "bo")

    def mlp(t, l):
        p = f"layers.{l}."
        return lin(act(lin(t, p + "w1", p + "b1")), p + "w2", p + "b2")

    def n(t, prefix):
        return norm(model, t, w[prefix + ".gain"], w.get(prefix + ".shift"))

    for l, heads in enumerate(model["heads"]):
        p = f"layers.{l}."
        if model["placement"] == "pre_norm":
            h = h + attention(n(h, p + "norm1"), l, heads)
            h = h + mlp(n(h, p + "norm2"), l)
        else:
            h = n(h + attention(h, l, heads), p + "norm1")
            h = n(h + mlp(h, l), p + "norm2")
    if model["final_norm"]:
        h = n(h, "final_norm")
    return h @ w["unembedding"] if case["vocab"] else h


def loss_of(case, out, target):
    if case["objective"] == "regression":
        return (out - target).pow(2).sum(-1).mean()
    if case["objective"] == "answer":
        out = out[:, -1:]
    return torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), target.reshape(-1))


def golden(task):
    case = CASES[task]
    generator = torch.Generator().manual_seed(20261203 + len(task))
    weights = draw_weights(case, generator)
    x, target = draw_batch(case, generator)
    params = {k: torch.nn.Parameter(v.clone()) for k, v in weights.items()}
    out = forward(case, params, x)
    loss = loss_of(case, out, target)
    loss.backward()
    tensors = {"input": x, "target": target, "logits": out.detach()}
    for k, v in weights.items():
        tensors["weight." + k] = v
        tensors["grad." + k] = params[k].grad.detach().clone()
    adam = torch.optim.Adam(params.values(), lr=ADAM["lr"], betas=(ADAM["beta1"], ADAM["beta2"]),
                            eps=ADAM["eps"], foreach=False)
    losses = []
    for _ in range(STEPS):
        adam.zero_grad()
        loss = loss_of(case, forward(case, params, x), target)
        losses.append(loss.item())
        loss.backward()
        adam.step()
    tensors["losses"] = torch.tensor(losses, dtype=torch.float64)
    metadata = {"task": task, "objective": case["objective"], "vocab": str(case["vocab"]),
                "positions": str(case["positions"]), "model": json.dumps(case["model"]),
                "adam": json.dumps(ADAM), "command": COMMAND,
                "torch": torch.__version__}
    return {k: v.contiguous() for k, v in tensors.items()}, metadata


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the checked-in files instead of writing them")
    args = parser.parse_args()
    bad = 0
    for task in CASES:
        tensors, metadata = golden(task)
        path = os.path.join(HERE, task + ".safetensors")
        if not args.check:
            save_file(tensors, path, metadata=metadata)
            print(f"wrote {os.path.relpath(path)}: {len(tensors)} tensors")
            continue
        with safe_open(path, framework="pt") as f:
            for name, value in tensors.items():
                kept = f.get_tensor(name)
                if kept.shape != value.shape or not torch.allclose(kept.double(), value.double(),
                                                                    rtol=1e-5, atol=1e-7):
                    print(f"{path}: {name} is not what this script gives; regenerate with: {COMMAND}")
                    bad += 1
    if args.check and not bad:
        print("the goldens are this script's output")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
