"""tests/python/test_bridges.py — headlab.export: a session in TensorBoard, MLflow and Optuna.

A tiny addition sweep (3 head counts × 2 seeds, seconds on one core) is trained with headlab-cli;
each bridge's output is read back with the tool's own reader and checked against the session:
every scalar of every curve (TensorBoard stores float32), the HParams table, MLflow's params,
metric histories, tags and times, Optuna's trials. A second export adds nothing twice.

Run by ctest (tests/python/CMakeLists.txt) as
    .venv/bin/python tests/python/test_bridges.py
with HEADLAB_CLI and HEADLAB_SOURCE_DIR in the environment. The bridges are pinned in
scripts/setup.sh, so a missing one fails here rather than skipping.
"""
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings

import numpy as np
import pandas as pd

SOURCE = os.environ.get("HEADLAB_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("HEADLAB_CLI", os.path.join(SOURCE, "build", "app", "cli", "headlab-cli"))
sys.path.insert(0, os.path.join(SOURCE, "python"))
sys.path.insert(0, os.path.dirname(__file__))
import headlab  # noqa: E402
import headlab.export  # noqa: E402

from test_package import TINY as SWEEP  # noqa: E402 — the package tests' tiny sweep: 3 head counts × 2 seeds


class Bridges(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="headlab-bridges-")
        source = os.path.join(cls.tmp, "in.yaml")
        with open(source, "w") as f:
            f.write(SWEEP)
        cls.path = os.path.join(cls.tmp, "bridges.yaml")
        p = subprocess.run([CLI, "run", source, "-o", cls.path, "--threads", "1"], capture_output=True,
                           text=True, timeout=600)
        if p.returncode != 0:
            raise AssertionError(f"headlab-cli run failed:\n{p.stdout}{p.stderr}")
        cls.session = headlab.open(cls.path)
        cls.runs = cls.session.runs()
        assert len(cls.runs) == 6

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_tensorboard_scalars_and_hparams(self):
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
        logdir = os.path.join(self.tmp, "tb")
        written = headlab.export.tensorboard(self.session, logdir)
        self.assertEqual(written["runs"], 6)
        records = self.session.run_records()
        total = 0
        for i, row in self.runs.iterrows():
            folder = os.path.join(logdir, row["run_id"])
            self.assertTrue(os.path.isdir(folder), folder)
            events = EventAccumulator(folder, size_guidance={"scalars": 0})
            events.Reload()
            for name, (steps, values) in records[i].curves.items():
                if name.startswith("head."):
                    continue
                tag = f"loss/{name}" if name in ("train", "test") else name
                got = events.Scalars(tag)
                np.testing.assert_array_equal([e.step for e in got], steps)
                np.testing.assert_array_equal(np.float32([e.value for e in got]), np.float32(values))
                total += len(got)
            final = events.Scalars("final_test_loss")
            self.assertEqual(np.float32(final[-1].value), np.float32(records[i].metrics["final_test_loss"]))
            learned = events.Scalars("learned")[-1].value
            self.assertEqual(bool(learned), bool(row["learned"]))
            # The HParams view: this run's trial carries its axes.
            self.assertIn("hparams", events.PluginTagToContent("hparams") and "hparams" or "")
            content = events.PluginTagToContent("hparams")
            self.assertIn("_hparams_/session_start_info", content)
            text = content["_hparams_/session_start_info"]
            self.assertIn(b"heads", text)
            self.assertIn(row["run_id"].encode(), text)
        self.assertEqual(written["scalars"], total + 12)  # + final_test_loss and learned per run
        # The experiment's table: heads and seed as hyperparameters, the two metrics.
        top = EventAccumulator(logdir)
        top.Reload()
        config = top.PluginTagToContent("hparams")["_hparams_/experiment"]
        for name in (b"heads", b"seed", b"final_test_loss", b"learned"):
            self.assertIn(name, config)
        # Again: refused without overwrite (nothing written twice), replaced with it.
        with self.assertRaises(FileExistsError):
            headlab.export.tensorboard(self.session, logdir)
        headlab.export.tensorboard(self.session, logdir, overwrite=True)
        folder = os.path.join(logdir, self.runs["run_id"][0])
        self.assertEqual(len([n for n in os.listdir(folder) if n.startswith("events.out")]), 1)

    def test_mlflow_runs_params_histories_tags_and_times(self):
        logging.getLogger("mlflow").setLevel(logging.ERROR)
        logging.getLogger("alembic").setLevel(logging.ERROR)
        from mlflow.tracking import MlflowClient
        uri = "sqlite:///" + os.path.join(self.tmp, "mlflow.db")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = headlab.export.mlflow(self.session, uri)
            self.assertEqual((result["logged"], result["skipped"]), (6, 0))
            again = headlab.export.mlflow(self.session, uri)
            self.assertEqual((again["logged"], again["skipped"]), (0, 6))
            client = MlflowClient(tracking_uri=uri)
            logged = client.search_runs([result["experiment_id"]], max_results=100)
            self.assertEqual(len(logged), 6)
            by_id = {r.data.tags["headlab.run_id"]: r for r in logged}
            records = self.session.run_records()
            for i, row in self.runs.iterrows():
                r = by_id[row["run_id"]]
                self.assertEqual(r.data.params["heads"], row["label_heads"])
                self.assertEqual(r.data.params["seed"], row["label_seed"])
                self.assertEqual(r.data.tags["headlab.configuration"], row["configuration"])
                self.assertEqual(r.data.tags["headlab.commit"], row["commit"])
                self.assertEqual(r.data.tags["headlab.host"], row["host"])
                self.assertEqual(r.info.status, "FINISHED")
                self.assertEqual(r.info.start_time, int(row["started_at"].timestamp() * 1000))
                self.assertEqual(r.info.end_time, int(row["finished_at"].timestamp() * 1000))
                history = client.get_metric_history(r.info.run_id, "test")
                steps, values = records[i].curves["test"]
                self.assertEqual([m.step for m in history], list(steps))
                self.assertEqual([m.value for m in history], list(values))
                self.assertEqual(r.data.metrics["final_test_loss"], records[i].metrics["final_test_loss"])

    def test_optuna_trials(self):
        import optuna
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        storage = "sqlite:///" + os.path.join(self.tmp, "optuna.db")
        study = headlab.export.optuna_study(self.session, storage=storage)
        frame = study.trials_dataframe()
        self.assertEqual(len(frame), 6)
        self.assertEqual(sorted(frame["user_attrs_run_id"]), sorted(self.runs["run_id"]))
        merged = frame.merge(self.runs, left_on="user_attrs_run_id", right_on="run_id")
        np.testing.assert_array_equal(merged["value"], merged["final_test_loss"])
        self.assertEqual(list(merged["params_heads"]), [int(h) for h in merged["label_heads"]])
        self.assertEqual(set(frame["state"]), {"COMPLETE"})
        # Loaded again from its storage: nothing added twice.
        study = headlab.export.optuna_study(self.session, storage=storage)
        self.assertEqual(len(study.trials), 6)
        best = self.runs.loc[self.runs["final_test_loss"].idxmin()]
        self.assertEqual(study.best_trial.user_attrs["run_id"], best["run_id"])

    def test_several_sessions(self):
        # Issue 78: every bridge raised TypeError on headlab.open([a, b]), though annotated to
        # take it. Two sessions (the same runs under a second file): each bridge takes both.
        logging.getLogger("mlflow").setLevel(logging.ERROR)
        logging.getLogger("alembic").setLevel(logging.ERROR)
        import optuna
        from mlflow.tracking import MlflowClient
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        other = os.path.join(self.tmp, "other.yaml")
        shutil.copyfile(self.path, other)
        both = headlab.open([self.path, other])
        self.assertIsInstance(both, headlab.Sessions)
        logdir = os.path.join(self.tmp, "tb-both")
        counts = headlab.export.tensorboard(both, logdir)
        self.assertEqual(counts["runs"], 12)
        self.assertEqual(len(os.listdir(logdir)), 2)  # a folder per session
        uri = "sqlite:///" + os.path.join(self.tmp, "mlflow-both.db")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = headlab.export.mlflow(both, uri, experiment="both")
            self.assertEqual((result["logged"], result["skipped"]), (12, 0))
            again = headlab.export.mlflow(both, uri, experiment="both")
            self.assertEqual((again["logged"], again["skipped"]), (0, 12))
            client = MlflowClient(tracking_uri=uri)
            self.assertEqual(len(client.search_runs(result["experiment_ids"][:1], max_results=100)), 12)
        study = headlab.export.optuna_study(both)
        self.assertEqual(len(study.trials), 12)
        self.assertEqual({t.user_attrs["session"] for t in study.trials}, {s.name for s in both})

    def test_inline_runs_without_a_run_id_are_not_logged_twice(self):
        # Issue 78: an earlier release's export has no run_id on its runs; a second MLflow export
        # doubled every run. Such runs are keyed by their place in the file.
        logging.getLogger("mlflow").setLevel(logging.ERROR)
        logging.getLogger("alembic").setLevel(logging.ERROR)
        import re
        with open(os.path.join(SOURCE, "tests/session/fixtures/v2-addition.export.yaml"), encoding="utf-8") as f:
            text = re.sub(r"^( *)- run_id: .*\n *", r"\1- ", f.read(), flags=re.M)
        path = os.path.join(self.tmp, "without-ids.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        with self.assertWarns(headlab.RunIdsMissing):
            old = headlab.open(path)
        self.assertEqual(set(old.runs()["run_id"]), {""})
        uri = "sqlite:///" + os.path.join(self.tmp, "mlflow-without-ids.db")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            first = headlab.export.mlflow(old, uri)
            again = headlab.export.mlflow(old, uri)
        self.assertEqual((first["logged"], again["logged"], again["skipped"]), (len(old), 0, len(old)))

    def test_runs_without_recorded_times_keep_them_missing(self):
        # Issue 78: runs without recorded times got 1970 in TensorBoard and the export's time in
        # MLflow and Optuna. An earlier release's session (its runs have no origin times).
        logging.getLogger("mlflow").setLevel(logging.ERROR)
        logging.getLogger("alembic").setLevel(logging.ERROR)
        import math
        import optuna
        from mlflow.tracking import MlflowClient
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        old = headlab.open(os.path.join(SOURCE, "tests/session/fixtures/v2-addition.yaml"))
        runs = old.runs()
        self.assertTrue(runs["started_at"].isna().all())
        logdir = os.path.join(self.tmp, "tb-untimed")
        with self.assertWarnsRegex(headlab.export.TimesNotRecorded, "TensorBoard .*no wall time"):
            counts = headlab.export.tensorboard(old, logdir)
        self.assertEqual(counts["without_time"], len(runs))
        for run_id in runs["run_id"]:
            events = EventAccumulator(os.path.join(logdir, run_id))
            events.Reload()
            test = events.Scalars("loss/test")
            self.assertTrue(test and all(math.isnan(e.wall_time) for e in test), run_id)
        uri = "sqlite:///" + os.path.join(self.tmp, "mlflow-untimed.db")
        before = int(pd.Timestamp.now(tz="UTC").timestamp() * 1000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with self.assertWarnsRegex(headlab.export.TimesNotRecorded, "MLflow requires a start time"):
                result = headlab.export.mlflow(old, uri)
        self.assertEqual(result["without_time"], len(runs))
        client = MlflowClient(tracking_uri=uri)
        for r in client.search_runs([result["experiment_id"]], max_results=100):
            self.assertEqual(r.data.tags["headlab.times"], "not recorded")
            # MLflow's own time, said by the tag; no point at the epoch.
            self.assertGreaterEqual(r.info.start_time, before)
            for m in client.get_metric_history(r.info.run_id, "test"):
                self.assertGreaterEqual(m.timestamp, before)
        with self.assertWarnsRegex(headlab.export.TimesNotRecorded, "Optuna requires a start time"):
            study = headlab.export.optuna_study(old)
        self.assertEqual(len(study.trials), len(runs))
        self.assertEqual({t.user_attrs["times"] for t in study.trials}, {"not recorded"})
        # A session whose runs have their times keeps them, with no warning.
        with warnings.catch_warnings():
            warnings.simplefilter("error", headlab.export.TimesNotRecorded)
            study = headlab.export.optuna_study(self.session)
        self.assertEqual({t.user_attrs["times"] for t in study.trials}, {"recorded"})
        starts = sorted(t.datetime_start for t in study.trials)
        self.assertEqual(starts, sorted(r.to_pydatetime().replace(tzinfo=None) for r in self.runs["started_at"]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
