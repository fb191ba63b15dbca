"""test_core's golden training trajectory, from an independent implementation (llm.c style).

HeadLab's C++ initialises the run (tests/python/trajectory_dump.cpp writes its step-0 checkpoint
and its training set in the trainer's order); from there everything is plain PyTorch:
headlab.checkpoint's model (written from EXPERIMENTS.md, not from HeadLab's C++), the answer
position's cross-entropy, and torch.optim.Adam. The 20 training losses it prints are
tests/core/golden_trajectory.inc, which test_core's goldenTrajectory compares HeadLab's trainer
with (to 1e-4 relative: float32 in two orders of summation over 20 Adam steps).

  .venv/bin/python tests/python/golden_trajectory.py > tests/core/golden_trajectory.inc
  .venv/bin/python tests/python/golden_trajectory.py --check tests/core/golden_trajectory.inc

HEADLAB_TRAJECTORY_DUMP names the dump program (default build/tests/python/trajectory_dump). With
--check (ctest's python_golden), the file must hold what this prints, to 1e-6 relative: the
checked-in golden is this script's output.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import torch
from safetensors import safe_open

SOURCE = os.environ.get("HEADLAB_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "python"))
from headlab import checkpoint as hc  # noqa: E402

DUMP = os.environ.get("HEADLAB_TRAJECTORY_DUMP",
                      os.path.join(SOURCE, "build", "tests", "python", "trajectory_dump"))
COMMAND = ".venv/bin/python tests/python/golden_trajectory.py > tests/core/golden_trajectory.inc"


def trajectory(folder):
    subprocess.run([DUMP, folder], check=True)
    with safe_open(os.path.join(folder, "train.safetensors"), framework="pt") as f:
        train = f.get_tensor("train")
        meta = f.metadata()
    steps, batch = int(meta["steps"]), int(meta["batch_size"])
    assert meta["objective"] == "answer"
    torch.manual_seed(0)
    model = hc.Model(hc.load(os.path.join(folder, "run-0.safetensors")))
    model.train()
    adam = torch.optim.Adam(model.parameters(), lr=float(meta["lr"]),
                            betas=(float(meta["beta1"]), float(meta["beta2"])),
                            eps=float(meta["eps"]), foreach=False)
    losses = []
    answer = train.shape[1] - 1  # the answer digit is the last token; the model sees the rest
    for t in range(steps):
        rows = (torch.arange(batch) + t * batch) % train.shape[0]
        sample = train[rows]
        logits = model(sample[:, :answer])[:, -1]  # the prediction at the last input position
        loss = torch.nn.functional.cross_entropy(logits, sample[:, answer])
        losses.append(loss.item())
        adam.zero_grad()
        loss.backward()
        adam.step()
    return losses


def render(losses):
    lines = [f"// {len(losses)} train losses of tinyAddition(3e-3, 20, 7), trained in plain PyTorch from",
             "// HeadLab's step-0 checkpoint (tests/python/golden_trajectory.py):",
             f"//   {COMMAND}"]
    lines += [f"    {v:.9g}," for v in losses]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", metavar="FILE", help="compare with FILE instead of printing")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        losses = trajectory(folder)
    if not args.check:
        sys.stdout.write(render(losses))
        return 0
    with open(args.check) as f:
        text = f.read()
    golden = [float(v) for v in re.findall(r"^\s+([-0-9.e+]+),", text, re.M)]
    if len(golden) != len(losses):
        print(f"{args.check}: {len(golden)} values, this script gives {len(losses)}")
        return 1
    bad = [(i, g, v) for i, (g, v) in enumerate(zip(golden, losses)) if abs(g - v) > 1e-6 * max(1, abs(g))]
    for i, g, v in bad:
        print(f"step {i + 1}: {args.check} has {g:.9g}, PyTorch gives {v:.9g}")
    if bad:
        print(f"regenerate with: {COMMAND}")
        return 1
    print(f"{args.check}: the {len(golden)} values are PyTorch's (to 1e-6)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
