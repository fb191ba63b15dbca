"""HeadLab's stabilizers (docs/STABILIZERS.md) against an independent PyTorch implementation.

For each configuration below, tests/python/stabilizer_dump.cpp trains the session's runs as one
ensemble for three steps in HeadLab's C++, writes each run's checkpoint, then one more step's
loss, gradients, σReparam vectors and optimizer update. headlab.checkpoint — plain PyTorch written
from the papers (qk-layernorm: Dehghani et al. 2023; soft-capping; z-loss: Wortsman et al. 2023;
σReparam: Zhai et al. 2023) — recomputes them from the checkpoint and the batch:

- the power-iteration step of σReparam, the loss (with z-loss), and every parameter's gradient
  (autograd) within 1e-4 of the largest value (float32 in two orders of summation);
- the optimizer step, with the weight decay that ignores η, from its formula;
- σ(W) after 300 power-iteration steps against torch.linalg.matrix_norm(W, ord=2);
- the z-loss term against logsumexp² by hand.

A run trained by headlab-cli with every stabilizer on reproduces its logged test loss from its
checkpoints (the whole pipeline: sessions, checkpoints with σReparam's state, evaluation).

Run by ctest (python_stabilizers) with HEADLAB_STABILIZER_DUMP and HEADLAB_CLI set.
"""
import math
import os
import subprocess
import sys
import tempfile
import unittest

import torch
from safetensors import safe_open
from safetensors.torch import load_file

SOURCE = os.environ.get("HEADLAB_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "python"))
from headlab import checkpoint as hc  # noqa: E402

DUMP = os.environ.get("HEADLAB_STABILIZER_DUMP",
                      os.path.join(SOURCE, "build", "tests", "python", "stabilizer_dump"))
CLI = os.environ.get("HEADLAB_CLI", os.path.join(SOURCE, "build", "app", "cli", "headlab-cli"))

ADDITION = "{kind: addition, train_pairs: 64, test_pairs: 8}"


def session(task, model, stabilizers, sweep="seed: [0, 1]\n  lr: [1e-2, 3e-2]", kind="adam",
            objective="next_token"):
    return f"""schema_version: 2
name: s
experiment:
  task: {task}
  model: {model}
  phases:
    - {{name: p, objective: {objective}, steps: 10, batch_size: 4, optimizer: {{kind: {kind}}}}}
  device: cpu
  stabilizers: {stabilizers}
sweep:
  {sweep}
"""


# name → session; every one a small model whose runs form one ensemble.
CASES = {
    "qk_norm": session(ADDITION, "{d_model: 16, heads: 2, layers: 2, zero_init_outputs: false}",
                       "{qk_norm: on}"),
    # Runs of different head counts in one ensemble (grouped heads, micro-heads with a mix).
    "qk_norm_gain_grouped": session(ADDITION, "{d_model: 16, heads: 2, layers: 1}", "{qk_norm: gain}",
                                    sweep="heads: [2, 4]\n  lr: [1e-2]"),
    "softcap_fused_path": session(ADDITION, "{d_model: 16, heads: 2, layers: 1, zero_init_outputs: false}",
                                  "{softcap: 0.3}"),
    "softcap_micro_heads": session(ADDITION, "{d_model: 16, heads: 2, layers: 1, zero_init_outputs: false}",
                                   "{softcap: 0.3}",
                                   sweep="heads: [1, 4]\n  lr: [1e-2]"),
    "z_loss": session(ADDITION, "{d_model: 16, heads: 2, layers: 1, zero_init_outputs: false}",
                      "{z_loss: 0.05}"),
    "sigma_reparam_qk": session(ADDITION, "{d_model: 16, heads: 2, layers: 2}", "{sigma_reparam: qk}"),
    "sigma_reparam_all": session(ADDITION, "{d_model: 16, heads: 4, layers: 1, zero_init_outputs: false}",
                                 "{sigma_reparam: all}"),
    "independent_weight_decay": session(ADDITION, "{d_model: 16, heads: 2, layers: 1}",
                                        "{independent_weight_decay: 0.05}", kind="adamw"),
    "all_text": session("{kind: text, corpus_bytes: 20000, context_length: 16}",
                        "{d_model: 16, heads: 2, layers: 1, zero_init_outputs: false, bias: true}",
                        "{qk_norm: gain, softcap: 2, z_loss: 0.01, sigma_reparam: all, "
                        "independent_weight_decay: 0.01}"),
    "all_nearest_neighbour": session("{kind: nearest_neighbour, point_dim: 16, num_points: 4}",
                                     "{d_model: 16, heads: 2, layers: 1, init: pytorch, "
                                     "zero_init_outputs: false, final_norm: false}",
                                     "{qk_norm: gain, softcap: 2, sigma_reparam: all, "
                                     "independent_weight_decay: 0.01}",
                                     objective="regression"),
}


def close(test, got, want, what, rel=1e-4, floor=1e-6):
    got, want = got.detach().double(), want.detach().double()
    scale = want.abs().max().item() if want.numel() else 0.0
    err = (got - want).abs().max().item() if want.numel() else 0.0
    test.assertLessEqual(err, rel * scale + floor, f"{what}: max |diff| {err:.3g}, max |value| {scale:.3g}")


class TestStabilizers(unittest.TestCase):
    def dump(self, name):
        tmp = tempfile.mkdtemp(prefix=f"stab-{name}-")
        path = os.path.join(tmp, "s.yaml")
        with open(path, "w") as f:
            f.write(CASES[name])
        done = subprocess.run([DUMP, path, tmp], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        with safe_open(os.path.join(tmp, "dump.safetensors"), framework="pt") as f:
            meta = f.metadata()
        runs = sorted(n for n in os.listdir(tmp) if n.startswith("run-"))
        return tmp, load_file(os.path.join(tmp, "dump.safetensors")), meta, len(runs)

    def check(self, name):
        tmp, dump, meta, R = self.dump(name)
        lrs = [float(x) for x in meta["lr"].split()]
        schedule, t = float(meta["schedule"]), int(meta["adam_steps"])
        for r in range(R):
            ckpt = hc.load(os.path.join(tmp, f"run-{r}.safetensors"))
            stab = hc.stabilizers(ckpt)
            names = [n for n in ckpt.tensors if not n.startswith(("optimizer.", "curve.", "run."))
                     and not n.endswith((".sigma_u", ".sigma_v"))]
            before = {n: ckpt.tensors[n].clone() for n in names}
            for n in names:
                ckpt.tensors[n] = ckpt.tensors[n].clone().requires_grad_(True)
            x, y = dump["input"], dump["target"]
            if x.dtype != torch.int64:  # continuous points are per run
                x, y = x[r], y[r]
            out = hc._forward(ckpt, x, train=True)
            if ckpt.model["vocab_size"] > 0:
                loss = torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
                if stab["z_loss"] > 0:
                    z = hc.z_loss(out)
                    by_hand = sum(math.log(sum(math.exp(v) for v in row)) ** 2
                                  for row in out.detach().double().reshape(-1, out.shape[-1]).tolist())
                    by_hand /= out.shape[0] * out.shape[1]
                    self.assertAlmostEqual(z.item(), by_hand, delta=1e-4 * by_hand, msg=f"{name}: z-loss")
                    loss = loss + stab["z_loss"] * z
            else:
                loss = (out - y).pow(2).mean()
            close(self, loss.reshape(1), dump["loss"][r].reshape(1), f"{name} run {r}: loss", rel=1e-5)
            for n in [n for n in ckpt.tensors if n.endswith((".sigma_u", ".sigma_v"))]:
                close(self, ckpt.tensors[n], dump["after." + n][r], f"{name} run {r}: {n} after a power step")
            loss.backward()
            for n in names:
                self.assertIn("grad." + n, dump, n)
                close(self, ckpt.tensors[n].grad, dump["grad." + n][r], f"{name} run {r}: gradient of {n}")
            # The optimizer step from its formula: decay that ignores η, then Adam (or AdamW).
            beta1, beta2, eps = 0.9, 0.999, 1e-8
            decay = stab["independent_weight_decay"]
            for n in names:
                p, g = before[n].double(), dump["grad." + n][r].double()
                m = ckpt.tensors["optimizer.exp_avg." + n].double()
                v = ckpt.tensors["optimizer.exp_avg_sq." + n].double()
                p = p * (1 - decay * schedule)
                m = beta1 * m + (1 - beta1) * g
                v = beta2 * v + (1 - beta2) * g * g
                update = (m / (1 - beta1 ** t)) / ((v / (1 - beta2 ** t)).sqrt() + eps)
                p = p - lrs[r] * schedule * update
                close(self, p, dump["step." + n][r], f"{name} run {r}: optimizer step of {n}", rel=1e-5)
            # σ after many power-iteration steps is the spectral norm.
            for key in [k for k in dump if k.startswith("sigma.")]:
                w = dump["final." + key[len("sigma."):]][r].double()
                want = torch.linalg.matrix_norm(w, ord=2)
                self.assertAlmostEqual(dump[key][r].item(), want.item(), delta=1e-4 * want.item(),
                                       msg=f"{name} run {r}: {key} against matrix_norm(ord=2)")

    def test_qk_norm(self):
        self.check("qk_norm")

    def test_qk_norm_gain_with_grouped_heads(self):
        self.check("qk_norm_gain_grouped")

    def test_softcap_on_the_fused_path(self):
        self.check("softcap_fused_path")

    def test_softcap_on_micro_heads(self):
        self.check("softcap_micro_heads")

    def test_z_loss(self):
        self.check("z_loss")

    def test_sigma_reparam_qk(self):
        self.check("sigma_reparam_qk")

    def test_sigma_reparam_all(self):
        self.check("sigma_reparam_all")

    def test_independent_weight_decay(self):
        self.check("independent_weight_decay")

    def test_every_stabilizer_on_the_text_task(self):
        self.check("all_text")

    def test_every_stabilizer_on_nearest_neighbour(self):
        self.check("all_nearest_neighbour")

    def test_a_trained_run_reproduces_its_logged_test_loss(self):
        tmp = tempfile.mkdtemp(prefix="stab-cli-")
        path = os.path.join(tmp, "s.yaml")
        with open(path, "w") as f:
            f.write(f"""schema_version: 2
name: s
checkpoints: {{every: 20, keep: 5}}
experiment:
  task: {{kind: addition, train_pairs: 256, test_pairs: 16}}
  model: {{d_model: 16, heads: 2, layers: 1, zero_init_outputs: false}}
  phases:
    - {{name: answer, objective: answer, steps: 60, batch_size: 8}}
  eval_every: 20
  device: cpu
  stabilizers: {{qk_norm: gain, softcap: 3, z_loss: 1e-3, sigma_reparam: all, independent_weight_decay: 1e-3}}
sweep:
  lr: [3e-3, 1e-2]
""")
        done = subprocess.run([CLI, "run", path, "--threads", "1"], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        folder = os.path.join(tmp, "s.results", "checkpoints")
        files = [os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs if f.endswith(".safetensors")]
        self.assertGreaterEqual(len(files), 6)
        for f in files:
            ckpt = hc.load(f)
            self.assertIn("layers.0.wo.sigma_u", ckpt.tensors)
            logged = ckpt.logged_test_loss
            if logged is None:
                continue
            self.assertLess(abs(hc.addition_test_loss(ckpt) - logged), 1e-5, f)


if __name__ == "__main__":
    unittest.main(verbosity=2)
