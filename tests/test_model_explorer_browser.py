"""`hlodiff compare A B --model-explorer` for real: the 35K-instruction fixture pair (fixtures/big) served by Model
Explorer on 127.0.0.1, loaded in headless Chromium, stopped with Ctrl-C (SIGINT) as a user would.

Asserts on what Model Explorer computed in the page from hlodiff's files: both graphs processed (its node counts
equal the files'), graph A in the left pane and B in the right, and per top-level layer the counts of each status
Model Explorer tallied from the overlay (so every node carries its value) equal hlodiff's. A screenshot is kept
as the test's artifact (``model-explorer.png`` in its tmp_path). Skips with the reason when Model Explorer (the
explorer extra) or Chromium is not installed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import unquote

import pytest

from browser import Browser, Page, find_chromium
from hlodiff.render.model_explorer import FILES

ROOT = Path(__file__).resolve().parent.parent
BIG = ROOT / "fixtures" / "big"
CHROMIUM = find_chromium()

try:
    import model_explorer  # noqa: F401

    HAVE_EXPLORER = True
except ImportError:
    HAVE_EXPLORER = False

pytestmark = [
    pytest.mark.skipif(not HAVE_EXPLORER, reason="needs the explorer extra (pip install -e '.[explorer]'): "
                                                 "model_explorer not installed"),
    pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (headless browser tests): none found; "
                                                "apt-get install chromium"),
]

SERVER_START = 300.0  # seconds: reading and diffing 2 x 33K instructions, then Model Explorer's start-up
PAGE_READY = 240.0  # seconds: Model Explorer processing and laying out both graphs in the page


class Served:
    """``hlodiff compare A B --model-explorer`` running in its own process group; stdout and stderr read by threads
    (the URL is on stderr: stdout holds the report alone)."""

    def __init__(self, args: list[str]) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.proc = subprocess.Popen([sys.executable, "-m", "hlodiff.cli", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT, start_new_session=True)
        self.lines: list[str] = []
        self.err: list[str] = []
        threading.Thread(target=self._read, args=(self.proc.stdout, self.lines), daemon=True).start()
        threading.Thread(target=self._read, args=(self.proc.stderr, self.err), daemon=True).start()

    @staticmethod
    def _read(stream, into: list[str]) -> None:
        for line in stream:
            into.append(line)

    def url(self) -> str:
        deadline = time.monotonic() + SERVER_START
        while time.monotonic() < deadline:
            found = next((line.strip() for line in self.err if line.startswith("http://127.0.0.1:")), None)
            if found:
                return found
            if self.proc.poll() is not None:
                break
            time.sleep(0.5)
        pytest.fail(f"no Model Explorer URL (exit {self.proc.poll()}): {''.join(self.lines)[-2000:]}"
                    f"{''.join(self.err)[-2000:]}")

    def interrupt(self) -> int:
        """Ctrl-C, as in a terminal; the exit status."""
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _open(browser: Browser, url: str) -> Page:
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for method in ("Page.enable", "Runtime.enable"):
        browser.send(method, session=session)
    browser.send("Emulation.setDeviceMetricsOverride",
                 {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False}, session=session)
    mark = len(browser.events)
    browser.send("Page.navigate", {"url": url}, session=session)
    browser.wait_event("Page.loadEventFired", session, mark)
    return Page(browser, session, url, mark)


TITLES_JS = """(document.querySelector('split-panes-container') || document.body).innerText.split('\\n')
  .filter(line => /^[AB]: /.test(line))"""

PANES_JS = """[...document.querySelectorAll('split-pane')].map(p => ({
  info: (p.querySelector('info-panel') || {innerText: ''}).innerText,
  stats: (p.querySelector('node-data-provider-summary-panel') || {innerText: ''}).innerText}))"""


STATUS_LABELS = ("unchanged", "changed", "only in A", "only in B")


def _ready(panes: list[dict]) -> bool:
    """Both graphs processed and the overlay counted in every top-level row (the table fills in as it goes)."""
    return len(panes) == 2 and all("op node count" in p["info"] and "Root-level nodes stats" in p["stats"]
                                   and (rows := _root_rows(p["stats"]))
                                   and all(any(r.get(s) for s in STATUS_LABELS) for r in rows.values())
                                   for p in panes)


def _node_count(info: str) -> int:
    return int(re.search(r"op node count\s+(\d+)", info).group(1))


def _root_rows(stats: str) -> dict[str, dict[str, int]]:
    """Model Explorer's "Root-level nodes stats" table: layer -> {column label: count}, the columns being the
    overlay values it counted per layer (``#changed``, ``#only in B``, ...)."""
    section = stats.split("Root-level nodes stats", 1)[1].split("Node data", 1)[0]
    labels = [line.strip()[1:] for line in section.splitlines() if line.strip().startswith("#")
              and line.strip() != "#"]
    rows = {}
    for line in section.splitlines():
        cells = line.split("\t")
        if len(cells) == len(labels) + 2 and cells[0].strip().isdigit():
            rows[cells[1].strip()] = {label: int(c) for label, c in zip(labels, cells[2:]) if c.strip().isdigit()}
    return rows


def _expected(folder: Path, graph_file: str) -> tuple[int, dict[str, Counter]]:
    """From hlodiff's own files: node count, and per top-level layer the count of each status."""
    graph = json.loads((folder / graph_file).read_text())["graphs"][0]
    status = json.loads((folder / FILES["status"]).read_text())[graph["id"]]["results"]
    per_layer: dict[str, Counter] = defaultdict(Counter)
    for node in graph["nodes"]:
        top = node["namespace"].split("/")[0]
        if top:
            per_layer[top][status[node["id"]]["value"]] += 1
    return len(graph["nodes"]), per_layer


def test_big_pair_in_model_explorer(tmp_path):
    files = tmp_path / "files"
    served = Served(["compare", str(BIG / "transformer24.hlo.gz"), str(BIG / "transformer24_variant.hlo.gz"),
                     "--json", "--model-explorer", "--model-explorer-out", str(files)])
    try:
        url = served.url()
        data = json.loads(unquote(url.split("data=", 1)[1]))
        served_folder = Path(data["models"][0]["url"]).parent
        with Browser(CHROMIUM, timeout=120) as browser:
            page = _open(browser, url)
            deadline = time.monotonic() + PAGE_READY
            panes, before = page.evaluate(PANES_JS), None
            while not (_ready(panes) and panes == before) and time.monotonic() < deadline:
                page.evaluate("new Promise(r => setTimeout(r, 1000))")
                panes, before = page.evaluate(PANES_JS), panes
            page.screenshot(tmp_path / "model-explorer.png")
            assert _ready(panes), f"Model Explorer did not show both graphs with their overlays: {panes}"
            titles = page.evaluate(TITLES_JS)
        (tmp_path / "panes.json").write_text(json.dumps(panes, indent=1))  # what the page showed, beside the png
        # Pane titles read "<collection> | <graph>": graph A on the left, B on the right.
        assert [t.split(" | ")[0] for t in titles] == [f"A: {BIG / 'transformer24.hlo.gz'}#0",
                                                      f"B: {BIG / 'transformer24_variant.hlo.gz'}#0"]
        assert (tmp_path / "model-explorer.png").stat().st_size > 10_000
        only_b = 0
        for pane, graph_file, side in zip(panes, (FILES["graph_a"], FILES["graph_b"]), "AB"):
            count, per_layer = _expected(files, graph_file)
            assert _node_count(pane["info"]) == count
            rows = _root_rows(pane["stats"])
            compared = [name for name, counts in per_layer.items() if sum(counts.values()) > 1]
            assert len(compared) > 20 and set(compared) <= set(rows)  # the 35K nodes collapse to their layers
            for name in compared:
                shown = {label: n for label, n in rows[name].items() if n}
                assert {label: shown.get(label, 0) for label in per_layer[name]} == dict(per_layer[name]), name
            only_b += sum(c["only in B"] for c in per_layer.values()) if side == "B" else 0
        # The variant's extra output (token accuracy) is the one addition: its layers are marked in pane B.
        assert only_b > 0
        assert served.interrupt() == 1  # compare's "different" status once Ctrl-C stops the server
        assert not served_folder.exists()  # the served copy of the files is removed
        # Model Explorer's messages went to stderr: stdout is the --json document alone.
        assert json.loads("".join(served.lines))["schema"] == "hlodiff.compare/1"
    finally:
        served.stop()
