"""stabilizer_speed.py RUNS.csv HEADS REPEAT — one row per choice of bench/gpu_stabilizers.sh's
speed session: heads, repeat, choice, run-steps/s (8 runs × the steps/s of the ensembles of 8 its
runs trained in, averaged) and its ratio to no stabilizer (qk_rule=off), in the same process."""
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
labels = [k for k in rows[0] if k.startswith("label_") and k != "label_seed"]
speed = {}
for r in rows:  # every run of an ensemble of 8 carries its ensemble's steps/s
    choice = " ".join(f"{k[6:]}={r[k]}" for k in labels if r[k])
    if choice == "model.bias=true":  # the warm-up ensemble: not a choice
        continue
    speed.setdefault(choice, []).append(8 * float(r["steps_per_second"]))
speed = {choice: sum(v) / len(v) for choice, v in speed.items()}
base = speed["qk_rule=off"]
for choice, sps in speed.items():
    print(f"{sys.argv[2]},{sys.argv[3]},{choice},{sps:.1f},{sps / base:.3f}")
