"""_store.py — reads HeadLab's stored layout (docs/SESSION_FORMAT.md) without the C++ binaries.

A session is `S.yaml` (the definition and an index of its runs) plus `S.results/runs/<hash>.yaml`,
one file per run that started. An export (and a schema 1 session) holds every run inline under
`runs:`. Loading follows core/session/SessionStore.cpp: the index's order first, then run files the
index does not list (written after it was saved, e.g. by shards), by name; two records of one
configuration resolve to the finished one, else the one with more steps.

Errors name the place as headlab-cli does: `FILE:LINE:COL: KEY: what`. A run file that cannot be
read is skipped with a warning (`... (this run file is skipped)`), as the CLI does, so one broken
file never hides the others.
"""
from __future__ import annotations

import gzip
import json
import os
import re
import warnings
from collections import deque
from dataclasses import dataclass, field

import numpy as np
import yaml

try:  # libyaml's parser when the wheel carries it (it does on Linux): ~10x the pure-Python one
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader

SCHEMA_VERSION = 2
FINISHED = ("done", "diverged", "failed")


class HeadLabError(ValueError):
    """A session or run file that cannot be read; the message starts with FILE:LINE:COL."""


class RunFileSkipped(UserWarning):
    """A run file that could not be read and was left out (the message says where and why)."""


# ------------------------------------------------------------------------------------------------
# YAML with located errors

# A curve on one line, as HeadLab writes them: `  NAME: {steps: [...], values: [...]}`. Reading
# these with numpy instead of the YAML parser makes a run file of 200 curves load in milliseconds.
_CURVE = re.compile(r"^(\s+)([^\s:][^:]*?|\"(?:[^\"\\]|\\.)*\"):\s+\{steps:\s*\[([^\]]*)\],\s*values:\s*\[([^\]]*)\]\}\s*$")


def _numbers(text, dtype):
    text = text.strip()
    if not text:
        return np.zeros(0, dtype=dtype)
    if dtype is np.float64:
        text = text.replace(".nan", "nan").replace(".NaN", "nan").replace(".inf", "inf").replace(".Inf", "inf")
    return np.array(text.split(","), dtype=dtype)


def _read_text(path, what):
    try:
        if str(path).endswith(".gz"):  # an export kept compressed (docs/data/...)
            with gzip.open(path, "rb") as f:
                data = f.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except (OSError, EOFError) as e:
        raise HeadLabError(f"{path}: cannot read {what}: {getattr(e, 'strerror', None) or e}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise HeadLabError(f"{path}:{line}:1: not UTF-8 text") from None


def _located(path, mark, key, what):
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else path
    return HeadLabError(f"{where}: {key + ': ' if key else ''}{what}")


def _parse(path, text, curves=None):
    """The YAML document of `text` as Python objects; one-line curves are lifted out into the list
    `curves` (name, steps, values), in the document's order, and replaced by null, keeping every
    line number. run_from_record takes them back in the same order."""
    if curves is not None and "{steps:" in text:
        lines = text.split("\n")
        for i, line in enumerate(lines):
            if "{steps:" not in line:
                continue
            m = _CURVE.match(line)
            if not m:
                continue
            name = m.group(2)
            if name.startswith('"'):
                name = json.loads(name)
            try:
                steps = _numbers(m.group(3), np.int64)
                values = _numbers(m.group(4), np.float64)
            except ValueError:
                continue  # left to the YAML parser, which says where
            if len(steps) != len(values):
                raise HeadLabError(
                    f"{path}:{i + 1}:{len(m.group(1)) + 1}: curves.{name}: {len(steps)} steps but {len(values)} values")
            curves.append((name, steps, values))
            lines[i] = f"{m.group(1)}{m.group(2)}: null"
        text = "\n".join(lines)
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        if mark is not None and mark.index >= len(text) and mark.line > 0 and not text.endswith("\n"):
            # PyYAML puts the end of a file without a final line break on a line of its own;
            # yaml-cpp (headlab-cli) on the last line: say the same place.
            mark = yaml.Mark(mark.name, mark.index, mark.line - 1, 0, None, None)
        raise _located(path, mark, "", f"malformed YAML: {e.problem or e.context}") from None
    except yaml.YAMLError as e:
        raise HeadLabError(f"{path}: malformed YAML: {e}") from None


def _mark_of(path, text, keys):
    """The position of the node at `keys` (a path of mapping keys and list indices) in `text`."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    mark = node.start_mark if node is not None else None
    for key in keys:
        if isinstance(node, yaml.MappingNode):
            found = None
            for k, v in node.value:
                if k.value == key:
                    found = v
                    break
            if found is None:
                return mark
            node = found
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        else:
            return mark
        mark = node.start_mark
    return mark


# ------------------------------------------------------------------------------------------------
# Records


@dataclass
class Run:
    """One run's stored record: what its run file (or an export's inline entry) holds."""
    labels: dict
    status: str
    config: dict
    steps_done: int = 0
    diverged_at_step: int = -1
    wall_seconds: float = 0.0
    device: str = ""
    message: str = ""
    phase_starts: list = field(default_factory=list)
    metrics: dict = field(default_factory=dict)
    curves: dict = field(default_factory=dict)  # name -> (steps int64[], values float64[])
    provenance: dict = field(default_factory=dict)
    checkpoints: list = field(default_factory=list)  # {step, file, reason}
    samples: list = field(default_factory=list)
    file: str = ""  # the run file, "" for an inline record
    load_problem: str = ""  # what could not be read while the rest could (per-head curves)

    @property
    def finished(self):
        return self.status in FINISHED


_STATUSES = ("queued", "running", "paused", "done", "diverged", "failed", "stopped")


def _key_text(keys):
    """experiment.model.heads[1], as headlab-cli names a key."""
    text = ""
    for k in keys:
        text += f"[{k}]" if isinstance(k, int) else (f".{k}" if text else str(k))
    return text


def _expect(cond, path, text, keys, what):
    if not cond:
        raise _located(path, _mark_of(path, text, keys), _key_text(keys), what)


def _curve_from_yaml(path, text, keys, value):
    _expect(isinstance(value, dict) and "steps" in value and "values" in value, path, text, keys,
            "expected {steps: [...], values: [...]}")
    steps = np.asarray(value["steps"], dtype=np.int64)
    values = np.asarray([float(v) for v in value["values"]], dtype=np.float64)
    _expect(len(steps) == len(values), path, text, keys, f"{len(steps)} steps but {len(values)} values")
    return steps, values


def _type_name(value):
    return "a list" if isinstance(value, list) else "a mapping" if isinstance(value, dict) else f"'{value}'"


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def check_config(config, path, text, keys):
    """The fields this package reads from a run configuration, checked as core/tasks/RunConfigFields
    checks them (the same words), so that a bad value is named where it is rather than failing
    later in a table."""
    def where(*more):
        return tuple(keys) + more

    def integer(value, minimum, *at):
        _expect(_is_int(value), path, text, where(*at), f"expected an integer, got {_type_name(value)}")
        _expect(value >= minimum, path, text, where(*at), f"must be at least {minimum}, got {value}")

    _expect(isinstance(config, dict), path, text, where(), "expected a mapping (a run configuration)")
    task = config.get("task") or {}
    _expect(isinstance(task, dict), path, text, where("task"), "expected a mapping")
    model = config.get("model") or {}
    _expect(isinstance(model, dict), path, text, where("model"), "expected a mapping")
    if "d_model" in model:
        integer(model["d_model"], 1, "model", "d_model")
    if "layers" in model:
        integer(model["layers"], 1, "model", "layers")
    heads = model.get("heads", 1)
    if isinstance(heads, list):
        _expect(len(heads) > 0, path, text, where("model", "heads"), "expected at least one layer")
        for i, h in enumerate(heads):
            integer(h, 1, "model", "heads", i)
    else:
        integer(heads, 1, "model", "heads")
    head_dim = model.get("head_dim", "auto")
    if head_dim != "auto":
        integer(head_dim, 0, "model", "head_dim")
    if "lr" in config:
        lr = config["lr"]
        _expect(isinstance(lr, (int, float)) and not isinstance(lr, bool), path, text, where("lr"),
                f"expected a number, got {_type_name(lr)}")
        _expect(lr > 0 and lr == lr and lr != float("inf"), path, text, where("lr"),
                f"must be finite and > 0, got {lr}")
    for key in ("seed", "init_seed", "data_seed"):
        if key in config:
            integer(config[key], 0, key)
    _expect("phases" in config, path, text, where("phases"), "missing: at least one phase")
    _expect(isinstance(config["phases"], list) and len(config["phases"]) > 0, path, text, where("phases"),
            "expected a list of at least one phase")


def run_from_record(doc, path, text, lifted, base_keys=()):
    """A Run from one record (a mapping), located errors under `base_keys`."""
    k = tuple(base_keys)
    _expect(isinstance(doc, dict), path, text, k, "expected a mapping (a run record)")
    _expect("config" in doc and isinstance(doc["config"], dict), path, text, k + ("config",),
            "missing: the run's resolved configuration")
    check_config(doc["config"], path, text, k + ("config",))
    status = doc.get("status", "queued")
    _expect(isinstance(status, str) and status.lower() in _STATUSES, path, text, k + ("status",),
            f"expected one of {', '.join(_STATUSES)}, got '{status}'")
    labels = doc.get("labels") or {}
    _expect(isinstance(labels, dict), path, text, k + ("labels",), "expected a mapping of axis to value")
    curves = {}
    head_file = doc.get("head_curves")
    problem = ""
    if head_file is not None:
        _expect(isinstance(head_file, dict) and isinstance(head_file.get("file"), str)
                and _is_int(head_file.get("curves")), path, text, k + ("head_curves",),
                "expected {file: NAME.heads-HASH.safetensors, curves: COUNT}")
        name = head_file["file"]
        _expect(not name.startswith(".") and "/" not in name and ".heads-" in name
                and name.endswith(".safetensors"), path, text, k + ("head_curves", "file"),
                f"'{name}' is not a per-head curves file name (NAME.heads-HASH.safetensors beside the run file)")
        try:
            curves.update(read_head_curves(os.path.join(os.path.dirname(path), name), head_file["curves"]))
        except HeadLabError as e:
            problem = f"{e} (the run's per-head curves are left out; its other results are kept)"
    raw = doc.get("curves") or {}
    _expect(isinstance(raw, dict), path, text, k + ("curves",), "expected a mapping of name to curve")
    for name, value in raw.items():
        name = str(name)
        if value is None and lifted and lifted[0][0] == name:
            _, steps, values = lifted.popleft()
            curves[name] = (steps, values)
        else:
            curves[name] = _curve_from_yaml(path, text, k + ("curves", name), value)
    metrics = {}
    for name, value in (doc.get("metrics") or {}).items():
        try:
            metrics[str(name)] = float(value)
        except (TypeError, ValueError):
            raise _located(path, _mark_of(path, text, k + ("metrics", name)), _key_text(k + ("metrics", name)),
                           f"expected a number, got '{value}'") from None
    for key in ("steps_done", "diverged_at_step"):
        _expect(isinstance(doc.get(key, 0), int), path, text, k + (key,), "expected an integer")
    return Run(labels={str(a): str(v) for a, v in labels.items()},
               status=status.lower(),
               config=doc["config"],
               steps_done=int(doc.get("steps_done", 0)),
               diverged_at_step=int(doc.get("diverged_at_step", -1)),
               wall_seconds=float(doc.get("wall_seconds", 0.0)),
               device=str(doc.get("device", "") or ""),
               message=str(doc.get("message", "") or ""),
               phase_starts=[int(s) for s in doc.get("phase_starts") or []],
               metrics=metrics,
               curves=curves,
               provenance={str(a): str(v) for a, v in (doc.get("provenance") or {}).items()},
               checkpoints=list(doc.get("checkpoints") or []),
               samples=[str(s) for s in doc.get("samples") or []],
               load_problem=problem)


def read_head_curves(path, expected):
    """The per-head curves a stored run keeps beside its run file (docs/SESSION_FORMAT.md):
    name -> (steps, values), exact (float32 where HeadLab found every value exact in float32)."""
    from safetensors import SafetensorError, safe_open

    def bad(what):
        return HeadLabError(f"{path}: is not a valid per-head curves file: {what}")

    try:
        with safe_open(path, framework="numpy") as f:
            meta = f.metadata() or {}
            if meta.get("format") != "headlab-head-curves":
                raise bad(f"its format is '{meta.get('format')}'")
            if meta.get("format_version") != "1":
                raise bad(f"format version {meta.get('format_version')} is newer than this package reads")
            curves = {}
            for g in range(int(meta.get("groups", "0"))):
                names = meta.get(f"names.{g}", "").split("\n")
                steps = f.get_tensor(f"steps.{g}").astype(np.int64)
                values = f.get_tensor(f"values.{g}").astype(np.float64)
                if values.shape != (len(names), len(steps)):
                    raise bad(f"group {g} has tensors of other shapes than {len(names)} curves of its steps")
                for name, row in zip(names, values):
                    curves[name] = (steps, row)
    except FileNotFoundError:
        raise HeadLabError(f"{path}: cannot read a per-head curves file: No such file or directory") from None
    except (SafetensorError, OSError, ValueError, KeyError) as e:
        raise bad(str(e)) from None
    if len(curves) != expected:
        raise bad(f"it holds {len(curves)} curves, the run file says {expected}")
    return curves


def read_run_file(path):
    text = _read_text(path, "a run file")
    lifted = deque()
    doc = _parse(path, text, lifted)
    run = run_from_record(doc, path, text, lifted)
    run.file = path
    return run


def _canonical(config):
    return json.dumps(config, sort_keys=True, default=str)


def _better(candidate, current):
    if candidate.finished != current.finished:
        return candidate.finished
    return candidate.steps_done >= current.steps_done


@dataclass
class StoredSession:
    path: str
    doc: dict  # the session file's mapping (definition, index, view)
    runs: list  # Run, in the session's order
    results_dir: str  # "" when the session keeps no run files
    skipped_files: list  # the warnings of run files left out


def read_session(path):
    path = os.fspath(path)
    text = _read_text(path, "a session file")
    lifted = deque()
    doc = _parse(path, text, None)
    _expect(isinstance(doc, dict), path, text, (), "expected a mapping (a HeadLab session)")
    version = doc.get("schema_version")
    _expect(version is not None, path, text, ("schema_version",), "missing: the session format's version")
    _expect(isinstance(version, int), path, text, ("schema_version",), f"expected an integer, got '{version}'")
    _expect(1 <= version <= SCHEMA_VERSION, path, text, ("schema_version",),
            f"schema version {version} is newer than this package reads ({SCHEMA_VERSION}); update headlab"
            if version > SCHEMA_VERSION else f"expected 1 or {SCHEMA_VERSION}")
    _expect("experiment" in doc, path, text, ("experiment",), "missing: the base run configuration")
    check_config(doc["experiment"], path, text, ("experiment",))

    directory = os.path.dirname(os.path.abspath(path))
    results = doc.get("results")
    if results:
        results_dir = os.path.join(directory, str(results))
    else:  # a session file that names no folder still has the files shards wrote beside it
        stem = os.path.basename(path)
        stem = stem[:-5] if stem.endswith(".yaml") else stem
        candidate = os.path.join(directory, stem + ".results")
        results_dir = candidate if os.path.isdir(os.path.join(candidate, "runs")) else ""

    entries = doc.get("runs") or []
    _expect(isinstance(entries, list), path, text, ("runs",), "expected a list of runs")
    inline, files = [], []
    if any(isinstance(e, dict) and "config" in e for e in entries):
        # An export or a schema 1 session: the records themselves. Parsed again with the curve
        # lifter, since such files carry every curve.
        doc = _parse(path, text, lifted)
        entries = doc.get("runs") or []
    for i, entry in enumerate(entries):
        _expect(isinstance(entry, dict), path, text, ("runs", i), "expected a mapping")
        if "file" in entry:
            name = str(entry["file"])
            _expect(results_dir != "", path, text, ("runs", i, "file"),
                    "a run stored in a file needs the session's `results:` folder")
            _expect(name.startswith("runs/") and name.endswith(".yaml") and "/" not in name[5:],
                    path, text, ("runs", i, "file"), "expected runs/NAME.yaml inside the results folder")
            files.append(name[5:])
        else:
            inline.append(run_from_record(entry, path, text, lifted, ("runs", i)))

    # Run files: the index's order, then the others by name (shards write files, never the index).
    skipped = []
    stored = []
    if results_dir:
        runs_dir = os.path.join(results_dir, "runs")
        listed = set(files)
        try:
            others = sorted(n for n in os.listdir(runs_dir)
                            if n.endswith(".yaml") and not n.startswith(".") and len(n) >= 6 and n not in listed)
        except OSError:
            others = []
        for name in files + others:
            file = os.path.join(runs_dir, name)
            if not os.path.exists(file):
                continue  # listed, never written: not run yet
            try:
                stored.append(read_run_file(file))
                if stored[-1].load_problem:  # read, but not all of it
                    skipped.append(stored[-1].load_problem)
                    warnings.warn(stored[-1].load_problem, RunFileSkipped, stacklevel=3)
            except HeadLabError as e:
                message = f"{e} (this run file is skipped)"
                skipped.append(message)
                warnings.warn(message, RunFileSkipped, stacklevel=3)

    runs, by_config = [], {}
    for run in inline + stored:
        key = _canonical(run.config)
        if key in by_config:
            if _better(run, runs[by_config[key]]):
                runs[by_config[key]] = run
        else:
            by_config[key] = len(runs)
            runs.append(run)
    return StoredSession(path, doc, runs, results_dir, skipped)

