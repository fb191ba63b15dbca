"""search.py — a boundary search's report (docs/SEARCH.md) as pandas tables.

    s = headlab.open("fig2-boundary.yaml")
    report = s.search()
    report.configurations      # one row per configuration: its axes, runs, state, η*, interval
    report.law.coefficients    # alpha, C, beta per further axis: estimate, low, high
    report.law.references      # α = 1/2, 3/4, 1 against the data: χ², dof, p, in the interval
    report.width_and_heads     # log10 η* = log10 C − a log10 d_model + b log10 heads: a, b, correlation
    report.bend                # the law with curvature in log10 x: γ, its test, the local α at the ends
    report.law.misfit          # each configuration off the law, in decades and σ, largest first
    report.predict(head_dim=48, heads=16)   # η* with a prediction interval, by the law the test chooses
    report.law.predict(head_dim=48, heads=16)   # ... by the power law; report.bend.predict: the bent law

HeadLab writes the report into the session each time it saves it (`search_report:`, computed by
core/session/search/SearchReport.cpp, the report `headlab-cli summary` prints), so these are summary's numbers
exactly; nothing is refitted here. A session whose runs were written after its report (shards
write run files, not the session), or whose report an earlier release's computation made (its
`method` below today's), gives the report it has, marked `stale`, with a warning that says how to
bring it up to date.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import pandas as pd

from ._store import fnv1a64, FINISHED, HeadLabError, _is_number, schema

CONFIGURATION_COLUMNS = ("runs", "verdicts", "pending", "set_aside", "state", "estimate", "low", "high",
                         "low_open", "high_open", "width", "slope", "note")
# The other model's interval per configuration (SearchReport.h, `alternative`), as a check: with paired
# seeds, the logistic over every run's.
ALTERNATIVE_COLUMNS = ("alternative_estimate", "alternative_low", "alternative_high")
# Paired seeds (`replicates: paired`) per configuration: seeds monotone along the axis, and τ,
# the seeds' scatter about the median seed's crossing (decades on a log scale); NaN otherwise.
PAIRED_COLUMNS = ("monotone_seeds", "seed_scatter")
# One row per seed of a paired search: where its verdicts put its threshold (NaN: open there).
SEED_COLUMNS = ("seed", "runs", "low", "high", "wrong", "monotone")


class SearchReportStale(UserWarning):
    """The session's search report was written before some of the runs it holds finished."""


@dataclass
class Law:
    """The law log10 x* = log10 C − α log10 x − Σ β_k log10 also_k through the configurations'
    crossings (SearchReport.h, LawFit). `coefficients` has the rows alpha, C and beta_AXIS with their
    estimate and interval (at `level`). `model` is "separate" (fitted through the crossings, the
    intervals widened by sqrt(`scale`) for the law's misfit) or "joint" (JointLaw.h: the law inside
    one model of every configuration, `tau` the configurations' scatter about it in decades)."""
    ok: bool
    note: str = ""
    x: str = ""
    configurations: int = 0
    provisional: bool = False
    level: float = 0.95
    chi2: float = float("nan")
    dof: int = 0
    scale: float = 1.0
    model: str = "separate"
    tau: float = float("nan")
    coefficients: pd.DataFrame = field(default_factory=pd.DataFrame)
    references: pd.DataFrame = field(default_factory=pd.DataFrame)
    # The correlation of α's estimate with each β's, by further axis.
    correlation: dict = field(default_factory=dict)
    # Further axes the law was asked for and left out: over these configurations each follows from
    # x and the kept axes (one width: heads from head_dim), so its exponent cannot be told apart.
    left_out: list = field(default_factory=list)
    # What predict needs (SearchResults.h, LawFit): the scatter of a configuration about the law
    # (decades), the covariance of (log10 C, −α, −β...), each law axis's span {axis: (low, high)}.
    scatter: float = float("nan")
    covariance: list = field(default_factory=list)
    span: dict = field(default_factory=dict)
    # The separate model's misfit: one row per configuration (its axes, then decades and sigmas:
    # its crossing off the law, in decades and in its own σ), the largest |sigmas| first.
    misfit: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def alpha(self) -> float:
        """α's estimate (NaN without a fit)."""
        return float(self.coefficients.loc["alpha", "estimate"]) if self.ok else float("nan")

    def predict(self, **axes) -> dict:
        """The crossing this law predicts where its axes have the values given (`x` and each
        further axis, by name: `law.predict(head_dim=48, heads=16)`), with a prediction interval
        at `level`: the law's uncertainty there and the scatter of a configuration about it, added
        in quadrature, as `headlab-cli predict --law power` computes it. Returns {estimate, low,
        high, law_se_decades, scatter_decades, beyond, law} (beyond: the axes outside the span
        fitted; law: "power"). SearchReport.predict takes the bent law where it is chosen."""
        import math
        if not self.ok:
            raise ValueError(f"no law: {self.note}")
        names = [self.x] + [r[len("beta_"):] for r in self.coefficients.index if r.startswith("beta_")]
        logs = _law_axes(names, axes)
        coef = [math.log10(self.coefficients.loc["C", "estimate"]), -self.alpha] + \
               [-self.coefficients.loc[f"beta_{n}", "estimate"] for n in names[1:]]
        return _predicted(self, names, axes, [1.0] + logs, coef, "power")


def _law_axes(names, axes):
    """log10 of each law axis's value, in the law's order; every axis must be given, and no other."""
    import math
    if set(axes) != set(names):
        raise ValueError(f"give each law axis: {', '.join(names)} (got {', '.join(axes) or 'none'})")
    return [math.log10(axes[n]) for n in names]


def _predicted(law, names, axes, row, coef, which) -> dict:
    """A law's prediction (SearchReport.cpp, predictFrom): `row` its predictors at the
    configuration (1 first, in the order of its covariance), `coef` its coefficients."""
    import math
    from statistics import NormalDist
    if not law.covariance or math.isnan(law.scatter):
        raise ValueError("this report's law has no prediction data (written before predict existed; "
                         "`headlab-cli export-yaml` writes it again)")
    estimate = float(sum(c * r for c, r in zip(coef, row)))
    variance = sum(row[i] * law.covariance[i][j] * row[j] for i in range(len(row)) for j in range(len(row)))
    half = NormalDist().inv_cdf(0.5 + law.level / 2) * math.sqrt(max(variance, 0.0) + law.scatter ** 2)
    beyond = [n for n in names if n in law.span and not law.span[n][0] <= axes[n] <= law.span[n][1]]
    return {"estimate": 10 ** estimate, "low": 10 ** (estimate - half), "high": 10 ** (estimate + half),
            "law_se_decades": math.sqrt(max(variance, 0.0)), "scatter_decades": law.scatter, "beyond": beyond,
            "law": which}


@dataclass
class Bend:
    """The law with curvature beside the power law (SearchResults.h, LawBend): log10 x* = … + γ
    (log10 x − log10 centre)², fitted through the crossings. `gamma` is (estimate, low, high);
    `alpha` the slope at the centre and `alpha_at` {x value: local α} at the span's two ends;
    `statistic` and `p` test γ = 0 (Δχ² against χ²₁, or over the bent fit's χ²/dof against F(1,
    dof) where it leaves a misfit); `chosen` when p < 1 − level. `c` is its intercept (at x = 1),
    `beta` {further axis: exponent}; `scatter`, `covariance` (of log10 C, −α, −β..., γ) and `span`
    are what `predict` needs, as the Law's."""
    ok: bool
    note: str = ""
    x: str = ""
    centre: float = float("nan")
    gamma: tuple = (float("nan"),) * 3
    alpha: float = float("nan")
    alpha_at: dict = field(default_factory=dict)
    chi2: float = float("nan")
    dof: int = 0
    statistic: float = float("nan")
    p: float = float("nan")
    chosen: bool = False
    c: float = float("nan")
    beta: dict = field(default_factory=dict)
    level: float = 0.95
    scatter: float = float("nan")
    covariance: list = field(default_factory=list)
    span: dict = field(default_factory=dict)

    def predict(self, **axes) -> dict:
        """The crossing the bent law predicts where its axes have the values given, with a
        prediction interval (the bent refit's covariance and the scatter about it), as
        `headlab-cli predict --law bent`; the same keys as Law.predict, law: "bent"."""
        import math
        if not self.ok:
            raise ValueError(f"no bent law: {self.note}")
        names = [self.x] + list(self.beta)
        logs = _law_axes(names, axes)
        lc = math.log10(self.centre)
        coef = [math.log10(self.c), -self.alpha] + [-self.beta[n] for n in names[1:]] + [self.gamma[0]]
        # The bent law's slope term is −α log x with α the slope at the centre: the quadratic adds
        # γ (log x − log centre)², its own predictor.
        return _predicted(self, names, axes, [1.0] + logs + [(logs[0] - lc) ** 2], coef, "bent")


@dataclass
class WidthAndHeads:
    """Width and head count as separate exponents (SearchResults.h, WidthAndHeads): log10 η* =
    log10 C − a log10 d_model + b log10 heads, the law of m_H and n_H re-expressed (a = α,
    b = α − β). The paper's η·sqrt(m_H) is (a, b) = (½, ½), an Adam update limit in width (μP) is
    (1, 0). `coefficients` has the rows a and b (estimate, low, high), `correlation` theirs, `law`
    the fit over d_model and heads it comes from. Not ok, with a `note`, where the configurations do
    not vary in both, or in a report written before it was computed."""
    ok: bool
    note: str = ""
    coefficients: pd.DataFrame = field(default_factory=pd.DataFrame)
    correlation: float = float("nan")
    law: Law = field(default_factory=lambda: Law(ok=False))


@dataclass
class SearchReport:
    """Where a boundary search stands: `configurations` (one row per configuration, in summary's
    order), `law` (over every configuration), `groups` (a law per group of configurations that
    differ in more than the model's shape, as [(labels, Law)]), and the counts summary prints."""
    axis: str
    log_scale: bool
    rounds: int
    runs: int
    pending: int
    finished: bool
    configurations: pd.DataFrame
    law: Law
    groups: list
    stale: bool = False
    # The computation that made it (kSearchReportMethod; 0: an earlier release's, before it was said).
    method: int = 0
    model: str = "separate"
    alternative_law: Law = field(default_factory=lambda: Law(ok=False))
    # Which seeds the runs got (search.replicates): "replicates", "fresh" or "paired"; for paired
    # seeds, `seeds` has a row per configuration and seed (its axes, then SEED_COLUMNS).
    seed_plan: str = "replicates"
    seeds: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(SEED_COLUMNS)))
    width_and_heads: WidthAndHeads = field(
        default_factory=lambda: WidthAndHeads(ok=False, note="not in this report (written before it was computed)"))
    bend: Bend = field(default_factory=lambda: Bend(ok=False, note="not in this report (written before it was computed)"))

    def predict(self, law: str = "chosen", **axes) -> dict:
        """η* at a configuration the search did not run, as `headlab-cli predict --law LAW`:
        "chosen" takes the bent law where the report's test chooses it (`bend.chosen`) and the
        power law otherwise; "power" or "bent" asks for either. The report's own law only (a
        report with groups has a law per group: predict from `groups[i][1]`)."""
        if law not in ("chosen", "power", "bent"):
            raise ValueError(f"law: chosen, power or bent (got {law!r})")
        if self.groups:
            raise ValueError("this search has a law per group: predict from groups[i][1].predict")
        if law == "bent" or (law == "chosen" and self.bend.ok and self.bend.chosen):
            return self.bend.predict(**axes)
        return self.law.predict(**axes)


def _number(value, where):
    if not _is_number(value):
        raise HeadLabError(f"{where}: expected a number, got {value!r}")
    return float(value)


def _count(value, where, default=0, most=2 ** 63 - 1):
    """A count of the search report (dof, configurations, rounds, runs, pending, finished_runs, a
    configuration's runs and verdicts, a seed's runs and wrong verdicts; a seed up to 2^64 - 1): a
    whole number from 0 to `most`, as headlab-cli writes it. Anything else (.inf, 1e30, -3, a
    20-digit number) is HeadLab's error, where int() raised OverflowError or took it."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
        raise HeadLabError(f"{where}: expected a whole number from 0 to {most}, got {value!r}")
    return value


def _law(doc, where):
    if not isinstance(doc, dict):
        raise HeadLabError(f"{where}: expected a mapping")
    if not doc.get("ok"):
        return Law(ok=False, note=str(doc.get("note") or ""))
    rows = {}

    def interval(name, value, at):
        if not isinstance(value, dict):
            raise HeadLabError(f"{at}: expected {{estimate, low, high}}")
        rows[name] = {k: _number(value.get(k), f"{at}.{k}") for k in ("estimate", "low", "high")}

    interval("alpha", doc.get("alpha"), f"{where}.alpha")
    interval("C", doc.get("c"), f"{where}.c")
    for axis, value in (doc.get("beta") or {}).items():
        interval(f"beta_{axis}", value, f"{where}.beta.{axis}")
    references = pd.DataFrame(
        [{"alpha": _number(r.get("alpha"), f"{where}.references"), "C": _number(r.get("c"), f"{where}.references"),
          "chi2": _number(r.get("chi2"), f"{where}.references"), "dof": _count(r.get("dof"), f"{where}.references.dof"),
          "p": _number(r.get("p"), f"{where}.references"), "in_interval": bool(r.get("in_interval"))}
         for r in doc.get("references") or []],
        columns=["alpha", "C", "chi2", "dof", "p", "in_interval"])
    return Law(ok=True, model=str(doc.get("model", "separate")),
               tau=_number(doc.get("tau", float("nan")), f"{where}.tau"),
               x=str(doc.get("x", "")), configurations=_count(doc.get("configurations"), f"{where}.configurations"),
               provisional=bool(doc.get("provisional")), level=_number(doc.get("level", 0.95), f"{where}.level"),
               chi2=_number(doc.get("chi2"), f"{where}.chi2"), dof=_count(doc.get("dof"), f"{where}.dof"),
               scale=_number(doc.get("scale", 1.0), f"{where}.scale"),
               coefficients=pd.DataFrame.from_dict(rows, orient="index", columns=["estimate", "low", "high"]),
               references=references,
               correlation={str(axis): _number(v, f"{where}.correlation.{axis}")
                            for axis, v in (doc.get("correlation") or {}).items()},
               left_out=_axes(doc.get("left_out"), f"{where}.left_out"),
               misfit=_misfit(doc.get("misfit"), f"{where}.misfit"),
               **_prediction(doc.get("prediction"), f"{where}.prediction"))


def _axes(doc, where):
    """A list of axis names (the law's left_out), [] where the report has none."""
    if doc is None:
        return []
    if not isinstance(doc, list) or not all(isinstance(a, str) for a in doc):
        raise HeadLabError(f"{where}: expected a list of axis names")
    return list(doc)


def _misfit(doc, where):
    if doc is None:
        return pd.DataFrame()
    if not isinstance(doc, list) or not all(isinstance(r, dict) and isinstance(r.get("labels"), dict) for r in doc):
        raise HeadLabError(f"{where}: expected a list of {{labels, decades, sigmas}}")
    return pd.DataFrame([{**{str(k): str(v) for k, v in r["labels"].items()},
                          "decades": _number(r.get("decades"), f"{where}[{i}].decades"),
                          "sigmas": _number(r.get("sigmas"), f"{where}[{i}].sigmas")} for i, r in enumerate(doc)])


def _without_result(doc, where, kind):
    """A report section that is not there (a report written before it was computed) or not ok, as
    `kind` with its note; None for a section with a result, to be read."""
    if doc is None:
        return kind(ok=False, note="not in this report (written before it was computed)")
    if not isinstance(doc, dict):
        raise HeadLabError(f"{where}: expected a mapping")
    if not doc.get("ok"):
        return kind(ok=False, note=str(doc.get("note") or ""))
    return None


def _bend(doc, where):
    if (none := _without_result(doc, where, Bend)) is not None:
        return none
    gamma = doc.get("gamma")
    if not isinstance(gamma, dict):
        raise HeadLabError(f"{where}.gamma: expected {{estimate, low, high}}")
    x = str(doc.get("x", ""))
    ends = doc.get("alpha_at") or []
    if not (isinstance(ends, list) and all(isinstance(e, dict) and x in e for e in ends)):
        raise HeadLabError(f"{where}.alpha_at: expected [{{{x}, alpha}}, ...]")
    beta = doc.get("beta") or {}
    if not isinstance(beta, dict):
        raise HeadLabError(f"{where}.beta: expected {{axis: exponent}}")
    return Bend(ok=True, x=x, centre=_number(doc.get("centre"), f"{where}.centre"),
                c=_number(doc.get("c", float("nan")), f"{where}.c"),
                beta={str(k): _number(v, f"{where}.beta.{k}") for k, v in beta.items()},
                level=_number(doc.get("level", 0.95), f"{where}.level"),
                **_prediction(doc.get("prediction"), f"{where}.prediction"),
                gamma=tuple(_number(gamma.get(k), f"{where}.gamma.{k}") for k in ("estimate", "low", "high")),
                alpha=_number(doc.get("alpha"), f"{where}.alpha"),
                alpha_at={_number(e[x], f"{where}.alpha_at"): _number(e.get("alpha"), f"{where}.alpha_at")
                          for e in ends},
                chi2=_number(doc.get("chi2"), f"{where}.chi2"), dof=_count(doc.get("dof"), f"{where}.dof"),
                statistic=_number(doc.get("statistic"), f"{where}.statistic"),
                p=_number(doc.get("p"), f"{where}.p"), chosen=bool(doc.get("chosen")))


def _prediction(doc, where):
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise HeadLabError(f"{where}: expected a mapping")
    covariance = doc.get("covariance")
    if not (isinstance(covariance, list) and all(isinstance(r, list) and len(r) == len(covariance)
                                                 for r in covariance)):
        raise HeadLabError(f"{where}.covariance: expected a square list of lists")
    span = doc.get("span") or {}
    if not (isinstance(span, dict) and all(isinstance(v, list) and len(v) == 2 for v in span.values())):
        raise HeadLabError(f"{where}.span: expected {{axis: [low, high]}}")
    return {"scatter": _number(doc.get("scatter"), f"{where}.scatter"),
            "covariance": [[_number(v, f"{where}.covariance") for v in r] for r in covariance],
            "span": {str(k): (_number(v[0], f"{where}.span.{k}"), _number(v[1], f"{where}.span.{k}"))
                     for k, v in span.items()}}


def _width_and_heads(doc, where):
    if (none := _without_result(doc, where, WidthAndHeads)) is not None:
        return none
    rows = {}
    for name in ("a", "b"):
        value = doc.get(name)
        if not isinstance(value, dict):
            raise HeadLabError(f"{where}.{name}: expected {{estimate, low, high}}")
        rows[name] = {k: _number(value.get(k), f"{where}.{name}.{k}") for k in ("estimate", "low", "high")}
    return WidthAndHeads(ok=True, coefficients=pd.DataFrame.from_dict(rows, orient="index",
                                                                      columns=["estimate", "low", "high"]),
                         correlation=_number(doc.get("correlation"), f"{where}.correlation"),
                         law=_law(doc.get("law") or {"ok": False}, f"{where}.law"))


def _label_column(values):
    """A configuration axis's labels: numbers when every one is a number (d_model 24, lr 1e-3)."""
    numbers = pd.to_numeric(pd.Series(values, dtype="string"), errors="coerce")
    if len(values) and not numbers.isna().any():
        return numbers.astype("int64") if (numbers == numbers.round()).all() and all(
            "." not in v and "e" not in v.lower() for v in values) else numbers.astype("float64")
    return pd.Series(values, dtype="string")


def search_report(path: str, doc: dict, records: list) -> SearchReport | None:
    """The report of the session `doc` (read from `path`), its runs `records`; None without a
    search. Raises HeadLabError for a session with a search but no report (one written before
    reports were), naming the command that writes one, and for a report that is not HeadLab's
    form, naming the key."""
    if not doc.get("search"):
        return None
    try:
        return _report(path, doc, records)
    except (TypeError, ValueError, AttributeError, KeyError) as e:
        raise HeadLabError(f"{path}: search_report: not the form HeadLab writes ({e})") from None


def finished_runs_digest(run_ids):
    """The digest headlab-cli writes as a report's finished_runs_digest: FNV-1a over the finished
    runs' ids (16 hex digits each), sorted, one per line."""
    return f"{fnv1a64(chr(10).join(sorted(run_ids)).encode()):016x}"


def _other_finished_runs(digest, finished, where):
    """Whether the session's `finished` runs are not those the report was made from; False where
    the report predates the digest or a finished run has no id (a schema 1 session's)."""
    if digest is None:
        return False
    if not isinstance(digest, str):
        raise HeadLabError(f"{where}.finished_runs_digest: expected 16 hex digits")
    ids = [r.run_id for r in finished]
    if any(len(i) != 16 for i in ids):
        return False
    return finished_runs_digest(ids) != digest


def _definition_changes(doc, definition, where):
    """What of the search's definition (its learned rule, search without the probes each round
    adds, sweep) differs from the one the report records it was made under (`definition:`, as
    headlab-cli writes the session's own blocks); [] for the same one, and for a report written
    before reports recorded it (then only the finished runs' count can tell it stale)."""
    if definition is None:
        return []
    if not isinstance(definition, dict):
        raise HeadLabError(f"{where}.definition: expected a mapping (learned_rule, search, sweep)")
    search = doc.get("search") if isinstance(doc.get("search"), dict) else {}
    now = {"learned_rule": doc.get("learned_rule") or "left_ln10_plateau",
           "search": {k: v for k, v in search.items() if k != "probes"},
           "sweep": doc.get("sweep") or {}}
    changes = []
    for block, current in now.items():
        then = definition.get(block) if block != "sweep" else definition.get(block) or {}
        if then == current:
            continue
        if isinstance(then, dict) and isinstance(current, dict):
            keys = sorted({*then, *current}, key=str)
            changes.append(f"{block}: " + ", ".join(f"{k} was {_shown(then.get(k))}, is {_shown(current.get(k))}"
                                                     for k in keys if then.get(k) != current.get(k)))
        else:
            changes.append(f"{block} was {_shown(then)}, is {_shown(current)}")
    return changes


def _shown(value):
    """A definition's value in a message: none is "not set (its default)", a long one shortened."""
    text = "not set (its default)" if value is None else str(value)
    return text if len(text) <= 60 else text[:40] + " … " + text[-12:]


def _report(path, doc, records):
    report = doc.get("search_report")
    where = f"{path}: search_report"
    if report is None:
        raise HeadLabError(f"{path}: this session holds no search report (it was written by a HeadLab "
                           "before reports were kept); `headlab-cli export-yaml` of it writes one, and "
                           "`headlab-cli summary` prints it")
    if not isinstance(report, dict) or not isinstance(report.get("configurations") or [], list):
        raise HeadLabError(f"{where}: expected a mapping with a list of configurations")
    entries = report.get("configurations") or []
    axes = sorted({k for c in entries if isinstance(c, dict) for k in (c.get("labels") or {})})
    rows, seed_rows = [], []
    for i, c in enumerate(entries):
        if not isinstance(c, dict) or not isinstance(c.get("labels") or {}, dict):
            raise HeadLabError(f"{where}.configurations[{i}]: expected a mapping with labels")
        labels = c.get("labels") or {}
        named = {a: str(labels.get(a, "")) for a in axes}
        row = dict(named)
        for k in CONFIGURATION_COLUMNS:
            row[k] = c.get(k)
        for k in ("runs", "verdicts", "pending", "set_aside"):
            row[k] = _count(c.get(k), f"{where}.configurations[{i}].{k}")
        alternative = c.get("alternative") if isinstance(c.get("alternative"), dict) else {}
        for k in ("estimate", "low", "high"):
            row[f"alternative_{k}"] = alternative.get(k)
        for k in PAIRED_COLUMNS:
            row[k] = c.get(k)
        rows.append(row)
        for j, seed in enumerate(c.get("seeds") or []):
            if not isinstance(seed, dict):
                raise HeadLabError(f"{where}.configurations[{i}].seeds[{j}]: expected a mapping")
            at = f"{where}.configurations[{i}].seeds[{j}]"
            seed_rows.append({**named,
                              "seed": _count(seed.get("seed"), f"{at}.seed", most=2 ** 64 - 1),
                              "runs": _count(seed.get("runs"), f"{at}.runs"), "low": seed.get("low"),
                              "high": seed.get("high"), "wrong": _count(seed.get("wrong"), f"{at}.wrong"),
                              "monotone": seed.get("wrong") == 0})
    frame = pd.DataFrame(rows, columns=[*axes, *CONFIGURATION_COLUMNS, *ALTERNATIVE_COLUMNS,
                                        *PAIRED_COLUMNS])
    for a in axes:
        frame[a] = _label_column(list(frame[a]))
    for k in ("runs", "verdicts", "pending", "set_aside"):
        frame[k] = frame[k].astype("int64")
    for k in ("estimate", "low", "high", "width", "slope", *ALTERNATIVE_COLUMNS, *PAIRED_COLUMNS):
        frame[k] = pd.to_numeric(frame[k], errors="coerce").astype("float64")
    seeds = pd.DataFrame(seed_rows, columns=[*axes, *SEED_COLUMNS])
    for a in axes:
        seeds[a] = _label_column(list(seeds[a]))
    seeds["seed"] = seeds["seed"].astype("uint64")  # 64-bit seeds, all of them
    for k in ("runs", "wrong"):
        seeds[k] = seeds[k].astype("int64")
    for k in ("low", "high"):
        seeds[k] = pd.to_numeric(seeds[k], errors="coerce").astype("float64")
    seeds["monotone"] = seeds["monotone"].astype("bool")
    for k in ("low_open", "high_open"):
        frame[k] = frame[k].astype("boolean")
    frame["state"] = frame["state"].astype("string")
    frame["note"] = frame["note"].fillna("").astype("string")
    groups = [({str(k): str(v) for k, v in (g.get("labels") or {}).items()},
               _law(g.get("law"), f"{where}.groups[{i}].law"))
              for i, g in enumerate(report.get("groups") or []) if isinstance(g, dict)]
    finished = [r for r in records if r.status in FINISHED]
    finished_now = len(finished)
    counted = _count(report.get("finished_runs"), f"{where}.finished_runs", finished_now)
    changed = _definition_changes(doc, report.get("definition"), where)
    other_runs = _other_finished_runs(report.get("finished_runs_digest"), finished, where)
    # The computation it was made by (SearchReport.h's kSearchReportMethod; 0 before reports said).
    method, today = _count(report.get("method"), f"{where}.method", 0), int(schema()["search_report_method"])
    earlier = method < today
    older_than_runs = finished_now != counted or bool(changed) or other_runs
    stale = older_than_runs or earlier
    if earlier:
        warnings.warn(f"{path}: its search report was made by an earlier release's computation (method "
                      f"{method}, today's {today}): its numbers may differ from what `headlab-cli summary` "
                      "prints now; `headlab-cli export-yaml` writes it again", SearchReportStale, stacklevel=4)
    elif method > today:
        warnings.warn(f"{path}: its search report was made by a newer HeadLab (method {method}, this package "
                      f"knows {today}); read as written", SearchReportStale, stacklevel=4)
    if changed:
        warnings.warn(f"{path}: its search report was made under another definition of the search "
                      f"({'; '.join(changed)}); `headlab-cli export-yaml` writes it again under this one",
                      SearchReportStale, stacklevel=4)
    elif other_runs and finished_now == counted:
        warnings.warn(f"{path}: its search report was made from other finished runs than the session "
                      f"holds (as many, {counted}, but not the same: its finished_runs_digest differs); "
                      "`headlab-cli export-yaml` writes it again over these runs", SearchReportStale,
                      stacklevel=4)
    elif older_than_runs:
        why = ("runs finished after it was written (shards write run files, not the session)"
               if finished_now > counted else "run files it counted are gone or could not be read")
        warnings.warn(f"{path}: its search report counts {counted} finished runs, the session holds "
                      f"{finished_now}: {why}; `headlab-cli merge` or `headlab-cli export-yaml` writes "
                      "it again over every run", SearchReportStale, stacklevel=4)
    return SearchReport(axis=str(report.get("axis", "lr")), log_scale=report.get("scale", "log") == "log",
                        method=method, rounds=_count(report.get("rounds"), f"{where}.rounds"),
                        runs=_count(report.get("runs"), f"{where}.runs"),
                        pending=_count(report.get("pending"), f"{where}.pending"),
                        finished=bool(report.get("finished")),
                        configurations=frame, law=_law(report.get("law") or {"ok": False}, f"{where}.law"),
                        groups=groups, stale=stale, model=str(report.get("model", "separate")),
                        alternative_law=_law(report.get("alternative_law") or {"ok": False},
                                             f"{where}.alternative_law"),
                        seed_plan=str(report.get("seeds", "replicates")), seeds=seeds,
                        width_and_heads=_width_and_heads(report.get("width_and_heads"), f"{where}.width_and_heads"),
                        bend=_bend(report.get("bend"), f"{where}.bend"))
