#!/usr/bin/env python3
"""report.py — turns bench JSON lines into the tables of docs/PERFORMANCE.md.

    python3 bench/report.py --gpu GPU.jsonl --cpu CPU.jsonl > docs/PERFORMANCE.md

Every ratio divides two numbers measured in the same file, i.e. in one run on one machine.
"""
import argparse
import csv
import json
import math
import os
import statistics

WIDTHS = [24, 48, 96, 192, 384]
T, V = 18, 22  # positions fed to the addition model, vocabulary (as bench/compute_floor.py)


def answer_step_flops(m, runs):
    """Matmul FLOPs of one answer-only training step of `runs` runs, batch 64 (compute_floor.py)."""
    layer1 = T * (24 * m * m + 4 * T * m)
    layer2 = T * 4 * m * m + 20 * m * m + 4 * T * m
    return 3 * 64 * (layer1 + layer2 + 2 * m * V) * runs


def load(path):
    rows = []
    if path:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    rows.append(json.loads(line))
    return rows


def by(rows, impl):
    return {(r["m"], r["heads"]): r for r in rows if r.get("impl") == impl}


def fmt(x, digits=0):
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:,.{digits}f}"


def gpu_section(path, out):
    rows = load(path)
    gpu = next((r["gpu"] for r in rows if "gpu" in r), "unknown GPU")
    out.append(f"## GPU: {gpu}\n")
    out.append(f"Measured by `bench/gpu_bench.sh` in one run on this card (`{path}`). Baselines: `bench/reference_addition.py`, the "
               "paper's model in eager PyTorch with batches already on the GPU, and the same step under "
               "`torch.compile(mode=\"reduce-overhead\")` (CUDA graphs). Steps: answer-only phase, batch 64.\n")
    single, nog = by(rows, "headlab-single"), by(rows, "headlab-single-no-graphs")
    eager, comp = by(rows, "eager"), by(rows, "torch.compile(reduce-overhead)")
    out.append("### One run (steps/s)\n")
    out.append("| m × n_H | eager | torch.compile | HeadLab, no graphs | HeadLab | × eager | × compile |")
    out.append("|---|---|---|---|---|---|---|")
    for key in sorted(single):
        s = single[key]["steps_per_s"]
        e = eager.get(key, {}).get("steps_per_s")
        c = comp.get(key, {}).get("steps_per_s")
        n = nog.get(key, {}).get("steps_per_s")
        out.append(f"| {key[0]} × {key[1]} | {fmt(e)} | {fmt(c)} | {fmt(n)} | {fmt(s)} | "
                   f"{fmt(s / e if e else None, 2)} | {fmt(s / c if c else None, 2)} |")
    warm = [r["warmup_s"] for r in rows if r.get("impl", "").startswith("torch.compile")]
    if warm:
        out.append(f"\ntorch.compile spent {min(warm):.0f}–{max(warm):.0f} s compiling each shape; HeadLab captures its "
                   "graph after 3 eager steps, in milliseconds.\n")
    ens = [r for r in rows if r.get("impl") in ("headlab-ensemble", "headlab-ensemble-tf32")]
    if ens:
        out.append("### Ensembles (run-steps/s: steps/s × runs trained together)\n")
        out.append("| m | runs | FP32 run-steps/s | TF32 run-steps/s |")
        out.append("|---|---|---|---|")
        fp = {(r["m"], r["runs"]): r["run_steps_per_s"] for r in ens if r["impl"] == "headlab-ensemble"}
        tf = {(r["m"], r["runs"]): r["run_steps_per_s"] for r in ens if r["impl"] == "headlab-ensemble-tf32"}
        for key in sorted(set(fp) | set(tf)):
            out.append(f"| {key[0]} | {key[1]} | {fmt(fp.get(key))} | {fmt(tf.get(key))} |")
    floors = {r["floor"]: r for r in rows if "floor" in r}
    if ens and floors:
        out.append("\nEach 50-run ensemble's step against its own compute floor (its matmul FLOPs over the card's "
                   "measured batched rate, the same rates as the grid floor below):\n")
        out.append("| m | FP32 ms/step | FP32 floor ms | × floor | TF32 ms/step | TF32 floor ms | × floor |")
        out.append("|---|---|---|---|---|---|---|")
        for m in WIDTHS:
            cells = []
            for name, table in (("fp32", fp), ("tf32", tf)):
                rs = table.get((m, 50))
                fl = floors.get(name)
                if rs and fl:
                    ms = 50 / rs * 1e3
                    floor = answer_step_flops(m, 50) / (fl["batched_grid_tflops"] * 1e12) * 1e3
                    cells += [f"{ms:.2f}", f"{floor:.2f}", f"{ms / floor:.1f}"]
                else:
                    cells += ["—"] * 3
            out.append(f"| {m} | " + " | ".join(cells) + " |")
    sweeps = [r for r in rows if r.get("impl", "").startswith("headlab-sweep") and r.get("runs") == 250]
    if sweeps or ens:
        out.append("\n### The paper's full grid (25 shapes × 10 η × 30,500 steps)\n")
        out.append("Timed through the scheduler, as `headlab-cli run` trains it: all 250 runs (one ensemble per width, "
                   "mixing n_H ∈ {1, 2, 3, 6, 12} and 10 learning rates) for a slice of answer steps each, end to "
                   "end with start-up, graph capture and evaluations, then scaled to 30,500 steps: "
                   "time = wall × 30,500 / slice. The bench does not run the 3.5-hour grid.\n")
        out.append("| precision | ensembles at once | slice (steps) | wall (s) | grid time (min) | compute floor (min) | × floor |")
        out.append("|---|---|---|---|---|---|---|")
        for r in sweeps:
            name = "tf32" if r["impl"].endswith("tf32") else "fp32"
            minutes = r["seconds"] * 30500 / r["steps"] / 60
            fl = floors.get(name)
            fm = fl["floor_minutes"] if fl else None
            out.append(f"| {name.upper()} | {r.get('concurrent') or 'auto'} | {r['steps']:,} | {r['seconds']:.1f} | {minutes:.1f} | "
                       f"{fmt(fm, 1)} | {fmt(minutes / fm if fm else None, 2)} |")
        for name in ("fp32", "tf32"):
            fl = floors.get(name)
            if fl:
                out.append(f"\n{name.upper()} floor: {fl['grid_tflop']:,} TFLOP of matmuls at the grid's batched product rate "
                           f"{fl['batched_grid_tflops']} TFLOP/s (8192² square: {fl['square_8192_tflops']} TFLOP/s), measured in this run.")
    profile = [r for r in rows if r.get("profile") in ("total", "class")]
    if profile:
        out.append("\n### Where the m = 384 ensemble's step goes (50 runs, Kineto/CUPTI, GPU time per step)\n")
        out.append("| kernel class | FP32 ms | FP32 share | TF32 ms | TF32 share | kernels |")
        out.append("|---|---|---|---|---|---|")
        fpc = {r["class"]: r for r in profile if r["profile"] == "class" and not r.get("tf32")}
        tfc = {r["class"]: r for r in profile if r["profile"] == "class" and r.get("tf32")}
        for cls in sorted(fpc, key=lambda c: -fpc[c]["ms_per_step"]):
            a, b = fpc[cls], tfc.get(cls, {})
            out.append(f"| {cls} | {a['ms_per_step']:.2f} | {100 * a['share']:.0f} % | {fmt(b.get('ms_per_step'), 2)} | "
                       f"{fmt(100 * b['share'] if b else None, 0)} % | {a['kernels_per_step']:.0f} |")
        tot = {bool(r.get("tf32")): r for r in profile if r["profile"] == "total"}
        if False in tot:
            line = f"| total GPU time | {tot[False]['gpu_ms_per_step']:.2f} | | "
            line += f"{tot[True]['gpu_ms_per_step']:.2f} | | |" if True in tot else "— | | |"
            out.append(line)
        out.append("\n(\"other\" is HeadLab's fused Adam kernel; \"elementwise\" includes the copies that make tensors contiguous.)")
    checks = [r for r in rows if r.get("check")]
    if checks:
        out.append("\n### Agreement checks from the same run\n")
        for r in checks:
            if r["check"] == "devices":
                out.append(f"- `{r['device']}`: train loss at step 100 = {r['train_loss_step_100']:.8f}, "
                           f"test loss at step 100 = {r['test_loss_step_100']:.8f}")
            elif r["check"].startswith("equivalence") and "max_abs_diff" in r:
                out.append(f"- {r['check']} on {r['device']}: ensemble vs alone, max |Δ train loss| = {r['max_abs_diff']:.2g} "
                           f"(relative {r['max_rel_diff']:.2g}) over {r['steps']} steps")
            elif r["check"] == "determinism":
                out.append(f"- determinism on {r['device']}: the same seeded run twice, max |Δ loss| = {r['repeat_max_abs_diff']:.2g}; "
                           f"two copies in one ensemble, max |Δ loss| = {r['duplicates_in_ensemble_max_abs_diff']:.2g} ({r['steps']} steps)")
            elif r["check"] == "fused-adam":
                out.append(f"- fused Adam kernel vs ATen passes on {r['device']} ({r['optimizer']}): max |Δ train loss| = "
                           f"{r['max_abs_diff']:.2g} over {r['steps']} steps")
            elif r["check"] == "quick-demo-cuda":
                out.append(f"- the quick-demo preset on CUDA through headlab-cli: exit {r['exit']}")
    out.append("")


def cpu_section(path, out):
    rows = load(path)
    out.append("## CPU (2 cores, the CI machine kind)\n")
    info = next((r for r in rows if "cpu" in r), {})
    out.append(f"Measured by `bench/cpu_bench.sh` (`{path}`) in one run on " + info.get("cpu", "this CPU") +
               f", {info.get('threads', '?')} thread(s) on each side; the reference is the same eager PyTorch script on the "
               "CPU. Answer-only phase, batch 64.\n")
    single, eager = by(rows, "headlab-single"), by(rows, "eager")
    out.append("| m × n_H | eager PyTorch steps/s | HeadLab steps/s | ratio |")
    out.append("|---|---|---|---|")
    for key in sorted(single):
        s = single[key]["steps_per_s"]
        e = eager.get(key, {}).get("steps_per_s")
        out.append(f"| {key[0]} × {key[1]} | {fmt(e, 1)} | {fmt(s, 1)} | {fmt(s / e if e else None, 2)} |")
    sweep = next((r for r in rows if r.get("impl") == "headlab-sweep"), None)
    ref = [eager[k]["steps_per_s"] for k in eager if k[1] == 3 and k[0] in (24, 48, 96)]
    if sweep and ref:
        # The reference trains the 9 runs one after another: its run-steps/s is the harmonic mean.
        ref_rate = len(ref) / sum(1 / x for x in ref)
        out.append(f"\n9-run sweep (3 widths × 3 η, n_H = 3): HeadLab {sweep['run_steps_per_s']:.1f} run-steps/s "
                   f"(ensembles of up to {sweep.get('max_ensemble') or 'auto'}), eager reference one run at a time "
                   f"{ref_rate:.1f} → **{sweep['run_steps_per_s'] / ref_rate:.2f}×**.\n")


def addition_flops(m, batch, answer_only_last=True):
    """FLOPs of one training step of Liu's model (forward and backward, products and scores).
    answer_only_last: as HeadLab computes the answer phase (18 positions fed, the last layer at the
    last position only, compute_floor.py); else as the reference computes it (all 19 positions
    through both layers)."""
    if answer_only_last:
        return answer_step_flops(m, 1) * batch / 64
    t = T + 1
    return 3 * batch * (t * 2 * (24 * m * m + 4 * t * m) + t * 2 * m * V)


# The Adam lever's runs are told apart by shape and batch (bench/cpu_peers.sh part adam).
ADAM_LEVER_KEY = lambda r: (r["m"], r["heads"], r["batch"])  # noqa: E731


def cpu_timed_section(rows, path, out, alone_path=""):
    """Issue 79: the products and the rest of the steps that miss, timed by the clock without the profiler
    (headlab-bench single --timed 1: CpuProfile.h's TimedProducts); `rows`: the file `path`."""
    shapes = list(dict.fromkeys((r["m"], r["heads"]) for r in rows if r.get("profile") == "cpu-timed-total"))
    if not shapes:
        return
    by = timed_rows(rows)
    out.append(f"**Where the step's time goes, without the profiler** (`headlab-bench single --timed 1`, "
               f"`{path}`): each matrix product and each of the step's parts timed by the clock, in a "
               "callback on the operators, on the same 2 pinned cores; the peak is measured in the same run. "
               "*Rest* is the step less its products and the optimizer: the norms, GELUs, residual additions, "
               "the attention's softmax, copies, and the autograd engine between them.\n")
    out.append("| m × n_H | ms a step | products ms (share) | products GFLOP/s | % of peak | optimizer ms (share) "
               "| rest ms (share) |")
    out.append("|---|---|---|---|---|---|---|")
    product_shares, rest_shares, peak_shares, optimizer_shares = [], [], [], []
    for k in shapes:
        t, wall, prod, opt, rest = timed_split(by, k)
        if k[0] >= 192:  # the wide shapes' cause, below; the narrow ones' is in the paragraph above
            product_shares.append(prod / wall)
            rest_shares.append(rest / wall)
            optimizer_shares.append(opt / wall)
            peak_shares.append(t["peak_share"])
        out.append(f"| {k[0]} × {k[1]} | {fmt(wall, 1)} | {fmt(prod, 1)} ({fmt(100 * prod / wall, 0)} %) | "
                   f"{fmt(t['gflops'], 0)} | {fmt(100 * t['peak_share'], 0)} | {fmt(opt, 1)} "
                   f"({fmt(100 * opt / wall, 0)} %) | {fmt(rest, 1)} ({fmt(100 * rest / wall, 0)} %) |")
    out.append("")
    rng = lambda xs: percent_range([100 * x for x in xs])  # noqa: E731
    # Each product in the step against the same shapes alone, timed minutes apart on the same cores.
    alone = {(r["m"], r["heads"], " ".join(r["op"].split()[:3])): r["gflops_alone"]
             for r in (load(alone_path) if alone_path else []) if r.get("impl") == "bmm-alone"}
    ratios = [r["gflops"] / alone[(k[0], k[1], r["op"])] for k in shapes if k[0] >= 192
              for r in by.get(k, {}).get("cpu-timed-product", []) if (k[0], k[1], r["op"]) in alone]
    versus = (f", {rng(ratios)} of the rate each of its {len(ratios)} largest products reaches alone "
              f"(`bench/cpu_products_isolated.py`, `{alone_path}`, the same shapes timed minutes later)"
              if ratios else "")
    gains = [on / off for _, on, off in lever_pairs([r for r in rows if r.get("lever") == "adam"],
                                                    ADAM_LEVER_KEY, "adam")]
    adam_range = f"{fmt(min(gains), 2)}–{fmt(max(gains), 2)}×" if gains else "not measured"
    out.append("**The measured cause at the wide shapes.** Inside the step the products run at "
               f"{rng(peak_shares)} of the peak{versus}. The Kineto profiler with shapes recorded had shown "
               "the forward projections at 13–45 % of the peak "
               "(`docs/data/issue79/cpu-wide-products-2core-2026-12-05.jsonl`), but it made the step 4–5 "
               "times slower (107 against 23 ms at 192 × 12): those rows measured the step under the "
               f"profiler. What sets these steps is the rest: the products are {rng(product_shares)} of the "
               f"step, Adam {rng(optimizer_shares)} (memory-bound: it reads every parameter, its gradient and "
               "two moments each step), and the norms, GELUs, residual additions, softmax and the autograd "
               f"engine between the products {rng(rest_shares)}, each a pass over a 64 × 18 × m activation "
               "that inductor folds into its generated loops. Adam as one pass is measured below (the "
               f"lever table: {adam_range}; the optimizer column above is that pass); the layer as one "
               "function each way, for the rest, is not built.\n")


def timed_rows(rows):
    """headlab-bench --timed 1's rows by shape and kind (cpu-timed-total, -part, -product, -class)."""
    by = {}
    for r in rows:
        if str(r.get("profile", "")).startswith("cpu-timed"):
            by.setdefault((r["m"], r["heads"]), {}).setdefault(r["profile"], []).append(r)
    return by


def timed_split(by, shape):
    """A timed step of `shape` (m, heads): its total row, and the wall, products, optimizer and the
    rest in ms a step."""
    total = by[shape]["cpu-timed-total"][0]
    parts = {r["part"]: r["ms_per_step"] for r in by[shape].get("cpu-timed-part", [])}
    wall, prod = total["wall_ms_per_step"], total["product_ms_per_step"]
    opt = parts.get("headlab::optimizer", 0.0)
    return total, wall, prod, opt, wall - prod - opt


def cpu_peers_section(path, classroom_paths, out, timed_path="", alone_path="", nn_profile_path="",
                      lesson_press_path="", placement_path="", loop_levers_paths=()):
    """Issue 79: HeadLab against eager PyTorch and torch.compile on N pinned cores (bench/cpu_peers.sh),
    with GFLOP/s and the share of the cores' measured FP32 peak; the profile of a classroom step; the
    lanes lever; and the classroom's time to its contrast (bench/classroom_time.py)."""
    rows = load(path)
    levers = load(timed_path) if timed_path else []  # the timed wide steps and the levers' runs
    info = next((r for r in rows if r.get("machine") == "cpu"), {})
    peak = next((r for r in rows if r.get("impl") == "cpu-peak"), {})
    peak_gflops = peak.get("gflops") or float("nan")
    out.append(f"## CPU: HeadLab against compiled PyTorch on {info.get('threads', '?')} pinned cores\n")
    out.append(
        f"Measured by `bench/cpu_peers.sh` (`{path}`) in one run on {info.get('cpu', 'this CPU')}, cores "
        f"{info.get('cores', '?')} (`taskset`), {info.get('threads', '?')} threads on each side, PyTorch "
        f"{info.get('torch', '?')}, {info.get('date', '')}. For every shape HeadLab (`headlab-bench`), then its peer in "
        "eager PyTorch, then the same step under `torch.compile` (mode \"default\", inductor's C++/OpenMP code), "
        "in turn; each the fastest of three timed passes after its warm-up (and compile). Peers: Liu's model "
        "(`bench/reference_addition.py`), the nearest-neighbour model (`bench/reference_nn.py`), the text model "
        "(`bench/reference_text.py`), each with batches made beforehand.\n")
    if peak:
        out.append(
            f"**The cores' FP32 peak, measured** (`headlab-bench peak`): {peak['isa']}, {peak['lanes']} floats a "
            f"vector; one core ran {peak['gflops_per_core']:.0f} GFLOP/s of independent fused multiply-adds at "
            f"{peak['ghz']:.2f} GHz (the clock from a chain of dependent register adds, one a cycle), i.e. "
            f"{peak['fma_per_cycle']:.1f} vector FMAs a cycle: two FMA units. Both cores at once: "
            f"**{peak['gflops']:.0f} GFLOP/s**, the peak the shares below divide by (the cores are a VM's; a "
            "second busy core slows the first). One operator call that does no work costs "
            f"{peak['dispatch_us_per_call']:.2f} µs (an in-place add on one element): the framework's share of "
            "every op.\n")
    out.append("GFLOP/s counts the products and attention scores of the step as HeadLab computes it (for "
               "addition's answer phase the last layer runs at the answer position only, "
               "`bench/compute_floor.py`); the reference runs every position through both layers, so its "
               "executed rate is given beside it.\n")
    heads_of = lambda r: r["heads"]
    hl = {(r.get("set"), r["m"], r["heads"]): r for r in rows if r.get("impl") == "headlab-single" and r.get("set")}
    eager = {(r.get("set"), r["m"], r["heads"]): r for r in rows if r.get("impl") == "eager" and "m" in r}
    comp = {(r.get("set"), r["m"], r["heads"]): r for r in rows
            if str(r.get("impl", "")).startswith("torch.compile") and "m" in r}
    misses = []
    out.append("### Addition: the classroom preset (batch 256) and Figure 2 (batch 64)\n")
    out.append("| set | m × n_H | head width | HeadLab steps/s | eager | compiled | **÷ compiled** | "
               "HeadLab GFLOP/s | % of peak | compiled, executed GFLOP/s | % of peak |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|")
    order = sorted(hl, key=lambda k: (k[0] != "classroom", k[1], k[2]))
    for key in order:
        r = hl[key]
        batch = r.get("batch", 64)
        e = eager.get(key, {}).get("steps_per_s")
        c = comp.get(key, {}).get("steps_per_s")
        ratio = r["steps_per_s"] / c if c else None
        g = r["steps_per_s"] * addition_flops(key[1], batch) / 1e9
        gc = c * addition_flops(key[1], batch, False) / 1e9 if c else None
        if ratio is not None and ratio < 1.5:
            misses.append((key, ratio, g / peak_gflops))
        out.append(f"| {key[0]} | {key[1]} × {key[2]} | {key[1] // key[2]} | {fmt(r['steps_per_s'], 1)} | {fmt(e, 1)} | "
                   f"{fmt(c, 1)} | **{fmt(ratio, 2)}** | {fmt(g, 1)} | {fmt(100 * g / peak_gflops, 1)} | "
                   f"{fmt(gc, 1)} | {fmt(100 * gc / peak_gflops if gc else None, 1)} |")
    nn_hl = [r for r in rows if r.get("impl") == "headlab-preset" and r.get("preset") == "nn-classroom"
             and "lever" not in r]
    nn_ref = {(r["layers"], r["heads"], r["impl"]): r for r in rows if r.get("peer") == "nn" and "steps_per_s" in r}
    if nn_hl:
        out.append("\n### Nearest neighbour: nn-classroom's six runs (d 16, 8 points, batch 64)\n")
        out.append("| layers × n_H | HeadLab steps/s | eager | compiled | **÷ compiled** | ÷ eager | HeadLab GFLOP/s | % of peak |")
        out.append("|---|---|---|---|---|---|---|---|")
        for r in sorted(nn_hl, key=lambda r: (r["layers"], int(r["heads"].split()[0]))):
            key = (r["layers"], int(r["heads"].split()[0]))
            e = nn_ref.get(key + ("eager",), {}).get("steps_per_s")
            c = nn_ref.get(key + ("compile",), {}).get("steps_per_s")
            ratio = r["steps_per_s"] / c if c else None
            g = r["steps_per_s"] * r["gflop_per_run_step"]
            if ratio is not None and ratio < 1.5:
                misses.append((("nn", r["layers"], key[1]), ratio, g / peak_gflops))
            out.append(f"| {key[0]} × {key[1]} | {fmt(r['steps_per_s'], 1)} | {fmt(e, 1)} | {fmt(c, 1)} | "
                       f"**{fmt(ratio, 2)}** | {fmt(r['steps_per_s'] / e if e else None, 2)} | {fmt(g, 2)} | "
                       f"{fmt(100 * g / peak_gflops, 1)} |")
    text_hl = [r for r in rows if r.get("impl") == "headlab-preset" and r.get("preset") == "head-progression-classroom"
               and r.get("runs") == 1 and "lever" not in r]
    text_ref = {(r["heads"], r["impl"]): r for r in rows if r.get("peer") == "text" and "steps_per_s" in r}
    if text_hl:
        out.append("\n### Text: head-progression-classroom's schedules (d 64, 4 layers, context 32, batch 16)\n")
        out.append("| heads per layer | HeadLab steps/s | eager | compiled | **÷ compiled** | ÷ eager | HeadLab GFLOP/s | % of peak |")
        out.append("|---|---|---|---|---|---|---|---|")
        for r in sorted(text_hl, key=lambda r: [int(h) for h in r["heads"].split()]):
            key = r["heads"].replace(" ", ",")
            e = text_ref.get((key, "eager"), {}).get("steps_per_s")
            c = text_ref.get((key, "torch.compile(default)"), {}).get("steps_per_s")
            ratio = r["steps_per_s"] / c if c else None
            g = r["steps_per_s"] * r["gflop_per_run_step"]
            if ratio is not None and ratio < 1.5:
                misses.append((("text", key, 0), ratio, g / peak_gflops))
            out.append(f"| {r['heads']} | {fmt(r['steps_per_s'], 1)} | {fmt(e, 1)} | {fmt(c, 1)} | "
                       f"**{fmt(ratio, 2)}** | {fmt(r['steps_per_s'] / e if e else None, 2)} | {fmt(g, 2)} | "
                       f"{fmt(100 * g / peak_gflops, 1)} |")
    out.append(f"\nShapes below 1.5× compiled: **{len(misses)}** of {len(order) + len(nn_hl) + len(text_hl)}" +
               (": " + ", ".join((f"text {k[1]}" if k[0] == "text" else f"{k[0]} {k[1]} × {k[2]}") +
                                 f" ({fmt(r, 2)}×, {fmt(100 * share, 1)} % of peak)"
                                 for k, r, share in misses) + "." if misses else ".") + "\n")
    # The profiles of the shapes that missed: in the levers' file where it is given (bench/cpu_peers.sh's
    # parts profile, timed, adam and points, run with MISSES_FROM=this run), else in this run's.
    causes, causes_path = (levers, timed_path) if timed_path else (rows, path)
    small = [r for r in causes if r.get("profile") == "cpu-total" and r.get("batch") == 64
             and r.get("task") != "text" and r["m"] < 192]
    if misses and small:
        out.append("**The measured cause where a shape misses.** At Figure 2's narrow and middle widths (24 and "
                   "48) at batch 64 a step is a few milliseconds of small products. The profile below counts the "
                   "operator calls a HeadLab step makes and what the framework takes for each before any "
                   "arithmetic: " + "; ".join(
                       f"{r['m']} × {r['heads']}: {fmt(r['aten_calls_per_step'], 0)} calls, "
                       f"{fmt(r['dispatch_ms_per_step'], 2)} of {fmt(r['wall_ms_per_step'], 2)} ms "
                       f"({fmt(100 * r['dispatch_share'], 0)} %)" for r in small) +
                   ". The autograd engine's nodes and HeadLab's own code between the calls come on top. " +
                   narrow_split(levers, misses) +
                   "Compiled PyTorch generates one C++ loop for many of those operators, which removes "
                   "their calls; HeadLab's lanes and its products' views inside their autograd functions "
                   "removed some of them, not yet enough at these widths. "
                   "What is left is the whole layer as one function each way (the norm, the products and "
                   "the GELU), the next lever.\n")
    text_profiles = [r for r in causes if r.get("profile") == "cpu-total" and r.get("task") == "text"]
    if any(k[0] == "text" for k, _, _ in misses) and text_profiles:
        gflop = {r["heads"].replace(" ", ","): r["gflop_per_run_step"] for r in text_hl}
        cls = {profile_key(r) + (r["class"],): r for r in causes if r.get("profile") == "cpu-class"}

        def text_cause(t):
            k = profile_key(t)
            products, elementwise = cls.get(k + ("products",)), cls.get(k + ("elementwise and reductions",))
            rate = gflop.get(t["heads"], 0) / (products["ms_per_step"] / 1e3) if products else None
            return (f"heads {t['heads']}: {fmt(t['wall_ms_per_step'], 1)} ms a step, "
                    f"{fmt(t['aten_calls_per_step'], 0)} operator calls ({fmt(t['dispatch_ms_per_step'], 2)} ms, "
                    f"{fmt(100 * t['dispatch_share'], 0)} %, in dispatch alone), "
                    f"{fmt(elementwise['calls_per_step'], 0)} elementwise calls taking "
                    f"{fmt(elementwise['ms_per_step'], 2)} ms, and {fmt(products['calls_per_step'], 0)} products "
                    f"taking {fmt(products['ms_per_step'], 2)} ms, about {fmt(rate, 0)} GFLOP/s "
                    f"({fmt(100 * rate / peak_gflops, 0)} % of the peak) if they did the whole step's FLOPs")
        text_misses = [(r, share) for k, r, share in misses if k[0] == "text"]
        out.append(f"**The measured cause for text.** {len(text_misses)} of the text classroom's "
                   f"{len(text_hl)} schedules miss, at {fmt(min(r for r, _ in text_misses), 2)}–"
                   f"{fmt(max(r for r, _ in text_misses), 2)}× compiled PyTorch and "
                   f"{percent_range([100 * s for _, s in text_misses])} of the peak. The model is 64 wide with 16 sequences of 32 "
                   "bytes: a step is small products and many small elementwise operators, and the profile "
                   "(`headlab-bench preset --preset head-progression-classroom --schedules H --profile 1`, tables "
                   "below) shows it spread over all of them: " + "; ".join(text_cause(t) for t in text_profiles) +
                   ". Inductor turns the norms, GELUs, residual additions and Adam into a few generated C++ loops; "
                   "HeadLab calls ATen for each, and at this size each call costs about what its arithmetic does. "
                   "The lever is the one named above for Figure 2's narrow models (a layer as one function each "
                   "way), not the attention: it is 10–15 % of the step.\n")
    nn_misses = [(k, r, share) for k, r, share in misses if k[0] == "nn"]
    if nn_misses and nn_profile_path:
        nn_rows = load(nn_profile_path)
        total = next((r for r in nn_rows if r.get("profile") == "cpu-total"), None)
        parts = {r["class"]: r for r in nn_rows if r.get("profile") == "cpu-class"}
        ops = [r for r in nn_rows if r.get("profile") == "cpu-op"]
        bitwise = [r for r in ops if r["name"].startswith("aten::bitwise_")]
        elementwise = parts.get("elementwise and reductions")
        if total and elementwise:
            out.append(
                "**The measured cause for nearest neighbour.** " +
                ", ".join(f"{k[1]} × {k[2]} ({fmt(r, 2)}×, {fmt(100 * s, 1)} % of the peak)" for k, r, s in nn_misses) +
                f" misses: the model is 16 wide with 8 points, and a step is {fmt(total['wall_ms_per_step'], 2)} ms of "
                f"{fmt(total['aten_calls_per_step'], 0)} operator calls, {fmt(total['dispatch_ms_per_step'], 2)} ms "
                f"({fmt(100 * total['dispatch_share'], 0)} %) in dispatch alone (`headlab-bench preset --preset "
                f"nn-classroom --layers 1 --heads 1 --profile 1`, `{nn_profile_path}`). "
                f"{fmt(elementwise['calls_per_step'], 0)} of the calls are elementwise "
                f"({fmt(elementwise['ms_per_step'], 2)} ms under the profiler), and at least "
                f"{fmt(sum(r['calls_per_step'] for r in bitwise), 0)} of those are the bit operations of the counter hash "
                "that draws each step's points from (seed, step), so that a resumed run sees the points it would "
                "have seen. On the GPU that hash is one kernel (`HEADLAB_FUSED_POINTS`); this profile ran it on "
                "the CPU as ATen's passes over int64 tensors, where the peer draws its points with `torch.randn`. "
                "The lever, the same hash as one CPU loop, is measured below.\n")
    big = [(k, r, share) for k, r, share in misses if share >= 0.3]
    if big:
        compiled_share = []
        for k, _, _ in big:
            c = comp.get(k, {}).get("steps_per_s")
            if c:
                compiled_share.append(100 * c * addition_flops(k[1], 64, False) / 1e9 / peak_gflops)
        out.append("At the wide models that miss (" + ", ".join(f"{k[1]} × {k[2]}" for k, _, _ in big) +
                   ") HeadLab runs at " +
                   f"{fmt(100 * min(x[2] for x in big), 0)}–{fmt(100 * max(x[2] for x in big), 0)} % of the "
                   "cores' measured peak, compiled PyTorch executes its (larger) step at "
                   f"{fmt(min(compiled_share), 0)}–{fmt(max(compiled_share), 0)} %. HeadLab's lead there is "
                   "the work it leaves out (the last layer at the answer position only); what it spends "
                   "outside its products is the table below.\n")
        if timed_path:
            cpu_timed_section(levers, timed_path, out, alone_path)
    cpu_profile_section(causes, causes_path, out)
    lanes_section(rows, path, out)
    adam_section(levers, timed_path, out)
    points_section(levers, timed_path, out)
    if loop_levers_paths:
        loop_levers_section(loop_levers_paths, out)
    if placement_path:
        placement_section(placement_path, out)
    for p in classroom_paths:
        classroom_time_section(p, out)
    if lesson_press_path:
        lesson_press_section(lesson_press_path, out)


def percent_range(xs):
    """Percentages as "a–b %", or "a %" where they round alike."""
    low, high = fmt(min(xs), 0), fmt(max(xs), 0)
    return f"{low} %" if low == high else f"{low}–{high} %"


def narrow_split(rows, misses):
    """The timed split of the narrow and middle widths that miss (below 192): a sentence, or ""
    where none was timed."""
    by = timed_rows(rows)
    narrow = [k[1:] for k, _, _ in misses if k[0] == "fig2" and k[1] < 192 and k[1:] in by]
    if not narrow:
        return ""
    parts, peak, share = [], [], []
    for k in narrow:
        total, wall, prod, opt, rest = timed_split(by, k)
        peak.append(100 * total["peak_share"])
        share.append(100 * prod / wall)
        parts.append(f"{k[0]} × {k[1]}: {fmt(wall, 2)} ms a step, products {fmt(share[-1], 0)} % of it at "
                     f"{fmt(peak[-1], 0)} % of the peak, Adam {fmt(100 * opt / wall, 0)} %, "
                     f"the rest {fmt(100 * rest / wall, 0)} %")
    return ("The clock without the profiler (the timed table below) says where: " +
            "; ".join(parts) + f". The products run at {percent_range(peak)} of the peak but are only {percent_range(share)} "
            "of the step; the rest is the operators between them. ")


def profile_key(r):
    """A profile row's step: lanes on or off, the task, the shape and the batch."""
    return (r["lanes"], r.get("task", "addition"), r["m"], r["heads"], r["batch"])


def profile_label(r, batch=""):
    """A profile row's step as the tables name it: 24 × 12, 256 (Figure 2's addition), or the text
    classroom's schedule; `batch` goes before the batch size ("batch ")."""
    shape = f"text d {r['m']}, heads {r['heads']}" if r.get("task") == "text" else f"{r['m']} × {r['heads']}"
    return f"{shape}, {batch}{r['batch']}"


def cpu_profile_section(rows, path, out):
    totals = [r for r in rows if r.get("profile") == "cpu-total"]
    if not totals:
        return
    out.append("### Where a step's time goes\n")
    out.append(f"`headlab-bench single --profile 1` (`{path}`): the same step under the Kineto profiler, each "
               "operator by its self time (its time less its children's), grouped by class, and the training "
               "step's four named parts. *dispatch* is the operator calls a step makes times the cost of one "
               "call that does no work: what the framework takes before any arithmetic. With the lanes on "
               "(the default) and off (`HEADLAB_CPU_ATTENTION=0`, ATen's kernel).\n")
    out.append("| shape, batch | lanes | ms a step | op calls a step | dispatch ms (share) | forward | backward | optimizer | bookkeeping |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    parts = {}
    for r in rows:
        if r.get("profile") == "cpu-part":
            parts[profile_key(r) + (r["part"],)] = r["ms_per_step"]
    for t in totals:
        k = profile_key(t)
        cell = lambda name: fmt(parts.get(k + ("headlab::" + name,)), 2)
        out.append(f"| {profile_label(t)} | {'on' if t['lanes'] else 'off'} | "
                   f"{fmt(t['wall_ms_per_step'], 2)} | {fmt(t['aten_calls_per_step'], 0)} | "
                   f"{fmt(t['dispatch_ms_per_step'], 2)} ({fmt(100 * t['dispatch_share'], 0)} %) | {cell('forward')} | "
                   f"{cell('backward')} | {cell('optimizer')} | {cell('bookkeeping')} |")
    out.append("\nBy class of operator (ms a step under the profiler, share of the operators' time):\n")
    classes = sorted({r["class"] for r in rows if r.get("profile") == "cpu-class"})
    out.append("| shape, batch | lanes | " + " | ".join(classes) + " |")
    out.append("|---|---|" + "---|" * len(classes))
    cls = {profile_key(r) + (r["class"],): r for r in rows if r.get("profile") == "cpu-class"}
    for t in totals:
        k = profile_key(t)
        cells = [f"{fmt(cls[k + (c,)]['ms_per_step'], 2)} ({fmt(100 * cls[k + (c,)]['share'], 0)} %)"
                 if k + (c,) in cls else "—" for c in classes]
        out.append(f"| {profile_label(t)} | {'on' if t['lanes'] else 'off'} | " + " | ".join(cells) + " |")
    out.append("\nThe five operators of most self time in each:\n")
    for t in totals:
        k = profile_key(t)
        ops = [r for r in rows if r.get("profile") == "cpu-op" and profile_key(r) == k][:5]
        out.append(f"- {profile_label(t, 'batch ')}, lanes {'on' if t['lanes'] else 'off'}: " + "; ".join(
            f"`{o['name']}` {fmt(o['ms_per_step'], 2)} ms ({fmt(o['calls_per_step'], 0)} calls)" for o in ops))
    out.append("")


def lever_pairs(lever, key, switch):
    """A lever's runs (each shape on and off, in turn, twice): per key, in the file's order, the faster
    steps/s with the switch on (1) and off (0)."""
    return [(k, *(max(r["steps_per_s"] for r in lever if key(r) == k and r[switch] == on) for on in (1, 0)))
            for k in dict.fromkeys(key(r) for r in lever)]


def lanes_section(rows, path, out):
    lever = [r for r in rows if r.get("lever") == "lanes"]
    if not lever:
        return
    out.append("### The lever: attention in lanes\n")
    out.append(f"Each shape trained with the lanes at every head width (`HEADLAB_CPU_ATTENTION=1`; by default "
               "they are taken up to 8 wide) and with ATen's kernel (`HEADLAB_CPU_ATTENTION=0`) in turn, "
               f"twice, batch 64 (`{path}`); the lanes keep the losses (`test_core`'s laneAttentionTrainsAsSdpa, "
               "`test_cpu_kernels`), and a run's provenance names the path (`attention: lanes`).\n")
    out.append("| m × n_H | head width | lanes steps/s | ATen steps/s | lanes ÷ ATen |")
    out.append("|---|---|---|---|---|")
    for (m, h), on, off in lever_pairs(lever, lambda r: (r["m"], r["heads"]), "lanes"):
        out.append(f"| {m} × {h} | {m // h} | {fmt(on, 1)} | {fmt(off, 1)} | **{fmt(on / off, 2)}** |")
    out.append("")


def adam_section(rows, path, out):
    lever = [r for r in rows if r.get("lever") == "adam"]
    if not lever:
        return
    out.append("### The lever: Adam as one pass\n")
    out.append("Each shape trained with Adam as one pass over the parameters, their gradients and moments "
               "(`HEADLAB_FUSED_ADAM=1`, the default on the CPU since this measurement) and as ATen's passes "
               f"(`HEADLAB_FUSED_ADAM=0`) in turn, twice, each the faster of its two (`{path}`); the pass keeps the "
               "losses (`test_core`'s cpuAdamPassTrainsAsAten: Adam, AdamW, an ensemble), and a run's "
               "provenance names the path (`fused_adam: on (one CPU pass)`).\n")
    out.append("| m × n_H | batch | one pass steps/s | ATen passes steps/s | pass ÷ ATen |")
    out.append("|---|---|---|---|---|")
    for (m, h, b), on, off in lever_pairs(lever, ADAM_LEVER_KEY, "adam"):
        out.append(f"| {m} × {h} | {b} | {fmt(on, 1)} | {fmt(off, 1)} | **{fmt(on / off, 2)}** |")
    out.append("")


def points_section(rows, path, out):
    lever = [r for r in rows if r.get("lever") == "points"]
    if not lever:
        return
    out.append("### The lever: the nearest-neighbour points in one loop\n")
    out.append("nn-classroom's six runs trained with each step's points drawn in one CPU loop (the CUDA kernel's "
               "arithmetic; `HEADLAB_FUSED_POINTS=1`, the default on the CPU since this measurement) and by ATen's "
               f"passes (`HEADLAB_FUSED_POINTS=0`) in turn, twice, each the faster of its two (`{path}`); the loop "
               "draws the same points (`test_nn`'s cpuLoopPointsEqualAtenPasses: within 1e-6, the last bits of log "
               "and cos), and a run's provenance names the path (`fused_points: on`).\n")
    out.append("| layers × n_H | one loop steps/s | ATen passes steps/s | loop ÷ ATen |")
    out.append("|---|---|---|---|")
    for (layers, h), on, off in lever_pairs(lever, lambda r: (r["layers"], r["heads"]), "points"):
        heads = str(h).split()[0]  # the same count in every layer
        out.append(f"| {layers} × {heads} | {fmt(on, 1)} | {fmt(off, 1)} | **{fmt(on / off, 2)}** |")
    out.append("")


# The levers of bench/cpu_peers.sh parts loopthreads and layernorm: per lever, its title and what was
# switched (each shape trained on and off, in turn, twice).
LOOP_LEVERS = {
    "loopthreads": ("HeadLab's own loops on the intra-op threads",
                    "HeadLab's own CPU loops (Adam's pass, the LayerNorm, the lanes, the points) on ATen's "
                    "intra-op threads, compiled with LibTorch's OpenMP (`HEADLAB_CPU_LOOP_THREADS=1`, the default "
                    "where the build has it), against the same loops on one thread (`=0`, as every build before "
                    "this measurement)",
                    "The loops' results do not depend on the thread count (`test_cpu_kernels`), and a run's "
                    "provenance says which ran (`cpu_loops: intra-op threads`)."),
    "layernorm": ("the LayerNorm as one loop each way",
                  "the LayerNorm with each run's scale and shift as one CPU loop each way (the CUDA kernel's "
                  "arithmetic; `HEADLAB_FUSED_LAYER_NORM=1`, the default since this measurement), against ATen's "
                  "passes (`=0`: layer_norm, a multiply and addcmul forward, their gradients in six more), "
                  "HeadLab's loops on the intra-op threads",
                  "The loop keeps the losses (`test_core`'s cpuLoopsTrainAsAten, `test_cpu_kernels`' "
                  "layerNormMatchesAten), and a run's provenance names the path (`fused_layer_norm: on`). With "
                  "HeadLab's loops on one thread it lost at the classroom's batch of 256 (0.93–0.94×), where "
                  "ATen's passes had both threads, and won on text (1.07–1.08×): "
                  "`docs/data/issue79/cpu-layernorm-one-thread-2core-2026-12-05.jsonl`."),
    "embedding": ("the embedding as one loop each way",
                  "the token embedding and the learned positions as one CPU loop each way "
                  "(`HEADLAB_FUSED_EMBEDDING=1`, the default since this measurement), against ATen's passes (`=0`: "
                  "index_select and an add forward, index_add_ into a zeroed table and a sum over the batch back), "
                  "HeadLab's loops on the intra-op threads",
                  "The loop keeps the losses (`test_core`'s cpuLoopsTrainAsAten, `test_cpu_kernels`' "
                  "embeddingMatchesAten), and a run's provenance names the path (`fused_embedding: on`)."),
}


def loop_levers_section(paths, out):
    """Issue 79: the levers of LOOP_LEVERS on and off (bench/cpu_peers.sh), each from the first of the
    files `paths` that has its runs."""
    files = [(path, load(path)) for path in paths]
    key = lambda r: (r.get("preset", "addition"), r.get("m"), str(r["heads"]), r.get("batch"))  # noqa: E731
    for name, (title, what, checks) in LOOP_LEVERS.items():
        path, rows = next(((p, rs) for p, rs in files if any(r.get("lever") == name for r in rs)), ("", []))
        if not rows:
            continue
        lever = [r for r in rows if r.get("lever") == name]
        info = next((r for r in rows if r.get("machine") == "cpu"), {})
        out.append(f"### The lever: {title}\n")
        out.append(f"`bench/cpu_peers.sh` part {name} (`{path}`; {info.get('cpu', 'this CPU')}, cores "
                   f"{info.get('cores', '?')}, {info.get('threads', '?')} threads, {info.get('date', '')}): each shape "
                   f"trained on and off in turn, twice, each the faster of its two; on: {what}. {checks}\n")
        out.append("| task | shape | batch | on: steps/s | off: steps/s | on ÷ off |")
        out.append("|---|---|---|---|---|---|")
        for (task, m, heads, batch), on, off in lever_pairs(lever, key, name):
            label, shape = (("addition", f"{m} × {heads}") if task == "addition"
                            else ("text", "d 64, heads " + heads.replace(" ", ",")))
            out.append(f"| {label} | {shape} | {batch or 16} | {fmt(on, 1)} | {fmt(off, 1)} | **{fmt(on / off, 2)}** |")
        out.append("")


def classroom_time_section(path, out):
    lines = [l for l in open(path).read().splitlines() if l.strip()]
    head = lines[0].lstrip("# ")
    lanes = "HEADLAB_CPU_ATTENTION=0" not in lines[1]
    out.append(f"### The classroom's contrast on screen ({'lanes on' if lanes else 'lanes off'})\n")
    out.append(f"`bench/classroom_time.py` ({head}; `{path}`): the classroom preset trained by `headlab-cli` as "
               "the app trains it, idle and beside one busy process; seconds from the start until the twelve-head "
               "run at η 7e-3 has left ln 10 while the one-head run there has trained as long (the contrast on "
               "screen), until that twelve-head run ended, and until all four runs were done.\n")
    out.append("| condition | contrast on screen (s) | twelve-head run at 7e-3 ended (s) | all four done (s) |")
    out.append("|---|---|---|---|")
    for l in lines[2:]:
        parts = l.split()
        words = [p for p in parts if not p.replace(".", "", 1).replace("-", "", 1).isdigit()]
        nums = parts[len(words):]
        end = nums[4] if len(nums) > 4 else "—"
        out.append(f"| {' '.join(words)} | {nums[0]} | {end} | {nums[1]} |")
    out.append("")


def lesson_press_section(path, out):
    """Issue 79, item 4: how soon a lesson press trains the pressed runs (bench/lesson_press_time.sh)."""
    rows = load(path)
    info = next((r for r in rows if r.get("machine") == "cpu"), {})
    presses = [r for r in rows if "condition" in r]
    out.append("### A lesson press: the pressed runs train at once\n")
    out.append(f"`bench/lesson_press_time.sh` (`{path}`; {info.get('cpu', 'this CPU')}, {info.get('cores', '?')} "
               f"cores, {info.get('date', '')}): the classroom preset opened in the app as a teacher opens it, "
               "trained, then an η of the strip that it did not run pressed (`test_ui_training`'s "
               "aLessonPressOnTheClassroomTrainsAtOnce, which fails above 5 s); milliseconds from the press until "
               "the first pressed run, and both, have reported their first steps on screen. The app reports a "
               "run's progress every 0.1 s.\n")
    out.append("| condition | presses | first run (ms): median [min, max] | both runs (ms): median [min, max] |")
    out.append("|---|---|---|---|")
    for condition in dict.fromkeys(r["condition"] for r in presses):
        mine = [r for r in presses if r["condition"] == condition]
        cell = lambda k: (f"{statistics.median(r[k] for r in mine):.0f} [{min(r[k] for r in mine)}, "  # noqa: E731
                          f"{max(r[k] for r in mine)}]")
        out.append(f"| {condition} | {len(mine)} | {cell('first_ms')} | {cell('both_ms')} |")
    out.append("")


def placement_section(path, out):
    """Issue 79, item 3's last two levers (bench/cpu_placement.py): products batched across an
    ensemble's runs, and threads placed so that side-by-side runs do not contend."""
    rows = load(path)
    if not rows:
        return
    info = rows[0]
    med = lambda xs: statistics.median(xs)  # noqa: E731
    span = lambda xs, d=0: f"{fmt(med(xs), d)} [{fmt(min(xs), d)}, {fmt(max(xs), d)}]"  # noqa: E731
    ensemble = [r for r in rows if r["part"] == "ensemble"]
    placement = [r for r in rows if r["part"] == "placement"]
    repeats = len({r["repeat"] for r in rows})
    out.append("### The levers: products batched across an ensemble, and threads placed\n")
    out.append(f"`bench/cpu_placement.py` (`{path}`; {info['machine']}, {info['cores']} pinned cores, "
               f"{info['date']}, {repeats} repeats, the arrangements alternating within each): four seeds of one "
               "shape trained by `headlab-cli` as one ensemble, whose products take the four runs as one batch, "
               "against the same runs one after another and two at a time side by side, and the runner's own "
               "plan (no flags: since this measurement it halves ensembles until each of the cores' workers has "
               "one, here two ensembles of two, one thread each; before, one ensemble on one thread, the row "
               "`--concurrent 1 --threads 1`); run-steps per second, median [lowest, highest] over the repeats, and the ratio "
               "of medians to one after another with the same two threads.\n")
    out.append("| shape | arrangement | `headlab-cli run` flags | run-steps/s | ÷ one after another |")
    out.append("|---|---|---|---|---|")
    for shape in dict.fromkeys(r["shape"] for r in ensemble):
        mine = [r for r in ensemble if r["shape"] == shape]
        by = {a: [r["run_steps_per_second"] for r in mine if r["arrangement"] == a]
              for a in dict.fromkeys(r["arrangement"] for r in mine)}
        base = med(by["one after another, 2 threads"])
        for arrangement, rates in by.items():
            flags = next(r["args"] for r in mine if r["arrangement"] == arrangement) or "—"
            out.append(f"| {shape} | {arrangement} | `{flags}` | {span(rates)} | "
                       f"**{fmt(med(rates) / base, 2)}** |")
    out.append("")
    out.append("The classroom preset (four runs; head counts train apart on a CPU, so four ensembles) under the "
               "runner's plan, against two runs side by side with every core each, one at a time, and the plan "
               "with denormal floats computed in full (`HEADLAB_FLUSH_DENORMALS=0`: on a plateau Adam's moments "
               "and the gradients decay below 1.2e-38, where each operation takes the processor's slow path); seconds "
               "until the contrast is on screen (read as `bench/classroom_time.py` reads it) and until all four "
               "are done, median [lowest, highest].\n")
    out.append("| arrangement | `headlab-cli run` flags (and environment) | contrast on screen (s) | all four done (s) |")
    out.append("|---|---|---|---|")
    for arrangement in dict.fromkeys(r["arrangement"] for r in placement):
        mine = [r for r in placement if r["arrangement"] == arrangement]
        flags = mine[0]["args"] or "—"
        out.append(f"| {arrangement} | `{flags}` | {span([r['contrast_seconds'] for r in mine], 1)} | "
                   f"{span([r['all_done_seconds'] for r in mine], 1)} |")
    out.append("")


def storage_section(path, out):
    rows = load(path)
    info = next((r for r in rows if "cpu" in r), {})
    out.append("## Saving and loading (CPU, " + f"{info.get('cores', '?')} cores" + ")\n")
    out.append(f"Measured by `bench/storage_bench.sh` (`{path}`) in one run on " + info.get("cpu", "this CPU") +
               f" ({info.get('disk', '?')} disk). Each sweep is trained three times in the same run: without "
               "saving (the baseline), saving each finished run beside training as `headlab-cli` does, and "
               "saving inside the training thread (the worst case: every save stalls training).\n")
    out.append("| sweep | runs | no saving (s) | saving beside training (s) | wall added | saving inside (s) | wall added |")
    out.append("|---|---|---|---|---|---|---|")
    for r in rows:
        if "save_sweep" not in r:
            continue
        out.append(f"| {r['save_sweep']} | {r['runs']} | {r['wall_no_save_s']:.2f} | {r['wall_saving_beside_s']:.2f} "
                   f"(saving {r['saving_beside_s']:.2f}) | {100 * r['overhead_beside']:+.0f} % | "
                   f"{r['wall_saving_inside_s']:.2f} | {100 * r['overhead_inside']:+.0f} % |")
    save = next((r for r in rows if r.get("storage") == "save"), None)
    one = next((r for r in rows if r.get("storage") == "one_run"), None)
    heads = next((r for r in rows if r.get("storage, 250 runs with per-head curves") == "save"), None)
    disks = [r for r in rows if "results_mb" in r]
    if save:
        out.append(f"\nA session of {save['runs']} finished runs with {save['points']} points per curve: written in the "
                   f"stored layout (a file per run) in {save['stored_save_s']:.2f} s, as one file in "
                   f"{save['single_file_save_s']:.2f} s; finishing one run writes one file: "
                   f"{1000 * save['stored_one_run_s']:.2f} ms.")
    if one:
        out.append(f"Where one run's save goes: its name (a hash of the config) {one['name_ms']:.2f} ms, its text "
                   f"{one['text_ms']:.2f} ms, the atomic write (temporary file, fsync, rename, fsync of the "
                   f"directory) {one['write_ms']:.2f} ms.")
    if disks:
        out.append("\nPer-head curves (12 heads × 2 layers × 9 statistics = 216 curves of 300 points a run, as a "
                   "30,500-step run evaluated every 100 steps logs them), 250 runs: in binary files beside the run "
                   "files (this version) and as text in the run files (the previous release's layout, which still "
                   "loads):\n")
        out.append("| layout | results folder (MB) | one run file (KB) | its per-head curves file (KB) |")
        out.append("|---|---|---|---|")
        for r in disks:
            out.append(f"| {r['disk']} | {r['results_mb']} | {r['one_run_file_kb']} | {r['one_heads_file_kb'] or '—'} |")
        if heads:
            out.append(f"\nWritten in {heads['stored_save_s']:.2f} s in the stored layout (as one text file: "
                       f"{heads['single_file_save_s']:.2f} s); one run's files: {1000 * heads['stored_one_run_s']:.2f} ms.")
    loads = [r for r in rows if "load" in r]
    if loads:
        out.append("\n| loading (the 2,000-run session unless the row says otherwise) | seconds | peak memory (MB) |")
        out.append("|---|---|---|")
        for r in loads:
            out.append(f"| {r['load']} | {r['seconds']} | {r['peak_rss_mb']:,} |")
    export = next((r for r in rows if r.get("export")), None)
    if export:
        out.append(f"\nLargest exported figure ({export['export']}): {export['bytes'] / 1e6:.1f} MB.")
    out.append("")


def checkpoint_section(paths, out):
    """Checkpoint disk use of a sweep (bench/checkpoint_disk.sh), one table per file."""
    if not paths:
        return
    out.append("## Checkpoints of a sweep\n")
    out.append("Measured by `bench/checkpoint_disk.sh`: the configurations of the Figure 2 grid (m 24 … 384 × "
               "n_H 1 … 12, the full protocol's model sizes; 300 steps, a checkpoint every 50, keep 3, plateau "
               "ones too), with the optimizer state in every checkpoint (the previous release) and only in each "
               "run's newest (this version's default), then `headlab-cli prune`.\n")
    for path in paths:
        rows = load(path)
        sizes = [r for r in rows if "checkpoints" in r]
        if not sizes:
            continue
        where = next((r for r in rows if "device" in r), None)
        cpu = next((r for r in rows if "cpu" in r), {})
        machine = (f"{where['device'].split(':')[0]}, {where['date']}, commit {where['commit']}, "
                   f"`{where['command']}`" if where
                   else f"{cpu.get('cpu', 'CPU')}, {cpu.get('cores', '?')} cores")
        out.append(f"**{sizes[0]['runs']} runs** ({machine}; `{path}`):\n")
        out.append("| checkpoints | files | GB | against every |")
        out.append("|---|---|---|---|")
        base = sizes[0]["bytes"]
        for r in sizes:
            out.append(f"| {r['checkpoints']} | {r['files']} | {r['bytes'] / 1e9:,.2f} | {r['bytes'] / base:.2f} |")
        out.append("")


STABILIZER_CHOICES = [  # the stabilizers bench's choices (docs/data/issue23/speed.csv), as columns
    ("qk_rule=on", "QK rule"), ("qk_norm=gain", "qk-layernorm"), ("softcap=10", "soft-cap"),
    ("z_loss=1.0e-04", "z-loss"), ("sigma_reparam=qk", "σReparam qk"),
    ("model.zero_init_outputs=false sigma_reparam=all", "σReparam all"),
    ("independent_weight_decay=1.0e-04", "independent decay")]


def stabilizer_section(path, card, out):
    """What each stabilizer costs (bench/gpu_stabilizers.sh's CSV, issue 23)."""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    ratio, none = {}, {}  # (heads, choice) -> the repeats' ratios; heads -> no stabilizer's rates
    for r in rows:
        ratio.setdefault((int(r["heads"]), r["choice"]), []).append(float(r["ratio_to_none"]))
        if r["choice"] == "qk_rule=off":
            none.setdefault(int(r["heads"]), []).append(float(r["run_steps_per_second"]))
    spread = max((max(v) - min(v)) / min(v) for v in ratio.values() if len(v) > 1) if ratio else 0
    out.append("## What each stabilizer costs (GPU, issue 23)\n")
    out.append(f"Measured by `bench/gpu_stabilizers.sh` on {card or 'one GPU'}: the addition model at m 96, 2 "
               "layers, one ensemble of 8 seeds per choice, 200 warm-up + 2,000 answer steps, one after the other "
               "in one process after a warm-up ensemble. Run-steps/s as a ratio to no stabilizer in the same "
               f"process, the mean of the repeats, which agree within {100 * spread:.0f} % (`{path}`).\n")
    out.append("| | " + " | ".join(name for _, name in STABILIZER_CHOICES) + " |")
    out.append("|---|" + "---|" * len(STABILIZER_CHOICES))
    for heads in sorted({h for h, _ in ratio}, reverse=True):
        cells = [fmt(sum(v) / len(v), 2) if (v := ratio.get((heads, c))) else "—" for c, _ in STABILIZER_CHOICES]
        out.append(f"| {heads} head{'s' if heads > 1 else ''} (m_H {96 // heads}) | " + " | ".join(cells) + " |")
    out.append("\nNo stabilizer: " + " and ".join(f"{fmt(sum(v) / len(v))} run-steps/s ({h} head{'s' if h > 1 else ''})"
                                                  for h, v in sorted(none.items(), reverse=True)) + ".\n")


ABLATION_VARIANTS = [  # bench/gpu_ablation.sh's variants: what each switches off
    ("all", "nothing (all on)"),
    ("sdpa", "micro-head attention (`HEADLAB_ATTENTION=sdpa`: fused kernel per head-count group)"),
    ("aten-adam", "fused Adam kernel (`HEADLAB_FUSED_ADAM=0`: ~10 ATen passes)"),
    ("autograd-grads", "direct weight gradients (`HEADLAB_DIRECT_GRADIENTS=0`: autograd adds them)")]


def ablation_section(path, out):
    """What each optimisation is worth (bench/gpu_ablation.sh)."""
    rows = load(path)
    gpu, _ = card_and_date(rows)
    out.append("## What each optimisation is worth\n")
    out.append(f"`bench/gpu_ablation.sh` (one run on one {gpu}, `{path}`) switches each GPU change off in turn; "
               "run-steps/s of the 50-run ensembles (mixed n_H) and steps/s of one run, with the change against "
               "all on:\n")
    cols = [(f"m {m} × 50", lambda r, m=m: r.get("impl") == "headlab-ensemble" and r.get("m") == m
             and r.get("runs") == 50, "run_steps_per_s") for m in (24, 96, 384)]
    cols.append(("one run 384 × 1", lambda r: r.get("impl") == "headlab-single" and r.get("m") == 384
                 and r.get("heads") == 1, "steps_per_s"))
    out.append("| switched off | " + " | ".join(c[0] for c in cols) + " |")
    out.append("|---|" + "---|" * len(cols))
    value = {(v, c[0]): next((r[c[2]] for r in rows if r.get("variant") == v and c[1](r)), None)
             for v, _ in ABLATION_VARIANTS for c in cols}
    for v, label in ABLATION_VARIANTS:
        cells = []
        for c in cols:
            x, base = value[(v, c[0])], value[("all", c[0])]
            change = f" ({100 * (x / base - 1):+.0f} %)" if x and base and v != "all" else ""
            cells.append(fmt(x) + change)
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out.append("")


def export_section(path, out):
    """Exporting every figure of a session (bench/export_bench.sh)."""
    rows = [r for r in load(path) if r.get("bench") == "export-all"]
    if not rows:
        return
    base = next((r for r in rows if "baseline" in r["mode"]), rows[0])
    out.append(f"## Figures of a 75-run session ({base['machine']})\n")
    out.append(f"`bench/export_bench.sh` times `headlab --session docs/data/{base['session']} --export-all` (every "
               "figure of the 75-run Figure 2 grid with three seeds, PNG + SVG + CSV at 1600×1000, median of five) "
               "with the loss curves as medians and bands over seeds (the default) and, as the baseline measured "
               f"in the same run, drawn one curve per run (`{path}`):\n")
    out.append("| loss curves | seconds | ratio |")
    out.append("|---|---|---|")
    for r in sorted(rows, key=lambda r: r is not base):
        out.append(f"| {r['mode']} | {r['seconds']:.2f} | {r['seconds'] / base['seconds']:.2f} |")
    out.append("")


def cold_start_section(paths, out, lab_optimization=""):
    """What a new user waits for: a fresh clone without compiler cache (bench/cold_start.sh, issue 73).
    `paths` newest first: the newest run's table, then each earlier run's, each run's numbers in a table of
    their own."""
    runs = [(path, load(path)) for path in paths]
    runs = [(path, rows) for path, rows in runs if rows]
    if not runs:
        return
    path, rows = runs[0]
    head = rows[0]
    tests = any(r["phase"].startswith("second command") for r in rows)
    out.append(f"## Time to the first window ({head['cores']} cores, {head['machine']}, {head['date']})\n")
    out.append("`bench/cold_start.sh` clones the checkout afresh and runs the README's two commands as a new user "
               f"meets them: the compiler cache off (`CCACHE_DISABLE=1`), a new `build/`, the wheels from a "
               f"{head['wheels']}, the Debian packages already installed. The first command is timed to the "
               "first frame of the app's window under Xvfb; then one file of `core/` is changed and rebuilt as "
               "the first command rebuilds it" + ("; then the second command builds the rest and runs every test"
                                                  if tests else "") + f" (`{path}`):\n")
    cold_start_table(rows, out)
    if len(runs) > 1:
        out.append("Earlier runs of the script, each in a table of its own, the commit it measured named (the code "
                   "has changed since, so they are not today's numbers):\n")
    for path, rows in runs[1:]:
        out.append(f"*{rows[0]['date']}, commit {rows[0]['commit']}* (`{path}`):\n")
        cold_start_table(rows, out)
    if lab_optimization:
        lab_optimization_section(lab_optimization, out)


def cold_start_table(rows, out):
    out.append("| phase | seconds |")
    out.append("|---|---|")
    for r in rows:
        seconds = r["seconds"]
        text = "—" if seconds is None else f"{seconds:,.1f}" if seconds < 100 else f"{seconds:,.0f}"
        out.append(f"| {r['phase']} | {text} |")
    out.append("")
    build = next((r["seconds"] for r in rows if r["phase"] == "first command: configure and build"), None)
    base = next((r["seconds"] for r in rows if r["phase"].startswith("baseline:")), None)
    if build and base:
        out.append(f"The first command's configure and build took {build / base:.2f} of the baseline's time, the same "
                   "targets in the same clone with the precompiled headers off.\n")
    if any(r["phase"] == "second command: total" for r in rows):
        out.append("The second command's total also holds the build of the fuzz targets (clang, ASan, UBSan); outside "
                   "CI each of the seven fuzz tests fuzzes for 60 s (15 s under CI), and two tests build the core "
                   "afresh (a clone without a CUDA toolkit, and a CPU-only LibTorch build).\n")


def lab_optimization_section(path, out):
    """The code outside the training path at -O1 (cmake/HeadlabLayer.cmake): the commands a user waits on."""
    rows = load(path)
    if not rows:
        return
    head = rows[0]
    out.append(f"### The code outside the training path at {next((r['optimization'] for r in rows if r['build'] == 'lab'), '?')} "
               f"({head['cores']} cores, {head['machine']}, {head['date']})\n")
    out.append("In a Release build the layers that every training step goes through compile at -O3 and the rest at "
               "`HEADLAB_LAB_OPTIMIZATION` (`cmake/HeadlabLayer.cmake`). `bench/lab_optimization.sh` runs the commands "
               "that read and compute on a large session (the Figure 2 campaign's export, 657 runs) and the app writing "
               "every figure of a 75-run session (PNG, SVG and CSV, as `bench/export_bench.sh`) with a build at "
               "-O3 throughout, the baseline, and one with the default, in turn; the fastest of three each "
               f"(`{path}`):\n")
    out.append("| command | -O3 throughout, s | default, s | ratio |")
    out.append("|---|---|---|---|")
    for command in dict.fromkeys(r["command"] for r in rows):
        base = next(r for r in rows if r["command"] == command and r["build"] == "O3")
        lab = next(r for r in rows if r["command"] == command and r["build"] == "lab")
        out.append(f"| `{command}` | {base['seconds']:.2f} | {lab['seconds']:.2f} | {lab['ratio']:.2f} |")
    out.append("")


def python_read_section(path, out):
    """Reading a session in Python against the CLI's export-csv (bench/python_read.sh, issue 55)."""
    rows = load(path)
    head = next((r for r in rows if "machine" in r), {})
    ratios = [r for r in rows if "ratio" in r]
    if not ratios:
        return
    out.append(f"## Reading sessions in Python ({head.get('machine', '?')}, {head.get('date', '?')})\n")
    out.append("`bench/python_read.sh` times the Python package reading what a notebook reads first (`runs()`, "
               "`curves()`, and `head_stats()` where runs have per-head curves) against the baseline measured in "
               "the same run on the same files, `headlab-cli export-csv` (runs.csv and every curve in curves.csv). "
               f"Sessions of 300-point curves written by `headlab-bench storage`; target: 2× the CLI (`{path}`):\n")
    out.append("| session | Python s | CLI s | time ratio | Python MB | CLI MB | memory ratio |")
    out.append("|---|---|---|---|---|---|---|")
    for r in ratios:
        label = r["ratio"].split(", ", 1)[1]
        out.append(f"| {label} | {r['python_s']:.1f} | {r['cli_s']:.1f} | {r['time']:.2f} | {r['python_mb']} | "
                   f"{r['cli_mb']} | {r['memory']:.2f} |")
    out.append("")


def products_section(paths, out):
    """Issue 56's profile (bench/gpu_products.sh), one file per profiling (before and after a change,
    oldest first): per shape, the step's GPU time, the idle time between kernels with CUDA graphs on,
    and each matrix product's achieved rate against the card's peak (the latest file's)."""
    files = [(path, load(path)) for path in paths]
    files = [(path, rows) for path, rows in files if any(r.get("profile") == "total" for r in rows)]
    if not files:
        return

    def shape(r):
        if "preset" in r:
            what = "nn" if r["preset"].startswith("nn") else "text"
            return f"{what} {r['layers']} layers, w {r['w']}, {r['runs']} runs" if what == "nn" else \
                f"text head-progression {r['heads']}, {r['runs']} run"
        return f"addition {r['m']}×{r['heads']}, {r['runs']} run"

    def blocks(rows):
        """Each total with the lines after it, up to the next total (they belong to it)."""
        starts = [i for i, r in enumerate(rows) if r.get("profile") == "total"]
        return [(rows[i], rows[i + 1:j]) for i, j in zip(starts, starts[1:] + [len(rows)])]

    latest_path, latest = files[-1]
    gpu = card_and_date(latest)[0]
    dates = ", ".join(card_and_date(rows)[1] for _, rows in files)
    out.append(f"## Where a step's GPU time goes, product by product ({gpu}, {dates}; issue 56)\n")
    out.append("`bench/gpu_products.sh` profiles each shape twice with Kineto. With CUDA graphs on, as HeadLab "
               "trains: the GPU time a step, and the GPU's idle time between kernels (the span from the first "
               "kernel's start to the last one's end, less the union of the kernels). With graphs off, so that "
               "each product's op is recorded on the host: every matrix product's kernels, their achieved rate, "
               "and that rate as a share of the card's dense peak at the product's precision (FP32 67, TF32 "
               "494.7 TFLOP/s, NVIDIA's H100/H200 SXM data sheets). Profiled steps carry profiler overhead ("
               + ", ".join(f"`{path}`" for path, _ in files) + ").\n")
    if len(files) > 1:
        out.append("Each profiling's date is in the first column: 2026-12-02 is before the feed-forward block's "
                   "first product moved to CUTLASS (the section after this one), 2026-12-03 after. That CUTLASS "
                   "product is HeadLab's own kernel, not an ATen op, so it counts in the GPU time but not in the "
                   "products' share, rate and table: nearest neighbour's products share fell with it, not "
                   "because the products got slower.\n")
    out.append("| profiled | shape | graphs | wall ms/step | GPU ms/step | kernels/step | idle between kernels | products: share of GPU time | products' TFLOP/s | share of peak |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for graphs in (True, False):
        for path, rows in files:
            for t, mine in blocks(rows):
                if bool(t["graphs"]) != graphs:
                    continue
                gaps = next((r for r in mine if r.get("profile") == "gaps"), None)
                prod = next((r for r in mine if r.get("profile") == "products"), None)
                idle = f"{gaps['idle_ms_per_step']:.3f} ms ({gaps['idle_share']:.0%})" if gaps else "–"
                out.append(f"| {card_and_date(rows)[1]} | {shape(t)} | {'on' if t['graphs'] else 'off'} | "
                           f"{t['wall_ms_per_step']:.3f} | {t['gpu_ms_per_step']:.3f} | {t['kernels_per_step']:.0f} | "
                           f"{idle} | "
                           + (f"{prod['share']:.0%} | {prod['tflops']:.1f} ({prod['precision'].upper()}) | "
                              f"{prod['peak_share']:.1%} |" if prod else "– | – | – |"))
    out.append("")
    for t, mine in blocks(latest):
        products = [r for r in mine if r.get("profile") == "product"]
        if not products:
            continue
        out.append(f"{shape(t)}, graphs off, {card_and_date(latest)[1]}: the products by GPU time (the first eight)\n")
        out.append("| op and input shapes | calls/step | GFLOP/call | µs/call | share of GPU time | TFLOP/s | share of peak | main kernel |")
        out.append("|---|---|---|---|---|---|---|---|")
        for r in products[:8]:
            out.append(f"| `{r['op']}` | {r['calls_per_step']:.0f} | {r['gflop_per_call']:.4f} | {r['us_per_call']:.1f} | "
                       f"{r['share']:.1%} | {r['tflops']:.2f} | {r['peak_share']:.1%} | `{r['kernel'][:48]}` |")
        out.append("")


def cutlass_addition(path, out):
    """Issue 56's addition lever (bench/cutlass_products.sh MODE=addition): addition 384×12's products,
    one run, cuBLAS FP32 against CUTLASS FP32 SIMT at each of its generator's tiles and K splits."""
    rows = load(path)
    gpu, date = card_and_date(rows)
    lines = [r for r in rows if "addition" in r]
    if not lines:
        return
    out.append(f"Addition 384×12, one run ({gpu}, {date}; "
               "`MODE=addition bash bench/cutlass_products.sh`): its products (1,152 rows, d 384, FFN 1,536; "
               "the weight gradients over four slices of 288 rows, as HeadLab sums them) in cuBLAS FP32 against "
               "CUTLASS FP32 SIMT at every tile its generator lists for SM80 SIMT SGEMM (128×128, 128×64, "
               "64×128, 64×64, 128×32, 32×128), each one-matrix product also split 2–4 ways along K (serial "
               "split-K). Every CUTLASS output agrees with cuBLAS's to FP32 rounding. Calls a step are the "
               f"profile's (`{path}`):\n")
    out.append("| product (M×N×K, slices) | calls/step | cuBLAS µs | cuBLAS TFLOP/s | best CUTLASS | its µs | cuBLAS ÷ best CUTLASS |")
    out.append("|---|---|---|---|---|---|---|")
    total_cublas = total_best = 0.0
    for name in dict.fromkeys(r["addition"] for r in lines):
        mine = [r for r in lines if r["addition"] == name]
        c = next(r for r in mine if r["variant"] == "cublas")
        tiles = [r for r in mine if r["variant"] != "cublas" and r["us"] > 0]
        b = min(tiles, key=lambda r: r["us"])
        split = f", K split {b['splits']}" if b["splits"] > 1 else ""
        slices = f", {c['batch']} slices" if c["batch"] > 1 else ""
        out.append(f"| `{name}` ({c['m']}×{c['n']}×{c['k']}{slices}) | {c['calls_per_step']} | {c['us']:.1f} | "
                   f"{c['tflops']:.1f} ({c['tflops'] / 67:.0%}) | {b['variant'].split(' w')[0]}{split} | "
                   f"{b['us']:.1f} | {c['us'] / b['us']:.2f} |")
        total_cublas += c["us"] * c["calls_per_step"]
        total_best += min(c["us"], b["us"]) * c["calls_per_step"]
    out.append("")
    out.append(f"Summed over a step's calls, these products take {total_cublas:.0f} µs in cuBLAS; taking the faster "
               f"of cuBLAS and CUTLASS at each would give {total_best:.0f} µs. No CUTLASS FP32 tile or split beats "
               "cuBLAS at any of addition's shapes.\n")


def cutlass_section(path, speed_paths, out, addition_path=""):
    """Issue 56's lever test (bench/cutlass_products.sh): nearest neighbour's feed-forward products
    timed four ways, each with its error against FP64; the block's element-wise work in CUTLASS
    epilogues; and the training step with the CUTLASS product on and off against the peer
    (bench/nn_speed.sh KERNELS="1 1 1,1 1 0", each of `speed_paths`)."""
    rows = load(path)
    gpu, date = card_and_date(rows)
    products = [r for r in rows if "variant" in r and "product" in r]
    focus = [r for r in rows if "focus" in r]
    if not products:
        return
    out.append(f"## The feed-forward block's products through CUTLASS ({gpu}, {date}; issue 56)\n")
    out.append("`bench/cutlass_products.sh` times nearest neighbour's six feed-forward products (d 64, FFN 2,048, "
               "4,096 rows a run) each alone, back to back (CUDA events, the least of five repeats of 50 calls): "
               "cuBLAS in FP32 (what ATen's bmm calls) with a separate bias (+ ReLU) pass where the product has "
               "one; CUTLASS's FP32 SIMT kernel (tile 128×128×8) with the bias (+ ReLU) in its epilogue; "
               "CUTLASS's 3xTF32 tensor-core kernel (each FP32 operand split into a TF32 big and small part, "
               "three TF32 products summed; Sm80 mma.sync, which Hopper runs); and cuBLAS in TF32. Error: the "
               "largest |x − x₆₄| / Σ|a·b| over 2,048 sampled outputs against the same products in FP64. "
               f"TFLOP/s against the card's FP32 peak, 67 (`{path}`).\n")
    for runs in sorted({r["runs"] for r in products}):
        out.append(f"{runs} runs:\n")
        out.append("| product (per run M×N×K) | cuBLAS FP32 µs | CUTLASS SIMT µs | CUTLASS 3xTF32 µs | cuBLAS TF32 µs | best FP32-accurate ÷ cuBLAS | FP32 TFLOP/s (cuBLAS) | error FP32 / 3xTF32 / TF32 |")
        out.append("|---|---|---|---|---|---|---|---|")
        for name in dict.fromkeys(r["product"] for r in products if r["runs"] == runs):
            v = {r["variant"]: r for r in products if r["runs"] == runs and r["product"] == name}
            c, si, x3, tf = (v.get(k, {}) for k in ("cublas", "simt", "3xtf32", "tf32"))
            best = min(x.get("us", float("inf")) for x in (c, si, x3) if x.get("ok"))
            out.append(f"| `{name}` ({c['m']}×{c['n']}×{c['k']}) | {c['us']:.1f} | {si['us']:.1f} | {x3['us']:.1f} | "
                       f"{tf['us']:.1f} | {c['us'] / best:.2f} | {c['tflops']:.1f} ({c['tflops'] / 67:.0%}) | "
                       f"{c['max_rel_error']:.1e} / {x3['max_rel_error']:.1e} / {tf['max_rel_error']:.1e} |")
        out.append("")
    if focus:
        out.append("The block's two products around its ReLU as HeadLab ran them (cuBLAS, then its own bias-ReLU "
                   "and ReLU-backward kernels, `core/model/cuda/BiasRelu.cu`) against CUTLASS SIMT epilogues that "
                   "do that work, at several tiles (the backward's b1 gradient then by cuBLAS's gemv). Difference: "
                   "the largest |fused − HeadLab's| over every entry.\n")
        out.append("| work | runs | variant | µs | ÷ HeadLab's | max difference |")
        out.append("|---|---|---|---|---|---|")
        for r in focus:
            base = next(b for b in focus if b["focus"] == r["focus"] and b["runs"] == r["runs"]
                        and b["variant"].startswith("cublas"))
            out.append(f"| `{r['focus']}` | {r['runs']} | {r['variant']} | {r['us']:.1f} | "
                       f"{base['us'] / r['us']:.2f} | {r['max_abs_diff']:.3g} |")
        out.append("")
    if speed_paths:
        out.append("The step with the CUTLASS product (`HEADLAB_FFN_PRODUCT`) on and off, against the compiled vmap "
                   "ensemble (reduce-overhead), each file one run of `bench/nn_speed.sh` on one card; nn-fig1-full's "
                   "rank-64 line, 8 runs as one ensemble, FP32 on both sides, run-steps/s:\n")
        out.append("| card, date (file) | w | layers | HeadLab | CUTLASS product off | on ÷ off | peer | HeadLab ÷ peer | off ÷ peer | HeadLab TFLOP/s |")
        out.append("|---|---|---|---|---|---|---|---|---|---|")
        for speed_path in speed_paths:
            speed = load(speed_path)
            where = ", ".join(card_and_date(speed)) + f" (`{speed_path.split('/')[-1]}`)"
            for w, layers in sorted({(r.get("w", 1), r["layers"]) for r in speed if "layers" in r}):
                hl = {r.get("ffn_product"): r for r in speed
                      if r.get("impl") == "headlab-preset" and r["layers"] == layers and r.get("w", 1) == w}
                peer = next((r for r in speed if r.get("peer") == "nn" and r["layers"] == layers
                             and r.get("w", 1) == w), {})
                on, off = hl[1]["run_steps_per_s"], hl[0]["run_steps_per_s"]
                p = peer.get("run_steps_per_s", float("nan"))
                out.append(f"| {where} | {w} | {layers} | {on:,.0f} | {off:,.0f} | {on / off:.3f} | {p:,.0f} | "
                           f"{on / p:.2f} | {off / p:.2f} | {hl[1]['tflops']:.1f} |")
        out.append("")
    if addition_path:
        cutlass_addition(addition_path, out)


def plan_section(path, out):
    """Issue 57, item 1 (bench/plan_check.sh): the scheduler's four-card plan priced by its cost model
    and each ensemble timed alone on one card; each card's load both ways."""
    rows = load(path)
    gpu, date = card_and_date(rows)
    # Each workload: its summary line and the lines before it, back to the previous summary.
    workloads, start = [], 0
    for i, r in enumerate(rows):
        if r.get("plan") == "summary":
            workloads.append((r, rows[start:i]))
            start = i + 1
    if not workloads:
        return
    out.append(f"## Four cards planned, timed on one ({gpu}, {date}; issue 57)\n")
    out.append("`bench/plan_check.sh` asks the scheduler for its plan on four cards (`headlab-bench plan`: the "
               "ensembles, their splits and their cards, as `headlab-cli run --device all` would place them) "
               "and trains each planned ensemble alone on one card, for 200 steps of its longest phase (steady "
               "rate); its whole training is timed from that rate. A card's load is the sum over its ensembles, "
               "by the cost model (ensembleWork) and measured; the speed-up a plan allows is the whole over its "
               "busiest card. One card trains up to four ensembles at once, which this sum of times alone leaves "
               f"out (`{path}`).\n")
    out.append("| workload | runs | ensembles | card | ensembles on it | load by the model | load measured | measured ÷ model |")
    out.append("|---|---|---|---|---|---|---|---|")
    for s, lines in workloads:
        cards = [r for r in lines if r.get("plan") == "card"]
        for c in cards:
            ratio = c["measured_share"] / c["work_share"] if c["work_share"] else float("nan")
            out.append(f"| {s['session']} | {s['runs']} | {s['ensembles']} | {c['card']} | {c['ensembles']} | "
                       f"{c['work_share']:.1%} | {c['measured_share']:.1%} | {ratio:.2f} |")
    out.append("")
    simulated = any(s.get("speedup_simulated") for s, _ in workloads)
    out.append("| workload | speed-up the plan allows, by the model | measured | one card's time alone, summed |"
               + (" each card's part trained as that card would: seconds (one card, then cards 0–3) | speed-up |"
                  if simulated else ""))
    out.append("|---|---|---|---|" + ("---|---|" if simulated else ""))
    for s, lines in workloads:
        sims = [r for r in lines if r.get("plan") == "simulated"]
        line = (f"| {s['session']} | {s['speedup_by_model']:.2f} | {s['speedup_measured']:.2f} | "
                f"{s['measured_one_card_s']:.0f} s |")
        if simulated:
            line += (" " + ", ".join(f"{r['seconds']:.1f}" for r in sims) + f" | {s['speedup_simulated']:.2f} |"
                     if sims else " – | – |")
        out.append(line)
    out.append("")
    if simulated:
        out.append("The simulated column trains each card's part of the plan on the one card, whole (every step, "
                   "evaluation and phase), by four workers at once as a card's slots do, one card after another; "
                   "then the one-card plan the same way. Its speed-up is the one-card time over the slowest card's: "
                   "what four cards give if each trains its part as fast as this card trains it alone.\n")
    for s, lines in workloads:
        ensembles = [r for r in lines if r.get("plan") == "ensemble"]
        total_work = sum(e["work"] for e in ensembles)
        total_s = sum(e["measured_s"] for e in ensembles) or float("nan")
        out.append(f"{s['session']}: each planned ensemble\n")
        out.append("| card | task, d_model, w | runs (heads) | steps | share by the model | measured share | ms/step alone |")
        out.append("|---|---|---|---|---|---|---|")
        for e in sorted(ensembles, key=lambda e: (e["card"], -e["work"])):
            out.append(f"| {e['card']} | {e['task']}, {e['d_model']}, w {e['w']} | {e['runs']} ({e['heads']}) | "
                       f"{e['steps']:,} | {e['work'] / total_work:.1%} | {e['measured_s'] / total_s:.1%} | "
                       f"{e['measured_s_per_step'] * 1e3:.2f} |")
        out.append("")


def inside_section(path, card, out):
    """What looking inside the heads costs (headlab-bench inside, issue 12)."""
    rows = [r for r in load(path) if r.get("impl") == "headlab-inside"]
    if not rows:
        return
    out.append("## Looking inside the heads: what it costs (issue 12)\n")
    out.append("`headlab-bench inside` trains the same ensemble three ways in one run, interleaved and best of "
               "each: without the per-head statistics (`HEADLAB_HEAD_STATS=0`), with them (the default: at each "
               "evaluation a probe pass over 192 test samples for the logit scale and entropy, the weight norms, "
               "and the W_Q/W_K gradient norms of the step before), and with them plus live attention maps of one "
               "run at each evaluation (what the Inside the heads tab asks for). Answer phase, evaluation every "
               f"100 steps (`{path}`).\n")
    if card:
        out.append(f"On {card}:\n")
    out.append("| device | ensemble | plain steps/s | + statistics | + live maps |")
    out.append("|---|---|---|---|---|")
    for r in rows:
        m, h = r["shape"].split("x")
        out.append(f"| {r['device']} | {r['runs']} × m {m}, {h} heads | {r['steps_per_s_plain']:,.0f} | "
                   f"{r['steps_per_s_head_stats']:,.0f} ({r['ratio_head_stats']:.3f}) | "
                   f"{r['steps_per_s_head_stats_live_maps']:,.0f} ({r['ratio_live_maps']:.3f}) |")
    out.append("")


def pruning_section(paths, out):
    """What pruning a run's heads costs against training it (bench/pruning_findings.sh, issue 76).
    Each path: a timing.jsonl beside a card.txt (GPU) or machine.txt (CPU: its name, its cores)."""
    paths = [p for p in paths if p]
    if not paths:
        return
    out.append("## Pruning: what it costs against training (issue 76)\n")
    out.append("`bench/pruning_findings.sh` trains the presets `pruning-text` and `pruning-addition` and inspects every "
               "run's final checkpoint: with zero ablation, post-hoc pruning in every order (gradient, single-shot, "
               "greedy, three random) and with retraining (the gradient curve fine-tuned for 200 steps, the "
               "from-scratch control at 3 counts, L0 gates at 6 λ for 200 steps each); with mean and optimal-constant "
               "ablation, the gradient, single-shot and greedy orders alone. Seconds per stage; training is the whole "
               "preset's, inspection one run's. `DEVICE=cpu SMALL=1` is the same on a workstation at d_model 32, "
               "4 layers of 2 or 4 heads, 60 steps (the text preset alone).\n")
    for path in paths:
        out.append("| machine | preset | stage | runs | at once | seconds (each) | training the preset |")
        out.append("|---|---|---|---|---|---|---|")
        folder = os.path.dirname(path)
        machine = ""
        for name in ("card.txt", "machine.txt"):
            if os.path.exists(os.path.join(folder, name)):
                lines = [x.strip() for x in open(os.path.join(folder, name)) if x.strip()]
                machine = lines[0] + (f", {lines[1]} cores" if len(lines) > 1 else "")
        rows = load(path)
        # A preset's training alone on the machine (a row with "jobs" shared the card with other work).
        train = {r["preset"]: r["seconds"] for r in rows if r["stage"] == "train" and r.get("jobs", 1) == 1}
        stages = {}
        for r in rows:
            if r["stage"] != "train" or r.get("jobs", 1) != 1:
                stages.setdefault((r["preset"], r["stage"], r.get("jobs", 1)), []).append(r["seconds"])
        for (preset, stage, jobs), secs in stages.items():
            each = f"{min(secs)}" if min(secs) == max(secs) else f"{min(secs)}–{max(secs)}"
            out.append(f"| {machine} | {preset} | {stage} | {len(secs)} | {jobs} | {each} | {train.get(preset, '–')} |")
        out.append("")
        out.append(f"(`{path}`)\n")
        # Where one inspection's time goes (bench/pruning_stages.sh), when measured beside it.
        stages_path = os.path.join(folder, "stages.jsonl")
        if os.path.exists(stages_path):
            stages = load(stages_path)
            out.append(f"Where one inspection's time goes on {machine} (`bench/pruning_stages.sh`: each stage the "
                       "difference from the inspection without it; `" + stages_path + "`):\n")
            out.append("| stage | seconds | share |")
            out.append("|---|---|---|")
            total = sum(r["seconds"] for r in stages)
            for r in stages:
                out.append(f"| {r['stage']} | {r['seconds']:.2f} | {100 * r['seconds'] / total:.0f} % |")
            out.append("")
    out.append("On the card, one run's inspection with retraining costs about as much as training the whole preset "
               "(a 16-head text run's took 230 s against the nine runs' 126 s together; it trains three models from "
               "scratch among its stages, and the time of each stage is not yet measured apart). Inspections side by "
               "side do not help (the \"at once\" column, a second device session): two 16-head inspections together "
               "took 498 s each against 230 s alone, slower than one after the other, and five together 451–455 s for "
               "an 8-head run against 108 s alone; on two CPU cores two small inspections together had not finished "
               "after 20 minutes, against 353 s for one. `bench/pruning_findings.sh` runs them one at a time. On two "
               "CPU cores the small model's inspection took 16 times the training of its four runs, and the stages "
               "above say where: retraining is 98 % of it (fine-tuning 132 s, L0 gates 143 s, the control 9 s), "
               "everything post hoc 5 s. Fine-tuning trains each of the curve's 5 models 200 steps, and L0 gates 200 "
               "steps at each of 6 λ: 2,200 model-steps against the 60 the run was trained for. The cost is those "
               "steps, set by `--fine-tune-steps` and `--l0-lambdas`, not the pruning itself. Without retraining, "
               "mean and optimal-constant ablation in the gradient, single-shot and greedy orders (a fourth device "
               "session, 2026-12-05, one inspection at a time) took 7–8 s and 18–19 s for a 4-head text run, 22–24 s "
               "and 47–48 s at 8 heads, 86–87 s and 144–145 s at 16, against 125 s for training all nine runs; on "
               "addition 3–5 s each. The greedy order evaluates every remaining head before each removal, so its "
               "cost grows with the square of the head count.\n")


def timing_note(rows):
    """How HeadLab's rates in `rows` were timed, against the peers' timers (headlab-bench's Rate)."""
    ours = [r for r in rows if str(r.get("impl", "")).startswith("headlab") and not r.get("e2e")]
    if not ours:
        return ""
    timings = {r.get("timing") for r in ours}
    steady = ("HeadLab's rates count the steps alone, as the peers' timers do: the wall time of the timed run "
              "less that of a 10-step run with the same fixed costs, over the steps between")
    if ours and timings == {"steady-min3"}:
        return steady + " (each wall time the least of three)."
    if ours and timings <= {"steady", "steady-min3"}:
        return (steady + ". Rows timed before 2026-11-28's least-of-three rule took one difference, which "
                "the fixed costs' spread can push too high (by up to 1.8× on text).")
    return ("HeadLab's rates here are end to end: they include its set-up, the two evaluations, the graph "
            "capture and, for text, each run's final 200-byte sample, which the peers' timers (started after "
            "their warm-up and compile) leave out. The ratios are lower bounds for HeadLab; `headlab-bench` "
            "times the steps alone since 2026-11-28.")


def card_and_date(rows, date=""):
    gpu = next((r["gpu"].split(",")[0] for r in rows if "gpu" in r), "unknown GPU")
    return gpu, next((r["date"] for r in rows if "date" in r), date)


def floor_rate(floors, gpu, task, precision, **key):
    """The products-alone floor's run-steps/s (bench/compute_floor.py) of one step on `gpu`, or None."""
    return next((r["floor_run_steps_per_s"] for r in floors
                 if r.get("task") == task and r.get("floor") == precision and "floor_run_steps_per_s" in r
                 and str(r.get("gpu", "")).startswith(gpu) and all(r.get(k) == v for k, v in key.items())), None)


def floor_note(floors, precision):
    if not floors:
        return ("The floor columns are empty: `bench/compute_floor.py` has not run on this card (`bench/peers_all.sh`'s "
                "part `floors` runs it).")
    return (f"Floor: the time the step's matrix products alone take in {precision} at the rates this card reaches on "
            "their shapes (`bench/compute_floor.py`, each product timed alone, back to back): a step that did nothing "
            "but its products would run at the floor's rate. \"of floor\" is HeadLab's rate over the floor's.")


def profile_table(out, prof, tags):
    """GPU time per kernel class of each (label, row filter) in `tags` (headlab-bench's --profile)."""
    out.append("| step | wall ms/step | GPU ms/step | kernels/step | matmul ms | attention ms | element-wise ms | "
               "reduce ms | layer norm ms | other ms (HeadLab's own kernels) |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for label, match in tags:
        total = next((r for r in prof if r.get("profile") == "total" and match(r)), None)
        if not total:
            continue
        cls = {r["class"]: r["ms_per_step"] for r in prof if r.get("profile") == "class" and match(r)}
        out.append(f"| {label} | {total['wall_ms_per_step']:.2f} | {total['gpu_ms_per_step']:.2f} | "
                   f"{total['kernels_per_step']:.0f} | {cls.get('matmul', 0):.2f} | {cls.get('attention', 0):.2f} | "
                   f"{cls.get('elementwise', 0):.2f} | "
                   f"{cls.get('reduce', 0):.2f} | {cls.get('layer_norm', 0):.2f} | {cls.get('other', 0):.2f} |")
    out.append("")


def nn_key(r):
    """A bench/nn_speed.sh row's shape: (layers, w, runs in the ensemble)."""
    return r["layers"], r.get("w", 1), r.get("runs", 8)


def nn_peer_name(r):
    """A reference_nn.py row's name in the tables: how its ensemble was run."""
    if r["impl"] == "vmap-compile":
        return f"vmap + compile ({r.get('compile_mode', '?')})"
    return {"vmap": "vmap, eager"}.get(r["impl"], r["impl"])


def nn_rows(paths):
    """(layers, w, runs) -> {"on", "model_off", "off": HeadLab run-steps/s, "peers": [(name,
    run-steps/s)], "tflops"} over bench/nn_speed.sh's files (each key from the one file that
    measured it)."""
    table = {}
    for path in paths:
        rows = load(path)
        for key in sorted({nn_key(r) for r in rows if "layers" in r}):
            # Each way's row; from nn_speed.sh since issue 56, "on" is the row with the CUTLASS
            # product (ffn_product 1), its row with the product off being the cutlass section's.
            hl = {(r["fused_points"], r["fused_ffn"]): r for r in rows
                  if r.get("impl") == "headlab-preset" and nn_key(r) == key
                  and not (r["fused_ffn"] == 1 and r.get("ffn_product", 1) == 0)}
            peers = [(nn_peer_name(p), p.get("run_steps_per_s")) for p in rows
                     if p.get("peer") == "nn" and nn_key(p) == key]
            table[key] = {"on": hl.get((1, 1), {}).get("run_steps_per_s"),
                          "model_off": hl.get((1, 0), {}).get("run_steps_per_s"),
                          "off": hl.get((0, 0), {}).get("run_steps_per_s"),
                          "tflops": hl.get((1, 1), {}).get("tflops"), "peers": peers}
    return table


def nn_section(paths, date, out, profile_path="", floors=(), step_profile=""):
    """Nearest neighbour against its strongest peer (bench/nn_speed.sh, issue 24)."""
    gpu, date = card_and_date(load(paths[0]), date)
    files = ", ".join(f"`{p}`" for p in paths)
    out.append("## Nearest neighbour against its strongest peer\n")
    out.append(f"Measured by `bench/nn_speed.sh` on one {gpu}, {date}; each row's numbers come from one run of it "
               f"({files}). nn-fig1-full's rank-64 line (one head of 64, d 64, N 16, FFN 2048, batch 256), the "
               "runs of a row as one ensemble, FP32 on both sides. Peer: the reference Encoder's layers as a "
               "`torch.func` vmap ensemble of the same runs under `torch.compile` (`bench/reference_nn.py`), or "
               "eagerly where it says so. HeadLab three "
               "ways: every kernel of its own on; the feed-forward and unit-scale norm kernels off "
               "(`HEADLAB_FUSED_FFN=0 HEADLAB_FUSED_NORM=0`); and the points kernel off too (the path before "
               "issue 24). Run-steps/s = steps/s × runs. "
               + timing_note([r for p in paths for r in load(p)]) + " " + floor_note(floors, "FP32") + "\n")
    out.append("| layers | w | runs | HeadLab | model kernels off | all kernels off | peer | run-steps/s | "
               "HeadLab ÷ peer | HeadLab TFLOP/s | FP32 floor | of floor |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (layers, w, runs), r in sorted(nn_rows(paths).items()):
        floor = floor_rate(floors, gpu, "nn", "fp32", layers=layers, w=w, runs=runs)
        for name, peer in r["peers"]:
            on = r["on"]
            out.append(f"| {layers} | {w} | {runs} | {fmt(on)} | {fmt(r['model_off'])} | {fmt(r['off'])} | {name} | "
                       f"{fmt(peer)} | {fmt(on / peer if on and peer else None, 2)} | {fmt(r['tflops'], 1)} | "
                       f"{fmt(floor)} | {fmt(on / floor if on and floor else None, 2)} |")
    out.append("")
    if profile_path:
        prof = load(profile_path)
        card, day = card_and_date(prof)
        out.append(f"Where the 1-layer step's GPU time went, by kernel class (Kineto, `bench/kernels_check.sh`, "
                   f"{card}{', ' + day if day else ''}, `{profile_path}`), with every kernel on and with one off "
                   "at a time:\n")
        profile_table(out, prof, [
            (name, lambda r, norm=norm, ffn=ffn: r.get("fused_norm") == norm and r.get("fused_ffn") == ffn)
            for (norm, ffn), name in (((1, 1), "all on"), ((0, 1), "norm kernel off"),
                                      ((1, 0), "feed-forward kernels off"))])
    if step_profile:
        prof = load(step_profile)
        card, day = card_and_date(prof)
        shapes = sorted({(r["layers"], r["w"], r["runs"]) for r in prof if r.get("profile") == "total"})
        out.append(f"Where the step's GPU time goes now, every kernel on (Kineto, `bench/nn_profile.sh`, {card}, "
                   f"{day}, `{step_profile}`):\n")
        profile_table(out, prof, [(f"{layers} layer{'s' if layers > 1 else ''}, w {w}, {runs} runs",
                                   lambda r, k=(layers, w, runs): (r.get("layers"), r.get("w"), r.get("runs")) == k)
                                  for layers, w, runs in shapes])


def text_rows(rows):
    """schedule -> {"headlab", "nanogpt-eager", "nanogpt-compile": steps/s} (bench/text_speed.sh)."""
    table = {}
    for r in rows:
        if r.get("impl") == "headlab-preset":
            table.setdefault(r["schedules"], {})["headlab"] = r["steps_per_s"]
        elif r.get("impl", "").startswith("nanogpt") and "schedule" in r:
            table.setdefault(r["schedule"], {})[r["impl"]] = r["steps_per_s"]
    return table


def text_e2e(rows):
    """(HeadLab's row, nanoGPT's row) of text_speed.sh's E2E=1 comparison, or None."""
    ours = next((r for r in rows if r.get("e2e") and r.get("impl") == "headlab-cli"), None)
    peer = next((r for r in rows if r.get("e2e") and r.get("impl") == "nanogpt-compile"), None)
    return (ours, peer) if ours and peer else None


def text_section(path, profile_path, out, floors=()):
    """Text against nanoGPT's own model.py (bench/text_speed.sh, issue 24)."""
    rows = load(path)
    gpu, date = card_and_date(rows)
    check = next((r for r in rows if r.get("peer") == "nanoGPT model.py"), None)
    out.append("## Text against nanoGPT\n")
    out.append(f"Measured by `bench/text_speed.sh` in one run on one {gpu}, {date} (`{path}`). The "
               "head-progression preset's shape (d 256, 4 layers, context 128, batch 64, TF32 as the preset "
               "has it), one run per head schedule, 300 timed steps. Peer: nanoGPT's own `model.py`, unchanged "
               "(`bench/nanogpt_peer.py`: tied embeddings, fused AdamW, `scaled_dot_product_attention`, "
               "which has no flash kernel in FP32), eager and under `torch.compile`. " + timing_note(rows))
    if check:
        out.append(f"Before timing, the peer was given a HeadLab run's weights and computed its loss on the same bytes: "
                   f"relative gap {check['relative_gap']:.1e} ({'passed' if check.get('ok') else 'FAILED'}).")
    out.append(floor_note(floors, "TF32"))
    out.append("\n| schedule | HeadLab steps/s | nanoGPT eager | nanoGPT compiled | ÷ eager | ÷ compiled | TF32 floor | "
               "of floor |")
    out.append("|---|---|---|---|---|---|---|---|")
    for schedule, r in text_rows(rows).items():
        h, e, c = r.get("headlab"), r.get("nanogpt-eager"), r.get("nanogpt-compile")
        floor = floor_rate(floors, gpu, "text", "tf32", heads=schedule, runs=1)
        out.append(f"| {schedule} | {fmt(h)} | {fmt(e)} | {fmt(c)} | {fmt(h / e if h and e else None, 2)} | "
                   f"{fmt(h / c if h and c else None, 2)} | {fmt(floor)} | {fmt(h / floor if h and floor else None, 2)} |")
    e2e = text_e2e(rows)
    if e2e:
        ours, peer = e2e
        out.append(f"\nThe head-progression preset end to end, 18 runs of 4,000 steps: `headlab-cli run --preset "
                   f"head-progression` took {ours['seconds']:,.0f} s (start, training, evaluations, samples and the saved "
                   f"session); compiled nanoGPT trained the same 18 runs one after another in "
                   f"{peer['seconds_with_compile']:,.0f} s, its compiles included: {peer['seconds_with_compile'] / ours['seconds']:.2f}×.")
    compile_s = [r["warmup_and_compile_s"] for r in rows if r.get("impl") == "nanogpt-compile" and "schedule" in r]
    if compile_s:
        out.append(f"\nnanoGPT's compile took {min(compile_s):.0f}–{max(compile_s):.0f} s a schedule; no floor was "
                   "measured on this card.\n")
    if profile_path:
        out.append(f"HeadLab's step, heads 4, 4, 4, 4, by kernel class (Kineto, `headlab-bench preset --profile 1`, same "
                   f"card and day, `{profile_path}`; the profiler slows the host, so its wall time is above the "
                   "unprofiled rate's):\n")
        prof = load(profile_path)
        on = lambda r: r.get("preset") == "head-progression" and r.get("fused_layer_norm", 1) == 1
        off = lambda r: r.get("preset") == "head-progression" and r.get("fused_layer_norm", 1) == 0
        profile_table(out, prof, [("heads 4, 4, 4, 4", on), ("the same, LayerNorm kernel off", off)])
        total = next((r for r in prof if r.get("profile") == "total" and on(r)), None)
        rate = text_rows(rows).get("4,4,4,4", {}).get("headlab")
        if total and rate:
            out.append(busy(total, rate))


def busy(total, steps_per_s):
    """How much of an unprofiled step (1 / steps_per_s) the profiled GPU time fills, in words."""
    step_ms = 1e3 / steps_per_s
    text = (f"Unprofiled, that step takes {step_ms:.2f} ms (1 / {steps_per_s:,.0f} steps/s); its kernels take "
            f"{total['gpu_ms_per_step']:.2f} ms of GPU time, so the card is busy "
            f"{100 * min(1.0, total['gpu_ms_per_step'] / step_ms):.0f} % of the step")
    if total["gpu_ms_per_step"] > step_ms:
        text += (" (the profiled GPU time is more than the step: the profiled run also counts work the timed steps "
                 "leave out, which for text was the final 200-byte sample until `--profile 1` dropped it)")
    return text + ".\n"


def addition_rows(rows):
    """(m, heads) -> {"single", "compile", "ensemble", "vmap": run-steps/s} (bench/gpu_bench.sh)."""
    table = {}
    for r in rows:
        key = (r.get("m"), r.get("heads"))
        impl = r.get("impl", "")
        if impl == "headlab-single":
            table.setdefault(key, {})["single"] = r["steps_per_s"]
        elif impl == "torch.compile(reduce-overhead)":
            table.setdefault(key, {})["compile"] = r["steps_per_s"]
        elif impl == "headlab-ensemble" and not r.get("mix"):
            table.setdefault(key, {})["ensemble"] = r["run_steps_per_s"]
            table[key]["runs"] = r["runs"]
        elif impl == "vmap torch.compile(reduce-overhead)":
            table.setdefault(key, {})["vmap"] = r["run_steps_per_s"]
    return table


def addition_section(path, profile_path, out, floors=()):
    """Addition against the paper's model under torch.compile (bench/gpu_bench.sh, issue 24)."""
    rows = load(path)
    gpu, date = card_and_date(rows)
    out.append("## Addition against the compiled paper model\n")
    out.append(f"Measured by `bench/gpu_bench.sh build single compile`, then `vmap` at three shapes, in one device "
               f"call on one {gpu}, {date} (`{path}`). FP32, answer-only phase, batch 64. Peers: the paper's model "
               "under `torch.compile(mode=\"reduce-overhead\")`, one run; and 8 copies of it as one `torch.func` "
               "vmap ensemble under the same mode, each copy's loss checked against the model alone first "
               "(`bench/reference_addition.py`). HeadLab: one run, and 8 runs of one shape as one ensemble. "
               + timing_note(rows) + " " + floor_note(floors, "FP32") + "\n")
    out.append("| m × n_H | HeadLab, 1 run | compiled, 1 run | ÷ | FP32 floor, 1 run | of floor | "
               "HeadLab, ensemble of 8 (run-steps/s) | compiled vmap of 8 | ÷ |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    for (m, h), r in sorted(addition_rows(rows).items(), key=lambda kv: (kv[0][0] or 0, kv[0][1] or 0)):
        if m is None:
            continue
        s, c, e, v = r.get("single"), r.get("compile"), r.get("ensemble"), r.get("vmap")
        floor = floor_rate(floors, gpu, "addition", "fp32", m=m, heads=h, runs=1)
        out.append(f"| {m} × {h} | {fmt(s)} | {fmt(c)} | {fmt(s / c if s and c else None, 2)} | {fmt(floor)} | "
                   f"{fmt(s / floor if s and floor else None, 2)} | {fmt(e)} | {fmt(v)} | "
                   f"{fmt(e / v if e and v else None, 2)} |")
    out.append("")
    if profile_path:
        out.append(f"HeadLab's single-run step by kernel class (Kineto, `headlab-bench profile`, same card and day, "
                   f"`{profile_path}`):\n")
        prof = load(profile_path)
        shapes = ((24, 1), (384, 12))
        profile_table(out, prof, [(f"{m} × {h}{'' if ln else ', LayerNorm kernel off'}",
                                   lambda r, m=m, h=h, ln=ln: r.get("m") == m and r.get("heads") == h
                                   and r.get("fused_layer_norm", 1) == ln)
                                  for m, h in shapes for ln in (1, 0)])
        table = addition_rows(rows)
        for m, h in shapes:
            total = next((r for r in prof if r.get("profile") == "total" and r.get("m") == m
                          and r.get("heads") == h and r.get("fused_layer_norm", 1) == 1), None)
            rate = table.get((m, h), {}).get("single")
            if total and rate:
                out.append(f"{m} × {h}: " + busy(total, rate))


def layernorm_section(path, out):
    """The LayerNorm kernel on and off in one call (bench/layernorm_check.sh, issue 24)."""
    rows = [r for r in load(path) if "fused_layer_norm" in r and r.get("timing") != "profiled"
            and r.get("profile") is None]
    gpu, date = card_and_date(load(path))
    out.append("## The LayerNorm kernel on and off\n")
    out.append(f"Measured by `bench/layernorm_check.sh` in one call on one {gpu}, {date} (`{path}`): HeadLab "
               "with its LayerNorm kernel (`core/model/cuda/LayerNorm.cu`) and without it "
               "(`HEADLAB_FUSED_LAYER_NORM=0`, ATen's `layer_norm` and an `addcmul`). Text as the "
               "head-progression preset has it (TF32, one run, 300 steps); addition one run in FP32, 1,000 steps. "
               + timing_note(rows) + "\n")
    out.append("| model | kernel on, steps/s | off | on ÷ off |")
    out.append("|---|---|---|---|")
    def rate(ln, match):
        return next((r["steps_per_s"] for r in rows if r["fused_layer_norm"] == ln and match(r)), None)
    cases = [(f"text, heads {s.replace(',', ', ')}", lambda r, s=s: r.get("schedules") == s)
             for s in dict.fromkeys(r["schedules"] for r in rows if "schedules" in r)]
    cases += [(f"addition, {m} × {h}", lambda r, m=m, h=h: r.get("impl") == "headlab-single" and r.get("m") == m
               and r.get("heads") == h)
              for m, h in dict.fromkeys((r["m"], r["heads"]) for r in rows if r.get("impl") == "headlab-single")]
    for label, match in cases:
        a, b = rate(1, match), rate(0, match)
        out.append(f"| {label} | {fmt(a)} | {fmt(b)} | {fmt(a / b if a and b else None, 2)} |")
    out.append("")


def attention_section(path, out):
    """The micro-heads' attention kernel on and off in one call (bench/attention_check.sh, issue 24)."""
    lines = load(path)
    rows = [r for r in lines if "fused_attention" in r and r.get("timing") != "profiled"
            and r.get("profile") is None]
    gpu, date = card_and_date(lines)
    out.append("## The micro-heads' attention kernel on and off\n")
    out.append(f"Measured by `bench/attention_check.sh` in one call on one {gpu}, {date} (`{path}`): HeadLab "
               "with its attention kernel for micro-heads on short sequences (`core/model/cuda/MicroAttention.cu`) "
               "and without it (`HEADLAB_FUSED_ATTENTION=0`: ATen's batched products and softmax over "
               "(R, B, M, T, dm) views, and the copies into and out of that layout). Nearest neighbour: "
               "nn-fig1-full's 1-layer line, 8 runs, FP32, in run-steps/s; text as the head-progression preset has "
               "it (TF32, one run); addition one run in FP32, 1,000 steps. " + timing_note(rows) + "\n")
    out.append("| model | kernel on | off | on ÷ off |")
    out.append("|---|---|---|---|")
    def rate(on, match, key):
        return next((r[key] for r in rows if r["fused_attention"] == on and match(r)), None)
    cases = [(f"nearest neighbour, w {w}", lambda r, w=w: r.get("preset") == "nn-fig1-full" and r.get("w") == w,
              "run_steps_per_s")
             for w in dict.fromkeys(r["w"] for r in rows if r.get("preset") == "nn-fig1-full")]
    cases += [(f"text, heads {s.replace(',', ', ')}", lambda r, s=s: r.get("schedules") == s
               and r.get("preset") == "head-progression", "steps_per_s")
              for s in dict.fromkeys(r["schedules"] for r in rows if r.get("preset") == "head-progression")]
    cases += [(f"addition, {m} × {h}", lambda r, m=m, h=h: r.get("impl") == "headlab-single" and r.get("m") == m
               and r.get("heads") == h, "steps_per_s")
              for m, h in dict.fromkeys((r["m"], r["heads"]) for r in rows if r.get("impl") == "headlab-single")]
    for label, match, key in cases:
        a, b = rate(1, match, key), rate(0, match, key)
        out.append(f"| {label} | {fmt(a)} | {fmt(b)} | {fmt(a / b if a and b else None, 2)} |")
    out.append("")
    classes = [r for r in lines if r.get("profile") == "class" and r.get("fused_attention") == 1]
    total = next((r for r in lines if r.get("profile") == "total" and r.get("fused_attention") == 1), None)
    if classes and total:
        out.append(f"Nearest neighbour at w {total['w']}, {total['layers']} layer, {total['runs']} runs, with the "
                   f"kernel, by kernel class (Kineto, same call): {total['gpu_ms_per_step']:.2f} ms of GPU time "
                   f"a step, {total['kernels_per_step']:.0f} kernels.\n")
        out.append("| class | ms a step | share |")
        out.append("|---|---|---|")
        for r in sorted(classes, key=lambda r: -r["ms_per_step"]):
            out.append(f"| {r['class']} | {r['ms_per_step']:.2f} | {100 * r['share']:.0f} % |")
        out.append("")


def multi_gpu_section(paths, out):
    """Several GPUs against one (bench/gpu_multi4.sh, issue 24 item 4): each file is one machine's calls, the
    commit in its name. One row per timed variant, its ratio to one card of the same file, session and steps."""
    out.append("## Several GPUs against one\n")
    out.append("Measured by `bench/gpu_multi4.sh`: the same `headlab-cli run` of a session on `cuda:0` alone and on "
               "every card (`--device all`), in one call on one machine. `addition` is the addition-fig2-grid preset "
               "(25 runs), `nn` the nn-fig1-full slice of 1 layer, w 1 and 8, rank 64 .. 1 (14 runs), both with "
               "their steps cut. The busy column gives, per card, the seconds into the run when nvidia-smi last "
               "saw it busy. Each file holds the runs of one commit (in its name).\n")
    out.append("| machine, file | session | steps | cards | switch | seconds | one card ÷ this | each card last busy, s |")
    out.append("|---|---|---|---|---|---|---|---|")
    def setting_of(r):  # the HEADLAB_* setting of a row, "-" for none (8e86621's lines name only the placement)
        if "env" in r:
            return r["env"]
        return "-" if r.get("placement", "-") == "-" else "HEADLAB_PLACEMENT=" + r["placement"]
    for path in paths:
        lines = load(path)
        rows = [r for r in lines if r.get("impl") == "headlab-cli" and r.get("rc") == 0]
        gpus = sum(1 for r in lines if "gpu" in r and "impl" not in r) or 1  # a card a line
        gpu, date = card_and_date(lines)
        where = f"{gpu}{', ' + date if date else ''}, `{os.path.basename(path)}`"
        for r in rows:
            env = setting_of(r)
            base = next((o["seconds"] for o in rows if o["session"] == r["session"] and o["device"] == "cuda:0"
                         and setting_of(o) == "-" and o.get("steps") == r.get("steps")
                         and o["options"] == r["options"]), None)
            cards = "1" if r["device"] != "all" else str(sum(1 for u in r.get("utilization", [])) or gpus)
            busy = ", ".join(f"{u['last_busy_s']:g}" for u in r.get("utilization", []) if u["mean"] > 0)
            switch = " ".join(f"`{x}`" for x in (env if env != "-" else "", r["options"]) if x) or "—"
            out.append(f"| {where} | {r['session']} | {fmt(r.get('steps'))} | {cards} | {switch} | "
                       f"{fmt(r['seconds'], 1)} | {fmt(base / r['seconds'] if base else None, 2)} | {busy} |")
    out.append("")


def sweep_targets(fig1_rows, grid_rows, floors):
    """Issue 24's floor targets: nn-fig1-full (scaled from HeadLab's rate at each (layers, w), 7 ranks
    of 100,000 steps each) and the addition grid (bench/gpu_bench.sh grid, 4 ensembles at once) against
    their FP32 floors (within 1.5×) and, with TF32 on, their TF32 floors (within 3×)."""
    rows = []
    for precision, limit in (("fp32", 1.5), ("tf32", 3.0)):
        tf32 = precision == "tf32"
        label = f"within {limit:g}× of its {precision.upper()} floor" + (", TF32 on" if tf32 else "")
        rates = {(r["layers"], r["w"]): r["run_steps_per_s"] for r in fig1_rows
                 if r.get("impl") == "headlab-preset" and bool(r.get("tf32")) == tf32}
        floor = next((r["floor_minutes"] for r in floors + grid_rows if r.get("task") == "nn"
                      and r.get("sweep") == "nn-fig1-full" and r.get("floor") == precision), None)
        if len(rates) == 9 and floor:
            minutes = sum(7 * 100000 / rate for rate in rates.values()) / 60
            x = minutes / floor
            rows.append(f"| nn-fig1-full {label} | {minutes:,.0f} min (scaled from rank 64 at each layers × w) "
                        f"against {floor:,.0f} min: {x:.2f}× | {'met' if x <= limit else 'not met'} |")
        grid_floor = next((r["floor_minutes"] for r in grid_rows if r.get("floor") == precision
                           and "grid_tflop" in r), None)
        sweep = next((r for r in grid_rows if r.get("runs") == 250 and r.get("concurrent") == 4
                      and r.get("impl") == ("headlab-sweep-tf32" if tf32 else "headlab-sweep")), None)
        if grid_floor and sweep:
            minutes = sweep["seconds"] * 30500 / sweep["steps"] / 60
            x = minutes / grid_floor
            rows.append(f"| addition grid {label} | {minutes:,.1f} min (a {sweep['steps']:,}-step slice, scaled) "
                        f"against {grid_floor:,.1f} min: {x:.2f}× | {'met' if x <= limit else 'not met'} |")
    return rows


def above_floor(factor, misses):
    """For missed targets, each (label, the peer's rate, the products-alone floor's rate or None):
    where `factor` × the peer is above the floor, the target asks for a step faster than its products
    timed alone; say so, as a multiple of the floor ("" where none is)."""
    above = [f"{factor * peer / floor:.2f}× ({label})" for label, peer, floor in misses
             if floor and floor < factor * peer]
    if not above:
        return ""
    return f"; {factor:g}× the peer would run at " + ", ".join(above) + " the FP32 products-alone floor"


def targets_section(nn_paths, text_path, addition_path, out, fig1_rows=(), grid_rows=(), floors=()):
    """Issue 24's speed targets against the files above: each ratio from one run of one script."""
    out.append("## Issue 24's targets\n")
    rows = [r for p in nn_paths for r in load(p)] + load(text_path) + load(addition_path)
    notes = ["Each ratio divides two numbers from one run of one script on one card, at the same precision on "
             "both sides.", timing_note(rows)]
    if fig1_rows or grid_rows:
        notes.append("The floors' targets scale HeadLab's wall time (a grid slice through the scheduler, or each nn "
                     "shape's steady rate) to the whole sweep and divide it by the sweep's products-alone floor "
                     "(`bench/compute_floor.py`).")
    out.append(" ".join(n for n in notes if n) + "\n")
    out.append("| target | measured | |")
    out.append("|---|---|---|")
    nn = nn_rows(nn_paths)
    ratios = [(k, r["on"] / p) for k, r in sorted(nn.items()) for name, p in r["peers"]
              if r["on"] and p and "reduce-overhead" in name]
    if ratios:
        cells = ", ".join(f"{x:.2f} ({layers} layer{'s' if layers > 1 else ''}, w {w}"
                          f"{f', {runs} runs' if runs != 8 else ''})" for (layers, w, runs), x in ratios)
        gpu = card_and_date([r for p in nn_paths for r in load(p)])[0]
        verdict = ("met" if min(x for _, x in ratios) >= 1.5 else "not met") + above_floor(1.5, [
            (f"w {w}, {layers} layer{'s' if layers > 1 else ''}", nn[(layers, w, runs)]["on"] / x,
             floor_rate(list(floors), gpu, "nn", "fp32", layers=layers, w=w, runs=runs))
            for (layers, w, runs), x in ratios if x < 1.5])
        out.append(f"| nearest neighbour ≥ 1.5× the compiled vmap ensemble | {cells} | {verdict} |")
    if text_path:
        t = [(s, r["headlab"] / r["nanogpt-compile"]) for s, r in text_rows(load(text_path)).items()
             if r.get("headlab") and r.get("nanogpt-compile")]
        if t:
            cells = ", ".join(f"{x:.2f} ({s})" for s, x in t)
            out.append(f"| text ≥ 1.5× compiled nanoGPT, one run per schedule | {cells} | "
                       f"{'met' if min(x for _, x in t) >= 1.5 else 'not met'} |")
        e2e = text_e2e(load(text_path))
        if e2e:
            x = e2e[1]["seconds_with_compile"] / e2e[0]["seconds"]
            out.append(f"| text ≥ 1.5× compiled nanoGPT, the 18-run preset end to end | {x:.2f} | "
                       f"{'met' if x >= 1.5 else 'not met'} |")
    if addition_path:
        rows_a = addition_rows(load(addition_path))
        a = [(k, r["single"] / r["compile"]) for k, r in sorted(rows_a.items(),
                                                                key=lambda kv: (kv[0][0] or 0, kv[0][1] or 0))
             if r.get("single") and r.get("compile")]
        if a:
            low = [f"{x:.2f} ({m} × {h})" for (m, h), x in a if x < 2]
            gpu = card_and_date(load(addition_path))[0]
            verdict = ("met" if not low else "not met at " + ", ".join(low)) + above_floor(2, [
                (f"{m} × {h}", rows_a[(m, h)]["compile"],
                 floor_rate(list(floors), gpu, "addition", "fp32", m=m, heads=h, runs=1))
                for (m, h), x in a if x < 2])
            out.append(f"| addition ≥ 2× torch.compile, one run, every shape | {min(x for _, x in a):.2f}–"
                       f"{max(x for _, x in a):.2f} | {verdict} |")
    out.extend(sweep_targets(list(fig1_rows), list(grid_rows), list(floors)))
    out.append("")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", action="append", default=[])
    ap.add_argument("--cpu", default="")
    ap.add_argument("--cpu-peers", default="", help="the JSON lines of bench/cpu_peers.sh (issue 79)")
    ap.add_argument("--cpu-levers", default="",
                    help="bench/cpu_peers.sh's parts timed and adam: the wide steps timed without the profiler, "
                         "and Adam as one pass against ATen's passes")
    ap.add_argument("--cpu-nn-profile", default="",
                    help="headlab-bench preset --preset nn-classroom --profile 1: where its step goes")
    ap.add_argument("--cpu-alone", default="",
                    help="bench/cpu_products_isolated.py: the wide step's products each timed alone")
    ap.add_argument("--classroom-time", action="append", default=[],
                    help="bench/classroom_time.py's text files, shown under --cpu-peers")
    ap.add_argument("--lesson-press", default="",
                    help="bench/lesson_press_time.sh: how soon a lesson press trains, shown under --cpu-peers")
    ap.add_argument("--cpu-placement", default="",
                    help="bench/cpu_placement.py: ensembles batched and threads placed, on and off, under --cpu-peers")
    ap.add_argument("--cpu-loop-levers", action="append", default=[],
                    help="bench/cpu_peers.sh parts loopthreads, layernorm and embedding: HeadLab's own loops' "
                         "threads, the LayerNorm and the embedding loops, each on and off, under --cpu-peers "
                         "(repeatable)")
    ap.add_argument("--storage", default="", help="the JSON lines of bench/storage_bench.sh")
    ap.add_argument("--checkpoints", action="append", default=[],
                    help="the JSON lines of bench/checkpoint_disk.sh (one table each)")
    ap.add_argument("--stabilizers", default="", help="the CSV of bench/gpu_stabilizers.sh")
    ap.add_argument("--ablation", default="", help="the JSON lines of bench/gpu_ablation.sh")
    ap.add_argument("--export", default="", help="the JSON lines of bench/export_bench.sh")
    ap.add_argument("--python-read", default="", help="the JSON lines of bench/python_read.sh")
    ap.add_argument("--cold-start", action="append", default=[],
                    help="the JSON lines of bench/cold_start.sh (repeat: newest first)")
    ap.add_argument("--lab-optimization", default="", help="the JSON lines of bench/lab_optimization.sh")
    ap.add_argument("--products", action="append", default=[],
                    help="the JSON lines of bench/gpu_products.sh (repeat: oldest first)")
    ap.add_argument("--products-only", action="store_true", help="print only the --products section")
    ap.add_argument("--plan", default="", help="the JSON lines of bench/plan_check.sh (issue 57)")
    ap.add_argument("--plan-only", action="store_true", help="print only the --plan section")
    ap.add_argument("--cutlass", default="", help="the JSON lines of bench/cutlass_products.sh")
    ap.add_argument("--cutlass-addition", default="",
                    help="the JSON lines of bench/cutlass_products.sh MODE=addition")
    ap.add_argument("--cutlass-speed", action="append", default=[],
                    help="bench/nn_speed.sh's lines with the CUTLASS product on and off (KERNELS=\"1 1 1,1 1 0\")")
    ap.add_argument("--inside", default="", help="the JSON lines of headlab-bench inside")
    ap.add_argument("--inside-card", default="", help="the card and date of --inside (its lines carry none)")
    ap.add_argument("--stabilizers-card", default="", help="the card and date of --stabilizers")
    ap.add_argument("--nn", action="append", default=[], help="the JSON lines of bench/nn_speed.sh")
    ap.add_argument("--nn-date", default="", help="its date, where its lines carry none")
    ap.add_argument("--nn-profile", default="", help="the JSON lines of bench/kernels_check.sh")
    ap.add_argument("--nn-step-profile", default="", help="the JSON lines of bench/nn_profile.sh")
    ap.add_argument("--text", default="", help="the JSON lines of bench/text_speed.sh")
    ap.add_argument("--text-profile", default="", help="headlab-bench preset --profile 1's lines for text")
    ap.add_argument("--addition", default="", help="the JSON lines of bench/gpu_bench.sh single compile vmap")
    ap.add_argument("--addition-profile", default="", help="headlab-bench profile's lines for addition")
    ap.add_argument("--layernorm", default="", help="the JSON lines of bench/layernorm_check.sh")
    ap.add_argument("--attention", default="", help="the JSON lines of bench/attention_check.sh")
    ap.add_argument("--fig1", default="", help="peers_all.sh part nn-fig1: headlab-bench preset nn-fig1-full lines")
    ap.add_argument("--grid", default="", help="bench/gpu_bench.sh floor grid lines (issue 24's grid target)")
    ap.add_argument("--floors", action="append", default=[],
                    help="bench/compute_floor.py's lines (--task nn, text --runs 1, addition-single)")
    ap.add_argument("--multi-gpu", action="append", default=[], help="the JSON lines of bench/gpu_multi4.sh")
    ap.add_argument("--targets-only", action="store_true",
                    help="print only issue 24's targets from --nn, --text and --addition (bench/peers_all.sh)")
    ap.add_argument("--pruning", action="append", default=[],
                    help="bench/pruning_findings.sh's timing.jsonl (beside its card.txt or machine.txt)")
    ap.add_argument("--notes", action="append", default=[], help="markdown appended at the end")
    args = ap.parse_args()
    floors = [r for p in args.floors for r in load(p)]
    if args.products_only:
        out = []
        products_section(args.products, out)
        print("\n".join(out))
        return
    if args.plan_only:
        out = []
        plan_section(args.plan, out)
        print("\n".join(out))
        return
    if args.targets_only:
        out = []
        targets_section(args.nn, args.text, args.addition, out, load(args.fig1), load(args.grid), floors)
        print("\n".join(out))
        return
    out = ["# Performance", "", "Generated by `bench/report.py` (through `bench/make_performance.sh`) from the JSON lines "
           "(and one CSV) of the bench runs that each section names. Ratios only compare numbers from the same "
           "run on the same machine. One part is written by hand: `bench/results/notes.md`, notes on the tables, "
           "which stands before the per-task sections. Earlier issues' targets and the analyses of their gaps "
           "are in `docs/PERFORMANCE-HISTORY.md`.", ""]
    if args.cold_start:
        cold_start_section(args.cold_start, out, args.lab_optimization)
    for g in args.gpu:
        gpu_section(g, out)
    if args.cpu:
        cpu_section(args.cpu, out)
    if args.cpu_peers:
        cpu_peers_section(args.cpu_peers, args.classroom_time, out, args.cpu_levers, args.cpu_alone,
                          args.cpu_nn_profile, args.lesson_press, args.cpu_placement,
                          args.cpu_loop_levers)
    if args.storage:
        storage_section(args.storage, out)
    checkpoint_section(args.checkpoints, out)
    if args.export:
        export_section(args.export, out)
    if args.python_read:
        python_read_section(args.python_read, out)
    if args.products:
        products_section(args.products, out)
    if args.cutlass:
        cutlass_section(args.cutlass, args.cutlass_speed, out, args.cutlass_addition)
    if args.inside:
        inside_section(args.inside, args.inside_card, out)
    pruning_section(args.pruning, out)
    if args.stabilizers:
        stabilizer_section(args.stabilizers, args.stabilizers_card, out)
    if args.ablation:
        ablation_section(args.ablation, out)
    for notes in args.notes:
        out.append(open(notes).read())
    if args.nn:
        nn_section(args.nn, args.nn_date, out, args.nn_profile, floors, args.nn_step_profile)
    if args.text:
        text_section(args.text, args.text_profile, out, floors)
    if args.addition:
        addition_section(args.addition, args.addition_profile, out, floors)
    if args.layernorm:
        layernorm_section(args.layernorm, out)
    if args.attention:
        attention_section(args.attention, out)
    if args.multi_gpu:
        multi_gpu_section(args.multi_gpu, out)
    if args.plan:
        plan_section(args.plan, out)
    if args.nn or args.text or args.addition or args.fig1 or args.grid:
        targets_section(args.nn, args.text, args.addition, out, load(args.fig1), load(args.grid), floors)
    print("\n".join(out))


if __name__ == "__main__":
    main()
