"""Runs a fixture script under real torch_xla (CPU) and checks what it writes.

Marked ``xla``; skipped when torch_xla is not installed in the interpreter running pytest.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import truth_of

ROOT = Path(__file__).resolve().parent.parent
STEADY = ROOT / "fixtures" / "torch_xla" / "steady.py"

pytestmark = [
    pytest.mark.xla,
    pytest.mark.skipif(importlib.util.find_spec("torch_xla") is None, reason="torch_xla is not installed"),
]


@pytest.fixture(scope="module")
def steady_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("steady") / "out"
    proc = subprocess.run([sys.executable, str(STEADY), "--out", str(out)], capture_output=True, text=True,
                          timeout=120)
    if proc.returncode != 0 and "No module named 'torch_xla'" in proc.stderr:
        pytest.skip("torch_xla is not importable")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_save_file_has_one_entry_per_step(steady_run: Path):
    text = (steady_run / "graphs.hlo.0").read_text()
    truth = truth_of(steady_run)
    assert len(re.findall(r"^## BEGIN_GRAPH$", text, re.M)) == truth["steps"] == 6
    assert len(re.findall(r"^## END_GRAPH$", text, re.M)) == 6
    hashes = re.findall(r"^Graph Hash: ([0-9a-f]+)$", text, re.M)
    assert len(hashes) == 6
    # compilations recorded in truth.json are exactly the first sightings of each Graph Hash
    first = [i for i, h in enumerate(hashes) if h not in hashes[:i]]
    assert truth["compilations"] == first


def test_truth_json(steady_run: Path):
    truth = truth_of(steady_run)
    for key in ("scenario", "steps", "compilations", "cause", "user_file", "user_line", "notes"):
        assert key in truth
    assert truth["scenario"] == "steady"
    assert truth["user_file"] == "steady.py"
    line = STEADY.read_text().splitlines()[truth["user_line"] - 1]
    assert line.rstrip().endswith("# RECOMPILE")


def test_side_outputs_are_written_and_scrubbed(steady_run: Path):
    report = (steady_run / "tensors_report.txt").read_text()
    assert len(re.findall(r"^## SYNC \d+ step=\d+ trigger=\w+$", report, re.M)) == 6
    assert "Tensor: id=" in report
    log = (steady_run / "pt_xla_debug.log").read_text()
    assert "Compilation Analysis:" in log
    for name in ("graphs.hlo.0", "tensors_report.txt", "pt_xla_debug.log"):
        assert "/work/" not in (steady_run / name).read_text()


def test_committed_steady_fixture_matches_a_fresh_run(steady_run: Path):
    committed = ROOT / "fixtures" / "torch_xla" / "steady"
    if not (committed / "graphs.hlo.0").exists():
        pytest.skip("committed fixture missing")
    fresh = truth_of(steady_run)
    old = truth_of(committed)
    if fresh.get("torch_xla_version") != old.get("torch_xla_version"):
        pytest.skip("different torch_xla version than the committed fixture")
    # torch_xla hashes the graph *before* hlodiff scrubs machine paths out of its metadata (XLA_HLO_DEBUG=1 puts
    # source_file paths into the HLO), so the hashes depend on where the repo and the venv live; everything else
    # must be byte-identical, and the hashes must repeat in the same places.
    fresh_text, old_text = ((d / "graphs.hlo.0").read_text() for d in (steady_run, committed))
    assert _hash_pattern(fresh_text) == _hash_pattern(old_text)
    assert _mask_hashes(fresh_text) == _mask_hashes(old_text)


_HASH_LINE = re.compile(r"^(Graph Hash: |Root Hashes: )(.*)$", re.M)


def _mask_hashes(text: str) -> str:
    return _HASH_LINE.sub(r"\1<hash>", text)


def _hash_pattern(text: str) -> list[int]:
    """Which earlier entry each Graph Hash repeats (-1 for a first sighting): the cache-hit structure of the run."""
    seen: dict[str, int] = {}
    pattern = []
    for i, value in enumerate(m.group(1) for m in re.finditer(r"^Graph Hash: (\w+)$", text, re.M)):
        pattern.append(seen.get(value, -1))
        seen.setdefault(value, i)
    return pattern
