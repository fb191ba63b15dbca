"""headlab.checkpoint — read a HeadLab checkpoint in PyTorch, outside HeadLab.

A checkpoint is a safetensors file (docs/CHECKPOINTS.md). This module rebuilds the run's
transformer from the file alone — its weights, and the shapes and conventions in its metadata —
with plain PyTorch, independently of HeadLab's C++ code, so a notebook can probe a trained model:

    from headlab import checkpoint as hc
    ckpt = hc.load("S.results/checkpoints/K/step-000001000.safetensors")
    logits = hc.forward(ckpt, tokens)          # tokens: (B, T) int64
    print(hc.addition_test_loss(ckpt), ckpt.logged_test_loss)
    model = hc.Model(ckpt)                     # the same as a torch.nn.Module (Session.model)

Run as `python -m headlab.checkpoint CHECKPOINT` on a checkpoint of the addition task, it prints
the test loss it recomputes next to the one HeadLab logged at that step (tests/checkpoints checks
they agree within 1e-5).
"""
import json
import math
import sys
import zlib
from dataclasses import dataclass

import numpy as np
import torch

from ._store import FNV1A_OFFSET, fnv1a64  # noqa: F401  (checked data; kept importable here)


@dataclass
class Checkpoint:
    tensors: dict      # name -> tensor: weights, optimizer moments, curves
    metadata: dict     # the file's string metadata
    config: dict       # the run's configuration (the session's `config:` of the run)
    model: dict        # shapes and conventions: d_model, heads, head_dims, logit_scales, ...
    step: int

    @property
    def logged_test_loss(self):
        """The test loss HeadLab logged at this checkpoint's step (None if it did not evaluate)."""
        curve = self.tensors["curve.test"]  # (n, 2): step, loss
        hits = curve[curve[:, 0] == self.step]
        return float(hits[-1, 1]) if len(hits) else None


MAX_CHECKPOINT_BYTES = 64 << 30  # headlab-cli's limit (core/config/Safetensors.cpp)
FORMAT_VERSION = 2  # 2: the checksum is data_crc32 (CRC-32); 1: data_fnv1a64 (FNV-1a), still read


def data_checksum_matches(metadata, data):
    """Whether a checkpoint's tensor data (`data`: the bytes after its header) matches the checksum
    its metadata carries: data_crc32 through zlib (GB/s), or the data_fnv1a64 of a version 1 file
    (pure Python, about 9 MB/s)."""
    if "data_crc32" in metadata:
        return metadata["data_crc32"] == f"{zlib.crc32(data):08x}"
    return metadata.get("data_fnv1a64") == f"{fnv1a64(data):016x}"


def load(path, verify=True):
    """A checkpoint read and checked as headlab-cli checks it (a regular file within the size
    limit, a HeadLab checkpoint of a version this package reads, its tensor data matching its
    checksum with `verify`); anything else raises HeadLabError naming the file and the fault."""
    from ._store import HeadLabError, read_safetensors_file, safetensors_metadata
    from safetensors.torch import load as load_bytes

    def bad(what):
        return HeadLabError(f"{path}: is not a usable checkpoint: {what}")

    data = read_safetensors_file(path, "a checkpoint", MAX_CHECKPOINT_BYTES)
    try:
        metadata, data_start = safetensors_metadata(data)
        raw = load_bytes(data)
    except Exception as e:  # safetensors' and json's errors: the file is not a valid one
        raise bad(str(e) if type(e) is ValueError else f"{type(e).__name__}: {e}") from None
    if not isinstance(metadata, dict) or metadata.get("format") != "headlab-checkpoint":
        raise bad("it is a safetensors file but not a HeadLab checkpoint (no format: headlab-checkpoint)")
    version = metadata.get("format_version", "")
    if not (isinstance(version, str) and version.isdigit()):
        raise bad(f"metadata 'format_version' is '{version}', not an integer")
    if int(version) > FORMAT_VERSION:
        raise bad(f"format version {version} is newer than this package reads ({FORMAT_VERSION})")
    if verify and not data_checksum_matches(metadata, memoryview(data)[data_start:]):
        raise bad("its tensor data does not match its checksum (the file is damaged)")
    try:
        config, model = json.loads(metadata["config"]), json.loads(metadata["model"])
        step = int(metadata["step"])
    except KeyError as e:
        raise bad(f"its metadata has no {e}") from None
    except (ValueError, TypeError) as e:
        raise bad(f"its metadata is not what HeadLab writes: {e}") from None
    if not isinstance(config, dict) or not isinstance(model, dict) or step < 0:
        raise bad("its metadata 'config', 'model' or 'step' is not what HeadLab writes")
    # Weights-only checkpoints may keep their weights in bfloat16 (checkpoints: {kept_weights:
    # bfloat16}); widened to float32 here, as HeadLab widens them.
    tensors = {k: v.float() if v.dtype in (torch.bfloat16, torch.float16) else v for k, v in raw.items()}
    return Checkpoint(tensors, metadata, config, model, step)


def _norm(ckpt, x, prefix):
    g = ckpt.tensors[prefix + ".gain"]
    if ckpt.model["norm"] == "unit_scale":  # s * x / ||x||
        return g * x / x.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    # LayerNorm with the unbiased variance and eps 1e-9, a gain and a shift.
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=True, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-9) * g + ckpt.tensors[prefix + ".shift"]


def stabilizers(ckpt):
    """The run's `stabilizers:` (docs/STABILIZERS.md), with the defaults filled in."""
    out = {"qk_norm": "off", "softcap": 0.0, "z_loss": 0.0, "sigma_reparam": "off",
           "independent_weight_decay": 0.0}
    out.update(ckpt.config.get("stabilizers") or {})
    return out


def _unit(x):
    return x / x.norm().clamp_min(1e-12)


def weight(ckpt, name, train=False):
    """Weight `name` as the forward pass uses it. Under σReparam (Zhai et al. 2023) that is
    γ/σ(W)·W with σ(W) = uᵀWv; in training (`train`) u and v first take one power-iteration step,
    u ← Wv/‖Wv‖, v ← Wᵀu/‖Wᵀu‖, kept in the checkpoint's tensors (as HeadLab keeps them)."""
    w = ckpt.tensors[name]
    if name + ".gamma" not in ckpt.tensors:
        return w
    u, v = ckpt.tensors[name + ".sigma_u"], ckpt.tensors[name + ".sigma_v"]
    if train:
        with torch.no_grad():
            u = _unit(w.detach() @ v)
            v = _unit(w.detach().T @ u)
        ckpt.tensors[name + ".sigma_u"], ckpt.tensors[name + ".sigma_v"] = u, v
    sigma = u @ w @ v
    return ckpt.tensors[name + ".gamma"].reshape(()) / sigma * w


def _linear(ckpt, x, w, b=None, train=False):
    y = x @ weight(ckpt, w, train)  # weights are stored (in, out): y = x W
    if ckpt.model["bias"] and b is not None:
        y = y + ckpt.tensors[b]
    return y


def z_loss(logits):
    """Mean over positions of log²Z, Z = Σ exp(logits) (Wortsman et al. 2023's z-loss, without its
    coefficient)."""
    return torch.logsumexp(logits, -1).pow(2).mean()


def attention_weights_and_output(ckpt, h, layer, train=False):
    """Layer `layer`'s attention on normalised input h (B, T, m): weights (B, heads, T, T) and output."""
    p = f"layers.{layer}."
    heads = ckpt.model["heads"][layer] * ckpt.model["width_multiplier"]
    hd = ckpt.model["head_dims"][layer]
    stab = stabilizers(ckpt)
    B, T, _ = h.shape
    split = lambda t: t.reshape(B, T, heads, hd).transpose(1, 2)  # (B, heads, T, hd)
    q = split(_linear(ckpt, h, p + "wq", p + "bq", train))
    k = split(_linear(ckpt, h, p + "wk", p + "bk", train))
    v = split(_linear(ckpt, h, p + "wv", p + "bv", train))
    if stab["qk_norm"] != "off":  # qk-layernorm (Dehghani et al. 2023): each head's q and k
        q = torch.nn.functional.layer_norm(q, (hd,), eps=1e-6)
        k = torch.nn.functional.layer_norm(k, (hd,), eps=1e-6)
        if stab["qk_norm"] == "gain":  # a learned gain per head and dimension
            q = q * ckpt.tensors[p + "q_norm.gain"].reshape(heads, 1, hd)
            k = k * ckpt.tensors[p + "k_norm.gain"].reshape(heads, 1, hd)
    scores = (q @ k.transpose(-1, -2)) * ckpt.model["logit_scales"][layer]
    if stab["softcap"] > 0:  # logit soft-capping
        scores = stab["softcap"] * torch.tanh(scores / stab["softcap"])
    if ckpt.model["causal"]:
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    weights = scores.softmax(-1)
    o = (weights @ v).transpose(1, 2).reshape(B, T, heads * hd)
    out = _linear(ckpt, o, p + "wo", p + "bo", train) / ckpt.model["width_multiplier"]
    return weights, out


def forward(ckpt, tokens, attention=None):
    """Logits (B, T, vocab) of the checkpoint's model for tokens (B, T). Pass a list as
    `attention` to get each layer's attention weights (B, heads, T, T) appended to it."""
    with torch.no_grad():
        return _forward(ckpt, tokens, attention)


def _forward(ckpt, tokens, attention=None, train=False):
    # Token tasks embed; nearest neighbour feeds its points (B, T, d_model) as they are.
    x = ckpt.tensors["embedding"][tokens] if "embedding" in ckpt.tensors else tokens.to(torch.float32)
    if "positions" in ckpt.tensors:
        x = x + ckpt.tensors["positions"][: tokens.shape[1]]
    act = torch.nn.functional.gelu if ckpt.model["activation"] == "gelu" else torch.relu
    mlp = lambda l, h: _linear(ckpt, act(_linear(ckpt, h, f"layers.{l}.w1", f"layers.{l}.b1", train)),
                               f"layers.{l}.w2", f"layers.{l}.b2", train)
    for l in range(len(ckpt.model["heads"])):
        n1, n2 = f"layers.{l}.norm1", f"layers.{l}.norm2"
        pre = ckpt.model["placement"] == "pre"
        weights, out = attention_weights_and_output(ckpt, _norm(ckpt, x, n1) if pre else x, l, train)
        if attention is not None:
            attention.append(weights)
        if pre:
            x = x + out
            x = x + mlp(l, _norm(ckpt, x, n2))
        else:
            x = _norm(ckpt, x + out, n1)
            x = _norm(ckpt, x + mlp(l, x), n2)
    if ckpt.model["final_norm"]:
        x = _norm(ckpt, x, "final_norm")
    return x @ ckpt.tensors["unembedding"] if "unembedding" in ckpt.tensors else x


class Model(torch.nn.Module):
    """A checkpoint's transformer as a plain PyTorch module: its weights are the module's
    parameters (names as in the checkpoint, dots as underscores), forward(tokens) gives the logits
    (or, for nearest neighbour, the outputs), attention(tokens) each layer's attention weights."""

    def __init__(self, ckpt):
        super().__init__()
        self.checkpoint = ckpt
        self.config, self.shapes, self.step = ckpt.config, ckpt.model, ckpt.step
        names = [n for n in ckpt.tensors if not n.startswith(("optimizer.", "curve.", "run."))]
        # σReparam's power-iteration vectors are state, not parameters.
        self._buffers_of = [n for n in names if n.endswith((".sigma_u", ".sigma_v"))]
        self._names = [n for n in names if n not in self._buffers_of]
        for n in self._names:
            self.register_parameter(n.replace(".", "_"), torch.nn.Parameter(ckpt.tensors[n].clone()))
        for n in self._buffers_of:
            self.register_buffer(n.replace(".", "_"), ckpt.tensors[n].clone())
        self.eval()  # inspecting: no power-iteration step; .train() takes one per forward pass

    def _view(self):
        tensors = {n: getattr(self, n.replace(".", "_")) for n in self._names + self._buffers_of}
        return Checkpoint(tensors, self.checkpoint.metadata, self.config, self.shapes, self.step)

    def forward(self, tokens):
        view = self._view()
        out = _forward(view, tokens, train=self.training)
        for n in self._buffers_of:  # the step's vectors, kept
            getattr(self, n.replace(".", "_")).copy_(view.tensors[n])
        return out

    def attention(self, tokens):
        maps = []
        with torch.no_grad():
            _forward(self._view(), tokens, attention=maps)
        return maps

    @property
    def logged_test_loss(self):
        return self.checkpoint.logged_test_loss


# The addition task (EXPERIMENTS.md §1): "Input : A = a a a + b b b , A i = ? Output : c", where c
# is digit i of a + b and the operands of pair p are two draws of numpy's RandomState(p).randint(0, 999).
VOCAB = ["[PAD]", "[UNK]", "[BOS]", "[EOS]", "Input", "Output", "A", ":", "=", "+", ",", "?"] + list("0123456789")
TOK = {t: i for i, t in enumerate(VOCAB)}


def addition_samples(count, pair_base):
    rows = []
    for s in range(count):
        pair, i = s // 3 + pair_base, s % 3
        rs = np.random.RandomState(pair)
        a, b = int(rs.randint(0, 999)), int(rs.randint(0, 999))
        c = (a + b) // (1, 10, 100)[i] % 10
        d = lambda n: TOK[str(n)]
        rows.append([TOK["Input"], TOK[":"], TOK["A"], TOK["="], d(a // 100), d(a // 10 % 10), d(a % 10), TOK["+"],
                     d(b // 100), d(b // 10 % 10), d(b % 10), TOK[","], TOK["A"], d(i), TOK["="], TOK["?"],
                     TOK["Output"], TOK[":"], d(c)])
    return torch.tensor(rows, dtype=torch.int64)


def addition_test_loss(ckpt):
    """The answer's cross-entropy over the test set, as HeadLab evaluates it."""
    task = ckpt.config["task"]
    test = addition_samples(3 * int(task["test_pairs"]), int(task["test_pair_base"]))
    logits = forward(ckpt, test[:, :18])[:, -1]
    return float(torch.nn.functional.cross_entropy(logits, test[:, 18]))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m headlab.checkpoint CHECKPOINT.safetensors")
    ckpt = load(sys.argv[1])
    print(f"step {ckpt.step}, task {ckpt.config['task']['kind']}, d_model {ckpt.model['d_model']}, "
          f"heads {ckpt.model['heads']}, {ckpt.model['parameters']} parameters")
    if ckpt.config["task"]["kind"] != "addition":
        sys.exit(0)
    print(f"test loss {addition_test_loss(ckpt):.9g} (logged {ckpt.logged_test_loss!r})")
