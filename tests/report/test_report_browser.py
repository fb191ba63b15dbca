"""test_report_browser.py — the report (headlab-cli report, docs/REPORT.md) in a real browser.

For three real sessions (the Figure 2 grid with seeds, the Figure 4 boundary search, the classroom
preset as it trained on this CPU), the report is written, opened offline in headless Chromium
(Debian's chromium and chromium-driver) and used as a reader would: a legend entry is clicked, a
point is hovered, the runs table is filtered. The test checks what the page then shows: the
series hidden and shown again, the value in the tooltip against the session's own number, and
the runs the filter keeps against `headlab-cli export-csv --filter` for the same text. The page
must fetch nothing (every resource inline), and the session inside must come back byte for byte.
A screenshot of each page at 1280x720 goes to $HEADLAB_SCREENSHOTS when it is set.

The browser is driven over WebDriver's HTTP protocol (W3C) with the standard library alone.
Exit 77 (a skip) where Chromium, its driver or D3 is not installed.
"""
from __future__ import annotations

import base64
import csv
import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

CLI = os.environ.get("HEADLAB_CLI", "")
SOURCE = os.environ.get("HEADLAB_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
D3 = os.environ.get("HEADLAB_D3_JS") or "/usr/share/nodejs/d3/dist/d3.min.js"
# (name, session, filters checked against the CLI, the sections the page must show)
SESSIONS = [
    ("fig2-grid", "docs/data/addition-fig2-grid-seeds-h100.yaml",
     ["heads=12", "d_model>=96 learned", "!learned", "best:5", "worst:3:min(test_loss)",
      "min(test_loss)<0.01", "!outliers", "seed=1 heads!=1"],
     ["Loss curves", "Trainability over width × heads", "Any run value against any axis", "Parallel coordinates", "Runs"]),
    ("boundary-search", "docs/data/issue27/fig4-boundary.export.yaml.gz",
     ["heads=12", "learned", "lr>1e-3 !learned", "best:10", "final_test_loss<1.5 d_model=384",
      "status=done"],
     ["Learned fraction against η·√mH", "The boundary search", "Any run value against any axis", "Parallel coordinates", "Runs"]),
    ("classroom", "docs/data/issue78/classroom.export.yaml.gz",
     ["heads=1", "lr=7e-3", "learned", "best:1", "mean_last(train_loss)<2"],
     ["Loss curves", "Learned fraction against η·√mH", "Any run value against any axis", "Parallel coordinates", "Runs"]),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Browser:
    """Headless Chromium through chromedriver (W3C WebDriver over HTTP)."""

    def __init__(self):
        self.port = free_port()
        self.driver = subprocess.Popen([DRIVER, f"--port={self.port}"], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                self._call("GET", "/status")
                break
            except OSError:
                time.sleep(0.1)
        args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,720", "--hide-scrollbars",
                # Offline: any name the page tried to resolve would fail (it must resolve none).
                "--host-resolver-rules=MAP * ~NOTFOUND"]
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
            "goog:loggingPrefs": {"browser": "ALL"}}}}
        self.session = self._call("POST", "/session", caps)["sessionId"]

    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return json.loads(response.read() or b"{}").get("value")
        except urllib.error.HTTPError as e:
            raise AssertionError(f"WebDriver {method} {path}: {e.read().decode(errors='replace')[:800]}")

    def call(self, method, path, body=None):
        return self._call(method, f"/session/{self.session}{path}", body)

    def open(self, url):
        self.call("POST", "/url", {"url": url})

    def open_until(self, url, ready):
        """Opens url and waits (up to 10 s) until the page has loaded and the script `ready`
        returns true: the page has drawn what the test reads."""
        self.open(url)
        for _ in range(100):
            if self.js("return document.readyState") == "complete" and self.js(ready):
                return
            time.sleep(0.1)

    def js(self, script, *args):
        return self.call("POST", "/execute/sync", {"script": script, "args": list(args)})

    def element(self, css):
        found = self.call("POST", "/element", {"using": "css selector", "value": css})
        return next(iter(found.values()))

    def click(self, css):
        self.call("POST", f"/element/{self.element(css)}/click", {})

    def type(self, css, text):
        element = self.element(css)
        self.call("POST", f"/element/{element}/clear", {})
        self.call("POST", f"/element/{element}/value", {"text": text})

    def double_click(self, css):
        """Two presses of the mouse at the element's centre, as a person double-clicks."""
        self.js("document.querySelector(arguments[0]).scrollIntoView({block: 'center'})", css)
        x, y = self.js("const r = document.querySelector(arguments[0]).getBoundingClientRect();"
                       "return [r.left + r.width / 2, r.top + r.height / 2]", css)
        press = [{"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]
        self.call("POST", "/actions", {"actions": [{"type": "pointer", "id": "mouse",
                                                      "parameters": {"pointerType": "mouse"},
                                                      "actions": [{"type": "pointerMove", "duration": 0,
                                                                   "origin": "viewport", "x": int(x), "y": int(y)}]
                                                      + press + press}]})

    def hover(self, x, y):
        """The pointer moved to (x, y) in the viewport, as a mouse does."""
        self.call("POST", "/actions", {"actions": [{"type": "pointer", "id": "mouse",
                                                      "parameters": {"pointerType": "mouse"},
                                                      "actions": [{"type": "pointerMove", "duration": 50,
                                                                   "origin": "viewport", "x": int(x), "y": int(y)}]}]})

    def console_errors(self):
        try:
            log = self.call("POST", "/se/log", {"type": "browser"}) or []
        except AssertionError:
            return []
        return [entry["message"] for entry in log if entry.get("level") == "SEVERE"]

    def screenshot(self, path):
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.call("GET", "/screenshot")))

    def close(self):
        try:
            self.call("DELETE", "")
        finally:
            self.driver.terminate()
            self.driver.wait(timeout=30)


def cli(*args, **kwargs):
    return subprocess.run([CLI, *args], check=True, capture_output=True, text=True, **kwargs)


def session_text(path: str) -> bytes:
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if path.endswith(".gz") else data


class TestReportInABrowser(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="headlab-report-")
        cls.browser = Browser()

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def check_session(self, name, relative, filters, sections):
        b = self.browser
        source = os.path.join(SOURCE, relative)
        page = os.path.join(self.tmp, name + ".html")
        written = cli("report", source, "-o", page).stdout
        self.assertIn("wrote " + page, written)

        # The session inside comes back byte for byte, and HeadLab reads the page as the session.
        back = os.path.join(self.tmp, name + ".back.yaml")
        cli("report", page, "--extract", "-o", back)
        with open(back, "rb") as f:
            self.assertEqual(f.read(), session_text(source), "the session inside is not the file")
        a, c = os.path.join(self.tmp, name + ".a.yaml"), os.path.join(self.tmp, name + ".c.yaml")
        cli("export-yaml", page, "-o", a)
        cli("export-yaml", source, "-o", c)
        with open(a, "rb") as fa, open(c, "rb") as fc:
            self.assertEqual(fa.read(), fc.read(), "export-yaml of the report differs from the session's")

        b.open_until("file://" + page, "return !!document.querySelector('#filter-status').textContent")
        self.assertEqual(b.console_errors(), [])
        # Offline: every resource is in the page.
        self.assertEqual(b.js("return performance.getEntriesByType('resource').map(e => e.name)"), [])
        shown = b.js("return [...document.querySelectorAll('main > section')].filter(s => !s.hidden).map(s => s.querySelector('h2').textContent)")
        self.assertEqual(shown, sections)
        yaml_name = next(line.split(":", 1)[1].strip() for line in session_text(source).decode().splitlines()
                         if line.startswith("name:"))
        self.assertEqual(b.js("return document.getElementById('title').textContent"), yaml_name)

        # The figure a reader looks at first: the loss curves, else the search's.
        figure = "#loss-figure" if "Loss curves" in sections else "#search-figure"
        # A legend entry clicked hides its series; clicked again, shows it.
        entry = f"{figure} .legend .entry"
        series_name = b.js(f"return document.querySelector('{entry}').dataset.series")
        series = f"{figure} g.series[data-series=\"{series_name}\"]"
        visible = f"return getComputedStyle(document.querySelector('{series}')).display !== 'none'"
        self.assertTrue(b.js(visible))
        b.click(entry)
        self.assertFalse(b.js(visible), "clicking the legend entry did not hide its series")
        self.assertTrue(b.js(f"return document.querySelector('{entry}').classList.contains('off')"))
        b.click(entry)
        self.assertTrue(b.js(visible))

        # A double click shows that series alone (the others' entries off), and again all of them.
        count = b.js(f"return document.querySelectorAll('{entry}').length")
        b.double_click(entry)
        self.assertEqual(b.js(f"return document.querySelectorAll('{entry}.off').length"), count - 1)
        self.assertTrue(b.js(visible))

        # A point hovered (its series alone on show): the tooltip shows its value.
        b.js("document.querySelector(arguments[0]).scrollIntoView({block: 'center'})", figure)
        point = b.js("""
            const g = document.querySelector(arguments[0]);
            const ctm = g.ownerSVGElement.getScreenCTM();
            const c = g.querySelector('circle');
            let x, y;
            if (c) { x = +c.getAttribute('cx'); y = +c.getAttribute('cy'); }
            else { const p = g.querySelector('path'); const q = p.getPointAtLength(p.getTotalLength() / 3); x = q.x; y = q.y; }
            return [ctm.a * x + ctm.e, ctm.d * y + ctm.f];""", series)
        b.hover(point[0], point[1])
        tip = b.js("const t = document.getElementById('tooltip'); return t.hidden ? '' : t.textContent")
        self.assertTrue(tip, "no tooltip under the cursor")
        if figure == "#loss-figure":
            run = int(series_name.split()[0][1:])
            self.assertTrue(tip.startswith(series_name), tip)
            step = int(tip.splitlines()[1].split()[1])
            value = float(tip.splitlines()[2].split()[1])
            curves = os.path.join(self.tmp, name + "-csv")
            cli("export-csv", source, "-o", curves)
            with open(os.path.join(curves, "curves.csv")) as f:
                truth = [float(r["value"]) for r in csv.DictReader(f)
                         if int(r["run"]) == run and r["curve"] == "test" and int(r["step"]) == step]
            self.assertEqual(len(truth), 1, f"run {run} step {step}")
            self.assertAlmostEqual(value, truth[0], delta=abs(truth[0]) * 1e-3, msg=tip)
        else:  # a configuration's crossing: the number headlab-cli summary writes for it
            self.assertTrue(tip.splitlines()[1].startswith("η*"), tip)
            labels = dict(part.split("=", 1) for part in tip.splitlines()[0].split())
            estimate = float(tip.splitlines()[1].split()[1])
            table = os.path.join(self.tmp, name + "-summary.csv")
            cli("summary", source, "-o", table)
            with open(table) as f:
                truth = [float(r["estimate"]) for r in csv.DictReader(f)
                         if all(r.get(k) == v for k, v in labels.items())]
            self.assertEqual(len(truth), 1, tip)
            self.assertAlmostEqual(estimate, truth[0], delta=truth[0] * 1e-3, msg=tip)

        b.double_click(entry)
        self.assertEqual(b.js(f"return document.querySelectorAll('{entry}.off').length"), 0)

        # The runs table filtered: the runs it keeps are those export-csv --filter keeps.
        total = b.js("return document.querySelectorAll('#runs-table tbody tr').length")
        for text in filters:
            b.type("#filter", text)
            status = b.js("return document.getElementById('filter-status').textContent")
            rows = b.js("return [...document.querySelectorAll('#runs-table tbody tr')].map(r => +r.dataset.run).sort((a, b) => a - b)")
            out = os.path.join(self.tmp, name + "-filter")
            cli("export-csv", source, "-o", out, "--filter", text)
            with open(os.path.join(out, "runs.csv")) as f:
                expected = sorted(int(r["run"]) for r in csv.DictReader(f))
            self.assertEqual(rows, expected, f"filter {text!r}: the page shows {status}")
            self.assertEqual(status, f"{len(expected)} of {total} runs")
            if "Loss curves" in sections and b.js("return document.getElementById('loss-selected').checked"):
                drawn = b.js("return [...document.querySelectorAll('#loss-figure g.series')].length")
                with_curves = b.js("return arguments[0].filter(i => Object.keys(JSON.parse(document.getElementById('headlab-data').textContent).runs[i].curves).length).length", rows)
                self.assertEqual(drawn, with_curves, f"filter {text!r}: the loss figure draws other runs")
            if "Parallel coordinates" in sections:  # a line per selected run
                self.assertEqual(b.js("return document.querySelectorAll('#coords-figure path.run').length"),
                                 len(expected), f"filter {text!r}: parallel coordinates")
        b.type("#filter", "bogus=1")
        self.assertIn("no axis or metric 'bogus'", b.js("return document.getElementById('filter-status').textContent"))
        b.type("#filter", "")
        if os.environ.get("HEADLAB_SCREENSHOTS"):
            os.makedirs(os.environ["HEADLAB_SCREENSHOTS"], exist_ok=True)
            b.js("window.scrollTo(0, 0)")
            b.screenshot(os.path.join(os.environ["HEADLAB_SCREENSHOTS"], f"report-{name}-1280x720.png"))

    def test_figure2_grid(self):
        self.check_session(*SESSIONS[0])

    def test_boundary_search(self):
        self.check_session(*SESSIONS[1])

    def test_classroom(self):
        self.check_session(*SESSIONS[2])
        # The lesson's text, where the class reads it.
        lesson = self.browser.js("const l = document.getElementById('lesson'); return l.hidden ? '' : l.textContent")
        self.assertIn("one head stays on ln 10", lesson)

    def test_a_side_left_open(self):
        """Issue 77's 512-wide search: 512 × 1 spent its budget with its lower side open (its bound
        the range's end, 1e-9). Its bar runs from η* up to its closed side, so the search figure's
        axis stays within the crossings (no tick near 1e-9); the law through the other two (two
        crossings, no scatter to predict with) is drawn; the tooltip says the side is open."""
        b = self.browser
        page = os.path.join(self.tmp, "oos-wide.html")
        cli("report", os.path.join(SOURCE, "docs/data/issue77/oos-wide.export.yaml.gz"), "-o", page)
        b.open_until("file://" + page, "return !!document.querySelector('#search-figure svg')")
        self.assertEqual(b.console_errors(), [])
        ticks = b.js("return [...document.querySelectorAll('#search-figure .axis')[1].querySelectorAll('.tick text')].map(t => t.textContent)")
        self.assertTrue(ticks and min(float(t) for t in ticks) >= 1e-5, ticks)
        self.assertIn("5e-5", ticks)  # short labels below 0.001
        law = b.js("return [...document.querySelectorAll('#search-figure g.series')].filter(g => g.dataset.series.startsWith('power law')).map(g => g.querySelectorAll('path').length)")
        self.assertEqual(len(law), 1)
        self.assertGreater(law[0], 0, "the law's line is not drawn")
        data = json.loads(b.js("return document.getElementById('headlab-data').textContent"))
        one = [p for p in data["search"]["points"] if p["name"].endswith("heads=1")]
        self.assertEqual(len(one), 1)
        self.assertTrue(one[0]["low_open"] and not one[0]["high_open"], one)
        # Its point hovered: the tooltip gives η* with its side open, not the range's end.
        b.js("document.querySelector('#search-figure').scrollIntoView({block: 'center'})")
        crossings = [p for p in data["search"]["points"] if "estimate" in p]
        point = b.js("""
            const c = document.querySelectorAll('#search-figure g.series')[0].querySelectorAll('circle')[arguments[0]];
            const ctm = c.ownerSVGElement.getScreenCTM();
            return [ctm.a * +c.getAttribute('cx') + ctm.e, ctm.d * +c.getAttribute('cy') + ctm.f];""",
                     crossings.index(one[0]))
        b.hover(point[0], point[1])
        tip = b.js("const t = document.getElementById('tooltip'); return t.hidden ? '' : t.textContent")
        self.assertIn("η* 2.923e-5 (open, 6.356e-5]", tip)


if __name__ == "__main__":
    missing = [what for what, there in (("chromium", CHROMIUM), ("chromedriver (chromium-driver)", DRIVER),
                                        ("D3 (node-d3)", os.path.exists(D3)), ("headlab-cli", CLI and os.path.exists(CLI)))
               if not there]
    if missing:
        print("SKIPPED: the report's browser test needs " + ", ".join(missing))
        sys.exit(77)
    unittest.main()
