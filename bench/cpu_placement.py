#!/usr/bin/env python3
"""cpu_placement.py — issue 79 item 3's last two levers, each on and off, on this machine's CPU.

1. Products batched across an ensemble's runs. Four seeds of one shape (the classroom's model,
   d 24, at 1 head and at 12 heads; nn-classroom's d 16 with 8 points) trained by headlab-cli as
   one ensemble, whose products take the four runs as one batch (on one thread: the runner's plan
   on 2 cores before it split ensembles over the cores; and on two), against the same four runs one
   after another (--max-ensemble 1), two at a time side by side (--max-ensemble 1 --concurrent 2
   --threads 1), as two ensembles of two side by side (--max-ensemble 2 --concurrent 2
   --threads 1), and the runner's own plan (no flags). Run-steps per second.
2. Threads placed so that side-by-side runs do not contend. The classroom preset (four runs, four
   ensembles on a CPU: head counts train apart there) under the runner's plan (on 2 cores two
   runs side by side, one thread each), against two side by side with every core each
   (--concurrent 2 --threads 2: four threads on two cores) and one at a time with every core
   (--concurrent 1 --threads 2), and under the plan with denormal floats computed in full
   (HEADLAB_FLUSH_DENORMALS=0; the training threads flush them to zero by default). Seconds until
   the contrast is on screen and until all four are done, read as bench/classroom_time.py reads
   them.

The arrangements alternate within each repeat. One JSON line a measurement:

    taskset -c 0,1 python3 bench/cpu_placement.py OUT.jsonl [REPEATS]
    HEADLAB_CLI  the headlab-cli (default build/app/cli/headlab-cli)
"""
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import classroom_time  # noqa: E402  (the contrast's reading)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.environ.get("HEADLAB_CLI", os.path.join(ROOT, "build", "app", "cli", "headlab-cli"))
SEEDS = 4

# The shapes of part 1: a session of SEEDS seeds each, η fixed, no early end.
ADDITION = """\
schema_version: 2
name: ensemble-{name}
experiment:
  task: {{kind: addition, train_pairs: 64000, test_pairs: 192, test_pair_base: 64000}}
  model: {{d_model: 24, heads: {heads}, layers: 2}}
  phases:
    - {{name: answer, objective: answer, steps: {steps}, batch_size: 256, lr: scanned}}
  lr: 1.5e-3
  eval_every: 100
  log_every: 50
  device: cpu
sweep:
  seed: [0, 1, 2, 3]
"""
NEAREST = """\
schema_version: 2
name: ensemble-{name}
experiment:
  task: {{kind: nearest_neighbour, point_dim: 16, num_points: 8}}
  model: {{d_model: 16, heads: {heads}, layers: 1, ffn_width: 64, norm: unit_scale,
          placement: post_norm, final_norm: false, causal: false, bias: true, activation: relu,
          zero_init_outputs: false}}
  phases:
    - name: train
      objective: regression
      steps: {steps}
      batch_size: 64
      lr: scanned
      optimizer: {{kind: adamw, beta1: 0.9, beta2: 0.95}}
      schedule: {{kind: warmup_cosine, warmup_fraction: 0.05, step_every: 100}}
  lr: 1.0e-2
  eval_every: 100
  log_every: 50
  device: cpu
sweep:
  seed: [0, 1, 2, 3]
"""
SHAPES = [
    ("classroom 24 x 1", ADDITION, {"heads": 1, "steps": 800}),
    ("classroom 24 x 12", ADDITION, {"heads": 12, "steps": 400}),
    ("nn-classroom 16 x 1", NEAREST, {"heads": 1, "steps": 1500}),
]
ENSEMBLE_ARRANGEMENTS = [
    ("the runner's plan", []),
    ("one ensemble, 1 thread", ["--concurrent", "1", "--threads", "1"]),
    ("one ensemble, 2 threads", ["--concurrent", "1", "--threads", "2"]),
    ("one after another, 2 threads", ["--max-ensemble", "1", "--concurrent", "1", "--threads", "2"]),
    ("two side by side, 1 thread each",
     ["--max-ensemble", "1", "--concurrent", "2", "--threads", "1"]),
    ("two ensembles of two side by side, 1 thread each",
     ["--max-ensemble", "2", "--concurrent", "2", "--threads", "1"]),
]
PLACEMENTS = [
    ("the runner's plan", [], {}),
    ("two side by side, 2 threads each", ["--concurrent", "2", "--threads", "2"], {}),
    ("one at a time, 2 threads", ["--concurrent", "1", "--threads", "2"], {}),
    ("the runner's plan, denormals in full", [], {"HEADLAB_FLUSH_DENORMALS": "0"}),
]


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def commit():
    p = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                       text=True)
    return p.stdout.strip()


def ensemble_rate(text, extra):
    """Trains the session in a fresh folder; run-steps per second of the whole session."""
    with tempfile.TemporaryDirectory() as folder:
        source = os.path.join(folder, "in.yaml")
        with open(source, "w") as f:
            f.write(text)
        begin = time.monotonic()
        subprocess.run([CLI, "run", source, "-o", os.path.join(folder, "out.yaml"), *extra],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.monotonic() - begin
        steps = 0
        for name in os.listdir(os.path.join(folder, "out.results", "runs")):
            if not name.endswith(".yaml"):
                continue
            with open(os.path.join(folder, "out.results", "runs", name)) as f:
                doc = yaml.safe_load(f)
            assert doc["status"] == "done", doc.get("message")
            steps += int(doc["steps_done"])
    return wall, steps


def main():
    out = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    cores = len(os.sched_getaffinity(0))
    common = {"machine": cpu_model(), "cores": cores, "date": time.strftime("%Y-%m-%d"),
              "commit": commit()}
    with open(out, "w") as sink:
        def emit(row):
            row = {**common, **row}
            print(json.dumps(row), flush=True)
            sink.write(json.dumps(row) + "\n")
            sink.flush()

        for repeat in range(repeats):
            for shape, template, values in SHAPES:
                text = template.format(name=shape.replace(" ", "-"), **values)
                for arrangement, extra in ENSEMBLE_ARRANGEMENTS:
                    wall, steps = ensemble_rate(text, extra)
                    emit({"part": "ensemble", "shape": shape, "runs": SEEDS,
                          "arrangement": arrangement, "args": " ".join(extra), "repeat": repeat,
                          "seconds": round(wall, 3), "run_steps": steps,
                          "run_steps_per_second": round(steps / wall, 2)})
            for arrangement, extra, env in PLACEMENTS:
                with tempfile.TemporaryDirectory() as folder:
                    runs, total = classroom_time.train(folder, extra, env)
                seconds, many, one = classroom_time.message_time(runs)
                args = " ".join([f"{k}={v}" for k, v in env.items()] + extra)
                emit({"part": "placement", "shape": "classroom preset", "runs": len(runs),
                      "arrangement": arrangement, "args": args, "repeat": repeat,
                      "contrast_seconds": round(seconds, 2),
                      "all_done_seconds": round(total, 2)})


if __name__ == "__main__":
    main()
