"""session.py — a HeadLab session as pandas tables.

    import headlab
    s = headlab.open("grid.yaml")
    runs = s.runs()            # one row per run: labels, configuration, status, verdict, metrics
    runs.groupby("configuration")  # replicates of one configuration, as every figure groups them
    curves = s.curves()        # long: session, run, step, phase, metric, value
    heads = s.head_stats()     # long: session, run, step, phase, layer, head_index, statistic, value

The columns of `runs()` start with those of `headlab-cli export-csv`'s runs.csv, in its order and
with its values (tests/python checks every number against the CLI), then `session`, `uniform_heads` and
`uniform_head_dim` (numbers where every layer has the same), `file`, and every field of the run's resolved configuration as `config.KEY` (nested keys joined by dots,
phases as `config.phases.I.KEY`).
"""
from __future__ import annotations

import math
import os
import re
import stat
import warnings

from collections.abc import Iterable

import numpy as np
import pandas as pd

from ._store import FINISHED, HeadLabError, Run, RunFileSkipped, read_live_runs, read_session, schema
from . import _filter, _store
from .search import SearchReport, search_report

LN10 = math.log(10.0)

# The tasks HeadLab knows (core/schema/TaskList.h), as headlab-cli schema writes them: whether
# "learned" has a meaning for the task (TaskSpec::learnedMeaning), whether it is judged by its
# chance plateau (TaskSpec::chancePlateau: nearest neighbour, text) and the unit of its losses.
TASKS = {name: dict(row) for name, row in schema()["tasks"].items()}

# The rules a session's learned_rule may name (core/metrics/LearnedRule.h).
LEARNED_RULES = tuple(row["name"] for row in schema()["learned_rules"])

# When, where and by what each run trained (core/config/RunOrigin.h, kOriginFields): runs.csv's
# columns after `device`, in this order.
ORIGIN_FIELDS = tuple(schema()["origin_record"])

# The statistics a run logs per head at each evaluation (core/metrics/Metrics.cpp), as curves
# named head.<layer>.<head>.<statistic>.
HEAD_CURVE_PREFIX = "head."
_INDEX = re.compile(r"[0-9]+")


def parse_head_curve(name: str):
    """(layer, head, statistic) of a per-head curve's name, head.<layer>.<head>.<statistic>, or None
    for any other name: each index whole ASCII digits within 64 bits, as headlab-cli reads them
    (core/metrics/Metrics.cpp, parseHeadCurve); "head.99999999999999999999999.0.x" raised
    OverflowError out of head_stats()."""
    pieces = name.split(".", 3)
    if len(pieces) != 4 or pieces[0] + "." != HEAD_CURVE_PREFIX:
        return None
    if not all(_INDEX.fullmatch(p) and int(p) < 2 ** 63 for p in pieces[1:3]):
        return None
    return int(pieces[1]), int(pieces[2]), pieces[3]


def _renamed_head(key):
    """`key` (a name or a list of names) with the per-head table's old column name "head" as
    "head_index", with a FutureWarning that points at the user's line."""
    if isinstance(key, str) and key == "head":
        key = "head_index"
    elif isinstance(key, list) and "head" in key:
        key = ["head_index" if isinstance(k, str) and k == "head" else k for k in key]
    else:
        return key
    warnings.warn('head_stats(): the column "head" is now "head_index" ("head" shadowed '
                  "DataFrame.head); the old name goes in the next release", FutureWarning, stacklevel=3)
    return key


def _annotation(doc, where):
    """(note, tags) of a session or of one run's entry under `annotations:`."""
    note = doc.get("note")
    tags = doc.get("tags") or []
    if not isinstance(tags, list) or any(_filter._tag_problem(str(t)) for t in tags):
        raise HeadLabError(f"{where}: tags: expected a list of words (letters, digits, _ . : + - /)")
    return ("" if note is None else str(note)), list(dict.fromkeys(str(t) for t in tags))


class _WriterLock:
    """The session's writer lock (S.results/lock, flock, as SessionStore takes it), held while
    annotate writes, so that no HeadLab starts writing the session in between; HeadLabError where
    another process holds it. A session without a results folder (an export) has none."""

    def __init__(self, path):
        stem = os.path.basename(path)
        for extension in (".yaml", ".yml"):
            if stem.endswith(extension) and len(stem) > len(extension):
                stem = stem[:-len(extension)]
                break
        self.path = path
        self.folder = os.path.join(os.path.dirname(os.path.abspath(path)), stem + ".results")
        self.fd = None

    def __enter__(self):
        import fcntl
        import socket
        import time
        if not os.path.isdir(self.folder):
            return self
        lock = os.path.join(self.folder, "lock")
        self.fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644)
        if not stat.S_ISREG(os.fstat(self.fd).st_mode):
            self.__exit__()
            raise HeadLabError(f"{lock} is not a regular file, so it is not HeadLab's lock file")
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(self.fd, 511, 0).decode("utf-8", "replace").strip() or "a process"
            self.__exit__()
            raise HeadLabError(f"{self.path} is being written by {holder}: annotate it when it is done")
        owner = f"PID {os.getpid()} on {socket.gethostname()} since " \
                f"{time.strftime('%Y-%m-%d %H:%M:%S')} (headlab.Session.annotate)\n"
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, owner.encode(), 0)
        return self

    def __exit__(self, *_):
        if self.fd is not None:
            os.close(self.fd)  # closing releases the flock
            self.fd = None


def _yaml_text(text: str) -> str:
    """Text as a YAML double-quoted scalar (JSON's escapes are YAML's)."""
    import json
    return json.dumps(text, ensure_ascii=False)


def _write_annotations(path, session_annotation, annotations):
    """The session file with its `note:`, `tags:` and `annotations:` blocks replaced, after
    `description:` (else `name:`, else `schema_version:`) as HeadLab writes them, everything else
    unchanged; written atomically, and read back before it replaces the old one."""
    from ._store import read_session, _TOP_LEVEL_KEY
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    keep, inside = [], False  # the lines of every other block
    for line in lines:
        if _TOP_LEVEL_KEY.match(line):
            inside = any(line.startswith(k + ":") for k in ("note", "tags", "annotations"))
            if inside:
                continue
        elif inside and line.startswith((" ", "\t")) and line.strip():
            continue  # a line of a block being replaced
        keep.append(line)
    # Where the blocks go: after the first of description, name, schema_version there is (its
    # block's last line).
    place = None
    for key in ("description", "name", "schema_version"):
        starts = [i for i, line in enumerate(keep) if line.startswith(key + ":")]
        if starts:
            place = starts[0] + 1
            while place < len(keep) and keep[place].startswith((" ", "\t")):
                place += 1
            break
    if place is None:
        raise HeadLabError(f"{path}: no schema_version: not a session file")
    block = []
    note, tags = session_annotation
    if note:
        block.append(f"note: {_yaml_text(note)}")
    if tags:
        block.append("tags: [" + ", ".join(_yaml_text(t) for t in tags) + "]")
    if annotations:
        block.append("annotations:")
        for run_id in sorted(annotations):
            run_note, run_tags = annotations[run_id]
            parts = ([f"note: {_yaml_text(run_note)}"] if run_note else []) + \
                ([f"tags: [{', '.join(_yaml_text(t) for t in run_tags)}]"] if run_tags else [])
            block.append(f"  {_yaml_text(run_id)}: {{{', '.join(parts)}}}")
    new_text = "\n".join(keep[:place] + block + keep[place:])
    directory = os.path.dirname(os.path.abspath(path))
    import tempfile
    fd, temporary = tempfile.mkstemp(prefix=".annotate-", suffix=".yaml", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(new_text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temporary, stat.S_IMODE(os.stat(path).st_mode))
        checked = read_session(temporary)  # read back: a file HeadLab reads, with the runs it had
        before = read_session(path)
        if len(checked.runs) != len(before.runs):
            raise HeadLabError(f"{path}: annotating it would lose runs; the file is unchanged")
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _empty(dtypes):
    """A table of no rows with these columns and dtypes (as a table with rows has them)."""
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in dtypes.items()})


def _indexed(frame):
    """runs() indexed by (session, run_id) (as set_index does: the two leave the columns, and
    reset_index() puts them back)."""
    return frame.set_index(["session", "run_id"])


class HeadStats(pd.DataFrame):
    """head_stats()'s table: a DataFrame whose `head_index` column may still be named "head" in
    `frame["head"]`, `groupby`, `pivot_table` and `sort_values` for one release (with a
    FutureWarning). Everything else is pandas' own."""

    @property
    def _constructor(self):
        return HeadStats

    def __getitem__(self, key):
        if "head" not in self.columns:
            key = _renamed_head(key)
        return super().__getitem__(key)

    def groupby(self, by=None, *args, **kwargs):
        """DataFrame.groupby, with "head" read as "head_index" for one release."""
        return super().groupby(_renamed_head(by), *args, **kwargs)

    def pivot_table(self, *args, **kwargs):
        """DataFrame.pivot_table, with "head" read as "head_index" for one release."""
        for name in ("index", "columns", "values"):
            if name in kwargs:
                kwargs[name] = _renamed_head(kwargs[name])
        return super().pivot_table(*args, **kwargs)

    def sort_values(self, by, *args, **kwargs):
        """DataFrame.sort_values, with "head" read as "head_index" for one release."""
        return super().sort_values(_renamed_head(by), *args, **kwargs)


def wilson(successes, trials, z: float = 1.959963984540054):
    """The 95 % Wilson score interval of a fraction, as the app draws P(learned)'s whiskers
    (ui/model/FigureData.cpp): (low, high) within [0, 1], for numbers or arrays; (0, 1) where
    there are no trials. Unlike the normal approximation it is not of width 0 at 0 or all."""
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        z2n = z * z / n
        centre = (p + z2n / 2) / (1 + z2n)
        half = z * np.sqrt(p * (1 - p) / n + z2n / (4 * n)) / (1 + z2n)
        # Around the fraction itself (rounding put the low end 6e-17 above 0 of 3).
        low = np.where(n > 0, np.minimum(p, np.maximum(0.0, centre - half)), 0.0)
        high = np.where(n > 0, np.maximum(p, np.minimum(1.0, centre + half)), 1.0)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def learned(run: Run, rule: str) -> bool | None:
    """The verdict of core/metrics/LearnedRule.cpp, by the rule's row in the schema
    (`learned_rules`, `paper_rule`): True, False, or None (no verdict)."""
    if run.status not in FINISHED:
        return None
    m = run.metrics
    metric = next((row["metric"] for row in schema()["learned_rules"] if row["name"] == rule), None)
    chance = schema()["chance_plateau_metric"]
    if metric is not None:
        for name in (metric, chance):  # a task without the ln 10 plateau: its own
            if name in m:
                return m[name] > 0.5 and run.status == "done"
    paper = schema()["paper_rule"]
    if paper["metric"] in m:
        return m[paper["metric"]] > 0.5
    loss = m.get(paper["final_metric"])
    if loss is None:
        test = run.curves.get("test")
        loss = float(test[1][-1]) if test is not None and len(test[1]) else math.nan
    if not math.isfinite(loss):
        return None
    return run.status == "done" and loss < paper["below"]


# ------------------------------------------------------------------------------------------------
# The configuration's key columns (core/schema/RunConfigFields.cpp, runCsvColumns). What a config
# leaves out is the schema's `defaults`, written by the field table's own writers
# (`headlab-cli schema`): this package types no default of its own.


def _default(*path):
    """The value a run's config has at `path` ("model", "d_model") where it says nothing."""
    value = schema()["defaults"]
    for key in path:
        value = value[key]
    return value


def _model_default(key):
    return _default("model", key)


def _heads_per_layer(model):
    heads = model.get("heads", _model_default("heads"))
    if isinstance(heads, list):
        return [int(h) for h in heads]
    return [int(heads)] * int(model.get("layers", _model_default("layers")))


def _head_dims(model):
    d_model = int(model.get("d_model", _model_default("d_model")))
    head_dim = model.get("head_dim", _model_default("head_dim"))
    explicit = 0 if head_dim in (None, "auto") else int(head_dim)
    return [explicit if explicit > 0 else (d_model // h if h > 0 else 0) for h in _heads_per_layer(model)]


def _joined(values):
    return " ".join(str(v) for v in values)


def _seeds(config):
    seed = config.get("seed")
    seed = _default("seed") if seed is None else seed
    init = config.get("init_seed", seed)
    data = config.get("data_seed", seed)
    return int(init), int(data)


def key_columns(config: dict) -> dict:
    """task, d_model, layers, heads, head_dim, total_heads, lr, qk_rule, init_seed, data_seed."""
    model = config.get("model") or {}
    heads = _heads_per_layer(model)
    dims = _head_dims(model)
    init_seed, data_seed = _seeds(config)
    qk = config.get("qk_rule") or {}
    return {
        "task": str((config.get("task") or {}).get("kind", _default("task", "kind"))),
        "d_model": int(model.get("d_model", _model_default("d_model"))),
        "layers": len(heads),
        # As runs.csv writes them: per layer, space-separated (a number for one layer).
        "heads": heads[0] if len(heads) == 1 else _joined(heads),
        "head_dim": dims[0] if len(dims) == 1 else _joined(dims),
        "total_heads": sum(heads),
        "lr": float(config.get("lr", _default("lr"))),
        "qk_rule": "on" if qk.get("enabled", _default("qk_rule", "enabled")) else "off",
        "init_seed": init_seed,
        "data_seed": data_seed,
    }


def uniform_columns(config: dict) -> dict:
    """heads and head_dim as numbers where every layer has the same (NaN otherwise): the columns
    to plot against (m_H for the law η* ∝ m_H^-α)."""
    model = config.get("model") or {}
    heads, dims = _heads_per_layer(model), _head_dims(model)
    return {"uniform_heads": heads[0] if len(set(heads)) == 1 else math.nan,
            "uniform_head_dim": dims[0] if len(set(dims)) == 1 else math.nan}


def _flatten(value, prefix, out):
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}", out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}.{i}", out)
    elif isinstance(value, list):
        out[prefix] = _joined(value)
    else:
        out[prefix] = value


# ------------------------------------------------------------------------------------------------


def scalar_text(value) -> str:
    """A scalar as HeadLab writes it in YAML (core/config/Yaml.cpp formatNumber): the text a
    configuration label takes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        if text.endswith(".0"):
            text = text[:-2]
        if "e" in text and "." not in text:
            text = text.replace("e", ".0e")
        return text
    return "" if value is None else str(value)


# How a run's config gives each named dimension's text (core/schema/Dimensions.cpp, `resolved`):
# a dimension that is one row of the field table (its `field` in the schema) is read there, with
# the schema's default, so a new such row needs nothing here; the composite ones (the layer count
# and per-layer heads, the head dimension, the schedule, QK rule, the seed) are computed as their
# C++ rows compute them.
_COMPOSITE_DIMENSIONS = {
    "layers": lambda config, model: str(len(_heads_per_layer(model))),
    "head_dim": lambda config, model: str(_head_dims(model)[0]),
    "heads": lambda config, model: ",".join(str(h) for h in _heads_per_layer(model)),  # 12,6
    "total_heads": lambda config, model: str(sum(_heads_per_layer(model))),
    "head_schedule": lambda config, model: "",
    "qk_rule": lambda config, model: (
        "on" if (config.get("qk_rule") or {}).get("enabled", _default("qk_rule", "enabled"))
        else "off"),
    "seed": lambda config, model: str(_seeds(config)[0]),
}


def _named_axis_text(axis, config):
    """A run's value on a named dimension it carries no label for, as core/schema/Dimensions.cpp
    resolves it; None for a name the schema's dimension table does not hold."""
    if axis not in schema()["dimensions"]:
        return None
    row = schema()["dimensions"][axis]
    if not row.get("field"):  # a composite dimension: computed as its C++ row computes it
        composite = _COMPOSITE_DIMENSIONS.get(axis)
        return composite(config, config.get("model") or {}) if composite else ""
    # One row of the field table ("lr", "model.d_model"): its value where the config gives it,
    # else the schema's default, as the row writes it.
    path = row["field"].split(".")
    value = config
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    default = _default(*path)
    value = default if value is None else value
    if isinstance(value, str):  # "auto", a logit scale's name
        return value
    if row["integer"]:
        return str(int(value))
    return scalar_text(float(value) if isinstance(default, float) else value)


def _axis_text(axis, config, defaults):
    """A run's value on an axis it carries no label for, as core/schema/Dimensions.cpp's
    findDimension resolves it: a named axis, else a stabilizer (`defaults`: the schema's
    axis_defaults) or a `model.KEY` field, else ""."""
    named = _named_axis_text(axis, config)
    if named is not None:
        return named
    table, _, key = axis.rpartition(".")
    if table in ("", "stabilizers") and key in defaults:
        given = (config.get("stabilizers") or {}).get(key)
        if isinstance(given, bool):  # YAML 1.1 reads the text off/on as a bool
            given = "on" if given else "off"
        return defaults[key] if given is None else scalar_text(given)
    if table == "model":
        return scalar_text((config.get("model") or {}).get(key))
    return ""


def _ordered(values):
    """A label column as an ordered categorical: its values in numeric order where every one is a
    number ("2" < "12"), else in text order; "" (no label) last."""
    texts = [str(v) for v in values]
    distinct = sorted(set(t for t in texts if t != ""))
    try:
        distinct.sort(key=float)
    except ValueError:
        pass
    if "" in texts:
        distinct.append("")
    return pd.Categorical(texts, categories=distinct, ordered=True)


class SessionChanged(UserWarning):
    """A session's files changed since it was read (a sweep still writing): it was read again,
    and the message says how many runs it stores now."""


def _files_signature(path, results_dir):
    """What says a session's files changed: the session file's and the results folder's (and its
    runs/ folder's, where finished runs' files appear) modification times and sizes."""
    out = []
    for p in (path, results_dir, os.path.join(results_dir, "runs") if results_dir else ""):
        try:
            st = os.stat(p) if p else None
            out.append((st.st_mtime_ns, st.st_size) if st else None)
        except OSError:
            out.append(None)
    return tuple(out)


class Session:
    """One session: its definition, its stored runs, and tables of them. A session kept open
    while a sweep goes on writing it is read again when its files change (SessionChanged)."""

    def __init__(self, path: str | os.PathLike):
        """Reads the session file `path` (its run files too, and a .gz export as it is); a file
        HeadLab would refuse raises HeadLabError naming the place (FILE:LINE:COL: KEY: what), and
        a run file that cannot be read is left out with a RunFileSkipped warning."""
        self.path = os.fspath(path)
        self._read()

    def _read(self):
        # Taken before the files are read: a change while they are read is seen at the next access.
        signature = _files_signature(self.path, None)
        self._stored = read_session(self.path)
        doc = self._stored.doc
        stem = os.path.basename(self.path)
        self.name = str(doc.get("name") or (stem[:-5] if stem.endswith(".yaml") else stem))
        self.description = str(doc.get("description") or "")
        # The session's note and tags, and each run's by its run_id (`note:`, `tags:`,
        # `annotations:`; docs/SESSION_FORMAT.md): what the app's run table and `headlab-cli
        # note` edit.
        self.note, self.tags = _annotation(doc, self.path)
        self.annotations = {}
        for run_id, entry in (doc.get("annotations") or {}).items():
            if not isinstance(entry, dict):
                raise HeadLabError(f"{self.path}: annotations: {run_id}: expected {{note, tags}}")
            self.annotations[str(run_id)] = _annotation(entry, f"{self.path}: annotations: {run_id}")
        self.learned_rule = str(doc.get("learned_rule") or "left_ln10_plateau")
        if self.learned_rule not in LEARNED_RULES:
            raise HeadLabError(f"{self.path}: learned_rule: expected one of {', '.join(LEARNED_RULES)}, "
                               f"got '{self.learned_rule}'")
        self.experiment = doc["experiment"]
        self.sweep = doc.get("sweep") or {}
        self.search_spec = doc.get("search")  # the search's definition (search() is its report)
        self.view = doc.get("view") or {}
        self._doc = doc
        self.results_dir = self._stored.results_dir
        self.skipped_files = list(self._stored.skipped_files)
        self.task = str((self.experiment.get("task") or {}).get("kind", _default("task", "kind")))
        # The results folder is known once the session file is read; the session file's own part
        # is the one taken before.
        self._signature = (signature[0],) + _files_signature(self.path, self.results_dir)[1:]

    def reload(self) -> bool:
        """Reads the session again if its file or its run files changed since it was read (runs
        that finished since, a sweep's new index): True, with a SessionChanged warning, if it did.
        The tables call it, so a session polled while it trains sees the runs that finish."""
        if _files_signature(self.path, self.results_dir) == self._signature:
            return False
        before, name = len(self._stored.runs), self.name
        self._read()
        self.name = name  # as Sessions may have named it
        warnings.warn(f"{self.path}: changed since it was read; read again: {len(self._stored.runs)} "
                      f"runs stored (were {before})", SessionChanged, stacklevel=3)
        return True

    def __repr__(self):
        return f"<headlab.Session {self.name!r}: {len(self._stored.runs)} runs stored, {self.path}>"

    def __len__(self):
        self.reload()
        return len(self._stored.runs)

    @property
    def axes(self) -> list:
        """The swept axes, in the session's order (a search's axis and seed included)."""
        axes = [a for a in self.sweep if a != "combinations"]
        if self.search_spec:
            axes += [a for a in (str(self.search_spec.get("axis", "lr")), "seed") if a not in axes]
        for run in self._stored.runs:
            axes += [a for a in run.labels if a not in axes]
        return axes

    @property
    def replicate_axes(self) -> list:
        """The axes whose values are replicates of one configuration: `replicate_axes:` if the
        session names them, else the seeds."""
        return [str(a) for a in (self._doc.get("replicate_axes") or ["seed", "init_seed", "data_seed"])]

    def configuration_axes(self, records: list | None = None) -> list:
        """What tells runs apart, as core/session/Replicates.h defines it: the swept axes, the keys
        of the sweep's combinations, then any axis a run carries a label for."""
        records = self._stored.runs if records is None else records
        axes = []

        def add(name):
            if name not in axes:
                axes.append(name)
        for name in self.sweep:
            if name != "combinations":
                add(str(name))
        for combination in self.sweep.get("combinations") or []:
            # Keys as text: a key YAML reads as a number (`1: …`) sorts with the others.
            for name in sorted(str(n) for n in combination) if isinstance(combination, dict) else []:
                add(name)
        for run in records:
            for name in sorted(run.labels):
                add(name)
        return axes

    def configurations(self, records: list | None = None) -> list:
        """Each run's configuration as one text, "axis=value" over configuration_axes() but the
        replicate axes ("d_model=24 heads=12 softcap=0"): equal exactly for replicates of one
        configuration, and equal to runs.csv's `configuration` column. A run that does not set a
        stabilizer has the value its configuration gives it (the default where none)."""
        records = self._stored.runs if records is None else records
        axes = [a for a in self.configuration_axes(records) if a not in self.replicate_axes]
        defaults = schema().get("axis_defaults", {})
        out = []
        for run in records:
            parts = []
            for axis in axes:
                value = run.labels[axis] if axis in run.labels else _axis_text(axis, run.config, defaults)
                parts.append(f"{axis}={value}")
            out.append(" ".join(parts))
        return out

    @property
    def has_verdict(self) -> bool:
        """Whether "learned" means something for this session's task."""
        return TASKS.get(self.task, {"verdict": True})["verdict"]

    def verdict(self, run) -> bool | None:
        """Whether a stored run learned by the session's rule: core/session/Session.cpp's
        runLearned. None for a task without verdicts, and for a run of a task judged by its
        chance plateau trained before the trainer gave it a verdict."""
        task = TASKS.get(self.task, {"verdict": True})
        if not task["verdict"]:
            return None
        m = run.metrics
        if (task.get("chance_plateau") and schema()["chance_plateau_metric"] not in m
                and schema()["paper_rule"]["metric"] not in m):
            return None
        return learned(run, self.learned_rule)

    def run_records(self) -> list:
        """The stored records themselves (headlab._store.Run), in the session's order."""
        self.reload()
        return list(self._stored.runs)

    def search(self) -> SearchReport | None:
        """The boundary search's report, as `headlab-cli summary` prints it: each configuration's
        crossing (η*), its interval, runs and state, and the law's coefficients with their
        intervals (headlab.search.SearchReport); None for a session without a search. The
        search's definition is `search_spec`."""
        # The report's block is read now, not when the session was opened (_store.UNREAD_BLOCKS).
        self.reload()
        doc = {**self._doc, "search_report": self._stored.block("search_report")}
        return search_report(self.path, doc, self._stored.runs)

    # -- tables ----------------------------------------------------------------------------------

    def live_runs(self) -> list:
        """The runs in training now, as their trainers list them (headlab._store.Run, status
        running): what runs(running=True) adds. A trainer that is gone is left out with a
        RunFileSkipped warning."""
        live, problems = read_live_runs(self.results_dir)
        for problem in problems:
            warnings.warn(problem, RunFileSkipped, stacklevel=2)
        return live

    def _records(self, running):
        self.reload()
        records = list(self._stored.runs)
        if not running:
            return records
        by_id = {r.run_id: i for i, r in enumerate(records) if r.run_id}
        for run in self.live_runs():  # headlab-cli's addLiveRuns rule
            at = by_id.get(run.run_id)
            if at is None:
                by_id[run.run_id] = len(records)
                records.append(run)
            elif not records[at].finished:
                records[at] = run
        return records

    def configuration_labels(self, records: list | None = None) -> list:
        """Each run's value on every configuration axis, {axis: label}: its own labels, and
        the value its configuration gives an axis it does not set (Replicates.h,
        configurationLabels): what the run filter compares."""
        records = self._stored.runs if records is None else records
        axes = self.configuration_axes(records)
        defaults = schema().get("axis_defaults", {})
        return [{axis: run.labels[axis] if axis in run.labels else _axis_text(axis, run.config, defaults)
                 for axis in axes} for run in records]

    def annotate(self, run=None, note: str | None = None, tags: Iterable[str] = (),
                 untag: Iterable[str] = ()) -> tuple:
        """Edits a note and tags in the session file, as `headlab-cli note` does: the session's
        own (run None) or run `run`'s (its row in runs(), or its run_id; kept by run_id). `note`
        replaces the note ("" clears it), `tags` are added, `untag` taken away. Returns the new
        (note, tags).

        The one thing the package writes: the file's `note:`, `tags:` and `annotations:` blocks,
        the rest of it byte for byte, atomically (a new file renamed over it), and read back
        before it replaces the old, under the session's writer lock (as `headlab-cli note` takes
        it). Refused (HeadLabError) while HeadLab trains the session (it holds the lock), for a
        compressed export, and for a tag that is not one word."""
        self.reload()
        tags, untag = [str(t) for t in tags], [str(t) for t in untag]
        for tag in tags:
            if problem := _filter._tag_problem(tag):
                raise HeadLabError(f"{self.path}: {problem}")
        report = _store.is_report_path(self.path)
        if report or self.path.endswith(".gz"):
            raise HeadLabError(f"{self.path} is {'a report' if report else 'compressed'}: write it out first "
                               f"(headlab-cli export-yaml {self.path} -o S.yaml), then annotate S.yaml")
        annotations = {k: (n, list(t)) for k, (n, t) in self.annotations.items()}
        if run is None:
            current = (self.note, list(self.tags))
        else:
            records = self._stored.runs
            if isinstance(run, str) and not run.isdigit():
                matches = [r for r in records if r.run_id == run]
                if not matches:
                    raise HeadLabError(f"{self.path}: no run has run_id {run}")
                run_id = run
            else:
                index = int(run)
                if not 0 <= index < len(records):
                    raise HeadLabError(f"{self.path}: no run {index} (it has {len(records)})")
                run_id = records[index].run_id
            current = annotations.get(run_id, ("", []))
        new_note = current[0] if note is None else str(note).strip()
        new_tags = [t for t in dict.fromkeys(current[1] + tags) if t not in untag]
        if run is None:
            session_annotation = (new_note, new_tags)
        else:
            session_annotation = (self.note, list(self.tags))
            annotations[run_id] = (new_note, new_tags)
        with _WriterLock(self.path):
            _write_annotations(self.path, session_annotation,
                               {k: v for k, v in annotations.items() if v[0] or v[1]})
        name = self.name
        self._read()  # its own change: read again without the warning a change by others gets
        self.name = name
        return new_note, new_tags

    def select(self, filter: str, running: bool = False) -> list:
        """Which runs meet a run filter, as the app's run table and `headlab-cli export-csv
        --filter` take it ("heads=12 lr>=1e-3 learned min(test_loss)<0.5 best:10 !outliers";
        headlab._filter, docs/SESSION_FORMAT.md "Run filters"): one boolean per run of runs().
        A text that is not a filter raises headlab.RunFilterError naming the term."""
        records = self._records(running)
        verdicts = [self.verdict(r) for r in records]
        tags = [self.annotations.get(r.run_id, ("", []))[1] for r in records]
        return _filter.select(filter, records, self.configuration_labels(records), verdicts,
                              self.configuration_axes(records), tags)

    def runs(self, running: bool = False, index: bool = False, filter: str | None = None,
             values: Iterable[str] = ()) -> pd.DataFrame:
        """One row per stored run; the first columns are runs.csv's (see the module's doc).

        running: also the runs in training now, as `headlab-cli export-csv --running` lists them:
        status "running", steps_done the step each is at; and a column `newest_checkpoint`, the
        step of each run's newest checkpoint (<NA> for none).
        index: indexed by (session, run_id), the runs' identity across sessions, merges and
        shards, instead of 0..n-1 (the two columns become the index, as set_index does).
        filter: only the runs that meet this run filter (select), each keeping its `run` number,
        as `headlab-cli export-csv --filter` writes them.
        values: a column per run value, STAT(CURVE) ("min(test_loss)", "mean_last(train_loss)";
        headlab._filter.STATISTICS), after the metrics, as `export-csv --value`."""
        records = self._records(running)
        values = list(values)
        for key in values:
            if _filter._key_problem(key) != "":
                raise ValueError(f"values: {key}: "
                                 f"{_filter._key_problem(key) or 'expected STAT(CURVE), such as min(test_loss)'}")
        chosen = self.select(filter, running) if filter else [True] * len(records)
        labels = sorted({k for r in records for k in r.labels})
        metrics = sorted({k for r in records for k in r.metrics} - {"learned"})
        provenance = sorted({k for r in records for k in r.provenance})
        configurations = self.configurations(records)
        rows = []
        for i, r in enumerate(records):
            if not chosen[i]:
                continue
            row = {"run": i, "run_id": r.run_id}
            row.update({f"label_{k}": r.labels.get(k, "") for k in labels})
            row["configuration"] = configurations[i]
            row.update(key_columns(r.config))
            verdict = self.verdict(r)
            row.update(status=r.status, steps_done=r.steps_done, diverged_at_step=r.diverged_at_step,
                       wall_seconds=r.wall_seconds, device=r.device)
            row.update({k: r.origin.get(k, "") for k in ORIGIN_FIELDS})
            row.update(learned=verdict, learned_rule=self.learned_rule)
            row.update({k: r.metrics.get(k, math.nan) for k in metrics})
            for key in values:
                value = _filter.run_value(r, key)
                row[key] = math.nan if value is None else float(value)
            row.update({f"provenance_{k}": r.provenance.get(k, "") for k in provenance})
            row["message"] = r.message
            note, tags = self.annotations.get(r.run_id, ("", []))
            row.update(tags=" ".join(tags), note=note)
            row["session"] = self.name
            row.update(uniform_columns(r.config))
            row["file"] = r.file
            if running:
                row["newest_checkpoint"] = max((int(c["step"]) for c in r.checkpoints), default=pd.NA)
            config = {}
            _flatten(r.config, "config", config)
            row.update(config)
            rows.append(row)
        frame = pd.DataFrame(rows)
        if frame.empty:  # runs.csv's header all the same, then the package's own columns
            frame = pd.DataFrame(columns=["run", "run_id", "configuration", *key_columns({}),
                                          "status", "steps_done", "diverged_at_step", "wall_seconds",
                                          "device", *ORIGIN_FIELDS, "learned", "learned_rule", "message",
                                          "tags", "note", "session", "uniform_heads", "uniform_head_dim", "file", *values])
        if running:
            if "newest_checkpoint" not in frame:
                frame["newest_checkpoint"] = pd.Series(dtype="Int64")
            frame["newest_checkpoint"] = frame["newest_checkpoint"].astype("Int64")
        frame = self._typed(frame)
        return _indexed(frame) if index else frame

    def _typed(self, frame):
        """The dtypes pandas users expect, the same under every supported pandas: times as UTC
        datetimes, `heads` and `head_dim` as integers where every layer has the same (<NA>
        otherwise; the per-layer text as runs.csv writes it is in heads_per_layer and
        head_dim_per_layer), a plateau never entered or left and diverged_at_step of a run that
        did not diverge as <NA> instead of runs.csv's -1,
        every swept axis's label as an ordered categorical (numbers in numeric order)."""
        frame["learned"] = frame["learned"].astype("boolean")
        for column in ("started_at", "finished_at"):
            frame[column] = pd.to_datetime(frame[column].replace("", None), utc=True,
                                           format="%Y-%m-%dT%H:%M:%SZ").astype("datetime64[ns, UTC]")
        for column in ("heads", "head_dim"):
            text = frame[column].astype(str)
            at = frame.columns.get_loc(column)
            frame.insert(at + 1, f"{column}_per_layer", text)
            uniform = [int(t.split()[0]) if t and len(set(t.split())) == 1 else pd.NA for t in text]
            frame[column] = pd.array(uniform, dtype="Int64")
        for column in frame.columns:
            if column.startswith("plateau_") and column.endswith(("_entered", "_left")):
                frame[column] = frame[column].where(frame[column] >= 0)  # -1: never
        for column in frame.columns:
            if column.startswith("label_"):
                frame[column] = _ordered(frame[column])
        for column in ("run", "steps_done"):
            frame[column] = frame[column].astype("int64")
        # The step the loss diverged at; <NA> for a run that did not (runs.csv writes -1).
        diverged = frame["diverged_at_step"].astype("int64")
        frame["diverged_at_step"] = pd.array(diverged.where(diverged >= 0), dtype="Int64")
        for column in frame.columns:  # text as pandas' "string" dtype, under pandas 1.5 as under 3
            values = frame[column]
            if values.dtype == object or pd.api.types.is_string_dtype(values.dtype) and \
                    not isinstance(values.dtype, pd.CategoricalDtype):
                if all(isinstance(v, str) for v in values):
                    frame[column] = values.astype("string")
        return frame

    def _curve_arrays(self, heads, keep_name=None, keep_runs=None, keep_steps=None):
        """Every curve (per-head ones, or the others) as flat arrays: run, step, value, the curve's
        code in `names` and the phase's code in `phases`. The curves wanted are listed first and
        the arrays filled in place, so the peak is the table once: 250 runs of 216 per-head
        curves (16 million points) take seconds. `keep_name` (a predicate on curve names),
        `keep_runs` (run indices) and `keep_steps` (steps) leave out what is not wanted before
        anything is built."""
        self.reload()  # curves and head statistics see the runs that finished since, as runs() does
        names, phases = {}, {}
        wanted_steps = None if keep_steps is None else np.asarray(sorted(keep_steps), dtype=np.int64)
        pieces, total, value_type = [], 0, None  # (run, steps, values, name code, phase lookup, starts)
        for i, r in enumerate(self._stored.runs):
            if keep_runs is not None and i not in keep_runs:
                continue
            starts = np.asarray(r.phase_starts or [0], dtype=np.int64)
            run_phases = [str(p.get("name", j)) for j, p in enumerate(r.config.get("phases") or [])]
            lookup = np.array([phases.setdefault(run_phases[k] if k < len(run_phases) else str(k), len(phases))
                               for k in range(max(len(starts), len(run_phases), 1))], dtype=np.int32)
            for name, (curve_steps, curve_values) in r.curves.items():
                if name.startswith(HEAD_CURVE_PREFIX) != heads or not len(curve_steps):
                    continue
                if keep_name is not None and not keep_name(name):
                    continue
                if wanted_steps is not None:
                    at = np.isin(curve_steps, wanted_steps)
                    curve_steps, curve_values = curve_steps[at], curve_values[at]
                    if not len(curve_steps):
                        continue
                pieces.append((i, curve_steps, curve_values, names.setdefault(name, len(names)), lookup, starts))
                total += len(curve_steps)
                value_type = curve_values.dtype if value_type is None else np.result_type(value_type, curve_values.dtype)
        if not pieces:
            return None
        runs = np.empty(total, dtype=np.int64)
        steps = np.empty(total, dtype=np.int64)
        values = np.empty(total, dtype=value_type)
        codes = np.empty(total, dtype=np.int32)
        phase_codes = np.empty(total, dtype=np.int32)
        at = 0
        for i, curve_steps, curve_values, code, lookup, starts in pieces:
            end = at + len(curve_steps)
            runs[at:end] = i
            steps[at:end] = curve_steps
            values[at:end] = curve_values
            codes[at:end] = code
            if len(lookup) == 1:
                phase_codes[at:end] = lookup[0]
            else:
                index = np.clip(np.searchsorted(starts, curve_steps, side="left") - 1, 0, len(lookup) - 1)
                phase_codes[at:end] = lookup[index]
            at = end
        return runs, steps, values, codes, phase_codes, list(names), list(phases)

    def curves(self, include_head_stats: bool = False) -> pd.DataFrame:
        """Every curve as (session, run, step, phase, metric, value): train, test, test_digit_I,
        test_group_G, ...; the per-head curves too with include_head_stats (as metric names
        head.L.H.STAT; head_stats() splits them)."""
        columns = ["session", "run", "step", "phase", "metric", "value"]
        parts = [self._curve_arrays(heads=False)]
        if include_head_stats:
            parts.append(self._curve_arrays(heads=True))
        frames = []
        for part in parts:
            if part is None:
                continue
            run, step, value, code, phase, names, phases = part
            frames.append(pd.DataFrame({
                "run": run, "step": step,
                "phase": pd.Categorical.from_codes(phase, categories=phases),
                "metric": pd.Categorical.from_codes(code, categories=names),
                "value": value}))
        if not frames:  # no curve: the same columns and dtypes, no rows
            return _empty({"session": "category", "run": "int64", "step": "int64", "phase": "category",
                           "metric": "category", "value": "float64"})
        frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        for c in ("phase", "metric"):
            frame[c] = frame[c].astype(str).astype("category") if len(frames) > 1 else frame[c]
        frame.insert(0, "session", pd.Categorical([self.name] * len(frame)))
        return frame[columns]

    def head_stats(self, statistics: str | list | None = None, runs: int | list | None = None,
                   steps: int | list | None = None) -> HeadStats:
        """The per-head statistics (logit_rms, logit_max, entropy, wq_norm, ...) as
        (session, run, step, phase, layer, head_index, statistic, value); `value` is float32 where
        HeadLab stored float32 (every trained run), float64 otherwise. The column `head_index` was
        named `head` before (it shadowed DataFrame.head); the old name still works in
        frame["head"], groupby, pivot_table and sort_values for one release, with a FutureWarning.

        statistics: names to keep (["logit_rms", "entropy"]); runs: run indices (the `run`
        column of runs()); steps: steps to keep. Each is applied before the table is built, so
        one statistic of one run of a large session costs that alone."""
        wanted = None if statistics is None else {statistics} if isinstance(statistics, str) else set(statistics)
        part = self._curve_arrays(
            heads=True,
            keep_name=None if wanted is None else (lambda name: name.rsplit(".", 1)[-1] in wanted),
            keep_runs=None if runs is None else {int(r) for r in ([runs] if np.isscalar(runs) else runs)},
            keep_steps=None if steps is None else ([steps] if np.isscalar(steps) else steps))
        if part is None:
            return HeadStats(_empty({"session": "category", "run": "int64", "step": "int64", "phase": "category",
                                     "layer": "int64", "head_index": "int64", "statistic": "category",
                                     "value": "float32"}))
        run, step, value, code, phase, names, phases = part
        del part
        layers, heads, stats, keep = [], [], [], []
        for name in names:  # head.<layer>.<head>.<statistic>
            parsed = parse_head_curve(name)
            keep.append(parsed is not None)
            layer, head, stat = parsed or (-1, -1, "")
            layers.append(layer)
            heads.append(head)
            stats.append(stat)
        if not all(keep):  # a curve named head.* that is not head.L.H.STAT: left out
            rows = np.asarray(keep)[code]
            run, step, value, code, phase = run[rows], step[rows], value[rows], code[rows], phase[rows]
        statistics = sorted(set(s for s, ok in zip(stats, keep) if ok))
        stat_code = np.array([statistics.index(s) if ok else -1 for s, ok in zip(stats, keep)], dtype=np.int32)
        # Built column by column without a copy (a dict of arrays would be copied into blocks,
        # tripling the peak of a 16-million-row table).
        frame = pd.DataFrame({"session": pd.Categorical.from_codes(np.zeros(len(run), dtype=np.int8),
                                                                   categories=[self.name])})
        frame["run"] = run
        frame["step"] = step
        frame["phase"] = pd.Categorical.from_codes(phase, categories=phases)
        del phase
        frame["layer"] = np.asarray(layers, dtype=np.int64)[code]
        frame["head_index"] = np.asarray(heads, dtype=np.int64)[code]
        frame["statistic"] = pd.Categorical.from_codes(stat_code[code], categories=statistics)
        del code
        frame["value"] = value
        return HeadStats(frame)

    def pruning(self, runs: int | list | None = None) -> pd.DataFrame:
        """The pruning curves `headlab-cli inspect` wrote for the session's runs (its default
        folder, RESULTS/inspect/HASH-step-N/pruning.csv): one row per heads-removed count of each
        curve, as (session, run, checkpoint_step, method, trained_steps, order, seed, ablation,
        removed, fraction, test_loss, layer, head_index, score). `method`: post-hoc, fine-tune,
        scratch (the control) or l0 (whose order is empty and whose score is λ); `layer` and
        `head_index` name the head removed at that count (-1 at 0 removed, and for l0); `score` is
        what the order ranked it by (NaN for random). runs: run indices to keep. Empty when no
        run was inspected."""
        columns = {"session": "category", "run": "int64", "checkpoint_step": "int64", "method": "category",
                   "trained_steps": "int64", "order": "category",
                   "seed": "int64", "ablation": "category", "removed": "int64", "fraction": "float64",
                   "test_loss": "float64", "layer": "int64", "head_index": "int64", "score": "float64"}
        self.reload()
        folder = os.path.join(self.results_dir, "inspect") if self.results_dir else ""
        by_hash = {}
        for i, r in enumerate(self._stored.runs):
            if r.file:
                by_hash[os.path.basename(r.file)[: -len(".yaml")]] = i
        wanted = None if runs is None else {int(r) for r in ([runs] if np.isscalar(runs) else runs)}
        frames = []
        for entry in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            hash_, sep, step = entry.rpartition("-step-")
            path = os.path.join(folder, entry, "pruning.csv")
            if not sep or hash_ not in by_hash or not step.isdigit() or not os.path.isfile(path):
                continue
            run = by_hash[hash_]
            if wanted is not None and run not in wanted:
                continue
            table = pd.read_csv(path, keep_default_na=False, na_values=[""])
            if "order" not in table:  # written before the orders: one greedy curve
                table.insert(0, "order", "greedy")
                table.insert(1, "seed", 0)
                table.insert(2, "ablation", "")
                table["score"] = np.nan
            if "method" not in table:  # written before retraining: post hoc
                table.insert(0, "method", "post-hoc")
                table.insert(1, "trained_steps", 0)
            table.insert(0, "run", run)
            table.insert(1, "checkpoint_step", int(step))
            frames.append(table.rename(columns={"head": "head_index"}))
        if not frames:
            return _empty(columns)
        frame = pd.concat(frames, ignore_index=True)
        frame.insert(0, "session", self.name)
        return frame[list(columns)].astype(columns)

    # -- checkpoints -----------------------------------------------------------------------------

    def _record(self, run):
        if isinstance(run, (pd.Series, dict)):
            run = run["run"]
        try:
            return self._stored.runs[int(run)]
        except (IndexError, ValueError, TypeError):
            raise IndexError(f"{self.path}: no run {run!r} (the session stores {len(self)} runs)") from None

    def checkpoints(self, run: int) -> pd.DataFrame:
        """The checkpoints run `run` kept: step, reason, keep (the user's mark that pruning
        respects), path, exists (docs/CHECKPOINTS.md)."""
        r = self._record(run)
        rows = []
        if r.file:
            results = os.path.dirname(os.path.dirname(r.file))
            folder = os.path.join(results, "checkpoints", os.path.basename(r.file)[: -len(".yaml")])
            # Inside the results folder, as headlab-cli keeps it: a checkpoint folder (or file)
            # that is a link out of it is listed as not there (run files name files only, never
            # paths: the reader refuses `../x` and `/etc/passwd`).
            inside = os.path.realpath(results) + os.sep
            for c in r.checkpoints:
                path = os.path.join(folder, c["file"])
                exists = os.path.isfile(path) and os.path.realpath(path).startswith(inside) \
                    and not os.path.islink(path) and not os.path.islink(folder)
                rows.append({"step": int(c["step"]), "reason": str(c.get("reason") or ""),
                             "keep": bool(c.get("keep", False)), "path": path, "exists": exists})
        return pd.DataFrame(rows, columns=["step", "reason", "keep", "path", "exists"])

    def model(self, run: int, step: int | None = None):
        """The run's model at checkpoint `step` (default: its newest) as a plain PyTorch module
        (headlab.checkpoint.Model; needs torch and safetensors)."""
        from . import checkpoint  # torch is imported only here
        table = self.checkpoints(run)
        table = table[table["exists"]]
        if table.empty:
            raise FileNotFoundError(f"{self.path}: run {run} kept no checkpoint that exists")
        if step is None:
            row = table.iloc[table["step"].values.argmax()]
        else:
            hits = table[table["step"] == int(step)]
            if hits.empty:
                raise FileNotFoundError(f"{self.path}: run {run} has no checkpoint at step {step} "
                                        f"(it has {', '.join(str(s) for s in sorted(table['step']))})")
            row = hits.iloc[0]
        ckpt = checkpoint.load(row["path"])
        try:
            return checkpoint.Model(ckpt)
        except (KeyError, ValueError, TypeError, IndexError, RuntimeError) as e:
            raise HeadLabError(f"{row['path']}: is not a usable checkpoint: its tensors do not make the "
                               f"model its metadata describes ({type(e).__name__}: {e})") from None


class Sessions:
    """Several sessions read as one: every table gains their rows, told apart by `session`."""

    def __init__(self, sessions: Iterable[Session]):
        """The sessions, in order; two of one name are told apart by their paths."""
        self.sessions = list(sessions)
        names = [s.name for s in self.sessions]
        for s in self.sessions:  # two sessions of one name are told apart by their paths
            if names.count(s.name) > 1:
                s.name = s.path

    def __getitem__(self, i):
        return self.sessions[i]

    def __len__(self):
        return len(self.sessions)

    def __repr__(self):
        return f"<headlab.Sessions of {len(self)}: {', '.join(s.name for s in self.sessions)}>"

    def _concat(self, method, **kwargs):
        frames = [getattr(s, method)(**kwargs) for s in self.sessions]
        frames = [f for f in frames if not f.empty] or frames[:1]
        frame = pd.concat(frames, ignore_index=True)
        for c in ("session", "phase", "metric", "statistic", "method", "order", "ablation"):
            if c in frame and frame[c].dtype != object:
                frame[c] = frame[c].astype(str).astype("category")
        return frame

    def runs(self, running: bool = False, index: bool = False, filter: str | None = None,
             values: Iterable[str] = ()) -> pd.DataFrame:
        """Every session's runs() (running: with the runs in training now), told apart by
        `session`; index: indexed by (session, run_id), as Session.runs; filter and values as
        Session.runs, each session's runs filtered among its own (best:K: K per session)."""
        frame = self._concat("runs", running=running, filter=filter, values=tuple(values))
        return _indexed(frame) if index else frame

    def curves(self, include_head_stats: bool = False) -> pd.DataFrame:
        """Every session's curves (Session.curves), told apart by `session`."""
        return self._concat("curves", include_head_stats=include_head_stats)

    def head_stats(self, statistics: str | list | None = None, runs: int | list | None = None,
                   steps: int | list | None = None) -> HeadStats:
        """Every session's per-head statistics (Session.head_stats), told apart by `session`."""
        return self._concat("head_stats", statistics=statistics, runs=runs, steps=steps)

    def pruning(self, runs: int | list | None = None) -> pd.DataFrame:
        """Every session's pruning curves (Session.pruning), told apart by `session`."""
        return self._concat("pruning", runs=runs)

    def search(self) -> dict:
        """Each session's search report (Session.search) by session name; None where a session has
        no search."""
        return {s.name: s.search() for s in self.sessions}

    def _session_of(self, session):
        for s in self.sessions:
            if s.name == session:
                return s
        raise KeyError(f"no session {session!r} (these are {', '.join(s.name for s in self.sessions)})")

    def checkpoints(self, session: str, run: int) -> pd.DataFrame:
        """Session `session`'s (a name from the `session` column) run `run`'s checkpoints."""
        return self._session_of(session).checkpoints(run)

    def model(self, session: str, run: int, step: int | None = None):
        """Session `session`'s run `run` at checkpoint `step` (default: its newest), as
        Session.model gives it."""
        return self._session_of(session).model(run, step)
