"""export.py — a HeadLab session in the tools users already know: TensorBoard, MLflow, Optuna.

    import headlab, headlab.export
    s = headlab.open("grid.yaml")
    headlab.export.tensorboard(s, "tb/")              # tensorboard --logdir tb/  (HParams view too)
    headlab.export.mlflow(s, "sqlite:///mlflow.db")   # mlflow ui --backend-store-uri sqlite:///mlflow.db
    study = headlab.export.optuna_study(s)            # optuna-dashboard, or study.trials_dataframe()

Each bridge is an optional extra (`pip install "./python[tensorboard]"`, `[mlflow]`, `[optuna]`,
or `[bridges]` for all three) imported only when called. Runs are keyed by their stable run_id
(the configuration's hash), so exporting a session again after more runs finished adds the new
ones and repeats none.
"""
from __future__ import annotations

import math
import os
import re
import warnings
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:  # the annotations' names only: the bridges import their packages when called
    import optuna

    from .session import Session, Sessions

# The curves a bridge carries: every curve but the per-head ones (those are head_stats()).
_SCALAR_METRICS = ("final_test_loss", "final_train_loss", "best_epoch_mean")


def _session(session):
    from .session import Session
    return session if isinstance(session, Session) else Session(session)


def _several(session):
    """The sessions of a Sessions (headlab.open([a, b])), else None: each bridge exports them one
    by one."""
    from .session import Sessions
    return list(session.sessions) if isinstance(session, Sessions) else None


def _folder(name):
    """A session's name as one folder's name (two sessions of one name are named by their paths)."""
    return re.sub(r"[^\w.-]+", "_", str(name)).strip("_") or "session"


def _axes(session):
    """The swept axes that tell configurations apart, and the replicate axes (seeds)."""
    axes = [a for a in session.configuration_axes() if a not in session.replicate_axes]
    seeds = [a for a in session.configuration_axes() if a in session.replicate_axes]
    return axes, seeds


def _prepared(session):
    """What every bridge starts from: the Session, its runs(), each run's value on every swept
    axis (replicate axes included) as text, and the configuration and replicate axes."""
    s = _session(session)
    axes, seeds = _axes(s)
    return s, s.runs(), _axis_values(s), axes, seeds


def _run_key(row, i):
    """A run's key in a bridge: its run_id, or for an inline run of an earlier release without one
    (headlab.RunIdsMissing) its place in the file, so that exporting again adds nothing twice."""
    return str(row["run_id"]) or f"run-{i}"


def _missing(bridge, extra, package, error):
    return ImportError(f"headlab.export.{bridge} needs {package}: pip install \"headlab[{extra}]\" ({error})")


def _axis_values(session):
    """Each run's value on every swept axis (replicate axes included), as text."""
    from .session import _axis_text
    from ._store import schema
    defaults = schema().get("axis_defaults", {})
    axes, seeds = _axes(session)
    out = []
    for record in session.run_records():
        out.append({a: record.labels[a] if a in record.labels else _axis_text(a, record.config, defaults)
                    for a in axes + seeds})
    return out


def _number(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _seconds(timestamp):
    return None if pd.isna(timestamp) else timestamp.timestamp()


class TimesNotRecorded(UserWarning):
    """Runs without a recorded start (an earlier release's, or an export that left them out):
    each bridge leaves their times missing where the tool allows it, and says what it shows."""


def _untimed(runs, tool, shown):
    """How many of `runs` have no recorded start; a TimesNotRecorded warning saying what `tool`
    shows for them (`shown`) when any."""
    missing = int(runs["started_at"].isna().sum())
    if missing:
        warnings.warn(f"{missing} of {len(runs)} runs have no recorded start or end time: {tool} {shown}",
                      TimesNotRecorded, stacklevel=3)
    return missing


def _curve_points(record):
    """(name, steps, values) of each non-per-head curve of a run."""
    for name, (steps, values) in record.curves.items():
        if not name.startswith("head."):
            yield name, steps, values


# ------------------------------------------------------------------------------------------------
# TensorBoard


def tensorboard(session: Session | Sessions, logdir: str | os.PathLike, overwrite: bool = False) -> dict:
    """Writes every run's curves as TensorBoard scalars, one folder per run (`logdir/RUN_ID`), and
    the HParams view's table: the swept axes as hyperparameters, final_test_loss and learned as
    its metrics. A folder that already holds events is refused unless `overwrite` (its event
    files are then replaced). Returns {"runs": N, "scalars": M, "without_time": K}: K runs had no
    recorded start, and their events no wall time (NaN; a TimesNotRecorded warning says so).
    Needs the `tensorboard` extra."""
    try:
        from tensorboard.compat.proto.event_pb2 import Event
        from tensorboard.compat.proto.summary_pb2 import Summary
        from tensorboard.plugins.hparams import summary_v2 as hp
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
    except ImportError as e:
        raise _missing("tensorboard", "tensorboard", "TensorBoard", e) from None
    several = _several(session)
    if several is not None:  # each session in its own folder, logdir/SESSION/RUN_ID
        counts = {"runs": 0, "scalars": 0, "without_time": 0}
        for one in several:
            out = tensorboard(one, os.path.join(logdir, _folder(one.name)), overwrite)
            counts = {k: counts[k] + out[k] for k in counts}
        return counts
    s, runs, values, axes, seeds = _prepared(session)
    os.makedirs(logdir, exist_ok=True)

    def clear(folder):
        events = [n for n in os.listdir(folder) if n.startswith("events.out.tfevents.")] \
            if os.path.isdir(folder) else []
        if events and not overwrite:
            raise FileExistsError(f"{folder}: already holds TensorBoard events; pass overwrite=True "
                                  "to replace them, or choose another folder")
        for name in events:
            os.remove(os.path.join(folder, name))

    def write(folder, events):
        writer = EventFileWriter(folder)
        for event in events:
            writer.add_event(event)
        writer.close()

    metrics = [hp.Metric("final_test_loss", display_name="final test loss"),
               hp.Metric("learned", display_name="learned (1 / 0)")]
    hparams = []
    for axis in axes + seeds:
        column = [v[axis] for v in values]
        numbers = [_number(t) for t in column]
        if all(n is not None for n in numbers):
            hparams.append(hp.HParam(axis, hp.RealInterval(min(numbers), max(numbers))))
        else:
            hparams.append(hp.HParam(axis, hp.Discrete(sorted(set(column)))))
    clear(logdir)
    write(logdir, [Event(wall_time=0.0, summary=hp.hparams_config_pb(hparams, metrics))])

    scalars = 0
    untimed = _untimed(runs, "TensorBoard", "gets their events with no wall time (NaN, not 1970); step and "
                       "relative views are as for the others")
    for i, record in enumerate(s.run_records()):
        row = runs.iloc[i]
        folder = os.path.join(logdir, _run_key(row, i))
        os.makedirs(folder, exist_ok=True)
        clear(folder)
        # A run without a recorded start: no wall time (NaN) rather than the epoch.
        start = _seconds(row["started_at"])
        start = math.nan if start is None else start
        # Wall times spread over the run's recorded duration (a step's own time is not logged).
        last = max(int(row["steps_done"]), 1)
        wall = float(row["wall_seconds"] or 0.0)
        events = []
        params = {}
        for axis in axes + seeds:
            number = _number(values[i][axis])
            params[axis] = number if number is not None and isinstance(hparams[(axes + seeds).index(axis)].domain,
                                                                       hp.RealInterval) else values[i][axis]
        events.append(Event(wall_time=start, summary=hp.hparams_pb(
            params, trial_id=_run_key(row, i),
            start_time_secs=None if math.isnan(start) else start)))
        for name, steps, curve in _curve_points(record):
            tag = f"loss/{name}" if name in ("train", "test") else name
            for step, value in zip(steps.tolist(), curve.tolist()):
                events.append(Event(wall_time=start + wall * step / last, step=int(step),
                                    summary=Summary(value=[Summary.Value(tag=tag, simple_value=value)])))
                scalars += 1
        final = {"final_test_loss": record.metrics.get("final_test_loss")}
        if pd.notna(row["learned"]):
            final["learned"] = 1.0 if bool(row["learned"]) else 0.0
        for tag, value in final.items():
            if value is not None:
                events.append(Event(wall_time=start + wall, step=int(row["steps_done"]),
                                    summary=Summary(value=[Summary.Value(tag=tag, simple_value=value)])))
                scalars += 1
        write(folder, events)
    return {"runs": len(runs), "scalars": scalars, "without_time": untimed}


# ------------------------------------------------------------------------------------------------
# MLflow


def mlflow(session: Session | Sessions, tracking_uri: str, experiment: str | None = None) -> dict:
    """Logs every run to MLflow: params (the swept axes and the configuration's key columns),
    every curve as a metric history by step, the final metrics, tags (run_id, configuration,
    status, verdict, host, commit, command, the session) and the start and end times. The
    experiment is named after the session unless `experiment` names one. Runs already logged
    (tag headlab.run_id) are left as they are. Returns {"experiment_id", "logged", "skipped",
    "without_time"}: runs with no recorded start get MLflow's own (it requires one) and the tag
    headlab.times "not recorded", with a TimesNotRecorded warning. Needs the `mlflow` extra."""
    try:
        from mlflow.entities import Metric, Param, RunStatus, RunTag
        from mlflow.tracking import MlflowClient
    except ImportError as e:
        raise _missing("mlflow", "mlflow", "MLflow (mlflow-skinny)", e) from None
    several = _several(session)
    if several is not None:  # each session in its experiment, or all in `experiment`
        results = [mlflow(one, tracking_uri, experiment) for one in several]
        return {"experiment_ids": [r["experiment_id"] for r in results],
                "logged": sum(r["logged"] for r in results),
                "skipped": sum(r["skipped"] for r in results),
                "without_time": sum(r["without_time"] for r in results)}
    s, runs, values, _, _ = _prepared(session)
    client = MlflowClient(tracking_uri=tracking_uri)
    name = experiment or s.name
    found = client.get_experiment_by_name(name)
    experiment_id = found.experiment_id if found else client.create_experiment(name)
    logged = set()
    page = None
    while True:
        batch = client.search_runs([experiment_id], max_results=1000, page_token=page)
        # A run is its session's and its run_id: several sessions may share an experiment.
        logged |= {(r.data.tags.get("headlab.session"), r.data.tags.get("headlab.run_id")) for r in batch}
        page = batch.token
        if not page:
            break
    status_of = {"done": "FINISHED", "diverged": "FAILED", "failed": "FAILED", "stopped": "KILLED"}
    done, skipped = 0, 0
    untimed = _untimed(runs, "MLflow", "requires a start time and gives them the time of this export; their "
                       "tag headlab.times is 'not recorded'")
    for i, record in enumerate(s.run_records()):
        row = runs.iloc[i]
        run_id = _run_key(row, i)
        if (s.name, run_id) in logged:
            skipped += 1
            continue
        start = _seconds(row["started_at"])
        end = _seconds(row["finished_at"])
        start_ms = int(start * 1000) if start is not None else None
        tags = {"headlab.run_id": run_id, "headlab.session": s.name, "headlab.configuration": str(row["configuration"]),
                "headlab.status": str(row["status"]), "headlab.learned": "" if pd.isna(row["learned"]) else str(bool(row["learned"])),
                "headlab.host": str(row["host"]), "headlab.commit": str(row["commit"]),
                "headlab.command": str(row["command"]), "headlab.device": str(row["device"]),
                "headlab.times": "recorded" if start is not None else "not recorded"}
        run = client.create_run(experiment_id, start_time=start_ms, tags=tags, run_name=str(row["configuration"]) or run_id)
        rid = run.info.run_id
        params = dict(values[i])
        for column in ("task", "d_model", "layers", "heads_per_layer", "head_dim_per_layer", "lr", "total_heads"):
            params.setdefault(column, str(row[column]))
        metrics = []
        # MLflow's timestamp of each point: the run's start, MLflow's own where none was recorded.
        stamp = start_ms if start_ms is not None else run.info.start_time
        for name_, steps, curve in _curve_points(record):
            for step, value in zip(steps.tolist(), curve.tolist()):
                if math.isfinite(value):
                    metrics.append(Metric(name_, value, stamp, int(step)))
        for key in _SCALAR_METRICS:
            value = record.metrics.get(key)
            if value is not None and math.isfinite(value):
                metrics.append(Metric(key, value, stamp, int(row["steps_done"])))
        if pd.notna(row["learned"]):
            metrics.append(Metric("learned", 1.0 if bool(row["learned"]) else 0.0, stamp, int(row["steps_done"])))
        client.log_batch(rid, params=[Param(k, str(v)[:6000]) for k, v in params.items()])
        for at in range(0, len(metrics), 1000):  # MLflow takes at most 1,000 metrics a batch
            client.log_batch(rid, metrics=metrics[at:at + 1000])
        status = status_of.get(str(row["status"]), "RUNNING")
        if status != "RUNNING":
            client.set_terminated(rid, status=status, end_time=int(end * 1000) if end is not None else None)
        done += 1
    return {"experiment_id": experiment_id, "logged": done, "skipped": skipped, "without_time": untimed}


# ------------------------------------------------------------------------------------------------
# Optuna


def optuna_study(session: Session | Sessions, study: str | None = None, storage: str | None = None,
                 metric: str = "final_test_loss") -> optuna.study.Study:
    """An Optuna study (minimising `metric`) whose trials are the session's finished runs: params
    are the swept axes (integers and numbers as Optuna's int and float distributions, log-scaled
    where all are positive and span more than a decade; text as categories), the value is the run's `metric`, user attributes carry run_id,
    configuration, seed(s), status and the verdict. Diverged and failed runs are FAIL trials.
    `study`: a name (default: the session's); `storage`: an Optuna storage URL (default: in
    memory). Trials already in a stored study (user attribute run_id) are not added again.
    Returns the study. Needs the `optuna` extra."""
    try:
        import optuna
        from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
        from optuna.trial import TrialState, create_trial
    except ImportError as e:
        raise _missing("optuna_study", "optuna", "Optuna", e) from None
    several = _several(session)
    if several is not None:  # one study of every session's trials
        storage = storage or optuna.storages.InMemoryStorage()
        name = study or " + ".join(one.name for one in several)
        result = None
        for one in several:
            result = optuna_study(one, study=name, storage=storage, metric=metric)
        return result
    s, runs, values, axes, seeds = _prepared(session)
    distributions = {}
    for axis in axes:
        column = [v[axis] for v in values]
        numbers = [_number(t) for t in column]
        if numbers and all(n is not None for n in numbers) and len(set(numbers)) > 1:
            low, high = min(numbers), max(numbers)
            log = low > 0 and high / low > 10
            if all(float(n).is_integer() and "." not in t and "e" not in t.lower() for n, t in zip(numbers, column)):
                distributions[axis] = IntDistribution(int(low), int(high), log=log)
            else:
                distributions[axis] = FloatDistribution(low, high, log=log)
        else:
            distributions[axis] = CategoricalDistribution(sorted(set(column)))
    result = optuna.create_study(study_name=study or s.name, storage=storage, direction="minimize",
                                 load_if_exists=True)
    # A trial is its session's run (several sessions may share a study); a trial stored without
    # its session (an earlier release's) matches its run_id in any.
    present = {(t.user_attrs.get("session"), t.user_attrs.get("run_id"))
               for t in result.get_trials(deepcopy=False)}
    _untimed(runs, "Optuna", "requires a start time for a finished trial and gives them the time of this "
             "export; their user attribute times is 'not recorded'")
    trials = []
    for i, record in enumerate(s.run_records()):
        row = runs.iloc[i]
        run_id = _run_key(row, i)
        if not record.finished or (s.name, run_id) in present or (None, run_id) in present:
            continue
        params = {}
        for axis, dist in distributions.items():
            if isinstance(dist, IntDistribution):
                params[axis] = int(_number(values[i][axis]))
            elif isinstance(dist, FloatDistribution):
                params[axis] = _number(values[i][axis])
            else:
                params[axis] = values[i][axis]
        value = record.metrics.get(metric)
        ok = str(row["status"]) == "done" and value is not None and math.isfinite(value)
        attrs = {"run_id": run_id, "session": s.name, "configuration": str(row["configuration"]),
                 "status": str(row["status"]),
                 "learned": None if pd.isna(row["learned"]) else bool(row["learned"])}
        attrs.update({a: values[i][a] for a in seeds})
        attrs["times"] = "recorded" if pd.notna(row["started_at"]) else "not recorded"
        start = row["started_at"]
        end = row["finished_at"]
        trial = create_trial(state=TrialState.COMPLETE if ok else TrialState.FAIL,
                             value=value if ok else None, params=params,
                             distributions=distributions, user_attrs=attrs)
        # Optuna requires a start for a finished trial: a run without one keeps create_trial's
        # (this export's), and its user attribute `times` says so.
        if pd.notna(start):
            trial.datetime_start = start.to_pydatetime().replace(tzinfo=None)
        if pd.notna(end):
            trial.datetime_complete = end.to_pydatetime().replace(tzinfo=None)
        trials.append(trial)
    result.add_trials(trials)
    return result
