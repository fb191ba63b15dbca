"""tests/python/run_notebook_doc.py — runs docs/NOTEBOOKS.md's code as a script (ctest python_notebook).

The ```python blocks run in order in one namespace, from the repository root (so the docs' paths
hold), with matplotlib's Agg backend. `seeds-demo.yaml` is trained first, with headlab-cli
(HEADLAB_CLI), from the document's own ```yaml session (seconds on one core); the bridges' outputs
(the TensorBoard folder, the MLflow database) go to the temporary folder. The figures the blocks save go to a temporary folder and must exist and be
non-empty; the blocks' own asserts check their numbers.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SOURCE = os.environ.get("HEADLAB_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("HEADLAB_CLI", os.path.join(SOURCE, "build", "app", "cli", "headlab-cli"))
sys.path.insert(0, os.path.join(SOURCE, "python"))
sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("MPLBACKEND", "Agg")

with open(os.path.join(SOURCE, "docs", "NOTEBOOKS.md"), encoding="utf-8") as f:
    text = f.read()
blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
assert len(blocks) >= 3, "docs/NOTEBOOKS.md lost its code"
sessions = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
assert len(sessions) == 1, "docs/NOTEBOOKS.md lost its seeds-demo.yaml"

with tempfile.TemporaryDirectory(prefix="headlab-notebook-") as tmp:
    source = os.path.join(tmp, "in.yaml")
    with open(source, "w") as f:
        f.write(sessions[0])
    demo = os.path.join(tmp, "seeds-demo.yaml")
    subprocess.run([CLI, "run", source, "-o", demo, "--threads", "1"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    namespace = {"__name__": "__notebook__"}
    figures = []
    for i, block in enumerate(blocks):
        block = block.replace('"seeds-demo.yaml"', repr(demo))
        # What the bridges write, into the temporary folder too.
        block = block.replace('"tb"', repr(os.path.join(tmp, "tb")))
        block = block.replace('"sqlite:///mlflow.db"', repr("sqlite:///" + os.path.join(tmp, "mlflow.db")))
        # Figures into the temporary folder, whatever name the document gives them.
        for name in re.findall(r'savefig\("([^"]+)"', block):
            figures.append(os.path.join(tmp, name))
            block = block.replace(f'savefig("{name}"', f'savefig({os.path.join(tmp, name)!r}')
        cwd = os.getcwd()
        os.chdir(SOURCE)
        try:
            exec(compile(block, f"docs/NOTEBOOKS.md block {i + 1}", "exec"), namespace)
        finally:
            os.chdir(cwd)
    for figure in figures:
        assert os.path.getsize(figure) > 10_000, f"{figure} is missing or empty"
    keep = os.environ.get("HEADLAB_NOTEBOOK_OUT")  # to look at the figures
    if keep:
        os.makedirs(keep, exist_ok=True)
        for figure in figures:
            shutil.copy(figure, keep)
    print(f"ran {len(blocks)} blocks of docs/NOTEBOOKS.md; figures: {', '.join(os.path.basename(f) for f in figures)}")
