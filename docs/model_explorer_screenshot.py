"""Regenerate docs/model-explorer.png: `hlodiff compare --model-explorer` on a real fixture pair, in headless
Chromium, stopped with Ctrl-C afterwards.

    python docs/model_explorer_screenshot.py

The pair is fixtures/torch_xla/batch_shape #0 and #5 (a batch of 4 then of 2: the shape cause), small enough for
the layers, their marks and the overlay bars to read at page size. Needs the explorer extra and Chromium; uses the
server and page helpers of tests/test_model_explorer_browser.py.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
os.chdir(ROOT)  # refs in the page read fixtures/..., as a user in the repository would type them

from browser import Browser, find_chromium  # noqa: E402
from test_model_explorer_browser import PANES_JS, Served, _open, _ready  # noqa: E402

PAIR = "fixtures/torch_xla/batch_shape/graphs.hlo.0"


def main() -> None:
    served = Served(["compare", f"{PAIR}#0", f"{PAIR}#5", "--model-explorer"])
    try:
        with Browser(find_chromium(), timeout=120) as browser:
            page = _open(browser, served.url())
            deadline = time.monotonic() + 120
            while not _ready(page.evaluate(PANES_JS)) and time.monotonic() < deadline:
                page.evaluate("new Promise(r => setTimeout(r, 1000))")
            page.evaluate("new Promise(r => setTimeout(r, 2000))")  # the last layout animation
            page.screenshot(ROOT / "docs" / "model-explorer.png")
        served.interrupt()
    finally:
        served.stop()
    print("wrote docs/model-explorer.png")


if __name__ == "__main__":
    main()
