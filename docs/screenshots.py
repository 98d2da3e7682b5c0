"""Regenerate the report screenshots shown in docs/html.md, from real fixtures, in headless Chromium.

    python docs/screenshots.py

Writes docs/report-run.png (explain-recompile --html of fixtures/torch_xla/batch_shape) and docs/report-compare.png
(compare --html of the slice_index pair). Uses the same DevTools-over-pipe driver as tests/test_browser.py.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from browser import Browser, find_chromium  # noqa: E402

SHOTS = {
    "report-run.png": (["explain-recompile", "fixtures/torch_xla/batch_shape/graphs.hlo.0"], 1500),
    "report-compare.png": (["compare", "fixtures/torch_xla/slice_index/graphs.hlo.0#0",
                            "fixtures/torch_xla/slice_index/graphs.hlo.0#1"], 1250),
}


def main() -> None:
    chromium = find_chromium()
    if chromium is None:
        sys.exit("no Chromium found (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as tmp, Browser(chromium) as browser:
        for name, (args, height) in SHOTS.items():
            page_path = Path(tmp) / (name + ".html")
            subprocess.run([sys.executable, "-m", "hlodiff.cli", *args, "--html", str(page_path)], cwd=ROOT,
                           stdout=subprocess.DEVNULL, check=False)
            page = browser.open(page_path, width=1400, height=height)
            page.screenshot(ROOT / "docs" / name)
            print(f"docs/{name}")


if __name__ == "__main__":
    main()
