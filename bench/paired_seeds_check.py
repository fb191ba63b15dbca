"""paired_seeds_check.py — issue 53, items 2 and 4: is a seed's outcome monotone in η, and do
seeds differ (overdispersion between seeds)?

    .venv/bin/python bench/paired_seeds_check.py docs/data/issue53 > docs/data/issue53/paired-seeds-check.txt

The dense scans of bench/dense_scan.sh trained the same 8 seeds (init and data order) at each of
5 η: a paired design. For each docs/data/issue53/dense-scan-*.runs.csv this prints:

- each seed's verdicts from the smallest η to the largest, whether they are monotone (learned
  below some η, not above), and how many verdicts its best single threshold gets wrong;
- a permutation test of exchangeable seeds: the verdicts at each η are shuffled among the seeds
  (which keeps every η's count of learned runs) 20,000 times, and the observed number of
  monotone seeds and the variance of the seeds' counts of learned runs are set against the
  shuffled ones. Seeds that each carry a threshold make more monotone seeds and a larger
  variance than shuffling does; seeds that do not matter make neither;
- a logistic with a random intercept per seed, logit P = a + b·log10 η + v_seed,
  v ~ N(0, σ_v²), fitted by maximum likelihood (Gauss–Hermite quadrature, 40 nodes) on a grid of
  σ_v, with the likelihood-ratio test of σ_v = 0 (half χ²₁ at the boundary) and σ_v in decades of
  η (σ_v / |b|): the seeds' spread of their own crossings.

Then three sets of 8 seeds at each of the two configurations: the dense scans (1000-1007), the
paired search of bench/sessions/paired-m24-m96-h12.yaml (2000-2007) and the dense scans of
bench/sessions/dense3000-*.yaml (3000-3007, at the first scans' η): whether one logistic curve
describes every set (likelihood ratio, runs taken as independent), the two dense scans alone,
and the random intercept per seed fitted over all of them.

Plain numpy. Seeded, so the output is the same at every run.
"""
import csv
import glob
import math
import os
import sys

import numpy as np

NODES, WEIGHTS = np.polynomial.hermite.hermgauss(40)


def read(path):
    with open(path) as f:
        rows = [r for r in csv.DictReader(f) if r["status"] in ("done", "diverged")]
    etas = sorted({float(r["lr"]) for r in rows})
    seeds = sorted({int(r["init_seed"]) for r in rows})
    table = np.full((len(seeds), len(etas)), -1, dtype=int)
    for r in rows:
        table[seeds.index(int(r["init_seed"])), etas.index(float(r["lr"]))] = int(float(r["learned"]))
    return rows, etas, seeds, table


def violations(row):
    """Verdicts a single threshold gets wrong at best (learned below it, not above)."""
    n = len(row)
    return min(int(np.sum(row[:cut] == 0) + np.sum(row[cut:] == 1)) for cut in range(n + 1))


def statistics(table):
    monotone = sum(violations(row) == 0 for row in table)
    return monotone, float(np.var(table.sum(axis=1)))


def permutation_test(table, rng, draws=20000):
    observed = statistics(table)
    more_monotone = more_spread = 0
    shuffled = table.copy()
    monotone_sum = 0
    for _ in range(draws):
        for j in range(table.shape[1]):
            shuffled[:, j] = rng.permutation(table[:, j])
        m, v = statistics(shuffled)
        monotone_sum += m
        more_monotone += m >= observed[0]
        more_spread += v >= observed[1]
    return observed, monotone_sum / draws, (more_monotone + 1) / (draws + 1), (more_spread + 1) / (draws + 1)


def log_likelihood(seeds, a, b, sigma):
    """Σ over seeds of log ∫ Π_j P(y_sj | a + b x_sj + v) N(v; 0, σ²) dv; `seeds` is a list of
    (x, y) arrays, one pair per seed."""
    total = 0.0
    v = math.sqrt(2.0) * sigma * NODES
    for x, row in seeds:
        eta = a + b * x[None, :] + v[:, None]  # nodes × runs
        p = 1.0 / (1.0 + np.exp(-np.clip(eta, -50, 50)))
        p = np.clip(p, 1e-12, 1 - 1e-12)
        inner = np.where(row[None, :] == 1, np.log(p), np.log(1 - p)).sum(axis=1)
        top = inner.max()
        total += top + math.log(float(np.sum(WEIGHTS * np.exp(inner - top))) / math.sqrt(math.pi))
    return total


def best_ab(seeds, sigma, start):
    """Maximises over (a, b) at fixed σ_v by Newton on numerical derivatives, from `start`."""
    a, b = start
    h = 1e-4
    for _ in range(60):
        f = lambda p, q: log_likelihood(seeds, p, q, sigma)
        f0 = f(a, b)
        ga = (f(a + h, b) - f(a - h, b)) / (2 * h)
        gb = (f(a, b + h) - f(a, b - h)) / (2 * h)
        haa = (f(a + h, b) - 2 * f0 + f(a - h, b)) / h**2
        hbb = (f(a, b + h) - 2 * f0 + f(a, b - h)) / h**2
        hab = (f(a + h, b + h) - f(a + h, b - h) - f(a - h, b + h) + f(a - h, b - h)) / (4 * h**2)
        hess = np.array([[haa, hab], [hab, hbb]])
        grad = np.array([ga, gb])
        try:
            step = -np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            break
        if not np.all(np.linalg.eigvals(hess) < 0):
            step = 0.1 * grad  # not concave here: a gradient step
        t = 1.0
        while t > 1e-6 and f(a + t * step[0], b + t * step[1]) < f0:
            t /= 2
        a, b = a + t * step[0], b + t * step[1]
        if abs(t * step).max() < 1e-7:
            break
    return log_likelihood(seeds, a, b, sigma), a, b


def random_intercept(seeds):
    centre = np.mean(np.concatenate([x for x, _ in seeds]))
    seeds = [(x - centre, y) for x, y in seeds]  # centred, so that a and b are nearly independent
    sigmas = np.concatenate([[0.0], np.exp(np.linspace(math.log(0.05), math.log(20.0), 60))])
    fits = []
    start = (0.0, -5.0)
    for s in sigmas:
        ll, a, b = best_ab(seeds, s, start)
        fits.append((ll, s, a, b))
        start = (a, b)
    best = max(fits)
    null = fits[0]
    lr = max(0.0, 2 * (best[0] - null[0]))
    # P(χ²₁ ≥ lr) / 2: σ_v = 0 lies on the boundary of its range.
    p = 0.5 * math.erfc(math.sqrt(lr / 2)) if lr > 0 else 0.5
    inside = [f[1] for f in fits if 2 * (best[0] - f[0]) <= 3.84]
    return best, null, lr, p, min(inside), max(inside)


def main(folder):
    rng = np.random.default_rng(53)
    print("Paired seeds on the dense scans (issue 53): the same seeds at every η.\n")
    paths = glob.glob(os.path.join(folder, "dense-scan-m*-h12.runs.csv")) + \
        glob.glob(os.path.join(folder, "dense3000-m*-h12.runs.csv"))
    for path in sorted(paths):
        rows, etas, seeds, table = read(path)
        if (table < 0).any():
            print(f"{os.path.basename(path)}: some seed lacks a verdict at some η; skipped")
            continue
        heads = int(rows[0]["heads"].split()[0])
        print(f"{os.path.basename(path)}: n_H {heads}, m {rows[0]['d_model']}: "
              f"{len(seeds)} seeds × {len(etas)} η ({', '.join(f'{e:g}' for e in etas)})")
        print("  seed   verdicts (1 learned), η rising   monotone   wrong at best")
        for seed, row in zip(seeds, table):
            v = violations(row)
            print(f"  {seed:5d}  {' '.join(str(int(y)) for y in row):>29}   {'yes' if v == 0 else 'no':>8}   {v:>13}")
        (monotone, spread), expected, p_monotone, p_spread = permutation_test(table, rng)
        print(f"  monotone seeds: {monotone} of {len(seeds)}; with the verdicts shuffled among seeds "
              f"at each η: {expected:.2f} on average, p(≥ {monotone}) = {p_monotone:.3f}")
        print(f"  variance of the seeds' counts of learned runs: {spread:.2f}; "
              f"p(shuffled ≥ it) = {p_spread:.3f}")
        x = np.array([math.log10(e) for e in etas])
        best, null, lr, p, low, high = random_intercept([(x, row) for row in table])
        ll, sigma, a, b = best
        print(f"  random intercept per seed: σ_v = {sigma:.2f} [{low:.2f}, {high:.2f}] (logit), "
              f"slope b = {b:.2f} per decade, so the seeds' own crossings spread by "
              f"σ_v/|b| = {sigma / abs(b):.3f} decades [{low / abs(b):.3f}, {high / abs(b):.3f}]")
        print(f"  σ_v = 0 (seeds exchangeable): likelihood ratio {lr:.2f}, p = {p:.3f} "
              f"(log L {null[0]:.2f} → {ll:.2f})\n")


def runs_by_seed(path, d_model):
    """Per seed: (log10 η array, verdict array) of the finished runs of width d_model."""
    with open(path) as f:
        rows = [r for r in csv.DictReader(f) if r["status"] in ("done", "diverged")
                and int(r["d_model"]) == d_model]
    seeds = {}
    for r in rows:
        x, y = seeds.setdefault(int(r["init_seed"]), ([], []))
        x.append(math.log10(float(r["lr"])))
        y.append(int(float(r["learned"])))
    return [(np.array(x), np.array(y)) for x, y in seeds.values()]


def crossing(seeds):
    """The plain logistic over every run (runs independent): its ½ crossing, log10 η."""
    _, a, b = best_ab(seeds, 0.0, (0.0, -5.0))
    return -a / b


def chi2_survival_even(x, dof):
    """P(χ² ≥ x) for an even number of degrees of freedom."""
    term, total = 1.0, 1.0
    for k in range(1, dof // 2):
        term *= (x / 2) / k
        total += term
    return math.exp(-x / 2) * total


def paired_against_dense(folder):
    paired = os.path.join(folder, "paired-m24-m96-h12.runs.csv")
    if not os.path.exists(paired):
        return
    print("Three sets of 8 seeds at each configuration: the dense scan (seeds 1000-1007), the paired")
    print("search on the GPU (2000-2007; other η, placed by the search) and a second dense scan at the")
    print("first one's η (3000-3007). Per set, the logistic over its runs (runs independent):\n")
    for d_model in (24, 96):
        sets = [("1000-1007 (dense scan)", runs_by_seed(os.path.join(folder, f"dense-scan-m{d_model}-h12.runs.csv"), d_model)),
                ("2000-2007 (paired search)", runs_by_seed(paired, d_model))]
        third = os.path.join(folder, f"dense3000-m{d_model}-h12.runs.csv")
        if os.path.exists(third):
            sets.append(("3000-3007 (dense scan)", runs_by_seed(third, d_model)))
        print(f"  n_H 12, m {d_model}:")
        separate = 0.0
        for name, seeds in sets:
            ll, a, b = best_ab(seeds, 0.0, (0.0, -5.0))
            separate += ll
            print(f"    seeds {name}: {sum(len(x) for x, _ in seeds)} runs, η* {10 ** (-a / b):.3g}, "
                  f"slope {b:.1f} per decade")
        both = [seed for _, seeds in sets for seed in seeds]
        ll_all, _, _ = best_ab(both, 0.0, (0.0, -5.0))
        lr_sets = max(0.0, 2 * (separate - ll_all))
        dof = 2 * (len(sets) - 1)
        print(f"    one curve for all {len(sets)} sets: likelihood ratio {lr_sets:.2f} on {dof} dof, "
              f"p = {chi2_survival_even(lr_sets, dof):.3f} (near-separated sets make it anti-conservative)")
        if len(sets) == 3:
            dense = sets[0][1] + sets[2][1]
            ll_d, _, _ = best_ab(dense, 0.0, (0.0, -5.0))
            ll_1, _, _ = best_ab(sets[0][1], 0.0, (0.0, -5.0))
            ll_3, _, _ = best_ab(sets[2][1], 0.0, (0.0, -5.0))
            lr_d = max(0.0, 2 * (ll_1 + ll_3 - ll_d))
            print(f"    the two dense scans alone (the same η): likelihood ratio {lr_d:.2f} on 2 dof, "
                  f"p = {chi2_survival_even(lr_d, 2):.3f}")
        best, null, lr, p, low, high = random_intercept(both)
        ll, sigma, a, b = best
        print(f"    a random intercept per seed over all: σ_v/|b| = {sigma / abs(b):.3f} decades "
              f"[{low / abs(b):.3f}, {high / abs(b):.3f}]; σ_v = 0: likelihood ratio {lr:.2f}, p = {p:.3f}\n")


def reproduced(folder):
    """The m 24 dense scan trained again on another day, alone on the card (the first time beside
    the m 96 scan): are its runs' verdicts and final losses the same?"""
    again = os.path.join(folder, "dense-scan-m24-h12-again.runs.csv")
    if not os.path.exists(again):
        return
    def load(path):
        with open(path) as f:
            return {(r["init_seed"], r["lr"]): (r["learned"], r["final_test_loss"]) for r in csv.DictReader(f)}
    first, second = load(os.path.join(folder, "dense-scan-m24-h12.runs.csv")), load(again)
    verdicts = sum(first[k][0] == second.get(k, ("",))[0] for k in first)
    losses = sum(k in second and abs(float(first[k][1]) - float(second[k][1])) < 1e-6 for k in first)
    print(f"The m 24 dense scan trained again (alone on the card, a later build): {verdicts} of "
          f"{len(first)} verdicts and {losses} of {len(first)} final test losses (to 1e-6) the same.")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/data/issue53")
    paired_against_dense(sys.argv[1] if len(sys.argv) > 1 else "docs/data/issue53")
    reproduced(sys.argv[1] if len(sys.argv) > 1 else "docs/data/issue53")
