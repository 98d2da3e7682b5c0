"""The compare-runs test files' shared steps: run ``compare-runs`` on a scenario's two runs, read its headline, copy
a scenario to change it (five rounds of tests had each written these lines again)."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import FIXTURES, cli_json

RUNS = FIXTURES / "scenarios" / "runs"


def compare_runs(folder: Path, codes=(1,)) -> dict:
    """``compare-runs --json`` on ``folder/run_a`` and ``folder/run_b``."""
    return cli_json("compare-runs", str(folder / "run_a"), str(folder / "run_b"), codes=codes)


def runs_headline(name: str, codes=(1,)) -> dict:
    """The headline of the scenario ``name``'s two runs."""
    return compare_runs(RUNS / name, codes)["headline"]


def copy_runs(name: str, tmp_path: Path) -> Path:
    """A copy of the scenario ``name`` to change (the fixtures are never written)."""
    return Path(shutil.copytree(RUNS / name, tmp_path / name))


def without_counter_prints(folder: Path) -> Path:
    """``folder`` with each run's stdout emptied: the torch_xla scenarios print their cache counters
    (``met.counter_value``), which hlodiff reads; a test of what the rest of the evidence says removes them."""
    for log in folder.glob("run_*/stdout.log"):
        log.write_text("")
    return folder
