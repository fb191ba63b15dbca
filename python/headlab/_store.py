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

import base64
import gzip
import io
import json
import math
import datetime
import os
import re
import stat
import warnings
import zlib
from collections import deque
from dataclasses import dataclass, field

import numpy as np
import yaml

try:  # libyaml's parser when the wheel carries it (it does on Linux): ~10x the pure-Python one
    _BaseLoader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _BaseLoader = yaml.SafeLoader


class _StructureError(Exception):
    """A document headlab-cli refuses for its structure: (mark, message)."""


_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


class _Loader(_BaseLoader):
    """PyYAML's safe loader held to headlab-cli's rules (core/config/Yaml.cpp, checkStructure):
    a duplicate key is an error, nesting deeper than MAX_DEPTH is refused, and a document whose
    aliases expand to more nodes than 4 × its length + 10,000 ("billion laughs") is refused before
    anything is built from it."""

    budget = 0

    def get_single_data(self):
        node = self.get_single_node()
        if node is None:
            return None
        self._check(node)
        return self.construct_document(node)

    def _check(self, root):
        budget = self.budget
        sizes = {}  # id(node) -> nodes it expands to (aliases share nodes: counted at each use)
        visiting = set()
        stack = [(root, 0, False)]
        while stack:
            node, depth, done = stack.pop()
            if done:
                total = 1
                if isinstance(node, yaml.SequenceNode):
                    total += sum(sizes[id(v)] for v in node.value)
                elif isinstance(node, yaml.MappingNode):
                    total += sum(sizes[id(k)] + sizes[id(v)] for k, v in node.value)
                sizes[id(node)] = total
                if total > budget:
                    raise _StructureError(node.start_mark,
                                          "the document expands to more nodes than its text could hold "
                                          "(YAML aliases used within aliases); write the values out, or "
                                          "use fewer nested aliases")
                continue
            if id(node) in sizes:
                continue
            if id(node) in visiting:  # an alias inside its own anchor
                raise _StructureError(node.start_mark, "a YAML alias refers to the node that holds it "
                                      "(a recursive document); write the values out")
            visiting.add(id(node))
            if isinstance(node, yaml.ScalarNode):
                sizes[id(node)] = 1
                continue
            if depth > MAX_DEPTH:
                raise _StructureError(node.start_mark, f"the document nests more than {MAX_DEPTH} levels "
                                      "deep; a HeadLab session needs far fewer")
            stack.append((node, depth, True))
            children = node.value if isinstance(node, yaml.SequenceNode) else \
                [n for pair in node.value for n in pair]
            if isinstance(node, yaml.MappingNode):
                seen = {}
                for k, v in node.value:
                    if isinstance(k, yaml.ScalarNode):
                        if k.value in seen:
                            raise _StructureError(k.start_mark, f"duplicate key '{k.value}' (first at line "
                                                  f"{seen[k.value].line + 1}); each key may appear once")
                        seen[k.value] = k.start_mark
                        if k.value == "run_id" and isinstance(v, yaml.ScalarNode) and v.tag in _NUMBER_TAGS:
                            # 16 hex digits, whatever a plain scalar of them resolves to (all
                            # digits read as an integer, "12e4..." as a float): exports before
                            # the run_id was quoted wrote it plain.
                            v.tag = "tag:yaml.org,2002:str"
            for child in children:
                if id(child) not in sizes:
                    stack.append((child, depth + 1, False))


# Scalars resolve as headlab-cli reads them (yaml-cpp): an integer is decimal digits, leading
# zeros allowed ("010" is 10, where YAML 1.1 reads octal 8); "0x10", "0o17", "0b11", "1_000" and
# "1:30" are text, which a key that wants an integer refuses at its place, as the CLI does; and a
# date is text, as HeadLab writes it (an impossible one, 2026-26-03T14:43:01Z, is text too,
# where PyYAML's timestamps raised ValueError out of open()).
_INT_TAG = "tag:yaml.org,2002:int"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (_INT_TAG, _TIMESTAMP_TAG)]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()}
_DECIMAL = re.compile(r"^[-+]?[0-9]+\Z")
_Loader.add_implicit_resolver(_INT_TAG, _DECIMAL, list("-+0123456789"))


def _construct_decimal(loader, node):
    text = loader.construct_scalar(node)
    if not _DECIMAL.match(text):  # an explicit !!int tag on another form
        raise _StructureError(node.start_mark, f"expected an integer in decimal digits, got '{text}'")
    return int(text, 10)


_Loader.add_constructor(_INT_TAG, _construct_decimal)


# As headlab-cli (core/config/Yaml.cpp, parseDocument): a document holds at most one YAML value
# per BYTES_PER_VALUE bytes of its text and VALUES_BASE in any file, counted before a node is
# built. HeadLab's files hold one per 8.7 bytes or more; a built value costs PyYAML ~520 bytes
# (2 M values in 8 MB took open() 1.04 GB), so the cap keeps reading within ~90x the text (25 M
# zeros, 50 MB, took open() to 4.2 GB).
BYTES_PER_VALUE, VALUES_BASE = 6, 100000
_VALUE_EVENTS = (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent, yaml.AliasEvent)


def _count_values(text):
    """Raises _StructureError at the first value past the cap; the parser's events are counted
    one at a time, nothing built. A text with fewer separators than the cap is under it without
    counting (each value but the first follows one of : ? , - [ { in its text, at most twice)."""
    cap = VALUES_BASE + len(text) // BYTES_PER_VALUE
    if 2 * sum(text.count(c) for c in ":?,-[{") + 2 <= cap:
        return
    cap = VALUES_BASE + len(text.encode("utf-8")) // BYTES_PER_VALUE  # bytes, as headlab-cli
    parser = _BaseLoader(text)
    try:
        values = 0
        while not parser.check_event(yaml.StreamEndEvent):
            event = parser.get_event()
            if isinstance(event, _VALUE_EVENTS):
                values += 1
                if values > cap:
                    raise _StructureError(event.start_mark, f"the document holds more than {cap} YAML values "
                                          f"(a HeadLab limit: one per {BYTES_PER_VALUE} bytes of its text, "
                                          f"{VALUES_BASE} in any file), more than HeadLab writes; it would take "
                                          "memory far beyond its size to read")
    finally:
        parser.dispose()


def _load_yaml(text):
    _count_values(text)
    loader = _Loader(text)
    loader.budget = 4 * len(text) + 10000
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


# Top-level blocks HeadLab writes and never reads back while opening a session: left out of the
# parse (kept as text, read when asked for: Session.search()), as headlab-cli leaves them out.
UNREAD_BLOCKS = ("search_report",)
_TOP_LEVEL_KEY = re.compile(r"^([A-Za-z_\"']|---|\.\.\.)")  # a document marker ends a block too


def without_unread_blocks(text, keys=UNREAD_BLOCKS):
    """(`text` with each top-level block of `keys` emptied, its key kept with no value and its other
    lines blank, so that every line keeps its number; {key: the block's text, preceded by blank
    lines to its place}). A document written as one flow mapping is returned whole."""
    head = re.match(r"(?:\s|#[^\n]*)*", text).end()
    if head < len(text) and text[head] in "{[" or not any(k + ":" in text for k in keys):
        return text, {}
    lines = text.split("\n")
    blocks, inside = {}, None
    for i, line in enumerate(lines):
        if _TOP_LEVEL_KEY.match(line):
            inside = next((k for k in keys if line.startswith(k + ":")), None)
            if inside is not None:
                blocks[inside] = [i, [line]]
                lines[i] = inside + ":"
        elif inside is not None and line and not line.startswith("#"):
            blocks[inside][1].append(line)
            lines[i] = ""
        elif inside is not None:
            blocks[inside][1].append(line)
    return "\n".join(lines), {k: "\n" * first + "\n".join(block) for k, (first, block) in blocks.items()}


_SCHEMA = None


def schema():
    """The keys each record may hold, as headlab-cli's readers check them (`headlab-cli schema`)."""
    global _SCHEMA
    if _SCHEMA is None:
        with open(os.path.join(os.path.dirname(__file__), "schema.json"), encoding="utf-8") as f:
            _SCHEMA = json.load(f)
    return _SCHEMA

SCHEMA_VERSION = 2
FINISHED = ("done", "diverged", "failed")

FNV1A_OFFSET = 1469598103934665603  # core/config/Hash.h's kFnv1aOffset (HeadLab's own, kept as is:
                                    # run files and checkpoints are named and checked with it)


def fnv1a64(data, h=FNV1A_OFFSET):
    """64-bit FNV-1a as HeadLab computes it (core/config/Hash.h): what a checkpoint's tensor data
    is checked against, and a search report's finished runs."""
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


class HeadLabError(ValueError):
    """A session or run file that cannot be read; the message starts with FILE:LINE:COL."""


class RunFileSkipped(UserWarning):
    """A run file that could not be read and was left out (the message says where and why)."""


class RunIdsMissing(UserWarning):
    """Inline runs without a run_id: a file written by a HeadLab before exports carried them. The
    id is the hash of the run's resolved configuration, which only HeadLab resolves; the message
    names the command that adds them."""


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


# The limits headlab-cli reads with (core/session/RunFiles.h, core/config/Yaml.cpp).
MAX_FILE_BYTES = 256 << 20  # a session or run file, and what a .gz export may expand to
MAX_DEPTH = 64              # mappings and lists nested deeper than this are refused


def read_safetensors_file(path, what, limit):
    """The bytes of a safetensors file read as read_regular_file reads a file, but its header first:
    the tensors it declares must end exactly where the file does before any of them is read, so a
    sparse or padded file (8 GB on the size, 240 KB on disk, a small header) is refused at once
    instead of read whole. HeadLabError names the file and the fault."""

    def header_fits(fd, size):
        if size < 8:
            return  # safetensors refuses it, with its own words
        length = int.from_bytes(os.pread(fd, 8, 0), "little")
        if length > min(size - 8, 100 << 20):
            raise HeadLabError(f"{path}: is not usable as {what}: its header declares {length} "
                               f"bytes, more than the file holds ({size})")
        try:
            header = json.loads(os.pread(fd, length, 8))
            ends = [entry["data_offsets"][1] for key, entry in header.items() if key != "__metadata__"]
            if not all(isinstance(e, int) and not isinstance(e, bool) and e >= 0 for e in ends):
                raise ValueError("an offset is not a count of bytes")
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError) as e:
            raise HeadLabError(f"{path}: is not usable as {what}: its header is not a "
                               f"safetensors header ({e})") from None
        declared = max(ends, default=0)
        if 8 + length + declared != size:
            raise HeadLabError(f"{path}: is not usable as {what}: its header declares "
                               f"{declared} bytes of tensors, the file holds {size - 8 - length}")

    return read_regular_file(path, what, limit, before_reading=header_fits)


def read_regular_file(path, what, limit, before_reading=None):
    """The bytes of `path`, a regular file of at most `limit` bytes, as headlab-cli reads files
    (readFileLimited): a FIFO never blocks, a device (/dev/zero) or folder is refused, and so is a
    file whose declared size is over the limit, before any of it is read. `before_reading(fd,
    size)`, where given, may refuse the file (HeadLabError) from what it reads there first."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise HeadLabError(f"{path}: cannot open {what}: {e.strerror or e}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise HeadLabError(f"{path}: is a directory, not {what}")
        if not stat.S_ISREG(info.st_mode):
            raise HeadLabError(f"{path}: is not a regular file (a device, FIFO or socket); expected {what}")
        if info.st_size > limit:
            raise HeadLabError(f"{path}: is {info.st_size >> 20} MiB; files over {limit >> 20} MiB are refused "
                               "(a HeadLab limit)")
        if before_reading is not None:
            before_reading(fd, info.st_size)
        chunks, left = [], info.st_size
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 24))
            if not chunk:
                break  # shrank while reading
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError as e:
        raise HeadLabError(f"{path}: cannot read {what}: {e.strerror or e}") from None
    finally:
        os.close(fd)


def _gunzip(path, data, limit):
    """A .gz export's text, refused once it expands past `limit` (a gzip bomb is read no further)."""
    out, size = [], 0
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                size += len(chunk)
                if size > limit:
                    raise HeadLabError(f"{path}: expands to more than {limit >> 20} MiB; files over "
                                       f"{limit >> 20} MiB are refused (a HeadLab limit)")
                out.append(chunk)
    except (OSError, EOFError, zlib.error) as e:
        raise HeadLabError(f"{path}: is not a readable gzip file: {e}") from None
    return b"".join(out)


_SESSION_ELEMENT = re.compile(
    rb'<script type="application/x-headlab-session" id="headlab-session"([^>]*)>([^<]*)</script>')


def _session_in_report(path, page):
    """The session a report carries (headlab-cli report; core/session/HtmlEmbed.h): the bytes of
    its file, gzip-compressed (data-encoding="gzip") or not, then base64."""
    found = _SESSION_ELEMENT.search(page)
    if not found:
        raise HeadLabError(f"{path}: is a web page without a HeadLab session in it (a report written "
                           "by headlab-cli report or File > Export report carries one)")
    attributes = dict(re.findall(rb'\s([a-z-]+)="([^"]*)"', found.group(1)))
    size, encoding = attributes.get(b"data-bytes", b""), attributes.get(b"data-encoding", b"")
    try:
        data = base64.b64decode(found.group(2), validate=True)
    except ValueError:
        data = None
    if data is not None and encoding == b"gzip":
        data = _gunzip(path, data, MAX_FILE_BYTES)
    if data is None or encoding not in (b"gzip", b"identity") or not size.isdigit() or len(data) != int(size):
        raise HeadLabError(f"{path}: holds a HeadLab session that is damaged (it does not decode to the "
                           f"{size.decode(errors='replace')} bytes it says)")
    return data


def is_report_path(path) -> bool:
    return str(path).lower().endswith((".html", ".htm"))


def _read_text(path, what):
    if is_report_path(path):  # a report: the session inside it
        data = _session_in_report(path, read_regular_file(path, what, 2 * MAX_FILE_BYTES))
    else:
        data = read_regular_file(path, what, MAX_FILE_BYTES)
    if str(path).endswith(".gz"):  # an export kept compressed (docs/data/...)
        data = _gunzip(path, data, MAX_FILE_BYTES)
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
                try:
                    name = json.loads(name)
                except ValueError:  # a YAML escape JSON has not (\x41, \e): the YAML parser's
                    continue
            try:
                steps = _numbers(m.group(3), np.int64)
                values = _numbers(m.group(4), np.float64)
            except (ValueError, OverflowError):
                continue  # left to the YAML parser and the record's checks, which say where
            if len(steps) != len(values):
                raise HeadLabError(
                    f"{path}:{i + 1}:{len(m.group(1)) + 1}: curves.{name}: {len(steps)} steps but {len(values)} values")
            curves.append((name, steps, values))
            lines[i] = f"{m.group(1)}{m.group(2)}: null"
        text = "\n".join(lines)
    try:
        return _load_yaml(text)
    except _StructureError as e:
        mark, what = e.args
        raise _located(path, mark, "", what) from None
    except RecursionError:
        raise HeadLabError(f"{path}: the document nests too deeply to read") from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        if mark is not None and mark.index >= len(text) and mark.line > 0 and not text.endswith("\n"):
            # PyYAML puts the end of a file without a final line break on a line of its own;
            # yaml-cpp (headlab-cli) on the last line: say the same place.
            mark = yaml.Mark(mark.name, mark.index, mark.line - 1, 0, None, None)
        raise _located(path, mark, "", f"malformed YAML: {e.problem or e.context}") from None
    except yaml.YAMLError as e:
        raise HeadLabError(f"{path}: malformed YAML: {e}") from None


def _mark_of(path, text, keys, of_key=False):
    """The position of the node at `keys` (a path of mapping keys and list indices) in `text`;
    with `of_key`, of the last key itself (where headlab-cli puts an unknown key's error)."""
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()  # the composed graph only: no alias is expanded
        finally:
            loader.dispose()
    except yaml.YAMLError:
        return None
    mark = node.start_mark if node is not None else None
    for i, key in enumerate(keys):
        if isinstance(node, yaml.MappingNode):
            found = None
            for k, v in node.value:
                if k.value == str(key):
                    found = k if of_key and i == len(keys) - 1 else v
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
    run_id: str = ""  # 16 hex digits of the config's hash: the run file's name, or an export's run_id
    origin: dict = field(default_factory=dict)  # started_at, finished_at, host, commit, command

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


def _edit_distance(a, b):
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (ca != cb))
    return row[len(b)]


def _nearest_key(key, allowed):
    """The allowed key nearest to `key`, as headlab-cli suggests it (yaml::nearestKey), or ""."""
    best, distance = "", None
    for candidate in allowed:
        d = _edit_distance(key.lower(), candidate.lower())
        if distance is None or d < distance:
            best, distance = candidate, d
    return best if distance is not None and distance <= max(2, len(key) // 3) else ""


def check_keys(mapping, row, path, text, keys):
    """Refuses a key of `mapping` that record kind `row` (schema.json) does not hold, with
    headlab-cli's words: "unknown key 'lerned_rule'; did you mean 'learned_rule'?"."""
    _expect(isinstance(mapping, dict), path, text, keys,
            f"expected a mapping (key: value lines), got {_type_name(mapping)}")
    allowed = schema()[row]
    for key in mapping:
        name = key if isinstance(key, str) else str(key)
        if name in allowed:
            continue
        near = _nearest_key(name, allowed)
        what = f"unknown key '{name}'" + (f"; did you mean '{near}'?" if near
                                          else "; expected one of " + ", ".join(allowed))
        raise _located(path, _mark_of(path, text, tuple(keys) + (name,), of_key=True),
                       _key_text(tuple(keys) + (name,)), what)


def _is_text(value):
    """A scalar headlab-cli reads as text (readString): not a list or a mapping."""
    return not isinstance(value, (list, dict))


def _curve_from_yaml(path, text, keys, value):
    _expect(isinstance(value, dict) and "steps" in value and "values" in value, path, text, keys,
            "expected {steps: [...], values: [...]}")
    check_keys(value, "curve", path, text, keys)
    steps, values = value["steps"], value["values"]
    _expect(isinstance(steps, list), path, text, keys + ("steps",), "expected a list of steps")
    _expect(isinstance(values, list), path, text, keys + ("values",), "expected a list of values")
    _expect(len(steps) == len(values), path, text, keys + ("values",),
            f"{len(values)} values for {len(steps)} steps")
    for i, step in enumerate(steps):
        _expect(_is_int(step) and -(1 << 63) <= step < (1 << 63), path, text, keys + ("steps", i),
                f"expected an integer, got {_type_name(step)}")
    for i, v in enumerate(values):
        _expect(_is_number(v) or (isinstance(v, str) and v.lower() in ("nan", "inf", "-inf")),
                path, text, keys + ("values", i), f"expected a number, got {_type_name(v)}")
    return np.asarray(steps, dtype=np.int64), np.asarray([float(v) for v in values], dtype=np.float64)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _type_name(value):
    return "a list" if isinstance(value, list) else "a mapping" if isinstance(value, dict) else f"'{value}'"


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def check_config(config, path, text, keys):
    """The fields this package reads from a run configuration, checked as core/schema/RunConfigFields
    checks them (the same words), so that a bad value is named where it is rather than failing
    later in a table."""
    def where(*more):
        return tuple(keys) + more

    def integer(value, minimum, *at):
        _expect(_is_int(value), path, text, where(*at), f"expected an integer, got {_type_name(value)}")
        _expect(value >= minimum, path, text, where(*at), f"must be at least {minimum}, got {value}")

    _expect(isinstance(config, dict), path, text, where(), "expected a mapping (a run configuration)")
    check_keys(config, "run_config", path, text, where())
    task = config.get("task") or {}
    _expect(isinstance(task, dict), path, text, where("task"), "expected a mapping")
    check_keys(task, "task", path, text, where("task"))
    model = config.get("model") or {}
    _expect(isinstance(model, dict), path, text, where("model"), "expected a mapping")
    check_keys(model, "model", path, text, where("model"))
    stabilizers = config.get("stabilizers")
    if stabilizers is not None:
        check_keys(stabilizers, "stabilizers", path, text, where("stabilizers"))
    if "d_model" in model:
        integer(model["d_model"], 1, "model", "d_model")
    if "layers" in model:
        integer(model["layers"], 1, "model", "layers")
    heads = model.get("heads")
    if isinstance(heads, list):
        _expect(len(heads) > 0, path, text, where("model", "heads"), "expected at least one layer")
        for i, h in enumerate(heads):
            integer(h, 1, "model", "heads", i)
    elif "heads" in model:
        integer(heads, 1, "model", "heads")
    head_dim = model.get("head_dim")
    if "head_dim" in model and head_dim != "auto":
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
    for i, phase in enumerate(config["phases"]):
        check_keys(phase, "phase", path, text, where("phases", i))
        for part in ("optimizer", "schedule"):
            if phase.get(part) is not None:
                check_keys(phase[part], part, path, text, where("phases", i, part))
    if config.get("qk_rule") is not None:
        check_keys(config["qk_rule"], "qk_rule", path, text, where("qk_rule"))


def _is_checkpoint_file_name(name):
    """A name inside the run's checkpoint folder, as headlab-cli accepts it (no folder, no dot
    first): `../x.safetensors` or `/etc/passwd` never leave the folder."""
    return isinstance(name, str) and name != "" and "/" not in name and "\\" not in name \
        and not name.startswith(".") and "\0" not in name


def run_from_record(doc, path, text, lifted, base_keys=()):
    """A Run from one record (a mapping), located errors under `base_keys`."""
    k = tuple(base_keys)
    _expect(isinstance(doc, dict), path, text, k, "expected a mapping (a run record)")
    check_keys(doc, "run_record" if k else "run_file", path, text, k)
    _expect("config" in doc and isinstance(doc["config"], dict), path, text, k + ("config",),
            "missing: the run's resolved configuration")
    check_config(doc["config"], path, text, k + ("config",))
    status = doc.get("status", "queued")
    _expect(isinstance(status, str) and status.lower() in _STATUSES, path, text, k + ("status",),
            f"expected one of {', '.join(_STATUSES)}, got '{status}'")
    labels = doc.get("labels") or {}
    _expect(isinstance(labels, dict), path, text, k + ("labels",), "expected a mapping of axis to value")
    for name, value in labels.items():
        _expect(_is_text(value), path, text, k + ("labels", name), f"expected a value, got {_type_name(value)}")
    for key in ("steps_done", "diverged_at_step"):
        value = doc.get(key, 0)
        _expect(_is_int(value) and (-1 if key == "diverged_at_step" else 0) <= value < (1 << 63),
                path, text, k + (key,), f"expected an integer, got {_type_name(value)}")
    for key in ("wall_seconds",):
        _expect(_is_number(doc.get(key, 0.0)) or doc.get(key) is None, path, text, k + (key,),
                f"expected a number, got {_type_name(doc.get(key))}")
    for key in ("device", "message"):
        _expect(_is_text(doc.get(key)), path, text, k + (key,), f"expected text, got {_type_name(doc.get(key))}")
    phase_starts = doc.get("phase_starts") or []
    _expect(isinstance(phase_starts, list) and all(_is_int(x) and 0 <= x < (1 << 63) for x in phase_starts),
            path, text, k + ("phase_starts",), "expected a list of steps")
    samples = doc.get("samples") or []
    _expect(isinstance(samples, list) and all(_is_text(x) for x in samples), path, text, k + ("samples",),
            "expected a list of texts")
    provenance = doc.get("provenance") or {}
    _expect(isinstance(provenance, dict) and all(_is_text(v) for v in provenance.values()), path, text,
            k + ("provenance",), "expected a mapping of key to text")
    origin = doc.get("origin") or {}
    _expect(isinstance(origin, dict), path, text, k + ("origin",),
            "expected a mapping (started_at, finished_at, host, commit, command)")
    check_keys(origin, "origin_record", path, text, k + ("origin",))
    for name, value in origin.items():
        _expect(_is_text(value), path, text, k + ("origin", name), f"expected text, got {_type_name(value)}")
    run_id = doc.get("run_id") or ""
    _expect(isinstance(run_id, str) and len(run_id) in (0, 16)
            and all(ch in "0123456789abcdef" for ch in run_id), path, text, k + ("run_id",),
            "expected 16 hex digits (the run's configuration hash)")
    checkpoints = doc.get("checkpoints") or []
    _expect(isinstance(checkpoints, list), path, text, k + ("checkpoints",), "expected a list of checkpoints")
    for i, c in enumerate(checkpoints):
        at = k + ("checkpoints", i)
        check_keys(c, "checkpoint_record", path, text, at)
        _expect(_is_int(c.get("step")) and 0 <= c["step"] < (1 << 63), path, text, at + ("step",),
                f"expected an integer, at least 0, got {_type_name(c.get('step'))}")
        _expect(_is_checkpoint_file_name(c.get("file")), path, text, at + ("file",),
                f"'{c.get('file')}' is not a checkpoint file name (a name inside the run's checkpoint folder)")
        _expect(_is_text(c.get("reason")), path, text, at + ("reason",), "expected text")
        _expect(isinstance(c.get("keep", False), bool), path, text, at + ("keep",), "expected true or false")
    curves = {}
    head_file = doc.get("head_curves")
    problem = ""
    if head_file is not None:
        _expect(isinstance(head_file, dict), path, text, k + ("head_curves",),
                "expected {file: NAME.heads-HASH.safetensors, curves: COUNT}")
        check_keys(head_file, "head_curves_record", path, text, k + ("head_curves",))
        _expect(isinstance(head_file.get("file"), str) and _is_int(head_file.get("curves"))
                and head_file["curves"] >= 0, path, text, k + ("head_curves",),
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
    metrics = doc.get("metrics") or {}
    _expect(isinstance(metrics, dict), path, text, k + ("metrics",), "expected a mapping of name to number")
    for name, value in metrics.items():
        _expect(_is_number(value) or (isinstance(value, str) and value.lower() in ("nan", "inf", "-inf")),
                path, text, k + ("metrics", name), f"expected a number, got '{value}'")
    return Run(labels={str(a): str(v) for a, v in labels.items()},
               status=status.lower(),
               config=doc["config"],
               steps_done=int(doc.get("steps_done", 0)),
               diverged_at_step=int(doc.get("diverged_at_step", -1)),
               wall_seconds=float(doc.get("wall_seconds", 0.0) or 0.0),
               device=str(doc.get("device", "") or ""),
               message=str(doc.get("message", "") or ""),
               phase_starts=[int(x) for x in phase_starts],
               metrics={str(a): float(v) for a, v in metrics.items()},
               curves=curves,
               provenance={str(a): str(v) for a, v in provenance.items()},
               checkpoints=list(checkpoints),
               samples=[str(x) for x in samples],
               load_problem=problem,
               run_id=run_id,
               origin={str(a): _origin_text(v) for a, v in origin.items()})


def _origin_text(value):
    """An origin field as HeadLab writes it: PyYAML reads the times (2026-12-02T03:42:17Z) as
    datetimes, given back here in that text."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(value)


def head_curves_file_limit(expected):
    """The largest per-head curves file read for a run file that declares `expected` curves:
    64 MiB and 1 MiB a curve, as headlab-cli (RunFiles.h, headCurvesFileLimit)."""
    return (64 << 20) + min(max(int(expected), 0), 1 << 20) * (1 << 20)


def safetensors_metadata(data):
    """A safetensors file's metadata (a mapping; {} for none) and where its tensor data starts, from
    its bytes; ValueError when its header does not fit in the file or is not a JSON object. The
    per-head curves reader and headlab.checkpoint read headers with it; safetensors itself checks
    the tensors."""
    if len(data) < 8:
        raise ValueError("truncated: shorter than a safetensors header")
    header_length = int.from_bytes(data[:8], "little")
    if header_length > len(data) - 8:
        raise ValueError("truncated: its header is longer than the file")
    header = json.loads(data[8:8 + header_length])
    if not isinstance(header, dict):
        raise ValueError("its header is not a JSON object")
    return header.get("__metadata__") or {}, 8 + header_length


def read_head_curves(path, expected):
    """The per-head curves a stored run keeps beside its run file (docs/SESSION_FORMAT.md):
    name -> (steps, values), exact (float32 where HeadLab found every value exact in float32)."""
    from safetensors import SafetensorError
    from safetensors.numpy import load

    def bad(what):
        return HeadLabError(f"{path}: is not a valid per-head curves file: {what}")

    data = read_safetensors_file(path, "a per-head curves file", head_curves_file_limit(expected))
    try:
        tensors = load(data)
        meta, _ = safetensors_metadata(data)
    except (SafetensorError, ValueError, TypeError, KeyError, OverflowError, MemoryError,
            UnicodeDecodeError) as e:
        raise bad(str(e) or type(e).__name__) from None
    if not isinstance(meta, dict):
        raise bad("its metadata is not a mapping")
    if meta.get("format") != "headlab-head-curves":
        raise bad(f"its format is '{meta.get('format')}'")
    if meta.get("format_version") != "1":
        raise bad(f"format version {meta.get('format_version')} is newer than this package reads")
    groups = meta.get("groups", "")
    if not (isinstance(groups, str) and groups.isdigit() and 0 < len(groups) <= 6):
        raise bad("'groups' is not a count")
    curves = {}
    for g in range(int(groups)):
        steps, values = tensors.get(f"steps.{g}"), tensors.get(f"values.{g}")
        if steps is None or values is None:
            raise bad(f"group {g} is incomplete")
        names_text = meta.get(f"names.{g}")
        if not isinstance(names_text, str):
            raise bad(f"its metadata has no 'names.{g}'")
        names = names_text.split("\n")
        if steps.dtype != np.int64 or steps.ndim != 1 or values.ndim != 2 \
                or values.dtype not in (np.float32, np.float64) \
                or values.shape != (len(names), len(steps)):
            raise bad(f"group {g} has tensors of other shapes than {len(names)} curves of its steps")
        steps = steps.astype(np.int64)
        for name, row in zip(names, values):  # float32 kept as float32: exact, half the memory
            if not name.startswith("head.") or name in curves:
                raise bad(f"'{name}' is not a per-head curve name, or comes twice")
            curves[name] = (steps, row)
    if len(curves) != expected:
        raise bad(f"it holds {len(curves)} curves, the run file says {expected}")
    return curves


def read_run_file(path):
    text = _read_text(path, "a run file")
    lifted = deque()
    doc = _parse(path, text, lifted)
    try:
        run = run_from_record(doc, path, text, lifted)
    except HeadLabError:
        raise
    except (ValueError, TypeError, AttributeError, OverflowError, KeyError, IndexError,
            RecursionError) as e:  # a value no check above foresaw: still this file's fault alone
        raise HeadLabError(f"{path}: cannot be read as a run file: {type(e).__name__}: {e}") from None
    run.file = path
    stem = os.path.basename(path)[: -len(".yaml")]
    run.run_id = run.run_id or stem  # the file's name is the run's identity
    return run


def _text_keys(value):
    """`value` with every mapping's keys as text, as headlab-cli reads keys (`5:` is the key "5")."""
    if isinstance(value, dict):
        return {str(k): _text_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_text_keys(v) for v in value]
    return value


def _canonical(config):
    # Keys of mixed types (`5:` beside `lr:`) cannot be sorted as they are: compared as text.
    return json.dumps(_text_keys(config), sort_keys=True, default=str)


def _better(candidate, current):
    if candidate.finished != current.finished:
        return candidate.finished
    return candidate.steps_done >= current.steps_done


# A live file written on another host that was not rewritten for this long is a trainer that is
# gone (core/lab/SweepSession.h, kLiveStaleSeconds).
LIVE_STALE_SECONDS = 60


def read_live_runs(results_dir):
    """The runs in training now, as their trainers list them in RESULTS/live/HOST-PID.yaml
    (core/session/SessionStore.h, writeLiveRuns): a list of Run (status running, steps_done the
    step it is at, its newest checkpoint, its origin, run_id), and the warnings of files left out
    (a trainer that is gone, a file that cannot be read), by headlab-cli's rule (addLiveRuns)."""
    import socket
    import time
    runs, problems = [], []
    folder = os.path.join(results_dir, "live") if results_dir else ""
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".yaml") and not n.startswith("."))
    except OSError:
        return runs, problems
    here = socket.gethostname()
    for name in names:
        path = os.path.join(folder, name)
        try:
            text = _read_text(path, "a live file")
            doc = _parse(path, text, None)
            check_keys(doc, "live_file", path, text, ())
            host, pid = str(doc.get("host") or ""), doc.get("pid") or 0
            updated = _origin_text(doc.get("updated_at") or "")
            if host == here and _is_int(pid) and pid > 0:
                try:
                    os.kill(pid, 0)
                    alive = True
                except PermissionError:
                    alive = True
                except OSError:
                    alive = False
                why = "that process is gone"
            else:
                try:
                    stamp = datetime.datetime.strptime(updated, "%Y-%m-%dT%H:%M:%SZ").replace(
                        tzinfo=datetime.timezone.utc).timestamp()
                except ValueError:
                    stamp = 0.0
                alive = time.time() - stamp <= LIVE_STALE_SECONDS
                why = f"it has not said so for over {LIVE_STALE_SECONDS} s"
            if not alive:
                problems.append(f"the runs {doc.get('trainer')} listed as training at {updated} are left out: {why}")
                continue
            entries = doc.get("runs") or []
            _expect(isinstance(entries, list), path, text, ("runs",), "expected a list of runs")
            for i, entry in enumerate(entries):
                runs.append(run_from_record(entry, path, text, deque(), ("runs", i)))
        except HeadLabError as e:
            problems.append(str(e))
    return runs, problems


@dataclass
class StoredSession:
    path: str
    doc: dict  # the session file's mapping (definition, index, view)
    runs: list  # Run, in the session's order
    results_dir: str  # "" when the session keeps no run files
    skipped_files: list  # the warnings of run files left out
    unread: dict = field(default_factory=dict)  # UNREAD_BLOCKS' text, by key (unparsed)

    def block(self, key):
        """The top-level block `key` of UNREAD_BLOCKS, parsed now (None when the file has none)."""
        if key not in self.unread:
            return self.doc.get(key)
        doc = _parse(self.path, self.unread[key])
        return doc.get(key) if isinstance(doc, dict) else None


def read_session(path):
    path = os.fspath(path)
    text, unread = without_unread_blocks(_read_text(path, "a session file"))
    lifted = deque()
    # Parsed once: an export's (or a schema 1 session's) one-line curves are lifted out as numbers
    # on the way, an index has none to lift.
    doc = _parse(path, text, lifted)
    _expect(isinstance(doc, dict), path, text, (), "expected a mapping (a HeadLab session)")
    check_keys(doc, "session", path, text, ())
    version = doc.get("schema_version")
    _expect(version is not None, path, text, ("schema_version",), "missing: the session format's version")
    _expect(_is_int(version), path, text, ("schema_version",), f"expected an integer, got '{version}'")
    _expect(1 <= version <= SCHEMA_VERSION, path, text, ("schema_version",),
            f"schema version {version} is newer than this package reads ({SCHEMA_VERSION}); update headlab"
            if version > SCHEMA_VERSION else f"expected 1 or {SCHEMA_VERSION}")
    _expect("experiment" in doc, path, text, ("experiment",), "missing: the base run configuration")
    check_config(doc["experiment"], path, text, ("experiment",))
    for key in ("name", "description", "learned_rule"):
        _expect(_is_text(doc.get(key)), path, text, (key,), f"expected text, got {_type_name(doc.get(key))}")
    for key, what in (("sweep", "a mapping of axis to values"), ("search", "a mapping (the boundary search)"),
                      ("view", "a mapping of view settings")):
        _expect(doc.get(key) is None or isinstance(doc.get(key), dict), path, text, (key,),
                f"expected {what}, got {_type_name(doc.get(key))}")
    combinations = (doc.get("sweep") or {}).get("combinations")
    if combinations is not None:
        _expect(isinstance(combinations, list), path, text, ("sweep", "combinations"),
                f"expected a list, got {_type_name(combinations)}")
        for i, combination in enumerate(combinations):
            _expect(isinstance(combination, dict), path, text, ("sweep", "combinations", i),
                    f"expected a mapping (key: value lines), got {_type_name(combination)}")
    policy = doc.get("checkpoints")
    if isinstance(policy, dict):
        check_keys(policy, "checkpoints_policy", path, text, ("checkpoints",))
    for i, skipped in enumerate(doc.get("skipped") or []):
        check_keys(skipped, "skipped_record", path, text, ("skipped", i))

    directory = os.path.dirname(os.path.abspath(path))
    results = doc.get("results")
    if results is not None:
        _expect(isinstance(results, str) and results != "" and not results.startswith("/")
                and ".." not in results and "\0" not in results, path, text, ("results",),
                "expected the name of the results folder beside the session file, e.g. session.results")
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
    for i, entry in enumerate(entries):
        _expect(isinstance(entry, dict), path, text, ("runs", i), "expected a mapping")
        if "file" in entry:
            check_keys(entry, "index_entry", path, text, ("runs", i))
            _expect(isinstance(entry["file"], str), path, text, ("runs", i, "file"),
                    "expected runs/NAME.yaml inside the results folder")
            name = entry["file"]
            _expect(results_dir != "", path, text, ("runs", i, "file"),
                    "a run stored in a file needs the session's `results:` folder")
            _expect(name.startswith("runs/") and name.endswith(".yaml") and "/" not in name[5:]
                    and ".." not in name and "\0" not in name,
                    path, text, ("runs", i, "file"), "expected runs/NAME.yaml inside the results folder")
            files.append(name[5:])
        else:
            inline.append(run_from_record(entry, path, text, lifted, ("runs", i)))
    unnamed = sum(1 for run in inline if not run.run_id)
    if unnamed:
        warnings.warn(f"{path}: {unnamed} of {len(inline)} runs stored in the file have no run_id (written by "
                      f"an earlier HeadLab); `headlab-cli export-yaml {path} -o {path}` adds them. Until "
                      f"then their run_id is empty, and the bridges key them by their place in the file",
                      RunIdsMissing, stacklevel=3)

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
    return StoredSession(path, doc, runs, results_dir, skipped, unread)

