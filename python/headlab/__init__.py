"""headlab — HeadLab's sessions, runs, curves, per-head statistics and checkpoints in pandas.

    import headlab
    s = headlab.open("grid.yaml")                 # or open(["a.yaml", "b.yaml"]): one table
    s.runs()          # one row per run: labels, configuration, status, learned, metrics, provenance
    s.curves()        # session, run, step, phase, metric, value
    s.head_stats()    # session, run, step, phase, layer, head_index, statistic, value
    s.checkpoints(3)  # step, reason, path of run 3's checkpoints
    s.model(3)        # run 3's newest checkpoint as a PyTorch module (needs torch, safetensors)
    s.search()        # a boundary search's crossings, intervals and law, as `headlab-cli summary`
    s.runs(filter="heads=12 best:10", values=["min(test_loss)"])   # the run filter, run values

It reads the files HeadLab writes (docs/SESSION_FORMAT.md) directly, never through the C++
binaries, and never takes a lock: a session that shards are still training reads as far as it has
got. The one thing it writes is a note and tags (Session.annotate), refused while HeadLab trains.
docs/NOTEBOOKS.md has a short analysis.
"""
import os

from ._filter import STATISTICS, RunFilterError
from ._store import HeadLabError, RunFileSkipped, RunIdsMissing
from .search import Law, SearchReport, SearchReportStale
from .session import LEARNED_RULES, TASKS, HeadStats, Session, SessionChanged, Sessions, learned, wilson

__version__ = "0.1.0"

# `open` is called as headlab.open: `from headlab import *` leaves the built-in open alone.
__all__ = ["Session", "Sessions", "SessionChanged", "HeadStats", "SearchReport", "Law", "SearchReportStale",
           "HeadLabError", "RunFileSkipped", "RunIdsMissing", "RunFilterError", "STATISTICS", "TASKS", "LEARNED_RULES", "learned", "wilson", "__version__"]


def open(path: "str | os.PathLike | list | tuple") -> "Session | Sessions":  # noqa: A001 — the one entry point
    """A session file (Session), or several read as one (Sessions) from a list of paths."""
    if isinstance(path, (list, tuple)):
        return Sessions(Session(p) for p in path)
    return Session(path)
