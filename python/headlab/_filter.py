"""_filter.py — run values and the run filter, as headlab-cli computes them.

A run value is one number per run: a statistic of one of its curves, STAT(CURVE) (min(test_loss),
final(train_loss), best(test_accuracy), mean_last(test_digit_2); core/metrics/RunValues.h), or a
metric it stores (final_test_loss). The run filter is the app's and `headlab-cli export-csv
--filter`'s grammar (core/session/RunFilter.h, docs/SESSION_FORMAT.md "Run filters"):

    heads=12 lr>=1e-3 status=done learned min(test_loss)<0.5 best:10 !outliers

The statistics, the curves where higher is better and the key best:K ranks by come from
`headlab-cli schema` (schema.json, run_values); tests/python checks every selection against the
CLI's.
"""
from __future__ import annotations

import math
import re

from ._store import schema

_RUN_VALUES = schema()["run_values"]
# The statistics STAT(CURVE) takes, in the table's order (RunValues.h, curveStatisticTable).
STATISTICS = tuple(row["name"] for row in _RUN_VALUES["statistics"])
STATISTIC_TITLES = {row["name"]: row["title"] for row in _RUN_VALUES["statistics"]}
# Curves and metrics where a higher value is the better one (metricTable's higherIsBetter).
HIGHER_IS_BETTER = frozenset(_RUN_VALUES["higher_is_better"])
# What best:K, worst:K and !outliers rank by where no KEY is given.
RANK_KEY = _RUN_VALUES["rank_key"]
_STATUSES = ("queued", "running", "paused", "done", "diverged", "failed", "stopped")
# The curves' names in STAT(CURVE) against a run file's: test_loss is its test curve.
_STORED_CURVE = {"test_loss": "test", "train_loss": "train"}
_FINAL_PREFIX = "final_"


def parse_key(key: str):
    """(statistic, curve) of STAT(CURVE), or None for any other text (a metric's name)."""
    open_at = key.find("(")
    if open_at <= 0 or len(key) < open_at + 3 or not key.endswith(")"):
        return None
    statistic, curve = key[:open_at], key[open_at + 1:-1]
    if "(" in curve or ")" in curve:
        return None
    return statistic, curve


def _key_problem(key: str):
    """What is wrong with a STAT(...) key ("no statistic 'mode' (final, ...)"), "" for a good one,
    None for a key that is not STAT(CURVE)."""
    parsed = parse_key(key)
    if parsed is None:
        return None
    if parsed[0] in STATISTICS:
        return ""
    return f"no statistic '{parsed[0]}' ({', '.join(STATISTICS)})"


def higher_is_better(curve: str) -> bool:
    return curve in HIGHER_IS_BETTER


def lower_is_better(key: str) -> bool:
    """Whether lower values of `key` are the better ones (RunValues.cpp, lowerIsBetter)."""
    parsed = parse_key(key)
    if parsed is not None:
        return not higher_is_better(parsed[1])
    if key in HIGHER_IS_BETTER:
        return False
    if key.startswith(_FINAL_PREFIX):
        return not higher_is_better(key[len(_FINAL_PREFIX):])
    return True


def curve_statistic(values, statistic: str, higher: bool) -> float:
    """A statistic of a curve's values, as RunValues.cpp computes it (the same sums in the same
    order): NaN for an empty curve or an unknown statistic."""
    values = [float(v) for v in values]
    if not values:
        return math.nan
    if statistic == "best":
        statistic = "max" if higher else "min"
    if statistic == "final":
        return values[-1]
    if statistic in ("min", "max"):
        numbers = [v for v in values if not math.isnan(v)]
        if not numbers:
            return math.nan
        return min(numbers) if statistic == "min" else max(numbers)
    if statistic == "mean_last":
        tail = [v for v in values[len(values) - max(1, len(values) // 10):] if not math.isnan(v)]
        total = 0.0
        for v in tail:
            total += v
        return total / len(tail) if tail else math.nan
    return math.nan


def run_value(run, key: str):
    """A run's value of `key` (a headlab._store.Run): STAT(CURVE) of its curve, or its stored
    metric; None where it has none. A run stored without its curves gives final(CURVE) from its
    metric final_CURVE and min(test_loss) (best) from min_test_loss, as the CLI does."""
    parsed = parse_key(key)
    if parsed is None:
        return run.metrics.get(key)
    statistic, curve = parsed
    stored = run.curves.get(_STORED_CURVE.get(curve, curve))
    if stored is not None and len(stored[1]):
        return curve_statistic(stored[1], statistic, higher_is_better(curve))
    lowest = statistic == "min" or (statistic == "best" and not higher_is_better(curve))
    name = _FINAL_PREFIX + curve if statistic == "final" else \
        "min_test_loss" if lowest and curve == "test_loss" else None
    return run.metrics.get(name) if name else None


def _quoted(text: str) -> str:
    """A typed term in a message, quoted, a long one shortened (RunFilter.cpp, quoted)."""
    if len(text) <= 40:
        return f"'{text}'"
    return f"'{text[:16]}\u2026{text[-16:]}' ({len(text)} characters)"


_INTEGER = re.compile(r"[+-]?[0-9]{1,30}")
_DECIMAL = re.compile(r"[0-9.e+\-]+")


def _number(text: str):
    """yaml::parseNumber: decimal numbers, .inf/.nan spellings; None for anything else."""
    t = text.lower()
    if t in (".nan", "nan"):
        return math.nan
    if t in (".inf", "+.inf", "inf", "+inf"):
        return math.inf
    if t in ("-.inf", "-inf"):
        return -math.inf
    if not text or not _DECIMAL.fullmatch(t):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _compare(a, op: str, b) -> bool:
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "=": a == b, "!=": a != b}[op]


def _compare_values(a: str, op: str, b: str):
    """Two values of one key (RunFilter.cpp, compareValues): as integers where both are, else as
    numbers, else (= and != alone) as text; None where `op` cannot compare them."""
    if _INTEGER.fullmatch(a) and _INTEGER.fullmatch(b):
        return _compare(int(a), op, int(b))
    x, y = _number(a), _number(b)
    if x is not None and y is not None:
        return _compare(x, op, y)
    if op in ("=", "!="):
        return (a == b) == (op == "=")
    return None


def _format_number(value: float) -> str:
    """yaml::formatNumber: the shortest text that reads back as the value, whole numbers
    without a point, YAML's spellings of the infinities and NaN."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    if value == int(value) and abs(value) < 1e17:
        return str(int(value))
    return repr(value)


class RunFilterError(ValueError):
    """The text is not a run filter; the message names the term, as the app and the CLI do."""


def _parse(text: str, axes, metrics):
    """The filter's terms [(key, op, value)], or RunFilterError (RunFilter::parse)."""
    terms = []
    known = set(axes) | set(metrics)

    def unknown(word, key):
        if key in known:
            return ""
        problem = _key_problem(key)
        if problem == "":
            return ""
        if problem:
            return f"{_quoted(word)}: {problem}"
        return (f"{_quoted(word)}: no axis or metric {_quoted(key)} (axes: "
                + "".join(a + ", " for a in sorted(axes))
                + "status, learned, tag, a metric such as final_test_loss, or STAT(CURVE) such as min(test_loss))")

    for word in text.split():
        if word in ("learned", "!learned", "not-learned"):
            terms.append(("learned", "", "1" if word == "learned" else "0"))
            continue
        head, colon, rest = word.partition(":")
        if head in ("best", "worst", "!outliers"):
            key, value = RANK_KEY, ""
            if head != "!outliers":
                value, _, rest = rest.partition(":")
                if not (_INTEGER.fullmatch(value) and 1 <= int(value) <= 1_000_000_000):
                    raise RunFilterError(f"{_quoted(word)}: expected {head}:K or {head}:K:KEY, K a whole "
                                         "number from 1")
            elif colon and not rest:
                raise RunFilterError(f"{_quoted(word)}: expected !outliers or !outliers:KEY")
            if rest:
                key = rest
            if why := unknown(word, key):
                raise RunFilterError(why)
            terms.append((key, head, value))
            continue
        at = next((i for i, c in enumerate(word) if c in "=!<>"), -1)
        if at <= 0:
            raise RunFilterError(f"{_quoted(word)}: expected KEY=VALUE, KEY<X, status=S or learned")
        op = next((o for o in ("==", "!=", "<=", ">=", "=", "<", ">") if word.startswith(o, at)), "")
        key, value = word[:at], word[at + len(op):]
        op = "=" if op == "==" else op
        if not op or not value:
            raise RunFilterError(f"{_quoted(word)}: expected KEY=VALUE, KEY<X, status=S or learned")
        ordered = op not in ("=", "!=")
        if ordered and _number(value) is None:
            raise RunFilterError(f"{_quoted(word)}: {op} compares numbers, and {_quoted(value)} is not one")
        if key == "tag":
            if ordered or _tag_problem(value):
                raise RunFilterError(f"{_quoted(word)}: tag=T or tag!=T, T one word (a run's tags)")
        elif key == "status":
            if value not in _STATUSES or ordered:
                raise RunFilterError(f"{_quoted(word)}: status is one of queued, running, paused, done, "
                                     "diverged, failed, stopped (= or !=)")
        elif why := unknown(word, key):
            raise RunFilterError(why)
        terms.append((key, op, value))
    return terms


def _quantile(ordered, q):
    at = (len(ordered) - 1) * q
    below = math.floor(at)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (at - below)


_TAG = re.compile(r"[A-Za-z0-9_.:+\-/]{1,64}")


def _tag_problem(tag: str) -> str:
    """"" for a good tag (Session.cpp, validTag), else why not."""
    if isinstance(tag, str) and _TAG.fullmatch(tag):
        return ""
    shown = tag[:40] + "\u2026" if len(tag) > 40 else tag
    return f"'{shown}': a tag is one word of letters, digits and _ . : + - / (at most 64)"


def select(text: str, runs, labels, verdicts, axes, tags=None):
    """Which of `runs` (headlab._store.Run) meet the filter `text` (RunFilter::select): a list of
    booleans. `labels`: each run's configuration labels (every axis, unset ones resolved);
    `verdicts`: each run's learned verdict (True, False, None); `axes`: the configuration axes;
    `tags`: each run's tags (lists; none where not given)."""
    tags = tags or [[] for _ in runs]
    metrics = {k for r in runs for k in r.metrics}
    terms = _parse(text, axes, metrics)
    keep = [True] * len(runs)
    for i, run in enumerate(runs):
        for key, op, value in terms:
            if op in ("best", "worst", "!outliers"):
                continue
            if key == "learned" and op == "":
                if verdicts[i] is None or verdicts[i] != (value == "1"):
                    keep[i] = False
            elif key == "status":
                if (run.status == value) != (op == "="):
                    keep[i] = False
            elif key == "tag":
                if (value in tags[i]) != (op == "="):
                    keep[i] = False
            else:
                if key in labels[i]:
                    text_value = labels[i][key]
                else:
                    v = run_value(run, key)
                    if v is None:
                        keep[i] = False
                        break
                    text_value = _format_number(float(v))
                if not _compare_values(text_value, op, value):
                    keep[i] = False
            if not keep[i]:
                break
    for key, op, value in terms:
        if op not in ("best", "worst", "!outliers"):
            continue
        lower = lower_is_better(key)
        values = [(i, float(v)) for i, run in enumerate(runs) if keep[i]
                  for v in [run_value(run, key)] if v is not None]
        if op == "!outliers":
            finite = sorted(v for _, v in values if math.isfinite(v))
            fenced = len(finite) >= 4
            q1 = _quantile(finite, 0.25) if fenced else 0.0
            q3 = _quantile(finite, 0.75) if fenced else 0.0
            for i, v in values:
                if not math.isfinite(v) or (fenced and (v > q3 + 3 * (q3 - q1) if lower
                                                        else v < q1 - 3 * (q3 - q1))):
                    keep[i] = False
            continue
        ascending = (op == "best") == lower
        # Stable either way (reverse keeps ties in run order), as the CLI's stable_sort.
        ranked = sorted(((i, v) for i, v in values if not math.isnan(v)),
                        key=lambda item: item[1], reverse=not ascending)
        chosen = {i for i, _ in ranked[:int(value)]}
        keep = [k and i in chosen for i, k in enumerate(keep)]
    return keep
