"""tests/python/test_package.py — the Python package (python/headlab) against headlab-cli.

Every number the package gives must equal what `headlab-cli export-csv` writes for the same
session: the stored fixtures of every task, their exports, a schema 1 session, a session trained
here with per-head statistics and checkpoints, and a sharded one read while a shard is still
writing. Bad files get the CLI's place (FILE:LINE:COL: KEY). A checkpoint's model reproduces the
logged test loss.

Run by ctest (tests/python/CMakeLists.txt) as
    .venv/bin/python tests/python/test_package.py
with HEADLAB_CLI (the headlab-cli binary) and HEADLAB_SOURCE_DIR in the environment.
"""
import gzip
import math
import json
import os
import re
import signal
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
import warnings

import numpy as np
import pandas as pd

SOURCE = os.environ.get("HEADLAB_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("HEADLAB_CLI", os.path.join(SOURCE, "build", "app", "cli", "headlab-cli"))
sys.path.insert(0, os.path.join(SOURCE, "python"))
import headlab  # noqa: E402

FIXTURES = [
    "tests/session/fixtures/v2-addition.yaml",
    "tests/session/fixtures/v2-nn.yaml",
    "tests/session/fixtures/v2-text.yaml",
    "tests/session/fixtures/v2-addition.export.yaml",
    "tests/session/fixtures/v2-nn.export.yaml",
    "tests/session/fixtures/v2-text.export.yaml",
    "tests/storage/fixtures/previous-release.yaml",
    # A compressed export, as docs/NOTEBOOKS.md reads it: the CLI inflates it too.
    "docs/data/issue27/fig4-boundary.export.yaml.gz",
]

# A tiny addition sweep that trains in seconds on one core, with checkpoints.
TINY = textwrap.dedent("""\
    schema_version: 2
    name: tiny
    checkpoints: {every: 10, keep: 3, plateaus: true}
    experiment:
      task: {kind: addition, train_pairs: 64, test_pairs: 8}
      model: {d_model: 12, layers: 2}
      phases:
        - {name: language, objective: next_token, steps: 10, batch_size: 4, lr: 0.001}
        - {name: answer, objective: answer, steps: 20, batch_size: 4}
      eval_every: 10
      log_every: 5
      device: cpu
    sweep:
      heads: [1, 2, 3]
      seed: [0, 1]
    """)


def cli(*args, check=True):
    p = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600)
    if check and p.returncode != 0:
        raise AssertionError(f"headlab-cli {' '.join(args)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
    return p


def cli_tables(session, directory):
    out = os.path.join(directory, "csv-" + os.path.basename(session))
    cli("export-csv", session, "-o", out)
    runs = pd.read_csv(os.path.join(out, "runs.csv"), dtype=str, keep_default_na=False)
    curves = pd.read_csv(os.path.join(out, "curves.csv"), dtype={"curve": str})
    return runs, curves


def same_number(text, value):
    if text == "":
        return value is None or value == "" or (isinstance(value, float) and math.isnan(value))
    a = float(text)
    try:
        b = float(value)
    except (TypeError, ValueError):
        return False
    return a == b or (math.isnan(a) and math.isnan(b))


class PackageAgainstCli(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="headlab-py-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def assertTablesEqual(self, session_path):
        """runs() and curves() of the package equal the CLI's runs.csv and curves.csv."""
        s = headlab.open(session_path)
        runs = s.runs()
        cli_runs, cli_curves = cli_tables(session_path, self.tmp)
        self.assertEqual(len(runs), len(cli_runs), session_path)
        for column in cli_runs.columns:
            self.assertIn(column, runs.columns, f"{session_path}: runs() lacks {column}")
            ours = runs[f"{column}_per_layer" if column in ("heads", "head_dim") else column]
            for i, (text, mine) in enumerate(zip(cli_runs[column], ours)):
                if column == "run_id" and mine == "" and not s.run_records()[i].file:
                    continue  # an inline record of an earlier release: its config's hash unknown
                if column in ("started_at", "finished_at"):
                    if text == "":  # a run of an earlier release, or one not finished
                        self.assertTrue(pd.isna(mine), f"{session_path} run {i} {column}: {mine}")
                    else:
                        self.assertEqual(pd.Timestamp(text), mine, f"{session_path} run {i} {column}")
                    continue
                if (column.startswith("plateau_") or column == "diverged_at_step") and text == "-1":  # never: <NA>
                    self.assertTrue(pd.isna(mine), f"{session_path} run {i} {column}: {mine}")
                    continue
                if column == "learned":
                    expect = {"1": True, "0": False, "": None}[text]
                    got = None if pd.isna(mine) else bool(mine)
                    self.assertEqual(got, expect, f"{session_path} run {i} learned")
                    continue
                numeric = text != "" and column not in ("heads", "head_dim") and not column.startswith(
                    ("label_", "provenance_")) and column not in ("task", "qk_rule", "status", "device", "configuration",
                                                                  "learned_rule", "message", "run_id",
                                                                  "host", "commit", "command")
                if numeric:
                    self.assertTrue(same_number(text, mine), f"{session_path} run {i} {column}: {text} != {mine}")
                else:
                    self.assertEqual(text, "" if mine is None or (isinstance(mine, float) and math.isnan(mine))
                                     else str(mine), f"{session_path} run {i} {column}")
        # Every point of every curve, per-head ones included, exactly.
        mine = s.curves(include_head_stats=True)
        self.assertEqual(len(mine), len(cli_curves), session_path)
        key = ["run", "curve", "step"]
        a = cli_curves.sort_values(key).reset_index(drop=True)
        b = (mine.rename(columns={"metric": "curve"})[["run", "curve", "step", "value"]]
             .astype({"curve": str}).sort_values(key).reset_index(drop=True))
        np.testing.assert_array_equal(a["run"].values, b["run"].values)
        np.testing.assert_array_equal(a["curve"].values, b["curve"].values)
        np.testing.assert_array_equal(a["step"].values, b["step"].values)
        np.testing.assert_array_equal(a["value"].values, b["value"].values)
        return s

    # -- every fixture ---------------------------------------------------------------------------

    def test_every_fixture_equals_the_cli(self):
        for fixture in FIXTURES:
            with self.subTest(fixture=fixture):
                s = self.assertTablesEqual(os.path.join(SOURCE, fixture))
                self.assertGreater(len(s), 0)

    def test_a_run_that_did_not_diverge_has_no_divergence_step(self):
        runs = headlab.open(os.path.join(SOURCE, "tests/session/fixtures/v2-addition.yaml")).runs()
        self.assertEqual(str(runs["diverged_at_step"].dtype), "Int64")
        finished = runs[runs["status"] == "done"]
        self.assertGreater(len(finished), 0)
        self.assertTrue(finished["diverged_at_step"].isna().all(), "-1 read as a step")
        self.assertFalse((runs["diverged_at_step"] == -1).any())
        # A run trained at lr 1e4 diverges: its step is kept, as runs.csv has it.
        path = self.train_tiny("diverges.yaml", TINY.replace("lr: 0.001", "lr: 10000.0").replace(
            "heads: [1, 2, 3]", "heads: [2]"))
        runs = headlab.open(path).runs()
        diverged = runs[runs["status"] == "diverged"]
        self.assertGreater(len(diverged), 0, runs["status"].tolist())
        self.assertTrue((diverged["diverged_at_step"] >= 0).all())
        self.assertTablesEqual(path)

    def test_verdicts_follow_the_task_and_rule(self):
        nn = headlab.open(os.path.join(SOURCE, "tests/session/fixtures/v2-nn.yaml")).runs()
        self.assertTrue(nn["learned"].isna().all(), "nearest neighbour has no verdict")
        add = headlab.open(os.path.join(SOURCE, "tests/session/fixtures/v2-addition.yaml"))
        self.assertEqual(add.learned_rule, "left_ln10_plateau")
        self.assertFalse(add.runs()["learned"].isna().any())

    def test_a_task_without_the_ln10_plateau_is_judged_by_its_own(self):
        """Nearest neighbour trained now: each run has left_chance_plateau, and pandas gives the
        same verdicts as the CLI's runs.csv under each rule: the run at lr 0.01 left the zero
        predictor's plateau, the one at lr 30 sits on it (under 1, so learned by the paper's)."""
        text = textwrap.dedent("""\
            schema_version: 2
            name: tiny-nn
            experiment:
              task: {kind: nearest_neighbour, point_dim: 8, num_points: 4}
              model: {d_model: 8, heads: 1, layers: 1, ffn_width: 32, norm: unit_scale,
                      placement: post_norm, final_norm: false, causal: false, bias: true,
                      activation: relu, zero_init_outputs: false}
              phases:
                - name: train
                  objective: regression
                  steps: 300
                  batch_size: 64
                  lr: scanned
                  optimizer: {kind: adamw, beta1: 0.9, beta2: 0.95}
                  schedule: {kind: warmup_cosine, warmup_fraction: 0.05}
              eval_every: 100
              device: cpu
            sweep:
              lr: [0.01, 30.0]
            """)
        path = self.train_tiny("tiny-nn.yaml", text)
        with open(path) as f:
            doc = f.read()
        expected = {"left_ln10_plateau": [True, False], "left_chance_plateau": [True, False],
                    "final_below_ln10": [True, True]}
        for rule, verdicts in expected.items():
            ruled = os.path.join(self.tmp, f"tiny-nn-{rule}.yaml")
            with open(ruled, "w") as f:
                f.write(doc.replace("learned_rule: left_ln10_plateau", f"learned_rule: {rule}"))
            runs = headlab.open(ruled).runs()
            self.assertEqual(runs["learned"].tolist(), verdicts, rule)
            self.assertTablesEqual(ruled)

    # -- trained here: head statistics, checkpoints, phases --------------------------------------

    def train_tiny(self, name="tiny.yaml", text=TINY):
        source = os.path.join(self.tmp, "in-" + name)
        with open(source, "w") as f:
            f.write(text)
        path = os.path.join(self.tmp, name)
        cli("run", source, "-o", path, "--threads", "1")
        return path

    def test_replicates_group_as_every_figure_groups_them(self):
        """The `configuration` column is core's one definition (runs.csv's): a combination session
        whose entries set different stabilizers, and the archived stabilizer search, group
        into the same configurations in pandas as in the CLI; only seeds are pooled."""
        text = TINY.replace("sweep:\n  heads: [1, 2, 3]\n  seed: [0, 1]\n",
                            "sweep:\n  seed: [0, 1]\n  combinations:\n    - {heads: 1}\n"
                            "    - {heads: 2, softcap: 10}\n    - {qk_norm: gain}\n")
        self.assertNotEqual(text, TINY)
        s = self.assertTablesEqual(self.train_tiny("combinations.yaml", text))
        groups = s.runs().groupby("configuration")["run"].apply(list)
        self.assertEqual(len(groups), 3, groups)
        self.assertTrue(all(len(runs) == 2 for runs in groups), groups)
        self.assertIn("heads=2 softcap=10 qk_norm=off", " | ".join(groups.index))
        archived = os.path.join(SOURCE, "docs", "data", "issue23", "boundary.export.yaml.gz")
        if not os.path.exists(archived):
            self.skipTest("docs/data/issue23 is not in this checkout")
        plain = os.path.join(self.tmp, "stabilizers.yaml")
        with gzip.open(archived, "rb") as f, open(plain, "wb") as out:
            shutil.copyfileobj(f, out)
        mine = headlab.open(plain).runs()["configuration"].tolist()
        cli_runs, _ = cli_tables(plain, self.tmp)
        self.assertEqual(mine, cli_runs["configuration"].tolist())
        self.assertTrue(any("softcap=10" in c and "qk_rule=off" in c for c in mine))

    def test_a_trained_session_with_head_statistics(self):
        path = self.train_tiny()
        s = self.assertTablesEqual(path)
        runs = s.runs()
        self.assertEqual(len(runs), 6)
        self.assertEqual(sorted(runs["heads_per_layer"].unique()), ["1 1", "2 2", "3 3"])  # as runs.csv
        self.assertEqual(str(runs["heads"].dtype), "Int64")  # every layer the same: a number
        self.assertEqual(sorted(runs["heads"].unique()), [1, 2, 3])
        self.assertEqual(list(runs["uniform_heads"]), [1, 1, 2, 2, 3, 3])
        self.assertEqual(list(runs["uniform_head_dim"]), [12, 12, 6, 6, 4, 4])
        self.assertEqual(set(runs["config.phases.1.objective"]), {"answer"})
        # Identity and time: the run's hash (its file's name), when, where, by what, from which code.
        self.assertEqual(list(runs["run_id"]),
                         [os.path.basename(f)[: -len(".yaml")] for f in runs["file"]])
        self.assertEqual(runs["run_id"].nunique(), 6)
        indexed = s.runs(index=True)  # (session, run_id) as the index: the identity across merges
        self.assertEqual(indexed.index.names, ["session", "run_id"])
        self.assertTrue(indexed.index.is_unique)
        self.assertEqual(indexed.loc[(s.name, runs["run_id"][4]), "run"], 4)
        self.assertEqual(str(runs["started_at"].dtype), "datetime64[ns, UTC]")
        now = pd.Timestamp.now(tz="UTC")
        for started, finished in zip(runs["started_at"], runs["finished_at"]):
            self.assertLessEqual(started, finished)
            self.assertLess(now - finished, pd.Timedelta(minutes=30))
            self.assertGreaterEqual(now + pd.Timedelta(seconds=2), finished)
        self.assertEqual(set(runs["host"]), {socket.gethostname()})
        source = os.path.join(self.tmp, "in-tiny.yaml")
        self.assertEqual(set(runs["command"]), {f"headlab-cli run {source} -o {path} --threads 1"})
        head = subprocess.run(["git", "-C", SOURCE, "rev-parse", "HEAD"], capture_output=True, text=True)
        if head.returncode == 0:  # a build from a git clone records its commit (+dirty with edits):
            commits = {c.split("+")[0] for c in runs["commit"]}  # this clone's, at the build
            self.assertEqual(len(commits), 1)
            ancestor = subprocess.run(["git", "-C", SOURCE, "merge-base", "--is-ancestor", commits.pop(), "HEAD"])
            self.assertEqual(ancestor.returncode, 0, f"the recorded commit {runs['commit'][0]} is not in HEAD's history")
        heads = s.head_stats()
        self.assertFalse(heads.empty, "a trained run logs per-head statistics")
        # Layer and head numbers agree with each run's shape: heads 0..n-1 in each of 2 layers.
        for run, group in heads.groupby("run"):
            n = runs.loc[runs["run"] == run, "uniform_heads"].item()
            self.assertEqual(sorted(group["layer"].unique()), [0, 1])
            self.assertEqual(sorted(group["head_index"].unique()), list(range(n)))
        # The old name, kept one release: the same column, with a FutureWarning.
        self.assertFalse("head" in heads.columns, "no column shadows DataFrame.head")
        self.assertTrue(callable(heads.head))
        with self.assertWarns(FutureWarning):
            pd.testing.assert_series_equal(heads["head"], heads["head_index"])
        with self.assertWarns(FutureWarning):
            self.assertEqual(len(heads.groupby(["layer", "head"])), len(heads.groupby(["layer", "head_index"])))
        self.assertTrue({"logit_rms", "entropy"} <= set(heads["statistic"].astype(str)))
        self.assertEqual(str(heads["value"].dtype), "float32")  # as stored: exact, half the bytes
        # Filters applied before the table is built give the rows the full table has.
        for kwargs in ({"statistics": "logit_rms"}, {"statistics": ["entropy", "wq_norm"], "runs": [1, 4]},
                       {"runs": 2, "steps": [10, 30]}):
            picked = s.head_stats(**kwargs)
            full = heads
            if "statistics" in kwargs:
                wanted = [kwargs["statistics"]] if isinstance(kwargs["statistics"], str) else kwargs["statistics"]
                full = full[full["statistic"].astype(str).isin(wanted)]
            if "runs" in kwargs:
                full = full[full["run"].isin(np.atleast_1d(kwargs["runs"]))]
            if "steps" in kwargs:
                full = full[full["step"].isin(kwargs["steps"])]
            self.assertGreater(len(picked), 0, kwargs)
            key = ["run", "step", "layer", "head_index", "statistic"]
            a = picked.astype({"statistic": str, "phase": str}).sort_values(key).reset_index(drop=True)
            b = full.astype({"statistic": str, "phase": str}).sort_values(key).reset_index(drop=True)
            pd.testing.assert_frame_equal(a, b, check_categorical=False, obj=str(kwargs))
        # Phases: the answer phase's evaluations are after step 10.
        curves = s.curves()
        test = curves[(curves["metric"] == "test") & (curves["run"] == 0)]
        self.assertEqual(list(test["phase"].astype(str)), ["language", "language", "answer", "answer"])

    def test_a_checkpoint_model_reproduces_the_logged_test_loss(self):
        try:
            import torch  # noqa: F401
            from headlab import checkpoint
        except ImportError as e:  # the package works without torch; this test needs it
            self.skipTest(f"torch or safetensors missing: {e}")
        s = headlab.open(self.train_tiny())
        for run in (0, 5):
            table = s.checkpoints(run)
            self.assertTrue(table["exists"].all(), table)
            self.assertIn("final", set(table["reason"]))
            for step in table["step"]:
                model = s.model(run, step)
                self.assertIsInstance(model, torch.nn.Module)
                logged = model.logged_test_loss
                self.assertIsNotNone(logged)
                recomputed = checkpoint.addition_test_loss(model.checkpoint)
                self.assertLess(abs(recomputed - logged), 1e-5, (run, step))
                # The module's own forward (its parameters) gives the same logits as the file's.
                tokens = checkpoint.addition_samples(6, 64000)[:, :18]
                np.testing.assert_allclose(model(tokens).detach().numpy(),
                                           checkpoint.forward(model.checkpoint, tokens).numpy(), rtol=0, atol=0)
        with self.assertRaisesRegex(FileNotFoundError, "no checkpoint at step 7"):
            s.model(0, 7)

    def test_the_checksum_is_checked_at_500_MB_s(self):
        """Issue 78: the checksum was FNV-1a in pure Python, 8.6 MB/s (a 1 GB checkpoint: two
        minutes). Format version 2 carries a CRC-32, checked through zlib; a file of version 1 is
        still read and checked."""
        try:
            import torch  # noqa: F401
            from headlab import checkpoint
        except ImportError as e:
            self.skipTest(f"torch or safetensors missing: {e}")
        import time
        import zlib
        data = np.random.default_rng(0).integers(0, 256, 256 << 20, dtype=np.uint8).tobytes()
        metadata = {"data_crc32": f"{zlib.crc32(data):08x}"}
        start = time.perf_counter()
        self.assertTrue(checkpoint.data_checksum_matches(metadata, memoryview(data)))
        rate = len(data) / (time.perf_counter() - start) / 1e6
        self.assertGreater(rate, 500, f"{rate:.0f} MB/s")
        self.assertFalse(checkpoint.data_checksum_matches({"data_crc32": "00000000"}, memoryview(data)))
        # A checkpoint the CLI writes now: version 2, its CRC-32 recomputed here.
        s = headlab.open(self.train_tiny())
        path = s.checkpoints(0)["path"].iloc[-1]
        ckpt = checkpoint.load(path)
        self.assertEqual(ckpt.metadata["format_version"], "2")
        self.assertNotIn("data_fnv1a64", ckpt.metadata)
        # A checkpoint of version 1 (the fuzzing corpus keeps two): read and checked as before.
        old = os.path.join(SOURCE, "tests/fuzz/corpus-python/checkpoint/final.safetensors")
        self.assertEqual(checkpoint.load(old).metadata["format_version"], "1")
        with open(old, "rb") as f:
            damaged = bytearray(f.read())
        damaged[-100] ^= 0x10
        copy = os.path.join(self.tmp, "damaged.safetensors")
        with open(copy, "wb") as f:
            f.write(damaged)
        with self.assertRaisesRegex(headlab.HeadLabError, "does not match its checksum"):
            checkpoint.load(copy)

    def test_pruning_curves_are_inspects(self):
        path = self.train_tiny()
        s = headlab.open(path)
        self.assertTrue(s.pruning().empty)
        self.assertEqual(list(s.pruning().columns)[:6],
                         ["session", "run", "checkpoint_step", "method", "trained_steps", "order"])
        out = cli("inspect", path, "--run", "4", "--json").stdout
        inspected = json.loads(out)
        cli("inspect", path, "--run", "3", "--order", "random", "--random-orders", "2", "--seed", "5",
            "--retrain", "fine-tune,l0", "--fine-tune-steps", "5", "--l0-lambdas", "0,1")
        with warnings.catch_warnings():  # inspect wrote into the results folder: read again
            warnings.simplefilter("ignore", headlab.SessionChanged)
            table = s.pruning()
        self.assertEqual(sorted(table["run"].unique()), [3, 4])
        four = table[table["run"] == 4]
        self.assertEqual(str(table["method"].dtype), "category")
        self.assertEqual(set(four["checkpoint_step"]), {inspected["step"]})
        # Every curve of the JSON, step for step.
        for curve in inspected["pruning"]:
            self.assertEqual(curve["method"], "post-hoc")
            rows = four[(four["order"] == curve["order"]) & (four["seed"] == curve["seed"])]
            self.assertEqual(list(rows["removed"]), [p["removed"] for p in curve["steps"]])
            self.assertEqual(list(rows["layer"]), [p["layer"] for p in curve["steps"]])
            self.assertEqual(list(rows["head_index"]), [p["head"] for p in curve["steps"]])
            np.testing.assert_allclose(rows["test_loss"], [p["test_loss"] for p in curve["steps"]], rtol=1e-5)
            self.assertEqual(set(rows["ablation"]), {"zero"})
        # Run 4 has 3 heads in each of 2 layers: one kept per layer, 4 removed.
        self.assertEqual(four.groupby(["order", "seed"], observed=True)["removed"].max().tolist(), [4] * 6)
        self.assertEqual(set(four["method"]), {"post-hoc"})
        one = table[(table["run"] == 3) & (table["method"] == "post-hoc")]  # 2 heads in each layer
        self.assertEqual(sorted(one["seed"].unique()), [5, 6])
        self.assertEqual(set(one["order"]), {"random"})
        self.assertTrue(one["score"].isna().all())
        self.assertEqual(list(one["removed"]), [0, 1, 2] * 2)
        # Retraining: the first random order fine-tuned for 5 steps; L0 gates at two lambdas.
        tuned = table[(table["run"] == 3) & (table["method"] == "fine-tune")]
        self.assertEqual(list(tuned["removed"]), list(one[one["seed"] == 5]["removed"]))
        self.assertEqual(set(tuned["trained_steps"]), {5})
        l0 = table[(table["run"] == 3) & (table["method"] == "l0")]
        self.assertEqual(len(l0), 3)  # the intact model and a point per lambda
        self.assertTrue(l0["order"].isna().all())
        self.assertEqual(sorted(l0["score"].dropna()), [0.0, 1.0])
        self.assertEqual(len(s.pruning(runs=3)), len(table[table["run"] == 3]))

    def test_checkpoints_carry_the_users_keep_mark(self):
        path = self.train_tiny()
        table = headlab.open(path).checkpoints(0)
        self.assertFalse(table["keep"].any())
        step = int(table["step"].min())
        cli("keep", path, "--run", "0", "--step", str(step))
        table = headlab.open(path).checkpoints(0)
        self.assertEqual(list(table.loc[table["keep"], "step"]), [step])

    def test_per_head_curves_come_from_the_binary_file_beside_each_run(self):
        path = self.train_tiny()
        runs_dir = os.path.join(self.tmp, "tiny.results", "runs")
        sidecars = sorted(n for n in os.listdir(runs_dir) if n.endswith(".safetensors"))
        self.assertEqual(len(sidecars), 6)
        full = headlab.open(path).head_stats()
        # A damaged one costs that run's per-head curves only, named as the CLI names it.
        victim = os.path.join(runs_dir, sidecars[0])
        with open(victim, "r+b") as f:
            f.truncate(os.path.getsize(victim) // 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            s = headlab.open(path)
        self.assertEqual(len(s), 6)
        self.assertEqual(len(caught), 1, [str(w.message) for w in caught])
        self.assertIn(sidecars[0], str(caught[0].message))
        self.assertIn("its other results are kept", str(caught[0].message))
        said = [line for line in self.cli_message(path) if sidecars[0] in line]
        self.assertEqual(len(said), 1)
        self.assertIn("its other results are kept", said[0])
        partial = s.head_stats()
        self.assertEqual(partial["run"].nunique(), full["run"].nunique() - 1)
        self.assertTablesEqual(path)

    # -- sharded, read while written -------------------------------------------------------------

    def test_a_sharded_session_read_while_shards_write(self):
        path = os.path.join(self.tmp, "sharded.yaml")
        with open(path, "w") as f:
            f.write(TINY.replace("name: tiny", "name: sharded"))
        cli("run", path, "--shard", "1/2", "--threads", "1")
        first = self.assertTablesEqual(path)
        self.assertTrue(0 < len(first) < 6, len(first))
        # Shard 2 trains in the background; reading meanwhile never fails and never goes back.
        shard = subprocess.Popen([CLI, "run", path, "--shard", "2/2", "--threads", "1"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        seen = [len(first)]
        while shard.poll() is None:
            with warnings.catch_warnings():
                # A half-written run file would be a RunFileSkipped warning; a session that changed
                # while it was read is read again (SessionChanged), as it should.
                warnings.simplefilter("error", headlab.RunFileSkipped)
                seen.append(len(headlab.open(path)))
            time.sleep(0.05)
        self.assertEqual(shard.returncode, 0, shard.stderr.read())
        self.assertEqual(seen, sorted(seen))
        full = self.assertTablesEqual(path)
        self.assertEqual(len(full), 6)
        cli("merge", path)
        merged = self.assertTablesEqual(path)
        pd.testing.assert_frame_equal(
            merged.runs().drop(columns=["run", "file"]).sort_values("heads", kind="stable").reset_index(drop=True),
            full.runs().drop(columns=["run", "file"]).sort_values("heads", kind="stable").reset_index(drop=True),
            check_like=True)

    def test_a_session_kept_open_sees_the_runs_that_finish(self):
        # Issue 78: a Session kept open and polled lost the runs that finished after open():
        # no reload, no warning. Opened before its sweep trains, it sees all six after, and says
        # it read its files again.
        path = os.path.join(self.tmp, "polled.yaml")
        with open(path, "w") as f:
            f.write(TINY.replace("name: tiny", "name: polled"))
        s = headlab.open(path)
        self.assertEqual(len(s.runs()), 0)
        polled_for_curves = headlab.open(path)
        cli("run", path, "--threads", "1")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            rows = s.runs()
        self.assertEqual(len(rows), 6)
        self.assertTrue(any(issubclass(w.category, headlab.SessionChanged) for w in caught),
                        [str(w.message) for w in caught])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # the curves read again as the runs are
            self.assertEqual(sorted(set(polled_for_curves.curves()["run"])), list(range(6)))
        self.assertTrue(any(issubclass(w.category, headlab.SessionChanged) for w in caught))
        self.assertEqual(s.name, "polled")
        with warnings.catch_warnings():
            warnings.simplefilter("error", headlab.SessionChanged)
            self.assertEqual(len(s.runs()), 6)  # unchanged since: not read again, nothing said

    def test_runs_in_training_are_rows_as_their_trainer_lists_them(self):
        """runs(running=True) and `export-csv --running` list the runs a trainer has in training
        (frozen with SIGSTOP so that both read one state): status running, the step each is at,
        its newest checkpoint, its start; a trainer that is gone is left out by both; a stopped
        trainer leaves no live file."""
        long = TINY.replace("steps: 20, batch_size: 4}", "steps: 200000, batch_size: 4}").replace(
            "every: 10, keep: 3, plateaus: true", "every: 200, keep: 2, plateaus: false").replace("sweep:\n  heads: [1, 2, 3]\n  seed: [0, 1]\n",
                                                               "sweep:\n  heads: [1, 2]\n")
        source = os.path.join(self.tmp, "in-live.yaml")
        with open(source, "w") as f:
            f.write(long.replace("name: tiny", "name: live"))
        path = os.path.join(self.tmp, "live.yaml")
        # Both runs in training at once, however many cores the machine has (ctest: 1).
        trainer = subprocess.Popen([CLI, "run", source, "-o", path, "--threads", "1", "--concurrent", "2"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        live_dir = os.path.join(self.tmp, "live.results", "live")
        try:
            deadline = time.time() + 120
            while time.time() < deadline:  # both runs listed, each with a checkpoint
                files = os.listdir(live_dir) if os.path.isdir(live_dir) else []
                if files:
                    with open(os.path.join(live_dir, files[0])) as f:
                        text = f.read()
                    if text.count("run_id:") == 2 and text.count("step-") == 2:
                        break
                time.sleep(0.2)
            else:
                self.fail("no live file listed both runs with a checkpoint within 120 s")
            os.kill(trainer.pid, signal.SIGSTOP)
            s = headlab.open(path)
            self.assertEqual(len(s.runs()), 0)  # nothing finished yet
            mine = s.runs(running=True)
            cli_runs, _ = cli_tables(path, self.tmp)  # without --running: no row either
            self.assertEqual(len(cli_runs), 0)
            out = os.path.join(self.tmp, "csv-running")
            cli("export-csv", path, "-o", out, "--running")
            theirs = pd.read_csv(os.path.join(out, "runs.csv"), dtype=str, keep_default_na=False)
            self.assertEqual(len(mine), 2)
            self.assertEqual(list(mine["status"]), ["running", "running"])
            self.assertEqual(sorted(mine["run_id"]), sorted(theirs["run_id"]))
            merged = mine.merge(theirs, on="run_id", suffixes=("", "_cli"))
            for _, row in merged.iterrows():
                self.assertEqual(row["status_cli"], "running")
                self.assertEqual(int(row["steps_done_cli"]), row["steps_done"])
                self.assertEqual(row["configuration_cli"], row["configuration"])
                self.assertEqual(pd.Timestamp(row["started_at_cli"]), row["started_at"])
                # The newest checkpoint file, listed as the trainer wrote the live file (it may be
                # a report ahead of the step the file gives); every 200 steps (no plateau
                # checkpoints here: one when a run leaves a plateau falls between).
                self.assertGreaterEqual(row["newest_checkpoint"], 200)
                self.assertEqual(row["newest_checkpoint"] % 200, 0)
                self.assertGreater(row["steps_done"], 0)
                self.assertTrue(pd.isna(row["finished_at"]))
            self.assertEqual(sorted(mine["heads"]), [1, 2])
            # A trainer that is gone: its file (the same, with a PID nobody has) is left out.
            name = os.listdir(live_dir)[0]
            with open(os.path.join(live_dir, name)) as f:
                text = f.read()
            dead = os.path.join(live_dir, "gone-1.yaml")
            with open(dead, "w") as f:
                f.write(re.sub(r"\npid: \d+\n", "\npid: 999999999\n", text))
            os.kill(trainer.pid, signal.SIGCONT)
            os.kill(trainer.pid, signal.SIGSTOP)
            with self.assertWarnsRegex(headlab.RunFileSkipped, "that process is gone"):
                again = s.runs(running=True)
            self.assertEqual(len(again), 2)
            os.remove(dead)
        finally:
            os.kill(trainer.pid, signal.SIGCONT)
            trainer.send_signal(signal.SIGINT)  # stops and saves the runs in progress
            trainer.wait(timeout=120)
        self.assertFalse(os.listdir(live_dir), "the trainer left its live file behind")
        stopped = headlab.open(path).runs(running=True)
        self.assertEqual(list(stopped["status"]), ["stopped", "stopped"])

    def test_sessions_read_as_one(self):
        paths = [os.path.join(SOURCE, f) for f in FIXTURES[:3]]
        both = headlab.open(paths)
        runs = both.runs()
        self.assertEqual(len(runs), sum(len(headlab.open(p)) for p in paths))
        self.assertEqual(list(runs["session"].unique()),
                         ["fixture addition", "fixture nearest neighbour", "fixture text"])
        curves = both.curves()
        self.assertEqual(set(curves["session"].astype(str)), set(runs["session"]))

    def reread(self, text, replace, name):
        """The session text with one replacement (a search that asks for something else),
        exported: `summary`'s text, its `-o` table, and the package's report of it."""
        asked = os.path.join(self.tmp, f"{name}-asked.yaml")
        with open(asked, "w", encoding="utf-8") as f:
            f.write(text.replace(*replace, 1))
        export = os.path.join(self.tmp, f"{name}.yaml")
        cli("export-yaml", asked, "-o", export)
        table = os.path.join(self.tmp, f"{name}.csv")
        printed = cli("summary", export, "-o", table).stdout
        return (printed, pd.read_csv(table, dtype=str, keep_default_na=False),
                headlab.open(export).search())

    def test_an_axis_left_out_of_the_law(self):
        """A law of head_dim and heads over one width (issue 77's 512-wide out-of-sample search):
        heads follows from head_dim, so the report fits head_dim alone and says so. Law.left_out
        names it, the coefficients have no beta row, and α is the one `summary` prints."""
        archived = os.path.join(SOURCE, "docs", "data", "issue77", "oos-wide.export.yaml.gz")
        export = os.path.join(self.tmp, "oos-wide.yaml")
        cli("export-yaml", archived, "-o", export)
        text = cli("summary", export).stdout
        self.assertIn("heads left out: over these configurations it follows from head_dim", text)
        for path in (archived, export):  # the archive's stored report, and one made now
            law = headlab.open(path).search().law
            self.assertTrue(law.ok, law.note)
            self.assertEqual(law.left_out, ["heads"])
            self.assertEqual(sorted(law.coefficients.index), ["C", "alpha"])
            self.assertIn(f"α = {law.alpha:.3f} [{law.coefficients.loc['alpha', 'low']:.3f}, "
                          f"{law.coefficients.loc['alpha', 'high']:.3f}]", text)
        # A law whose axes all count: nothing left out.
        self.assertEqual(headlab.open(os.path.join(SOURCE, "docs", "data", "issue53",
                                                   "fig2-boundary.export.yaml.gz")).search().law.left_out, [])

    def test_the_search_is_summarys(self):
        """Session.search() of the Figure 2 campaign (issue 53's archive, 600+ real runs): every
        configuration's runs, verdicts, state, crossing, interval and slope equal `summary -o`'s
        CSV exactly, and the law's coefficients the numbers `summary` prints."""
        export = os.path.join(self.tmp, "fig2.yaml")
        cli("export-yaml", os.path.join(SOURCE, "docs", "data", "issue53", "fig2-boundary.export.yaml.gz"),
            "-o", export)
        table = os.path.join(self.tmp, "summary.csv")
        text = cli("summary", export, "-o", table).stdout
        s = headlab.open(export)
        self.assertEqual(s.search_spec["axis"], "lr")
        report = s.search()
        self.assertFalse(report.stale)
        cli_rows = pd.read_csv(table, dtype=str, keep_default_na=False)
        mine = report.configurations
        self.assertEqual(len(mine), len(cli_rows))
        self.assertEqual(len(mine), 25)
        for i, row in cli_rows.iterrows():
            for axis in ("d_model", "heads"):
                self.assertEqual(str(mine[axis][i]), row[axis])
            for column in ("runs", "verdicts"):
                self.assertEqual(int(mine[column][i]), int(row[column]), (i, column))
            self.assertEqual(mine["state"][i], row["state"])
            for column in ("estimate", "low", "high", "width", "slope"):
                self.assertTrue(same_number(row[column], mine[column][i]), (i, column, row[column], mine[column][i]))
            for column in ("low_open", "high_open"):
                self.assertEqual(bool(mine[column][i]), row[column] == "1", (i, column))
        self.assertEqual(str(mine["d_model"].dtype), "int64")
        # The law: summary prints α and β to 3 decimals, C and p to 3 significant digits.
        law = report.law
        self.assertTrue(law.ok)
        m = re.search(r"α = ([-0-9.]+) \[([-0-9.]+), ([-0-9.]+)\]", text)
        for got, printed in zip(law.coefficients.loc["alpha"], m.groups()):
            self.assertEqual(f"{got:.3f}", printed)
        m = re.search(r"β1 \(heads\) = ([-0-9.]+) \[([-0-9.]+), ([-0-9.]+)\]", text)
        for got, printed in zip(law.coefficients.loc["beta_heads"], m.groups()):
            self.assertEqual(f"{got:.3f}", printed)
        m = re.search(r"χ² = ([0-9.]+) on ([0-9]+) dof", text)
        self.assertEqual((f"{law.chi2:.2f}", str(law.dof)), m.groups())
        self.assertEqual(len(law.references), 3)
        self.assertEqual(list(law.references["alpha"]), [0.5, 0.75, 1.0])
        printed = re.findall(r"α = \S+\s*: χ² = [0-9.]+ on \d+ dof, p = ([-0-9.e+]+); (inside|outside)", text)
        for (p, where), (_, ref) in zip(printed, law.references.iterrows()):
            self.assertEqual(f"{ref['p']:.3g}", f"{float(p):.3g}")
            self.assertEqual(bool(ref["in_interval"]), where == "inside")
        # Width and heads as separate exponents (issue 77): the line summary prints, and the same
        # fit as α and β re-expressed (a = α, b = α − β; the intervals are the other fit's own).
        m = re.search(r"a = ([-0-9.]+) \[([-0-9.]+), ([-0-9.]+)\]   b = ([-0-9.]+) \[([-0-9.]+), ([-0-9.]+)\] "
                      r"\(95 %\), correlation ([-0-9.]+)", text)
        wh = report.width_and_heads
        self.assertTrue(wh.ok, wh.note)
        got = [*wh.coefficients.loc["a"], *wh.coefficients.loc["b"]]
        self.assertEqual([f"{v:.3f}" for v in got], list(m.groups()[:6]))
        self.assertEqual(f"{wh.correlation:.2f}", m.group(7))
        self.assertAlmostEqual(wh.coefficients.loc["a", "estimate"], law.alpha, places=9)
        self.assertAlmostEqual(wh.coefficients.loc["b", "estimate"],
                               law.alpha - law.coefficients.loc["beta_heads", "estimate"], places=9)
        self.assertEqual(set(law.correlation), {"heads"})
        # The bend (issue 77) and the misfit, as summary prints them.
        m = re.search(r"bend: \+ γ \(log10 head_dim − log10 ([0-9.]+)\)², γ = ([-0-9.]+) \[([-0-9.]+), ([-0-9.]+)\]; "
                      r"against the power law Δχ² = ([0-9.]+) .*, p = ([-0-9.e+]+): the (bent law is chosen|power law "
                      r"stands)\n  local α ([-0-9.]+) at head_dim = ([0-9.]+), ([-0-9.]+) at [0-9.]+, ([-0-9.]+) at "
                      r"([0-9.]+); χ² = ([0-9.]+) on (\d+) dof", text)
        bend = report.bend
        self.assertTrue(m and bend.ok, bend.note)
        self.assertEqual(f"{bend.centre:.3g}", m.group(1))
        self.assertEqual([f"{v:.3f}" for v in bend.gamma], list(m.groups()[1:4]))
        self.assertEqual((f"{bend.statistic:.1f}", f"{bend.p:.3g}"), (m.group(5), f"{float(m.group(6)):.3g}"))
        self.assertEqual(bend.chosen, m.group(7) == "bent law is chosen")
        ends = sorted(bend.alpha_at.items())
        self.assertEqual((f"{ends[0][1]:.2f}", f"{ends[0][0]:.3g}", f"{bend.alpha:.2f}", f"{ends[1][1]:.2f}",
                          f"{ends[1][0]:.3g}"), (m.group(8), m.group(9), m.group(10), m.group(11), m.group(12)))
        self.assertEqual((f"{bend.chi2:.2f}", str(bend.dof)), (m.group(13), m.group(14)))
        self.assertEqual(len(law.misfit), law.configurations)
        self.assertTrue((law.misfit["sigmas"].abs().diff().dropna() <= 0).all())  # the largest first
        top = law.misfit.iloc[0]
        self.assertIn(f"d_model={top['d_model']} heads={top['heads']} {top['decades']:+.3f} decades "
                      f"({top['sigmas']:+.1f} σ)", text)
        # The joint model (issue 53), fitted as a check beside the separate one: the numbers the
        # check line prints, each configuration's interval by it, and a session that asks for it
        # (`model: joint`) reads as `summary` prints it.
        alternative = report.alternative_law
        self.assertEqual((report.model, law.model, alternative.model), ("separate", "separate", "joint"))
        m = re.search(r"check, the joint model: α = ([-0-9.]+) \[([-0-9.]+), ([-0-9.]+)\].*τ = ([0-9.e-]+)", text)
        for got, printed in zip(alternative.coefficients.loc["alpha"], m.groups()[:3]):
            self.assertEqual(f"{got:.3f}", printed)
        self.assertEqual(f"{alternative.tau:.3g}", m.group(4))
        self.assertEqual(int(mine["alternative_estimate"].notna().sum()), 25)
        with open(export, encoding="utf-8") as f:
            old = f.read()
        joint_text, cli_rows, joint = self.reread(old, ("  budget: 30\n", "  budget: 30\n  model: joint\n"),
                                                  "joint")
        self.assertEqual((joint.model, joint.law.model, joint.alternative_law.model),
                         ("joint", "joint", "separate"))
        for i, row in cli_rows.iterrows():
            self.assertEqual(joint.configurations["state"][i], row["state"])
            for column in ("estimate", "low", "high"):
                self.assertTrue(same_number(row[column], joint.configurations[column][i]), (i, column))
            # The separate model's interval rides along as the check.
            self.assertTrue(same_number(mine["low"][i], joint.configurations["alternative_low"][i]))
        m = re.search(r"α = ([-0-9.]+) \[([-0-9.]+), ([-0-9.]+)\]", joint_text)
        for got, printed in zip(joint.law.coefficients.loc["alpha"], m.groups()):
            self.assertEqual(f"{got:.3f}", printed)
        # Paired seeds (issue 53): the same runs read as a paired search (most are the first
        # seed's, at ~20 η per configuration) give each configuration's monotone seeds, the
        # thresholds' spread and each seed's bracket as `summary -o` writes them.
        paired_text, cli_rows, paired = self.reread(
            old, ("  replicates: 1\n", "  replicates: paired\n  seeds: 3\n"), "paired")
        self.assertEqual((paired.seed_plan, paired.model), ("paired", "separate"))
        self.assertEqual(report.seed_plan, "replicates")
        self.assertTrue(report.seeds.empty)
        mine = paired.configurations
        for i, row in cli_rows.iterrows():
            self.assertEqual(int(mine["monotone_seeds"][i]), int(row["monotone_seeds"]), i)
            self.assertTrue(same_number(row["seed_scatter"], mine["seed_scatter"][i]), i)
            of_it = paired.seeds[(paired.seeds["d_model"] == mine["d_model"][i]) &
                                 (paired.seeds["heads"] == mine["heads"][i])]
            self.assertEqual(len(of_it), int(row["seeds"]), i)
            self.assertEqual(int(of_it["monotone"].sum()), int(row["monotone_seeds"]), i)
            # The crossing is the seed model's; the check, the logistic over every run, is the
            # unpaired reading's crossing.
            self.assertTrue(same_number(row["estimate"], mine["estimate"][i]), i)
            self.assertEqual(mine["alternative_estimate"][i], report.configurations["estimate"][i])
        m = re.search(r"paired seeds: (\d+) of (\d+) seeds monotone", paired_text)
        self.assertEqual(int(m.group(1)), int(paired.seeds["monotone"].sum()))
        self.assertEqual(int(m.group(2)), len(paired.seeds))
        # A report older than the runs (a shard finished one after it): given, marked and said.
        counted = re.search(r"finished_runs: (\d+)", old)
        stale_path = os.path.join(self.tmp, "stale.yaml")
        with open(stale_path, "w", encoding="utf-8") as f:
            f.write(old.replace(counted.group(0), f"finished_runs: {int(counted.group(1)) - 1}"))
        with self.assertWarnsRegex(headlab.SearchReportStale, "headlab-cli merge"):
            self.assertTrue(headlab.open(stale_path).search().stale)
        # Today's report says the computation that made it, and is current.
        self.assertEqual(report.method, headlab.session.schema()["search_report_method"])
        self.assertFalse(report.stale)
        # One an earlier release's computation made (before reports said which): marked and said,
        # however current its runs (issue 78: the stored archives' reports differed from
        # `summary` by up to 3e-5 relative, unmarked).
        self.assertIn("\n  method: ", old)
        with open(stale_path, "w", encoding="utf-8") as f:
            f.write(re.sub(r"\n  method: \d+\n", "\n", old, count=1))
        with self.assertWarnsRegex(headlab.SearchReportStale, "earlier release's computation"):
            earlier = headlab.open(stale_path).search()
        self.assertTrue(earlier.stale)
        self.assertEqual(earlier.method, 0)
        # A session of an earlier release, with a search but no report: the command that writes one.
        with open(stale_path, "w", encoding="utf-8") as f:
            f.write(old[: old.index("search_report:")])
        with self.assertRaisesRegex(headlab.HeadLabError, "no search report.*export-yaml"):
            headlab.open(stale_path).search()
        # Without a search: None.
        self.assertIsNone(headlab.open(os.path.join(SOURCE, FIXTURES[0])).search())

    def test_the_run_filter_and_run_values_are_the_clis(self):
        """Issue 78 item 3: Session.runs(filter=, values=) selects the runs `headlab-cli
        export-csv --filter` writes, with the same STAT(CURVE) values to the last bit, on the
        fixtures (three tasks, exports, an earlier release's file), the Figure 2 campaign (its
        archive keeps metrics only) and a session trained now; a filter the CLI refuses is refused
        with its message."""
        sessions = [os.path.join(SOURCE, f) for f in FIXTURES]
        sessions.append(os.path.join(SOURCE, "docs/data/issue53/fig2-boundary.export.yaml.gz"))
        sessions.append(self.train_tiny("filtered.yaml"))
        filters = ["best:2", "worst:1:min(test_loss)", "!outliers", "!outliers best:3:mean_last(train_loss)",
                   "learned best:1:max(test_loss)", "status=done worst:2:best(test_loss)", "min(test_loss)<2.2",
                   "heads=2 best:1", "final(train_loss)>=0.5 worst:2", "best:2:final_test_loss",
                   "best:2:mode(test_loss)", "worst:0", "!outliers:", "best:1:loss"]
        values = ["min(test_loss)", "mean_last(train_loss)", "final(test_loss)", "best(test_accuracy)"]
        checked = refused = 0
        for path in sessions:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                session = headlab.open(path)
            for text in filters:
                with self.subTest(session=os.path.basename(path), filter=text):
                    out = os.path.join(self.tmp, "filtered")
                    args = ["export-csv", path, "-o", out, "--filter", text]
                    for key in values:
                        args += ["--value", key]
                    p = cli(*args, check=False)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        if p.returncode != 0:
                            self.assertEqual(p.returncode, 2, p.stderr)
                            message = p.stderr.strip().split("--filter: ", 1)[1]
                            with self.assertRaises(headlab.RunFilterError) as caught:
                                session.runs(filter=text, values=values)
                            self.assertEqual(str(caught.exception), message)
                            refused += 1
                            continue
                        mine = session.runs(filter=text, values=values)
                    theirs = pd.read_csv(os.path.join(out, "runs.csv"), dtype=str, keep_default_na=False)
                    self.assertEqual(list(mine["run"]), [int(r) for r in theirs["run"]])
                    for key in values:
                        expect = [float(v) if v else math.nan for v in theirs[key]]
                        got = list(mine[key])
                        self.assertEqual(len(got), len(expect))
                        for a, b in zip(got, expect):
                            self.assertTrue(a == b or (math.isnan(a) and math.isnan(b)), (key, a, b))
                    checked += 1
        self.assertGreater(checked, 80)
        self.assertGreater(refused, 30)
        with self.assertRaisesRegex(ValueError, "no statistic 'mode'"):
            headlab.open(sessions[0]).runs(values=["mode(test_loss)"])
        self.assertEqual(headlab.STATISTICS, ("final", "min", "max", "best", "mean_last"))

    def test_a_report_opens_as_its_session(self):
        """Issue 78 item 1: headlab.open reads a report (headlab-cli report) as the session inside
        it: the same runs, curves, notes and tags as the session file; a damaged one is refused
        with the file named, and annotate refuses to write into a report."""
        if not os.path.exists("/usr/share/nodejs/d3/dist/d3.min.js") and not os.environ.get("HEADLAB_D3_JS"):
            self.skipTest("D3 is not installed (apt-get install node-d3): no report can be written")
        path = self.train_tiny("reported.yaml")
        cli("note", path, "--tag", "lesson", "--text", "a note with </script> in it")
        page = os.path.join(self.tmp, "reported.html")
        cli("report", path, "-o", page)
        a, b = headlab.open(path), headlab.open(page)
        # Every column but `file`, the run file a run was read from (the report holds them inline).
        pd.testing.assert_frame_equal(a.runs().drop(columns="file"), b.runs().drop(columns="file"))
        pd.testing.assert_frame_equal(a.curves(), b.curves())
        self.assertEqual((b.note, b.tags), ("a note with </script> in it", ["lesson"]))
        with self.assertRaisesRegex(headlab.HeadLabError, "is a report"):
            b.annotate(note="x")
        with open(page, encoding="utf-8") as f:
            text = f.read()
        damaged = os.path.join(self.tmp, "damaged.html")
        with open(damaged, "w", encoding="utf-8") as f:
            f.write(text.replace('data-encoding="gzip">', 'data-encoding="gzip">AAAA', 1))
        with self.assertRaisesRegex(headlab.HeadLabError, "damaged.html: .*damaged|damaged.html: is not a readable gzip"):
            headlab.open(damaged)
        with open(damaged, "w", encoding="utf-8") as f:
            f.write("<html><body>no session</body></html>")
        with self.assertRaisesRegex(headlab.HeadLabError, "without a HeadLab session"):
            headlab.open(damaged)

    def test_notes_and_tags_are_the_clis(self):
        """Issue 78 item 2: a session's and its runs' notes and tags, written by `headlab-cli
        note`, read by the package as the CLI writes runs.csv (its tags and note columns), and
        selected by tag as `export-csv --filter` selects; an older file has none."""
        path = self.train_tiny("noted.yaml")
        self.assertEqual((headlab.open(path).note, headlab.open(path).tags), ("", []))
        cli("note", path, "--tag", "lesson,cpu", "--text", "the classroom's contrast: 3 heads")
        cli("note", path, "--run", "1", "--run", "4", "--tag", "check")
        cli("note", path, "--run", "4", "--tag", "outlier", "--text", "slow, then \"fine\"")
        s = headlab.open(path)
        self.assertEqual(s.note, "the classroom's contrast: 3 heads")
        self.assertEqual(s.tags, ["lesson", "cpu"])
        runs = s.runs()
        out = os.path.join(self.tmp, "noted-csv")
        cli("export-csv", path, "-o", out)
        theirs = pd.read_csv(os.path.join(out, "runs.csv"), dtype=str, keep_default_na=False)
        self.assertEqual(list(theirs.columns[-2:]), ["tags", "note"])
        self.assertEqual(list(runs["tags"]), list(theirs["tags"]))
        self.assertEqual(list(runs["note"]), list(theirs["note"]))
        self.assertEqual(runs.loc[4, "tags"], "check outlier")
        self.assertEqual(runs.loc[4, "note"], 'slow, then "fine"')
        for text in ("tag=check", "tag!=check", "tag=outlier best:1", "tag=nothing", "tag<1", "tag=a/b:c"):
            with self.subTest(filter=text):
                p = cli("export-csv", path, "-o", out, "--filter", text, check=False)
                if p.returncode:
                    with self.assertRaises(headlab.RunFilterError) as caught:
                        s.runs(filter=text)
                    self.assertEqual(str(caught.exception), p.stderr.strip().split("--filter: ", 1)[1])
                    continue
                theirs = pd.read_csv(os.path.join(out, "runs.csv"), dtype=str, keep_default_na=False)
                self.assertEqual(list(s.runs(filter=text)["run"]), [int(r) for r in theirs["run"]])
        self.assertEqual(list(s.runs(filter="tag=check")["run"]), [1, 4])
        # Edited from Python: what `headlab-cli note` then shows, the rest of the file unchanged.
        with open(path, encoding="utf-8") as f:
            before = [line for line in f.read().split("\n")
                      if not line.startswith(("note:", "tags:", "annotations:", "  \""))]
        self.assertEqual(s.annotate(run=4, untag=["check"], tags=["true", "1"], note="x: y"),
                         ("x: y", ["outlier", "true", "1"]))
        self.assertEqual(s.annotate(tags=["py"], note='edited in "python"'),
                         ('edited in "python"', ["lesson", "cpu", "py"]))
        run4 = s.runs().loc[4, "run_id"]
        self.assertEqual(s.annotate(run=run4, untag=["1"])[1], ["outlier", "true"])
        shown = cli("note", path, "--run", "4").stdout
        self.assertIn("tags: outlier true", shown)
        self.assertIn("note: x: y", shown)
        self.assertIn('note: edited in "python"', cli("note", path).stdout)
        with open(path, encoding="utf-8") as f:
            after = [line for line in f.read().split("\n")
                     if not line.startswith(("note:", "tags:", "annotations:", "  \""))]
        self.assertEqual(after, before)
        self.assertEqual(list(s.runs(filter="tag=check")["run"]), [1])
        with self.assertRaisesRegex(headlab.HeadLabError, "a tag is one word"):
            s.annotate(tags=["two words"])
        with self.assertRaisesRegex(headlab.HeadLabError, "no run 9"):
            s.annotate(run=9, tags=["x"])
        # While HeadLab holds the session's lock (a run in training), nothing is written.
        import fcntl
        lock = os.path.join(self.tmp, "noted.results", "lock")
        with open(lock, "a+") as held:  # as a trainer takes it: locked, then its holder written
            fcntl.flock(held, fcntl.LOCK_EX)
            held.truncate(0)
            held.write("PID 1 on a host since now")
            held.flush()
            with self.assertRaisesRegex(headlab.HeadLabError, "is being written by PID 1 on a host"):
                s.annotate(tags=["late"])
        self.assertNotIn("late", headlab.open(path).tags)

    def test_a_prediction_is_the_clis(self):
        """Issue 77: `headlab-cli predict` and Law.predict give the same η* and prediction interval
        for configurations the Figure 2 campaign never ran, inside the law's span and beyond it;
        bad configurations are refused by name."""
        import json
        path = os.path.join(SOURCE, "docs/data/issue53/fig2-boundary.export.yaml.gz")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", headlab.SearchReportStale)
            report = headlab.open(path).search()
        law, bend = report.law, report.bend
        self.assertTrue(law.ok and law.covariance and law.scatter > 0)
        self.assertEqual(law.span, {"head_dim": (2.0, 384.0), "heads": (1.0, 12.0)})
        # The campaign's law bends: predict (the chosen law) gives the bent law's numbers.
        self.assertTrue(bend.chosen and len(bend.covariance) == 4 and bend.span == law.span)
        predictors = {"chosen": report.predict, "power": law.predict, "bent": bend.predict}
        for d_model, heads, beyond in ((96, 4, []), (192, 8, []), (768, 16, ["heads"]), (768, 1, ["head_dim"])):
            for which, predict in predictors.items():
                with self.subTest(d_model=d_model, heads=heads, law=which):
                    out = json.loads(cli("predict", path, "--d_model", str(d_model), "--heads", str(heads),
                                         "--law", which, "--json").stdout)
                    mine = predict(head_dim=d_model // heads, heads=heads)
                    self.assertEqual(out["law_axes"], {"head_dim": d_model // heads, "heads": heads})
                    for key in ("estimate", "low", "high", "law_se_decades", "scatter_decades"):
                        self.assertAlmostEqual(out[key] / mine[key], 1.0, places=12, msg=key)
                    self.assertEqual(out["beyond"], beyond)
                    self.assertEqual(mine["beyond"], beyond)
                    self.assertEqual(out["law"], "power" if which == "power" else "bent")
                    self.assertEqual(mine["law"], out["law"])
                    self.assertLess(out["low"], out["estimate"])
                    self.assertLess(out["estimate"], out["high"])
        with self.assertRaisesRegex(ValueError, "law: chosen, power or bent"):
            report.predict(law="straight", head_dim=48, heads=16)
        bad = cli("predict", path, "--d_model", "768", "--heads", "16", "--law", "straight", check=False)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("--law", bad.stderr)
        text = cli("predict", path, "--d_model", "768", "--heads", "16").stdout
        self.assertRegex(text, r"η\* = [0-9.e-]+ \[[0-9.e-]+, [0-9.e-]+\] \(95 % prediction interval\) at "
                               r"d_model=768 heads=16")
        self.assertIn("heads lies outside the span the law was fitted over", text)
        for args, message in ((["--heads", "0"], "heads"), (["--set", "dropout=0.1"], "'dropout' is not a dimension"),
                              (["--set", "heads"], "expected NAME=VALUE"), ([], "give the configuration")):
            with self.subTest(args=args):
                p = cli("predict", path, *args, check=False)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn(message, p.stderr)
        with self.assertRaisesRegex(ValueError, "give each law axis: head_dim, heads"):
            law.predict(head_dim=8)
        # --into: a search not begun starts each configuration over its predicted interval.
        new = os.path.join(self.tmp, "next.yaml")
        with open(new, "w", encoding="utf-8") as f:
            f.write(TINY.split("sweep:")[0] + "sweep:\n  d_model: [768]\n  heads: [8, 16]\n"
                    "search: {axis: lr, range: [3.0e-05, 0.03]}\n")
        out = cli("predict", path, "--into", new).stdout
        self.assertIn("wrote", out)
        starts = {}
        for h in (8, 16):
            expect = json.loads(cli("predict", path, "--d_model", "768", "--heads", str(h), "--json").stdout)
            starts[h] = (expect["low"], expect["high"])
        with open(new, encoding="utf-8") as f:
            text = f.read()
        for h, (low, high) in starts.items():
            m = re.search(r'- \{at: \{d_model: "768", heads: "%d"\}, low: ([0-9.e-]+), high: ([0-9.e-]+)\}' % h, text)
            self.assertTrue(m, text)
            self.assertAlmostEqual(float(m.group(1)) / low, 1, places=12)
            self.assertAlmostEqual(float(m.group(2)) / high, 1, places=12)
        again = cli("predict", path, "--into", path, check=False)  # a search that has begun
        self.assertEqual(again.returncode, 2)
        self.assertIn("its search has begun", again.stderr)

    def test_a_run_id_of_digits_stays_text(self):
        """A hash of 16 hex digits may be all digits (one in ~1,800 runs: 3001346238331926) or
        digits around one e (12e4...): plain YAML reads those as numbers. Exports quote it now;
        an export written before, with the id plain, still reads as the text."""
        path = self.train_tiny()
        export = os.path.join(self.tmp, "export.yaml")
        cli("export-yaml", path, "-o", export)
        with open(export, encoding="utf-8") as f:
            text = f.read()
        ids = re.findall(r"^\s*-?\s*run_id: (.*)$", text, flags=re.M)
        self.assertEqual(len(ids), 6)
        self.assertTrue(all(i.startswith('"') and i.endswith('"') for i in ids), ids)
        for plain in ("3001346238331926", "0123456789012345", "12e4567890123456"):
            old = re.sub(r'run_id: "[0-9a-f]{16}"', f"run_id: {plain}", text, count=1)
            old_path = os.path.join(self.tmp, f"old-{plain}.yaml")
            with open(old_path, "w", encoding="utf-8") as f:
                f.write(old)
            runs = headlab.open(old_path).runs()
            self.assertEqual(runs["run_id"][0], plain)
            self.assertEqual(str(runs["run_id"].dtype), "string")

    def test_inline_runs_have_the_clis_run_id(self):
        """Issue 78: the sessions in docs/data that store runs inline had no run_id in Python (the
        CLI hashes the resolved configuration), so runs(index=True) was not unique and a second
        MLflow export doubled every run. Exports carry the id, and these files were re-exported;
        a file of an earlier release warns and names the command that adds them."""
        for name in ("docs/data/addition-fig2-grid-seeds-h100.yaml", "docs/data/heads/heads-findings-h100.yaml",
                     "docs/data/issue23/text-cpu.export.yaml.gz", "docs/data/issue23/nn-cpu.export.yaml.gz"):
            with self.subTest(session=name):
                path = os.path.join(SOURCE, name)
                with warnings.catch_warnings():
                    warnings.simplefilter("error", headlab.RunIdsMissing)
                    s = headlab.open(path)
                runs = s.runs()
                self.assertTrue(all(not r.file for r in s.run_records()))  # every run inline
                cli_runs, _ = cli_tables(path, self.tmp)
                self.assertEqual(list(runs["run_id"]), list(cli_runs["run_id"]))
                self.assertTrue(s.runs(index=True).index.is_unique)
        with open(os.path.join(SOURCE, "tests/session/fixtures/v2-addition.export.yaml"), encoding="utf-8") as f:
            text = re.sub(r"^( *)- run_id: .*\n *", r"\1- ", f.read(), flags=re.M)
        old = os.path.join(self.tmp, "without-ids.yaml")
        with open(old, "w", encoding="utf-8") as f:
            f.write(text)
        with self.assertWarnsRegex(headlab.RunIdsMissing, r"4 of 4 runs stored in the file have no run_id .*"
                                   r"headlab-cli export-yaml .* adds them"):
            self.assertEqual(set(headlab.open(old).runs()["run_id"]), {""})

    def test_numbers_and_dates_read_as_the_cli_reads_them(self):
        """YAML 1.1 (PyYAML's default) reads 010 as octal 8, and a date as a datetime, raising
        ValueError on an impossible one; headlab-cli reads 010 as 10 and dates as text (issue 74)."""
        with open(os.path.join(SOURCE, "resources", "presets", "quick-demo.yaml"), encoding="utf-8") as f:
            preset = f.read()
        path = os.path.join(self.tmp, "octal.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(re.sub(r"^  seed: .*$", "  seed: 010", preset, flags=re.M))
        self.assertEqual(headlab.open(path).experiment["seed"], 10)
        export = os.path.join(self.tmp, "octal-export.yaml")
        cli("export-yaml", path, "-o", export)
        with open(export, encoding="utf-8") as f:
            self.assertRegex(f.read(), r"(?m)^  seed: 10$")
        dated = os.path.join(self.tmp, "dated.yaml")
        with open(dated, "w", encoding="utf-8") as f:
            f.write(re.sub(r"^name: .*$", "name: 2026-26-03T14:43:01Z", preset, flags=re.M))
        session = headlab.open(dated)
        self.assertEqual(session.name, "2026-26-03T14:43:01Z")
        self.assertIn("'2026-26-03T14:43:01Z'", cli("validate", dated).stdout)

    # -- bad input: the CLI's place ----------------------------------------------------------------

    def cli_message(self, path):
        p = cli("export-csv", path, "-o", os.path.join(self.tmp, "bad-out"), check=False)
        return p.stderr.strip().splitlines()

    def test_bad_files_are_named_where_the_cli_names_them(self):
        def write(name, text):
            p = os.path.join(self.tmp, name)
            with open(p, "w") as f:
                f.write(text)
            return p

        cases = [
            write("bad-type.yaml", "schema_version: 2\nexperiment:\n  model: {d_model: x}\n  phases: [{steps: 1}]\n"),
            write("bad-heads.yaml", "schema_version: 2\nexperiment:\n  model:\n    heads: [2, two]\n"
                                    "  phases: [{steps: 1}]\n"),
            write("bad-lr.yaml", "schema_version: 2\nexperiment:\n  lr: -1\n  phases: [{steps: 1}]\n"),
            write("bad-yaml.yaml", "schema_version: 2\nexperiment: [\n"),
            write("bad-version.yaml", "schema_version: 9\nexperiment:\n  phases: [{steps: 1}]\n"),
            write("bad-hex.yaml", "schema_version: 2\nexperiment:\n  model: {d_model: 0x30}\n"
                                  "  phases: [{steps: 1}]\n"),
            write("bad-binary.yaml", "schema_version: 2\nexperiment:\n  seed: 0b11\n"
                                     "  phases: [{steps: 1}]\n"),
        ]
        for path in cases:
            with self.subTest(path=os.path.basename(path)):
                with self.assertRaises(headlab.HeadLabError) as raised:
                    headlab.open(path)
                said = self.cli_message(path)
                self.assertTrue(said, path)
                ours = str(raised.exception)
                # The same file, line and column, and the same key where the CLI names one.
                place = lambda m: ":".join(m.split(":")[:3])
                self.assertEqual(place(ours), place(said[0]), f"{ours}\nCLI: {said[0]}")
                cli_key = said[0].split(": ")[1] if said[0].count(": ") >= 2 else None
                if cli_key and "." in cli_key and " " not in cli_key:
                    self.assertIn(cli_key + ":", ours)

    def test_a_partial_run_file_is_skipped_with_the_clis_place(self):
        directory = os.path.join(self.tmp, "partial")
        shutil.copytree(os.path.join(SOURCE, "tests/session/fixtures"), directory)
        session = os.path.join(directory, "v2-addition.yaml")
        runs_dir = os.path.join(directory, "v2-addition.results", "runs")
        victim = os.path.join(runs_dir, sorted(os.listdir(runs_dir))[0])
        with open(victim, "rb") as f:
            data = f.read()
        with open(victim, "wb") as f:
            f.write(data[:700])  # a file cut short, as a full disk leaves one
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            s = headlab.open(session)
        self.assertEqual(len(s), 3)
        said = [line for line in self.cli_message(session) if "skipped" in line]
        self.assertEqual(len(caught), 1)
        self.assertEqual(len(said), 1)
        place = lambda m: ":".join(os.path.normpath(m.split(":")[0]).split(os.sep)[-1:] + m.split(":")[1:3])
        self.assertEqual(place(str(caught[0].message)), place(said[0]))
        self.assertTrue(str(caught[0].message).endswith("(this run file is skipped)"))
        self.assertEqual(s.skipped_files, [str(caught[0].message)])
        self.assertTablesEqual(session)



class Namespace(unittest.TestCase):
    def test_wilson_is_the_apps_interval(self):
        # The app's P(learned) whiskers (tests/ui/test_ui_figures.cpp, inverted by bisection
        # there): 2 of 3 and 3 of 3; arrays too; no trials, (0, 1).
        low, high = headlab.wilson(2, 3)
        self.assertAlmostEqual(low, 0.2076596008, places=9)
        self.assertAlmostEqual(high, 0.9385080553, places=9)
        self.assertEqual(headlab.wilson(3, 3)[1], 1.0)
        self.assertAlmostEqual(headlab.wilson(3, 3)[0], 0.4385029682, places=9)
        lows, highs = headlab.wilson([0, 2], [3, 3])
        self.assertEqual(lows[0], 0.0)
        self.assertAlmostEqual(highs[1], 0.9385080553, places=9)
        self.assertEqual(headlab.wilson(0, 0), (0.0, 1.0))

    def test_a_star_import_keeps_the_builtin_open(self):
        # Issue 78: `from headlab import *` replaced the built-in open with headlab.open.
        import builtins
        names = {}
        exec("from headlab import *", names)
        self.assertIn("Session", names)
        self.assertIs(names.get("open", builtins.open), builtins.open)
        import headlab
        self.assertTrue(callable(headlab.open))


if __name__ == "__main__":
    unittest.main(verbosity=2)
