"""tests/fuzz/fuzz_python.py — the Python package's readers under atheris (libFuzzer for Python).

    .venv/bin/python tests/fuzz/fuzz_python.py TARGET [libFuzzer options] [CORPUS ...]

TARGET is one of:
    session      the bytes as a session file: headlab.open, its runs table, each run's checkpoints
    run_file     the bytes as the one run file of a stored session (skipped or read; when read,
                 the tables too)
    head_curves  the bytes as a per-head curves file (safetensors) a run file names
    search_report the bytes as the search_report block of a search session (each line indented
                 under the key): Session.search(), its tables and laws
    checkpoint   the bytes as a checkpoint (headlab.checkpoint.load), when torch is installed
    checkpoint_unverified  the same without the checksum (load(verify=False)), so that the
                 mutated tensor data reaches the reader past the check that refuses it first

A finding is any exception other than HeadLabError out of a reader, or a RunFileSkipped missing
for a file that was not read. Each reader runs on files in a private temporary folder, as it does
on a user's. scripts/fuzz.sh runs each target briefly in CI over tests/fuzz/corpus-python/TARGET
and the regression inputs in tests/fuzz/regressions-python/TARGET (the targets are the folders of
tests/fuzz/corpus-python, each a function of TARGETS below); a longer run is one command:
    .venv/bin/python tests/fuzz/fuzz_python.py session -runs=200000 tests/fuzz/corpus-python/session
"""
import os
import sys
import tempfile
import warnings

import atheris

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(SOURCE, "python"))

# Only HeadLab's package and PyYAML (whose parser's branches steer the inputs towards new YAML)
# are instrumented: numpy and pandas are imported first, uninstrumented. Instrumenting them cost
# ~40 s a process and gave the fuzzer coverage of libraries, not of HeadLab's readers.
import numpy  # noqa: E402,F401
import pandas  # noqa: E402,F401

with atheris.instrument_imports():
    import headlab
    from headlab import _store

FOLDER = tempfile.mkdtemp(prefix="headlab-fuzz-")
RESULTS = os.path.join(FOLDER, "s.results", "runs")
os.makedirs(RESULTS)

# A session that names one stored run, for the run-file and head-curves targets.
SESSION = """schema_version: 2
name: fuzz
experiment:
  task: {kind: addition}
  model: {d_model: 8, heads: 1, layers: 1}
  phases: [{name: answer, objective: answer, steps: 10, batch_size: 4}]
results: s.results
runs:
  - {file: runs/0000000000000001.yaml, labels: {}, status: done}
"""

# A search session without runs, for the search-report target: the report's block follows it.
SEARCH = b"""schema_version: 2
name: fuzz-search
experiment:
  task: {kind: addition, train_pairs: 64, test_pairs: 8}
  model: {d_model: 8, layers: 1}
  phases: [{name: answer, objective: answer, steps: 5, batch_size: 4}]
sweep:
  heads: [1, 2]
search:
  axis: lr
  range: [3.0e-05, 0.03]
  budget: 9
runs: []
search_report:
"""


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def quietly(read, *args):
    """`read(*args)`, where a located HeadLabError (and RunFileSkipped warnings) is the answer."""
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        try:
            return read(*args)
        except headlab.HeadLabError:
            return None


def open_session(path):
    """Everything a notebook does first: the session, its runs table, each run's checkpoints,
    the search's report."""
    s = headlab.open(path)
    s.runs()
    for run in range(len(s)):
        s.checkpoints(run)
    s.search()
    return s


def fuzz_session(data):
    write(os.path.join(FOLDER, "s.yaml"), data)
    quietly(open_session, os.path.join(FOLDER, "s.yaml"))


def fuzz_run_file(data):
    # The reader the tables are built from (its records are checked before any table is).
    write(os.path.join(FOLDER, "s.yaml"), SESSION.encode())
    write(os.path.join(RESULTS, "0000000000000001.yaml"), data)
    stored = quietly(_store.read_session, os.path.join(FOLDER, "s.yaml"))
    if stored is not None and stored.runs:
        quietly(open_session, os.path.join(FOLDER, "s.yaml"))


def fuzz_head_curves(data):
    write(os.path.join(RESULTS, "0000000000000001.heads-00.safetensors"), data)
    quietly(_store.read_head_curves, os.path.join(RESULTS, "0000000000000001.heads-00.safetensors"), 2)


def fuzz_search_report(data):
    write(os.path.join(FOLDER, "search.yaml"), SEARCH + b"  " + data.replace(b"\n", b"\n  "))
    quietly(lambda path: headlab.open(path).search(), os.path.join(FOLDER, "search.yaml"))


def fuzz_checkpoint(data, verify=True):
    from headlab import checkpoint
    path = os.path.join(FOLDER, "step-000000010.safetensors")
    write(path, data)
    try:
        checkpoint.Model(checkpoint.load(path, verify=verify))
    except headlab.HeadLabError:
        pass
    except (KeyError, ValueError, TypeError, IndexError, RuntimeError):
        pass  # Model() of a file that loads but does not make a model: Session.model says so


def fuzz_checkpoint_unverified(data):
    fuzz_checkpoint(data, verify=False)


TARGETS = {"session": fuzz_session, "run_file": fuzz_run_file, "head_curves": fuzz_head_curves,
           "search_report": fuzz_search_report, "checkpoint": fuzz_checkpoint,
           "checkpoint_unverified": fuzz_checkpoint_unverified}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(TARGETS)}}} [libFuzzer options] [CORPUS ...]")
    target = TARGETS[sys.argv[1]]
    if sys.argv[1].startswith("checkpoint"):
        import torch  # noqa: F401  (imported first, so not instrumented: ~50 s, and not ours)
        with atheris.instrument_imports():
            from headlab import checkpoint  # noqa: F401
    atheris.Setup([sys.argv[0]] + sys.argv[2:], target)
    atheris.Fuzz()
